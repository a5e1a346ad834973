import { createHash, randomFillSync } from "node:crypto"

/**
 * Resource ids: `<prefix>_<12 hex of milliseconds><20 hex random>`.
 * The time prefix makes ids sort by creation time, which keyset pagination relies on; the
 * random tail (80 bits) makes them unguessable. Within one process ids are strictly increasing
 * (as ULIDs are): an id minted in the same millisecond as the previous one increments its tail.
 */
/**
 * Random bytes drawn from the CSPRNG a few kilobytes at a time: one system call per ~300 ids
 * instead of one per id (ids are minted for every request and signal).
 */
const pool = Buffer.alloc(4096)
let poolAt = pool.length
const randomHex = (bytes: number): string => {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  const hex = pool.toString("hex", poolAt, poolAt + bytes)
  poolAt += bytes
  return hex
}

let lastMs = -1
let lastTail = 0n
const tailLimit = 1n << 80n

export const makeId = (prefix: string, nowMs: number = Date.now()): string => {
  let ms = Math.trunc(nowMs)
  let tail: bigint
  if (ms <= lastMs) {
    ms = lastMs
    tail = lastTail + 1n
    if (tail >= tailLimit) {
      ms += 1
      tail = BigInt(`0x${randomHex(10)}`) >> 1n
    }
  } else {
    // Half the range, so increments within a millisecond cannot overflow in practice.
    tail = BigInt(`0x${randomHex(10)}`) >> 1n
  }
  lastMs = ms
  lastTail = tail
  return `${prefix}_${ms.toString(16).padStart(12, "0")}${tail.toString(16).padStart(20, "0")}`
}

export const IdPrefix = {
  org: "org",
  user: "user",
  team: "team",
  project: "proj",
  apiKey: "key",
  licenseKey: "lk",
  fleetCredential: "fk",
  request: "req"
} as const

/**
 * The id of a signal sent with an idempotency key: the same for every copy of it (a retry), so
 * whichever copy a client was answered for names the one stored signal. A hash of who sent it
 * and the key (`sig_` and 32 hex, the shape of minted ids); unlike minted ids it carries no time,
 * which no query needs: events and sessions are ordered by their timestamps, ids only break ties.
 */
export const signalIdForKey = (orgId: string, environment: string, userId: string, key: string): string =>
  `sig_${createHash("sha256").update(`${orgId}\u0000${environment}\u0000${userId}\u0000${key}`).digest("hex").slice(0, 32)}`

/** Request ids are not stored; 12 random bytes are enough to correlate logs and reports. */
export const makeRequestId = (): string => `${IdPrefix.request}_${randomHex(12)}`
