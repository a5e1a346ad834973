import { createRequire } from "node:module"

/**
 * kafkajs 2.2.4's RequestQueue re-arms a timer after every check of its pending requests, even
 * with nothing pending and no throttle: the delay it computes is then `-1 - Date.now()`, which
 * Node turns into 1 ms (printing a TimeoutNegativeWarning once). So from its first response on,
 * every broker connection (producer, consumer, group coordinator, admin) runs a check every
 * millisecond for as long as it lives (tulios/kafkajs#1704, #1751; fixes proposed, unreleased).
 *
 * This replaces the method with the same logic minus that case: with nothing pending and no
 * throttle in force there is nothing to check, and the next `push` (which schedules a check when
 * it cannot send at once) or the next response (which checks) picks up whatever comes later.
 * A throttle with nothing pending still gets its check when the throttle ends, as before.
 */
interface RequestQueueLike {
  throttledUntil: number
  pending: ReadonlyArray<unknown>
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null
  checkPendingRequests(): void
  scheduleCheckPendingRequests(): void
}

/** kafkajs's own interval for re-checking pending requests that could not be sent yet. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10

function scheduleCheckPendingRequests(this: RequestQueueLike) {
  if (this.throttleCheckTimeoutId) return
  let scheduleAt = this.throttledUntil - Date.now()
  if (this.pending.length > 0) {
    scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL
  } else if (scheduleAt <= 0) {
    return
  }
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null
    this.checkPendingRequests()
  }, scheduleAt)
}

let patched: boolean | undefined

/**
 * Installs the fix once per process; answers whether it is in place. Only kafkajs 2.2.x, whose
 * method it replaces, is patched: another version keeps its own.
 */
export const patchKafkaRequestQueue = (): boolean => {
  if (patched !== undefined) return patched
  const require = createRequire(import.meta.url)
  const version = (require("kafkajs/package.json") as { readonly version: string }).version
  const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as { prototype: RequestQueueLike }
  patched = version.startsWith("2.2.") && typeof RequestQueue.prototype.scheduleCheckPendingRequests === "function"
  if (patched) RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests
  return patched
}
