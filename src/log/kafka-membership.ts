import { Effect, Schedule } from "effect"
import type { KafkaClient } from "./kafka-client.ts"

/** What kafkajs's internal cluster client offers that removing a dead member needs. */
interface KafkajsCluster {
  connect(): Promise<void>
  disconnect(): Promise<void>
  findGroupCoordinator(o: { readonly groupId: string }): Promise<{ leaveGroup(o: { readonly groupId: string; readonly memberId: string }): Promise<unknown> }>
}

/**
 * The member ids of this process's consumers that are in their group now. A consumer that
 * crashed (the broker went away) is taken out, so that its successor removes it.
 */
export const liveMembers = new Set<string>()

/**
 * Removes from the group the members this node left there (same client id: same
 * KAFKA_GROUP_INSTANCE_ID) and no longer runs: a previous incarnation killed and restarted, or this
 * process's own consumer that crashed while the broker was away. Left there, each holds up the
 * group's next rebalance until its session times out (30 s by default); removed, the node's
 * partitions are back at its join. kafkajs 2.2.4 has no static membership (group.instance.id) nor
 * a LeaveGroup for another member, so this asks the group's coordinator through kafkajs's own
 * cluster client. Retried for a few seconds: a broker just back answers "coordinator loading".
 */
export const removeStaleMembers = ({ kafka, admin, settings }: KafkaClient, groupId: string) =>
  Effect.tryPromise(async () => {
    const described = await admin.describeGroups([groupId])
    const stale = (described.groups[0]?.members ?? [])
      .filter((m) => m.clientId === `signal-engine@${settings.instance}` && !liveMembers.has(m.memberId))
      .map((m) => m.memberId)
    if (stale.length === 0) return stale
    const createCluster = Object.getOwnPropertySymbols(kafka).find((s) => s.description === "private:Kafka:createCluster")
    if (createCluster === undefined) return []
    const cluster = (kafka as unknown as Record<symbol, (o: object) => KafkajsCluster>)[createCluster]!({ allowAutoTopicCreation: false })
    await cluster.connect()
    try {
      const coordinator = await cluster.findGroupCoordinator({ groupId })
      for (const memberId of stale) await coordinator.leaveGroup({ groupId, memberId })
    } finally {
      await cluster.disconnect()
    }
    return stale
  }).pipe(
    Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 20 }),
    Effect.tap((stale) =>
      stale.length > 0 ? Effect.logInfo(`KafkaLog: removed this node's stale memberships from ${groupId}: ${stale.join(", ")}`) : Effect.void
    ),
    Effect.catchCause((cause) => Effect.logWarning("KafkaLog: could not remove this node's stale group memberships", cause))
  )
