/**
 * The goal-drift corpus: goals of the kinds developers set, each with its work as a coding-agent
 * session (prompts as people write them, and the tool calls they cause), prompts that are not
 * that goal's work, and a thread of other work the user drifts into. Hand-written and
 * hand-labelled: the ground truth every change to the detector is measured on (evaluate.ts).
 *
 * Labels follow from where a prompt is: every prompt of `work` is on-goal (terse commands and
 * follow-ups included: they continue the goal's work); every prompt of `off` and of `drift` is
 * off-goal. Sessions: `work` alone is not drifted; `work` with one `off` prompt in its middle (an
 * aside) is not drifted; the first half of `work` then `drift` is drifted, from its first prompt, and so
 * is `drift` alone in a new session after a session of `work`; the second half of `work` in a new session after a
 * session of its first half is not (evaluate.ts also runs sessions side by side).
 */
import { bugs } from "./goals-bugs.ts"
import { clientBugs } from "./goals-bugs-clients.ts"
import { docs } from "./goals-docs.ts"
import { features } from "./goals-features.ts"
import { fresh as freshGoals } from "./goals-fresh.ts"
import { moreFresh } from "./goals-fresh-more.ts"
import { freshTwo as freshTwoGoals } from "./goals-fresh-two.ts"
import { moreFreshTwo } from "./goals-fresh-two-more.ts"
import { serviceFeatures } from "./goals-features-services.ts"
import { heldOut } from "./goals-held-out.ts"
import { moreHeldOut } from "./goals-held-out-more.ts"
import { otherLanguages } from "./goals-other-languages.ts"
import { migrations } from "./goals-migrations.ts"
import { operations } from "./goals-operations.ts"
import { refactors } from "./goals-refactors.ts"
import { wideA } from "./goals-wide-a.ts"
import { wideAMore } from "./goals-wide-a-more.ts"
import { wideB } from "./goals-wide-b.ts"
import { wideBMore } from "./goals-wide-b-more.ts"

export type GoalKind = "bug" | "feature" | "migration" | "refactor" | "infrastructure" | "docs"

/** A prompt (a string), or a tool call the agent made, as the coding tool reports it. */
export type Step =
  | string
  | { readonly read: string }
  | { readonly edit: string }
  | { readonly write: string }
  | { readonly grep: string; readonly path?: string }
  | { readonly bash: string }

export interface CorpusGoal {
  readonly id: string
  readonly kind: GoalKind
  /** The goal as the developer set it (POST /goals). */
  readonly goal: string
  /** The working folder of the coding tool (sent as metadata.cwd). */
  readonly cwd: string
  /** The goal's work, in order: every prompt is on-goal. */
  readonly work: ReadonlyArray<Step>
  /** Prompts that are not this goal's work, each asked on its own in the middle of it. */
  readonly off: ReadonlyArray<string>
  /** Other work the user turns to after the first half of `work`: every prompt is off-goal. */
  readonly drift: ReadonlyArray<Step>
  /** The goal is any work ("Sprint tasks"): another goal's work, of whichever kind, is its work too. */
  readonly anyWork?: true
}

/** The goals the detector is developed on. */
export const development: ReadonlyArray<CorpusGoal> = [...bugs, ...clientBugs, ...features, ...serviceFeatures, ...migrations, ...refactors, ...operations, ...docs]

/** Goals written after the detector was settled, and never tuned on: how it does on unseen work. */
export const held: ReadonlyArray<CorpusGoal> = [...heldOut, ...moreHeldOut]

/**
 * Goals written before the detector was made to generalise, in stacks the rest does not cover, and
 * never tuned on: the detector is only measured on them, to report (docs/benchmarks.md).
 */
export const fresh: ReadonlyArray<CorpusGoal> = [...freshGoals, ...moreFresh]

/**
 * Development material written after the second fresh set, in common stacks (Next.js, FastAPI,
 * Rails, Node, Kubernetes, React Native, Angular, GraphQL, Swift, Spring Batch, …), to place a
 * detector's thresholds on more work than the development set alone; measured like the held-out set.
 */
export const wide: ReadonlyArray<CorpusGoal> = [...wideA, ...wideAMore, ...wideB, ...wideBMore]

/**
 * A second fresh set, written blind to the detector (its author neither read nor ran it) after the
 * first had been measured, in other stacks again: only measured on, never tuned on.
 */
export const freshTwo: ReadonlyArray<CorpusGoal> = [...freshTwoGoals, ...moreFreshTwo]

export const isPrompt = (step: Step): step is string => typeof step === "string"

/** Goals set in English whose work is prompted in German or Spanish: measured, not tuned on. */
export const inOtherLanguages: ReadonlyArray<CorpusGoal> = otherLanguages

/** A goal of each kind as people also set it, naming no task, only the kind of work (drift.ts `isThin`). */
const thinGoal: Readonly<Record<GoalKind, string>> = {
  bug: "Fix bugs",
  feature: "New features",
  migration: "Upgrades",
  refactor: "Refactor",
  infrastructure: "Infra work",
  docs: "Write docs"
}

/**
 * The same goals' work under a thin goal of their kind ("Fix bugs" for a bug's): its work is still
 * on-goal. Its other work may be the thin goal's too (another bug under "Fix bugs"), so only the
 * on-goal figures are labels here; the drift figures are reported, not held.
 */
export const underThinGoals = (goals: ReadonlyArray<CorpusGoal>): ReadonlyArray<CorpusGoal> =>
  goals.map((g) => ({ ...g, id: `thin-${g.id}`, goal: thinGoal[g.kind] }))

/**
 * The same goals' work under a goal of any work ("Sprint tasks"), as people set for a day or a
 * sprint: every task is its work, so only the on-goal figures and the next task's are labels here.
 */
export const underAnyWorkGoals = (goals: ReadonlyArray<CorpusGoal>): ReadonlyArray<CorpusGoal> =>
  goals.map((g) => ({ ...g, id: `any-${g.id}`, goal: "Sprint tasks", anyWork: true }))
