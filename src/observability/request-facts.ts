import { Context } from "effect"

/**
 * Who a request is from, once its credential is known: the gateway gives each request its own,
 * authentication fills it in, and the log lines and the access line of the request carry it.
 */
export interface RequestFacts {
  org_id?: string
  user_id?: string
}

export const RequestFacts = Context.Reference<RequestFacts>("signal-engine/observability/RequestFacts", { defaultValue: () => ({}) })
