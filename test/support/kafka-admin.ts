import { Kafka, logLevel } from "kafkajs"

/** Deletes a partition's records before an offset on the broker, as retention does (moves its start). */
export const deleteKafkaRecords = async (brokers: string, topic: string, partition: number, before: number) => {
  const admin = new Kafka({ brokers: brokers.split(","), logLevel: logLevel.ERROR }).admin()
  await admin.connect()
  try {
    // kafkajs finds the partition's leader from metadata it must have loaded first.
    await admin.fetchTopicMetadata({ topics: [topic] })
    await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(before) }] })
  } finally {
    await admin.disconnect()
  }
}
