import { boundedMemo } from "./bounded-memo.ts"
import { sameWord, words } from "./drift-words.ts"

/**
 * Kinds of work a thin goal names ("Fix bugs", "Write docs", "Upgrades", or any work: "Sprint
 * tasks", "Backlog"; drift.ts `isThin`), and the words by which a prompt shows work of that kind.
 * Under such a goal any task of its kind is the goal's work (the second bug under "Fix bugs" as
 * much as the first), so from context-7 a prompt that shows the kind is on-goal; a task of another
 * kind, or no work, still drifts. Written from what such work says, not from the corpus, without
 * everyday verbs ("add", "write", "clean"), which anything says; part of the method (a change is a
 * new method).
 */
const kinds: ReadonlyArray<{ readonly named: string; readonly shows: string }> = [
  {
    named: "bug bugs bugfix bugfixes fix fixes fixing defect defects crash crashes hotfix hotfixes regression regressions",
    shows: `bug fix error crash exception fail broken regression wrong incorrect traceback stacktrace panic flaky leak hang
freeze timeout null undefined nan repro reproduce debug investigate throws thrown segfault glitch corrupt mismatch`
  },
  {
    named: "feature features improvement improvements enhancement enhancements",
    shows: "implement support allow introduce feature enable ability screen button form page endpoint"
  },
  {
    named: "upgrade upgrades migration migrations migrate dependency dependencies bump bumps",
    shows: `upgrade migrate migration bump version deprecated deprecation port breaking changelog lockfile dependency release
compatible compatibility replace`
  },
  {
    named: "refactor refactors refactoring cleanup clean tidy debt polish",
    shows: "refactor extract rename split simplify dedupe duplicate duplication inline restructure reorganize consolidate decouple untangle typing types"
  },
  {
    named: "infra infrastructure ops devops",
    shows: `deploy deployment pipeline ci workflow docker container kubernetes helm terraform cluster monitor monitoring alert alerting
dns nginx backup runner provision server servers vpc bucket`
  },
  {
    named: "doc docs documentation document documenting",
    shows: "doc readme document documentation guide comment docstring changelog tutorial wiki"
  },
  {
    named: "performance perf optimization optimizations optimize optimise speed",
    shows: "slow fast faster speed perf performance latency optimize cache profile memory cpu benchmark throughput"
  },
  {
    named: "security vulnerability vulnerabilities cve cves",
    shows: "security vulnerability cve secret xss csrf injection permission sanitize audit exploit"
  }
]

const stems = (list: string) => [...new Set(words(list).map((w) => w.stem))]
/** A goal of any work ("Sprint tasks", "Backlog", "Chores"): work of every kind shows it. */
const anyWork = { named: "maintenance misc miscellaneous chore chores backlog sprint task tasks todo todos", shows: kinds.map((k) => k.shows).join(" ") }
const compiled = [...kinds, anyWork].map((k) => ({ named: stems(k.named), shows: stems(k.shows) }))

const has = (text: ReadonlyArray<string>, list: ReadonlyArray<string>) => text.some((s) => list.some((l) => sameWord(s, l)))

/** The kinds of work a goal names, by index (none for "PROJ-1234": one task, named elsewhere). */
const kindsOf = boundedMemo((description) => {
  const named = words(description).map((w) => w.stem)
  return compiled.flatMap((k, i) => (has(named, k.named) ? [i] : []))
})

/** Whether a prompt shows work of a kind one of the thin goals names. */
export const showsKind = (prompt: string, thinGoals: ReadonlyArray<{ readonly description: string }>): boolean => {
  const named = thinGoals.flatMap((g) => kindsOf(g.description))
  if (named.length === 0) return false
  const said = words(prompt).map((w) => w.stem)
  return named.some((i) => has(said, compiled[i]!.shows))
}
