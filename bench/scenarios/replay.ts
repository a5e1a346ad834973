/**
 * replay: `signal-engine replay` over a log of --replay-records records, against the raw read
 * (bench/read-raw.ts: every partition read and decoded, nothing folded or written), then again
 * over the projections the first replay wrote (a rebuild).
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import type { Bench } from "../context.ts"
import { round } from "../measure.ts"
import { type LogName, options } from "../options.ts"
import { baseEnv, node, pinned, root, run } from "../processes.ts"
import { say } from "../say.ts"
import { seedUsers } from "../seed.ts"
import { logEnvFor } from "../service.ts"
import { fillKafkaLog, fillPgLog } from "./replay-fill.ts"

/** What `signal-engine replay` printed of itself. */
const parseReplay = (stdout: string) => {
  const match = /replayed (\d+) records of \d+ partition\(s\) in ([\d.]+) s/.exec(stdout)
  if (!match) throw new Error(`unexpected replay output: ${stdout}`)
  const indexS = /read indexes built in ([\d.]+) s/.exec(stdout)?.[1]
  const cpuS = /([\d.]+) s of CPU in this process/.exec(stdout)?.[1]
  const gcS = /([\d.]+) s of it paused for garbage collection/.exec(stdout)?.[1]
  return {
    records: Number(match[1]),
    seconds: Number(match[2]),
    indexS: indexS === undefined ? undefined : Number(indexS),
    cpuS: cpuS === undefined ? undefined : Number(cpuS),
    gcS: gcS === undefined ? undefined : Number(gcS)
  }
}

export const replayScenario = async (bench: Bench, log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await bench.database.newDatabase(`bench_replay_${id}`)
  const tenant = await seedUsers(url, options.users)
  say(`replay over ${log}: writing ${options.replayRecords} records`)
  const fillStarted = Date.now()
  const env: Record<string, string> = { DATABASE_URL: url, LOG_PARTITIONS: String(options.partitions), ...logEnvFor(bench, log, id) }
  if (log === "pg") await fillPgLog(url, tenant, options.replayRecords)
  else await fillKafkaLog(bench.broker!.brokers, `signals-${id}`, tenant, options.replayRecords)
  const fillS = (Date.now() - fillStarted) / 1000

  say(`replay over ${log}: raw read`)
  // With --cpu-prof the raw read is profiled too: what replay adds is the difference of the two.
  const rawRead = async (profiled: boolean) => {
    const flags = profiled ? bench.profiles.flags(`raw-read-${log}`) : []
    const [rawCmd, rawArgs] = pinned(0, node, [...flags, join(root, "bench", "read-raw.ts")])
    const { stdout } = await run(rawCmd, rawArgs, { cwd: root, env: { ...baseEnv, ...env } })
    return JSON.parse(stdout.trim().split("\n").pop()!) as { records: number; seconds: number; cpu_s: number; gc_s: number }
  }
  // The baseline is read before and after the replay, and their mean is the one compared with
  // it: this VM's speed drifts over minutes, and the two readings bracket the replay in time.
  const rawBefore = await rawRead(true)
  bench.profiles.collect(`raw-read-${log}`)

  const replayCli = async (profiled: boolean) => {
    const flags = profiled ? bench.profiles.flags(`replay-${log}`) : []
    const [cmd, args] = pinned(0, node, [...flags, join(root, "bin", "signal-engine.js"), "replay"])
    const started = Date.now()
    const { stdout } = await run(cmd, args, { cwd: root, env: { ...baseEnv, ...env }, maxBuffer: 64 * 1024 * 1024 })
    const wallS = (Date.now() - started) / 1000
    return { ...parseReplay(stdout), wallS }
  }
  say(`replay over ${log}: signal-engine replay`)
  const first = await replayCli(true)
  bench.profiles.collect(`replay-${log}`)
  // What an SRE runs: a rebuild over the projections already there (the first replay's).
  say(`replay over ${log}: signal-engine replay again, over its projections`)
  const again = await replayCli(false)
  const replayed = first.records
  const seconds = first.seconds
  say(`replay over ${log}: raw read again`)
  const rawAfter = await rawRead(false)
  const raw = {
    records: rawBefore.records,
    seconds: (rawBefore.seconds + rawAfter.seconds) / 2,
    cpu_s: (rawBefore.cpu_s + rawAfter.cpu_s) / 2,
    gc_s: (rawBefore.gc_s + rawAfter.gc_s) / 2
  }
  const rawRate = raw.records / raw.seconds
  const replayRate = replayed / seconds
  bench.record({
    scenario: "replay",
    log,
    figures: {
      records: replayed,
      signals_per_s: Math.round(replayRate),
      raw_read_per_s: Math.round(rawRate),
      ratio_to_raw_read: round(replayRate / rawRate, 3),
      replay_s: seconds,
      replay_wall_s: round(first.wallS),
      // Of replay_s: the read indexes' build at the end (the database's work; this process waits).
      ...(first.indexS === undefined ? {} : { index_build_s: first.indexS }),
      // The replay process's own CPU, start-up included: how much of its core it kept busy.
      ...(first.cpuS === undefined ? {} : { replay_cpu_s: first.cpuS }),
      // Of it, the main thread's pauses for garbage collection (the raw read's: raw_read_gc_s).
      ...(first.gcS === undefined ? {} : { replay_gc_s: first.gcS }),
      // The same replay run again over the projections the first one wrote (a rebuild).
      rebuild_per_s: Math.round(again.records / again.seconds),
      rebuild_ratio_to_raw_read: round(again.records / again.seconds / rawRate, 3),
      rebuild_s: again.seconds,
      raw_read_s: round(raw.seconds, 2),
      raw_read_cpu_s: round(raw.cpu_s),
      raw_read_gc_s: round(raw.gc_s, 2),
      // How far apart the two raw reads were, relative to their mean: the VM's drift meanwhile.
      raw_read_spread: round(Math.abs(rawBefore.seconds - rawAfter.seconds) / raw.seconds, 3),
      fill_s: round(fillS)
    }
  })
}
