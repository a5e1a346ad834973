// @ts-check
import { closeSync, fstatSync, openSync, readSync } from "../builtins.js"

/**
 * Reads the complete lines a JSONL file gained since `offset` (a line still being written is left
 * for the next read). Returns the parsed lines and the offset to start from next time; a file
 * that shrank (rotated, rewritten) is read from the start.
 * @returns {{ lines: any[], offset: number }}
 */
export const readNewLines = (/** @type {string | undefined} */ path, /** @type {number} */ offset, maxBytes = 64 * 1024 * 1024) => {
  if (!path) return { lines: [], offset }
  let fd
  try {
    fd = openSync(path, "r")
  } catch {
    return { lines: [], offset }
  }
  try {
    const size = fstatSync(fd).size
    const from = size < offset ? 0 : offset
    const length = Math.min(size - from, maxBytes)
    if (length <= 0) return { lines: [], offset: from }
    const buf = Buffer.allocUnsafe(length)
    const read = readSync(fd, buf, 0, length, from)
    const end = buf.lastIndexOf(10, read - 1)
    if (end < 0) return { lines: [], offset: from }
    const lines = []
    for (const line of buf.subarray(0, end).toString("utf8").split("\n")) {
      if (line.trim() === "") continue
      try {
        lines.push(JSON.parse(line))
      } catch {
        // not a record: skipped
      }
    }
    return { lines, offset: from + end + 1 }
  } finally {
    closeSync(fd)
  }
}

/** Remembers the last `limit` ids seen, so a record split over several lines counts once. */
export const rememberIds = (/** @type {string[] | undefined} */ seen, /** @type {string[]} */ ids, limit = 2000) => {
  const all = [...(seen ?? []), ...ids]
  return all.length > limit ? all.slice(all.length - limit) : all
}
