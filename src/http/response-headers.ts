import { Context } from "effect"

/**
 * Headers a handler adds to its request's response, whatever the response turns out to be (an
 * answer, or an error envelope the gateway writes): the gateway gives each request its own.
 */
export const ResponseHeaders = Context.Reference<Record<string, string>>("signal-engine/http/ResponseHeaders", {
  defaultValue: () => ({})
})
