import Module, { createRequire } from "node:module"
import { dirname } from "node:path"
import { crc32c } from "./crc32c.ts"

/**
 * Two replacements inside kafkajs 2.2.x, installed once per process before the first client is
 * made (`patchKafkajs`); another kafkajs version keeps its own code. docs/decisions.md has both.
 */

const require = createRequire(import.meta.url)
const isPatchable = () => (require("kafkajs/package.json") as { readonly version: string }).version.startsWith("2.2.")

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

let queuePatched: boolean | undefined

const patchRequestQueue = (): boolean => {
  if (queuePatched !== undefined) return queuePatched
  const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as { prototype: RequestQueueLike }
  queuePatched = isPatchable() && typeof RequestQueue.prototype.scheduleCheckPendingRequests === "function"
  if (queuePatched) RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests
  return queuePatched
}

/**
 * kafkajs checksums every record batch it produces with a byte-at-a-time CRC-32C (about 6 µs per
 * KB here; `crc32c.ts` takes about 1). Its record batch encoder takes the function from its
 * `crc32C` module when it is first loaded, which kafkajs does on its first produce or fetch, so
 * the module is replaced in the require cache before that; once the encoder is loaded with
 * kafkajs's own function, it stays (and this answers false).
 */
const patchCrc32c = (): boolean => {
  const checksum = require.resolve("kafkajs/src/protocol/recordBatch/crc32C/index.js")
  const cached = require.cache[checksum]
  if (cached?.exports === crc32c) return true
  if (!isPatchable() || require.resolve("kafkajs/src/protocol/recordBatch/v0/index.js") in require.cache) return false
  const replacement = new Module(checksum)
  replacement.filename = checksum
  replacement.paths = [dirname(checksum)]
  replacement.exports = crc32c
  replacement.loaded = true
  require.cache[checksum] = replacement
  return true
}

/** Installs both replacements (once per process); answers which are in place. */
export const patchKafkajs = (): { readonly requestQueue: boolean; readonly crc32c: boolean } => ({
  requestQueue: patchRequestQueue(),
  crc32c: patchCrc32c()
})
