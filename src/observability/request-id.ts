import { Context } from "effect"

/** The id of the request being served; set once by the gateway middleware for every request. */
export const RequestId = Context.Reference<string>("signal-engine/observability/RequestId", { defaultValue: () => "" })
