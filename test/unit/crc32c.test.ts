import { createRequire } from "node:module"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { crc32c } from "../../src/log/crc32c.ts"

// kafkajs's own byte-at-a-time implementation, loaded directly (not through the patched module).
const kafkajsCrc32c = createRequire(import.meta.url)("kafkajs/src/protocol/recordBatch/crc32C/crc32C.js") as (
  bytes: Buffer
) => number

describe("crc32c (Kafka record batch checksum)", () => {
  // The standard check value of CRC-32C (RFC 3720, iSCSI): the CRC of the ASCII digits 1 to 9.
  it("gives the check value 0xE3069283 for \"123456789\"", () => {
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283)
    expect(crc32c(new Uint8Array(0))).toBe(0)
  })

  it("equals kafkajs's byte-at-a-time implementation for any bytes and length", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(crc32c(bytes)).toBe(kafkajsCrc32c(Buffer.from(bytes)))
      }),
      { numRuns: 2_000 }
    )
  })

  it("reads a Buffer that is a view into a larger allocation from its own start", () => {
    const pool = Buffer.from("xxxx123456789yyyy")
    expect(crc32c(pool.subarray(4, 13))).toBe(0xe3069283)
  })
})
