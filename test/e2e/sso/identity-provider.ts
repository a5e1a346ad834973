import { createServer, type Server } from "node:http"
import { decodeJwt, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose"
import Provider from "oidc-provider"
import { freePort } from "../../support/ports.ts"

/**
 * A real OpenID provider (the certified `oidc-provider`) on loopback for the sign-in tests: one
 * confidential client, test accounts whose claims the test sets, the library's own login page,
 * and no consent step. `alterIdToken` lets a test change the ID token the token endpoint answers
 * (re-signed with the provider's key, or not), to see the service refuse it.
 */

export interface Account {
  readonly email: string
  readonly email_verified?: boolean
  readonly name?: string
  readonly groups?: ReadonlyArray<string>
}

export interface IdentityProvider {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  /** Test accounts by login (what is typed on the provider's login page). */
  readonly accounts: Map<string, Account>
  /** How the next ID tokens are changed before they leave the token endpoint; undefined: untouched. */
  alterIdToken: ((idToken: string) => Promise<string>) | undefined
  /** An ID token with the claims changed and signed with the provider's own key. */
  readonly resign: (idToken: string, change: (claims: JWTPayload) => JWTPayload) => Promise<string>
  readonly stop: () => Promise<void>
}

export const startIdentityProvider = async (redirectUri: string): Promise<IdentityProvider> => {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const { privateKey } = await generateKeyPair("RS256", { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" }
  const accounts = new Map<string, Account>()
  const clientId = "signal-engine-dashboard"
  const clientSecret = "a-test-client-secret-0123456789abcdef"
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      response_types: ["code"],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_post"
    }],
    jwks: { keys: [jwk as never] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    // The claims go into the ID token itself, as the service reads them from there.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["a-test-cookie-key"] },
    findAccount: (_ctx, id) => {
      const account = accounts.get(id)
      if (account === undefined) return undefined
      return { accountId: id, claims: () => ({ sub: id, email_verified: true, ...account, groups: [...(account.groups ?? [])] }) }
    },
    // Every test account has agreed to the client already: no consent page.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! })
      grant.addOIDCScope("openid email profile")
      await grant.save()
      return grant
    }
  })
  const idp: IdentityProvider = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    alterIdToken: undefined,
    resign: (idToken, change) => new SignJWT(change(decodeJwt(idToken))).setProtectedHeader({ alg: "RS256", kid: "test-key" }).sign(privateKey),
    stop: () => new Promise((resolve) => server.close(() => resolve()))
  }
  provider.use(async (ctx, next) => {
    await next()
    const body = ctx.body as { id_token?: string } | undefined
    if (ctx.path === "/token" && idp.alterIdToken !== undefined && typeof body?.id_token === "string") {
      ctx.body = { ...body, id_token: await idp.alterIdToken(body.id_token) }
    }
  })
  const server: Server = createServer(provider.callback())
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return idp
}
