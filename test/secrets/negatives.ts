import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { chars, pick, type Random } from "./positives.ts"

/**
 * Ordinary coding-tool traffic with no secret in it: what a tool reads (this repository's own
 * source, cut into 40-line pieces) and what it runs and is answered (git, npm, test runs, logs,
 * hashes, UUIDs, base64 test data, the example keys of providers' documentation, references to
 * secrets kept elsewhere: `${DB_PASSWORD}`, `secrets.GITHUB_TOKEN`).
 */
const hex = "0123456789abcdef"
const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const b64 = alnum + "+/"

const uuid = (r: Random) => `${chars(r, hex, 8)}-${chars(r, hex, 4)}-4${chars(r, hex, 3)}-a${chars(r, hex, 3)}-${chars(r, hex, 12)}`
const words = ["user", "session", "order", "invoice", "payment", "build", "report", "cache", "queue", "tenant", "project", "widget"]

const traffic: ReadonlyArray<(r: Random) => string> = [
  (r) => Array.from({ length: 5 }, () => `commit ${chars(r, hex, 40)}\nAuthor: Dev <dev@example.com>\n\n    Fix ${pick(r, words)} pagination\n`).join("\n"),
  (r) => `added ${Math.floor(r() * 400)} packages, and audited ${Math.floor(r() * 900)} packages in 4s\n\nfound 0 vulnerabilities`,
  (r) =>
    `"node_modules/${pick(r, words)}-utils": {\n  "version": "2.${
      Math.floor(r() * 20)
    }.1",\n  "resolved": "https://registry.npmjs.org/x/-/x-2.1.0.tgz",\n  "integrity": "sha512-${chars(r, b64, 86)}=="\n}`,
  (r) => `${chars(r, hex, 64)}  dist/app-${chars(r, hex, 8)}.tar.gz\n${chars(r, hex, 64)}  dist/app-${chars(r, hex, 8)}.zip`,
  (r) =>
    Array.from(
      { length: 6 },
      (_, i) =>
        `2026-11-28T10:${10 + i}:03.${Math.floor(r() * 999)}Z INFO request_id=${uuid(r)} route=/api/${pick(r, words)}s status=200 ms=${Math.floor(r() * 90)}`
    )
      .join("\n"),
  (r) =>
    ` ✓ test/unit/${pick(r, words)}.test.ts (${Math.floor(r() * 40)} tests) ${Math.floor(r() * 900)}ms\n Test Files  12 passed (12)\n      Tests  ${
      Math.floor(r() * 300)
    } passed`,
  (r) => `const fixture = Buffer.from("${chars(r, b64, 120)}", "base64")\nexpect(decode(fixture)).toEqual(expected)`,
  (r) => `CONTAINER ID   IMAGE          STATUS\n${chars(r, hex, 12)}   postgres:18    Up 3 hours\n${chars(r, hex, 12)}   redis:7        Up 3 hours`,
  () =>
    `# Example from the AWS docs: never use these\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,
  (r) => `DATABASE_URL=postgres://app:\${DB_PASSWORD}@db.internal:5432/app\nREDIS_URL=redis://cache:6379/${Math.floor(r() * 9)}`,
  () => `      - name: Publish\n        env:\n          NODE_AUTH_TOKEN: \${{ secrets.NPM_TOKEN }}\n        run: npm publish`,
  () => `api_key = os.environ["OPENAI_API_KEY"]\nclient = OpenAI(api_key=api_key)`,
  (r) => `git checkout -b fix/${pick(r, words)}-${Math.floor(r() * 999)} && git commit -am "Handle empty ${pick(r, words)} list"`,
  (r) => `const id = "${uuid(r)}"\nconst etag = "W/\\"${chars(r, hex, 32)}\\""\nconst key = cacheKey(id, etag)`,
  (r) => `password: ${pick(r, ["changeme", "********", "<your-password>", "${DB_PASSWORD}", "example"])}\nusername: ${pick(r, words)}`,
  (r) => `Error: connect ECONNREFUSED 127.0.0.1:${5000 + Math.floor(r() * 999)}\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1637:16)`,
  (r) =>
    `ls -la\ndrwxr-xr-x  8 dev dev 4096 Nov 28 10:12 .\n-rw-r--r--  1 dev dev ${
      Math.floor(r() * 9999)
    } Nov 28 10:12 package.json\n-rw-r--r--  1 dev dev 212 Nov 28 10:12 .env.example`,
  (r) => `The token budget for this ${pick(r, words)} is ${Math.floor(r() * 9000)}; set max_tokens=${Math.floor(r() * 4096)} in the request.`,
  (r) => `Please refactor the ${pick(r, words)} service so that the secret rotation job reads the key id from config instead of hard-coding it.`,
  (r) => `const sha = "${chars(r, hex, 40)}"\nconst shortSha = sha.slice(0, 7)\nconst keyId = "${pick(r, words)}-v${Math.floor(r() * 9)}"`
]

/** The generated traffic: `count` pieces, round the templates. */
export const generatedNegatives = (r: Random, count: number) => Array.from({ length: count }, (_, i) => traffic[i % traffic.length]!(r))

const sourceFolders = ["src", "adapters/src", "web"]

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === "secrets" ? [] : sourceFiles(path)
    return /\.(ts|js)$/.test(e.name) ? [path] : []
  }).sort()

/** This repository's source, as a tool reads it: 40-line pieces of every file (the scanner's own rules left out). */
export const sourceNegatives = (root: string) =>
  sourceFolders.flatMap((folder) => sourceFiles(join(root, folder))).flatMap((file) => {
    const lines = readFileSync(file, "utf8").split("\n")
    const pieces: Array<string> = []
    for (let i = 0; i < lines.length; i += 40) pieces.push(lines.slice(i, i + 40).join("\n"))
    return pieces
  })
