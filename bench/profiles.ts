/** With --cpu-prof: the node flags that write a process's CPU profile, and its top entries once it exits. */
import { mkdirSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { topSelfTime } from "./profile-top.ts"

export interface Profile {
  readonly id: string
  readonly file: string
  readonly top: ReturnType<typeof topSelfTime>
}

export interface Profiles {
  /** Every profile collected so far, in the order the processes ended. */
  readonly taken: ReadonlyArray<Profile>
  /** The flags for the process `id` (none without --cpu-prof). */
  readonly flags: (id: string) => ReadonlyArray<string>
  /** Reads the profiles the process `id` wrote when it exited. */
  readonly collect: (id: string) => void
}

export const makeProfiles = (dir: string, enabled: boolean): Profiles => {
  const taken: Array<Profile> = []
  const dirOf = (id: string) => join(dir, "profiles", id)
  return {
    taken,
    flags: (id) => {
      if (!enabled) return []
      mkdirSync(dirOf(id), { recursive: true })
      return ["--cpu-prof", `--cpu-prof-dir=${dirOf(id)}`]
    },
    collect: (id) => {
      if (!enabled) return
      for (const f of readdirSync(dirOf(id)).filter((f) => f.endsWith(".cpuprofile"))) {
        taken.push({ id, file: join(dirOf(id), f), top: topSelfTime(join(dirOf(id), f), 25) })
      }
    }
  }
}
