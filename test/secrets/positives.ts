/**
 * Synthetic secrets in each provider's real format (prefix, alphabet, length, checksum-free parts
 * at random), one generator a kind, and the places a coding tool meets them: a prompt, a shell
 * command, a diff, a file's contents. Seeded, so the corpus is the same on every run; none of
 * these keys was ever issued.
 */
export type Random = () => number

/** mulberry32: a small seeded generator, enough for test data. */
export const seeded = (seed: number): Random => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const lower = "abcdefghijklmnopqrstuvwxyz"
const digits = "0123456789"
const alnum = upper + lower + digits
const hex = "0123456789abcdef"
const b64 = alnum + "+/"

export const pick = <A>(r: Random, xs: ReadonlyArray<A>): A => xs[Math.floor(r() * xs.length)]!
export const chars = (r: Random, alphabet: string, n: number) => Array.from({ length: n }, () => pick(r, [...alphabet])).join("")

export interface KindSpec {
  /** The finding kind the adapter must report. */
  readonly kind: string
  /** The environment variable a developer would keep it in. */
  readonly variable: string
  readonly make: (r: Random) => string
}

const pem = (r: Random) => {
  const body = chars(r, b64, 1588).match(/.{1,64}/g)!.join("\n")
  return `-----BEGIN RSA PRIVATE KEY-----\n${body}=\n-----END RSA PRIVATE KEY-----`
}

const jwtPart = (r: Random, n: number) => `ey${chars(r, alnum, n)}`

export const kindSpecs: ReadonlyArray<KindSpec> = [
  { kind: "aws_access_token", variable: "AWS_ACCESS_KEY_ID", make: (r) => `AKIA${chars(r, upper + "234567", 16)}` },
  { kind: "github_pat", variable: "GITHUB_TOKEN", make: (r) => `ghp_${chars(r, alnum, 36)}` },
  { kind: "github_fine_grained_pat", variable: "GH_TOKEN", make: (r) => `github_pat_${chars(r, alnum + "_", 82)}` },
  { kind: "gitlab_pat", variable: "GITLAB_TOKEN", make: (r) => `glpat-${chars(r, alnum + "_-", 20)}` },
  { kind: "slack_bot_token", variable: "SLACK_BOT_TOKEN", make: (r) => `xoxb-${chars(r, digits, 12)}-${chars(r, digits, 13)}-${chars(r, alnum, 24)}` },
  { kind: "stripe_access_token", variable: "STRIPE_SECRET_KEY", make: (r) => `sk_live_${chars(r, alnum, 24)}` },
  {
    kind: "openai_api_key",
    variable: "OPENAI_API_KEY",
    make: (r) => `sk-proj-${chars(r, alnum + "_-", 74)}T3BlbkFJ${chars(r, alnum + "_-", 74)}`
  },
  { kind: "anthropic_api_key", variable: "ANTHROPIC_API_KEY", make: (r) => `sk-ant-api03-${chars(r, alnum + "_-", 93)}AA` },
  { kind: "private_key", variable: "DEPLOY_KEY", make: pem },
  { kind: "npm_access_token", variable: "NPM_TOKEN", make: (r) => `npm_${chars(r, alnum, 36)}` },
  { kind: "gcp_api_key", variable: "GOOGLE_API_KEY", make: (r) => `AIza${chars(r, alnum + "_-", 35)}` },
  { kind: "sendgrid_api_token", variable: "SENDGRID_API_KEY", make: (r) => `SG.${chars(r, alnum + "_-", 22)}.${chars(r, alnum + "_-", 43)}` },
  { kind: "shopify_access_token", variable: "SHOPIFY_ACCESS_TOKEN", make: (r) => `shpat_${chars(r, hex, 32)}` },
  { kind: "digitalocean_pat", variable: "DIGITALOCEAN_TOKEN", make: (r) => `dop_v1_${chars(r, hex, 64)}` },
  { kind: "huggingface_access_token", variable: "HF_TOKEN", make: (r) => `hf_${chars(r, upper + lower, 34)}` },
  { kind: "pypi_upload_token", variable: "TWINE_PASSWORD", make: (r) => `pypi-AgEIcHlwaS5vcmc${chars(r, alnum + "_-", 70)}` },
  { kind: "databricks_api_token", variable: "DATABRICKS_TOKEN", make: (r) => `dapi${chars(r, hex, 32)}` },
  { kind: "linear_api_key", variable: "LINEAR_API_KEY", make: (r) => `lin_api_${chars(r, alnum, 40)}` },
  { kind: "jwt", variable: "SESSION_JWT", make: (r) => `${jwtPart(r, 34)}.${jwtPart(r, 60)}.${chars(r, alnum + "_-", 43)}` },
  { kind: "generic_api_key", variable: "DB_PASSWORD", make: (r) => chars(r, alnum, 20) }
]

/** Where a secret turns up: each template gives the text with the secret in it. */
export const contexts: ReadonlyArray<{ readonly place: string; readonly text: (secret: string, variable: string, r: Random) => string }> = [
  { place: "prompt", text: (s, v) => `The deploy fails with 401. My ${v} is ${s} — can you check why the CI job rejects it?` },
  { place: "prompt", text: (s) => `use this key for the integration test: ${s}\nthen run npm test and tell me what breaks` },
  { place: "shell", text: (s, v) => `export ${v}=${s} && npm run deploy -- --env staging` },
  { place: "shell", text: (s) => `curl -sS -H "Authorization: Bearer ${s}" https://api.internal.example.com/v2/builds?limit=5` },
  { place: "diff", text: (s, v) => `@@ -12,6 +12,7 @@ export const config = {\n   region: "eu-west-1",\n+  ${v.toLowerCase()}: "${s}",\n   retries: 3,\n` },
  { place: "env-file", text: (s, v, r) => `NODE_ENV=production\nPORT=${3000 + Math.floor(r() * 1000)}\n${v}=${s}\nLOG_LEVEL=info\n` },
  { place: "yaml", text: (s, v) => `services:\n  api:\n    image: registry.example.com/api:1.4.2\n    environment:\n      ${v}: "${s}"\n` },
  {
    place: "json",
    text: (s, v) => `{\n  "name": "billing-worker",\n  "${v.toLowerCase().replace(/_(.)/g, (_, c: string) => c.toUpperCase())}": "${s}",\n  "timeout": 30\n}`
  },
  { place: "python", text: (s, v) => `import os\n\nclient = Client(\n    ${v.toLowerCase()}="${s}",\n    base_url=os.environ.get("API_URL"),\n)\n` }
]
