import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { NotFound, Unprocessable } from "../../domain/errors.ts"
import { SsoSettings, SsoSettingsInput } from "../../domain/sso.ts"
import { managementGroup, requires } from "./endpoints.ts"

export class SsoGroup extends HttpApiGroup.make("sso")
  .add(
    HttpApiEndpoint.get("get", "/sso", { success: SsoSettings, error: NotFound })
      .annotateMerge(requires("admin", "read", "The org's single sign-on settings, without the client secret; 404 while none are set.")),
    HttpApiEndpoint.put("update", "/sso", { payload: SsoSettingsInput, success: SsoSettings, error: Unprocessable })
      .annotateMerge(requires(
        "admin",
        "write",
        "Sets (or replaces) the org's OpenID Connect settings. The client secret is stored encrypted and never answered; " +
          "the answer's redirect_uri is what to register with the identity provider. 422 validation_error for an issuer " +
          "that is not https (http is allowed on loopback only) or a malformed domain."
      )),
    HttpApiEndpoint.delete("remove", "/sso", { success: HttpApiSchema.NoContent, error: NotFound })
      .annotateMerge(requires("admin", "write", "Removes the org's SSO settings: the dashboard takes API keys again."))
  )
  .pipe(managementGroup({
    title: "Single sign-on",
    description: "Sign-in to the dashboard with the company's identity provider (OpenID Connect, authorization code + " +
      "PKCE), one configuration per org. Changes are audited (resource `sso`), with the client secret redacted."
  }))
{}
