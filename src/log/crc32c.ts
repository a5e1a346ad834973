/**
 * CRC-32C (Castagnoli), the checksum of Kafka record batches, eight bytes per step ("slicing by
 * 8": eight 256-entry tables, so each step is eight lookups instead of eight dependent
 * byte-at-a-time rounds). kafkajs computes it a byte at a time over every record batch it
 * produces, which made it one of the producer's larger costs; `kafkajs-patches.ts` installs this.
 */
const POLYNOMIAL = 0x82f63b78 // reversed 0x1EDC6F41

const tables = (() => {
  const t = new Int32Array(8 * 256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1
    t[n] = c
  }
  // t[k * 256 + n]: the CRC of byte n followed by k zero bytes.
  for (let n = 0; n < 256; n++) {
    let c = t[n]!
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff]! ^ (c >>> 8)
      t[k * 256 + n] = c
    }
  }
  return t
})()

/** The CRC-32C of `bytes`, as an unsigned 32-bit integer. */
export const crc32c = (bytes: Uint8Array): number => {
  const t = tables
  let crc = -1
  let i = 0
  const whole = bytes.length - (bytes.length & 7)
  for (; i < whole; i += 8) {
    const low = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))
    crc = t[1792 + (low & 0xff)]! ^ t[1536 + ((low >>> 8) & 0xff)]! ^ t[1280 + ((low >>> 16) & 0xff)]! ^
      t[1024 + (low >>> 24)]! ^ t[768 + bytes[i + 4]!]! ^ t[512 + bytes[i + 5]!]! ^ t[256 + bytes[i + 6]!]! ^ t[bytes[i + 7]!]!
  }
  for (; i < bytes.length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}
