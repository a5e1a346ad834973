/**
 * Kafka's default partitioner for keyed records (org.apache.kafka.common.utils.Utils.murmur2
 * and BuiltInPartitioner.partitionForKey), so PgLog and KafkaLog place a key on the partition
 * a Java, librdkafka (murmur2_random) or kafkajs producer would.
 */

const encoder = new TextEncoder()

/** Kafka's murmur2 of the bytes, as Java's signed 32-bit int. */
export const murmur2 = (data: Uint8Array): number => {
  const length = data.length
  const m = 0x5bd1e995
  const r = 24
  let h = (0x9747b28c ^ length) | 0
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    let k = (data[i4]! & 0xff) | ((data[i4 + 1]! & 0xff) << 8) | ((data[i4 + 2]! & 0xff) << 16) |
      ((data[i4 + 3]! & 0xff) << 24)
    // Math.imul is Java's wrapping int multiplication; >>> matches Java's unsigned shift.
    k = Math.imul(k, m)
    k ^= k >>> r
    k = Math.imul(k, m)
    h = Math.imul(h, m)
    h ^= k
  }
  const tail = length & ~3
  const rest = length % 4
  // Java's switch falls through from 3 to 1; the same, without fallthrough.
  if (rest === 3) h ^= (data[tail + 2]! & 0xff) << 16
  if (rest >= 2) h ^= (data[tail + 1]! & 0xff) << 8
  if (rest >= 1) {
    h ^= data[tail]! & 0xff
    h = Math.imul(h, m)
  }
  h ^= h >>> 13
  h = Math.imul(h, m)
  h ^= h >>> 15
  return h | 0
}

/** Kafka's `toPositive`: clears the sign bit (not Math.abs, which differs at MIN_VALUE). */
export const toPositive = (n: number): number => n & 0x7fffffff

/** The partition Kafka's default partitioner picks for a string key (UTF-8 bytes). */
export const partitionForKey = (key: string, partitions: number): number => toPositive(murmur2(encoder.encode(key))) % partitions
