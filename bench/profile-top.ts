/**
 * The top self-time entries of a V8 .cpuprofile (as written by `node --cpu-prof`): function,
 * location and share of all samples. Usage: node bench/profile-top.ts <file.cpuprofile> [count]
 */
import { readFileSync } from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface TopEntry {
  readonly fn: string
  readonly where: string
  readonly selfMs: number
  readonly percent: number
}

export const topSelfTime = (file: string, count = 20): ReadonlyArray<TopEntry> => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<string, { fn: string; where: string; micros: number }>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    total += delta
    const frame = byId.get(id)?.callFrame
    if (!frame) return
    const where = frame.url === "" ? "" : `${frame.url.replace(/^file:\/\/.*?\/(node_modules|src)\//, "$1/")}:${frame.lineNumber + 1}`
    const fn = frame.functionName || "(anonymous)"
    const key = `${fn} ${where}`
    const entry = self.get(key) ?? { fn, where, micros: 0 }
    entry.micros += delta
    self.set(key, entry)
  })
  return [...self.values()]
    .sort((a, b) => b.micros - a.micros)
    .slice(0, count)
    .map((e) => ({ fn: e.fn, where: e.where, selfMs: Math.round(e.micros / 1000), percent: Math.round((e.micros / total) * 1000) / 10 }))
}

/** Self time grouped by where the code lives: a package, a folder of src/, node internals, GC, idle. */
export const selfTimeByArea = (file: string): ReadonlyArray<{ readonly area: string; readonly percent: number }> => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const areas = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    total += delta
    const frame = byId.get(id)?.callFrame
    const url = frame?.url ?? ""
    const area = url === ""
      ? (frame?.functionName.startsWith("(") ? frame.functionName : "native")
      : /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? /\/(src\/[^/]+)\//.exec(url)?.[1] ?? (url.startsWith("node:") ? "node internals" : url)
    areas.set(area, (areas.get(area) ?? 0) + delta)
  })
  return [...areas.entries()].sort((a, b) => b[1] - a[1]).map(([area, micros]) => ({ area, percent: Math.round((micros / total) * 1000) / 10 }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2]
  if (!file) throw new Error("usage: node bench/profile-top.ts <file.cpuprofile> [count]")
  for (const e of topSelfTime(file, Number(process.argv[3] ?? 25))) {
    console.log(`${String(e.percent).padStart(5)}%  ${String(e.selfMs).padStart(7)} ms  ${e.fn}  ${e.where}`)
  }
  console.log("by area:")
  for (const a of selfTimeByArea(file)) console.log(`${String(a.percent).padStart(5)}%  ${a.area}`)
}
