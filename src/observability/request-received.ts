import { Context } from "effect"

/**
 * When the server read a request's headers (`performance.now()`), by the server's own request
 * object: stamped by the node:http listener that runs before the application's, so the time a
 * request spends before its handler starts (the application's start, a busy event loop's turn)
 * counts in its duration and in the verdict's `admit` stage.
 */
const received = new WeakMap<object, number>()

export const stampReceived = (request: object): void => void received.set(request, performance.now())

/** When the server read the request (its stamp), else undefined (a request not from the listener). */
export const receivedAt = (request: object): number | undefined => received.get(request)

/** The current request's `receivedAt`, for what it does deeper down (the ingress's `admit` stage). */
export const RequestReceived = Context.Reference<number | undefined>("signal-engine/observability/RequestReceived", {
  defaultValue: () => undefined
})
