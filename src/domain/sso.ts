import { Schema } from "effect"
import { NotFoundRefusal, Refusal } from "./refusal.ts"
import { Role } from "./tenancy.ts"

/**
 * An org's single sign-on settings (OpenID Connect, authorization code + PKCE): which identity
 * provider people sign in with and who may. The client secret is write-only: stored sealed
 * (SecretBox), never answered, and `[redacted]` in audit entries.
 */

const Text = (max: number) => Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(max)))
const Domain = Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(253)))

const fields = {
  issuer: Text(2048).annotate({
    description: "the identity provider's issuer URL, exactly as its discovery document (`/.well-known/openid-configuration`) " +
      "and its ID tokens name it; https (http only for a loopback address)"
  }),
  client_id: Text(512).annotate({ description: "the client (application) id registered with the identity provider" }),
  allowed_email_domains: Schema.Array(Domain).pipe(Schema.check(Schema.isMaxLength(100))).annotate({
    description: "the e-mail domains whose people may sign in (the ID token's verified `email`); at least one"
  }),
  groups_claim: Schema.optionalKey(Schema.NullOr(Text(200))).annotate({
    description: "the ID token claim that carries the person's groups (e.g. `groups`); kept for group → role mapping, null if none"
  }),
  group_roles: Schema.optionalKey(
    Schema.Array(Schema.Struct({ group: Text(200), role: Role })).pipe(Schema.check(Schema.isMaxLength(100)))
  ).annotate({
    description: "group → role mapping: at sign-in the person's user gets the role of the first entry whose group is in " +
      "their groups claim, in this order; in none of them, their role is left as it is. Default: none"
  }),
  create_users: Schema.optionalKey(Schema.Boolean).annotate({
    description: "true: a person signing in whose e-mail matches no user of the org is created as a member; false (default): refused"
  }),
  allow_api_key_sign_in: Schema.optionalKey(Schema.Boolean).annotate({
    description: "true: the dashboard still accepts a pasted API key; false (default once SSO is set up): only sign-in"
  })
}

export const SsoSettingsInput = Schema.Struct({
  ...fields,
  client_secret: Text(1024).annotate({ description: "the client secret; stored encrypted and never answered" })
}).annotate({ description: "replaces the org's SSO settings; unknown fields are rejected (400)" })
export type SsoSettingsInput = typeof SsoSettingsInput.Type

export const SsoSettings = Schema.Struct({
  issuer: fields.issuer,
  client_id: fields.client_id,
  client_secret_set: Schema.Boolean.annotate({ description: "whether a client secret is stored (the secret itself is never answered)" }),
  allowed_email_domains: fields.allowed_email_domains,
  groups_claim: Schema.NullOr(Schema.String),
  group_roles: Schema.Array(Schema.Struct({ group: Schema.String, role: Role })),
  create_users: Schema.Boolean,
  allow_api_key_sign_in: Schema.Boolean,
  redirect_uri: Schema.NullOr(Schema.String).annotate({
    description: "the redirect (callback) URI to register with the identity provider: PUBLIC_BASE_URL + " +
      "/dashboard/sso/callback; null while the operator has not set PUBLIC_BASE_URL"
  }),
  updated_at: Schema.String
}).annotate({ identifier: "SsoSettings" })
export type SsoSettings = typeof SsoSettings.Type

export class SsoNotConfigured extends NotFoundRefusal("SsoNotConfigured", "sso settings") {}

export class SsoInvalid extends Refusal("SsoInvalid", 422, "validation_error") {
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("; "))
  }
}

const isLoopback = (host: string) => host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)

/** What is wrong with settings that the schema cannot say (URL scheme, domain shape). */
export const ssoProblems = (input: SsoSettingsInput): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let url: URL | undefined
  try {
    url = new URL(input.issuer)
  } catch {
    problems.push("issuer: not a URL")
  }
  if (url !== undefined && url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    problems.push("issuer: must be https (http only on a loopback address)")
  }
  if ((input.group_roles ?? []).length > 0 && (input.groups_claim ?? null) === null) {
    problems.push("group_roles: needs groups_claim, the claim the groups are read from")
  }
  if (input.allowed_email_domains.length === 0) problems.push("allowed_email_domains: at least one domain")
  for (const d of input.allowed_email_domains) {
    if (!/^(?!-)[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(d)) problems.push(`allowed_email_domains: "${d}" is not a domain`)
  }
  return problems
}

/** Domains as compared with an e-mail's: lower case, no duplicates. */
export const normalizeDomains = (domains: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...new Set(domains.map((d) => d.trim().toLowerCase()))
]
