import { expect } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { call } from "./harness.ts"

/**
 * Creates, through the management API, the org-wide rule the engine's blocking tests judge
 * signals by: a model_filter that blocks o3 with "o3 is not allowed". Answers the rule's id.
 */
export const blockO3 = async (server: { readonly baseUrl: string }, org: Bootstrapped): Promise<string> => {
  const rule = await call(server, "POST", "/api/v1/rules", {
    key: org.api_key_live!,
    body: {
      scope: "org",
      scope_id: org.org_id,
      name: "No o3",
      type: "model_filter",
      action: "block",
      action_config: { message: "o3 is not allowed" },
      condition: { model: { in: ["o3"] } }
    }
  })
  expect(rule.status).toBe(201)
  return rule.body.id as string
}
