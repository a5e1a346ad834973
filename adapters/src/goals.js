// @ts-check
import { rmSync } from "./builtins.js"
import { join } from "node:path"
import { newKey, request } from "./client.js"
import { readJson, writeJsonPrivate } from "./json-file.js"
import { adapterHome, loadSettings } from "./settings.js"

/**
 * Goals from the terminal, and goal drift shown where the person works: the engine answers the
 * prompt that completes an off-goal streak with the drift (`drift` in its verdict); the hook shows
 * it as a warning and remembers its session, so that `goal refocus` (back to the goal) and `goal
 * not-drift` (it was the goal's work) answer that session's drift with a `refocus-ack` in it, on
 * its timeline, and `goal set` says what the work is now.
 *
 * @typedef {{ goal_id: string, goal: string, since: string, off_goal_prompts: number, prompts?: string[] }} Drift
 * @typedef {{ tool: string, session_id: string } & Drift} RememberedDrift
 */

export const commandName = "signal-engine-adapter"

const driftPath = (env = process.env) => join(adapterHome(env), "drift.json")

const clock = (/** @type {string} */ iso) => {
  const at = new Date(iso)
  return Number.isNaN(at.getTime()) ? iso : `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`
}

/** What the person is told of a drift in an event's answers, if one is there. */
export const driftWarning = (/** @type {import("./client.js").Result[]} */ results) => {
  const drift = results.find((r) => r.drift)?.drift
  if (!drift) return undefined
  // No ASCII double quotes: a tool may show the message JSON-escaped.
  return `goal drift: the last ${drift.off_goal_prompts} prompts look unrelated to your goal “${drift.goal}” (since ${clock(drift.since)}). ` +
    `Back to it: ${commandName} goal refocus. It was the goal's work: ${commandName} goal not-drift. ` +
    `Moved on: ${commandName} goal set '<what you work on now>'`
}

/** Keeps the last drift an event was answered with (its tool and session), for `goal refocus` and `not-drift`; never fails the hook. */
export const rememberDrift = (
  /** @type {string} */ tool,
  /** @type {import("./client.js").Signal[]} */ signals,
  /** @type {import("./client.js").Result[]} */ results,
  env = process.env
) => {
  const i = results.findIndex((r) => r.drift)
  const signal = signals[i]
  const drift = results[i]?.drift
  if (!signal || !drift) return
  try {
    writeJsonPrivate(driftPath(env), { tool, session_id: signal.session_id, ...drift })
  } catch {
    // Only the answers need it, and they say so when nothing is remembered.
  }
}

const readDrift = (env = process.env) => {
  try {
    return /** @type {RememberedDrift | undefined} */ (readJson(driftPath(env)))
  } catch {
    return undefined
  }
}

const usage = `usage: ${commandName} goal [list]
  goal set <description>           a new active goal (the work you are about to do)
  goal done [<id>]                 the goal is completed (the only active one when no id)
  goal drop [<id>]                 the goal is abandoned
  goal refocus                     answer the last goal drift shown: you are back on the goal
  goal not-drift                   answer it: those prompts were the goal's work (they count as its words from now on)`

/**
 * `goal …`: the user's goals through the engine API with the adapter's license key. Answers the
 * exit code: 0 done, 1 the service refused or could not be reached, 2 a bad command line.
 */
export const goalCommand = async (
  /** @type {string[]} */ args,
  /** @type {(s: string) => void} */ out,
  /** @type {(s: string) => void} */ err,
  env = process.env
) => {
  const [verb = "list", ...rest] = args
  if (!["list", "set", "done", "drop", "refocus", "not-drift"].includes(verb) || (verb === "set" && rest.join(" ").trim() === "")) {
    err(usage)
    return 2
  }
  const settings = loadSettings(env)
  if (!settings.url || !settings.license_key) {
    err(`${commandName}: not configured (run ${commandName} install <tool> --url URL --license-key KEY)`)
    return 1
  }
  const target = { url: settings.url, license_key: settings.license_key }
  const call = async (/** @type {string} */ method, /** @type {string} */ path, /** @type {unknown} */ body, headers = {}) => {
    const answer = await request(target, method, path, body, Math.max(settings.timeout_ms, 10_000), headers)
    if (answer.status === 0) {
      err(`${commandName}: the service could not be reached (${"reason" in answer ? answer.reason : "no answer"})`)
      return undefined
    }
    const body_ = "body" in answer ? answer.body : undefined
    if (answer.status >= 300) {
      err(`${commandName}: ${answer.status} ${body_?.code ?? "error"}${body_?.error ? `: ${body_.error}` : ""}`)
      return undefined
    }
    return body_
  }
  const active = async () => /** @type {{ id: string, description: string }[] | undefined} */ ((await call("GET", "/goals?limit=100", undefined))?.goals)
  switch (verb) {
    case "list": {
      const goals = await active()
      if (!goals) return 1
      if (goals.length === 0) out(`no active goal (${commandName} goal set <description>)`)
      for (const g of goals) out(`${g.id}  ${g.description}`)
      return 0
    }
    case "set": {
      const description = rest.join(" ").trim()
      const created = await call("POST", "/goals", { description })
      if (!created) return 1
      out(`${created.goal.id}  ${created.goal.description}`)
      return 0
    }
    case "done":
    case "drop": {
      let id = rest[0]
      if (id === undefined) {
        const goals = await active()
        if (!goals) return 1
        if (goals.length !== 1) {
          err(
            goals.length === 0
              ? `${commandName}: no active goal`
              : `${commandName}: ${goals.length} active goals, name one:\n${goals.map((g) => `${g.id}  ${g.description}`).join("\n")}`
          )
          return 2
        }
        id = /** @type {{ id: string }} */ (goals[0]).id
      }
      const changed = await call("PATCH", `/goals/${encodeURIComponent(id)}`, { status: verb === "done" ? "completed" : "abandoned" })
      if (!changed) return 1
      out(`${changed.goal.id}  ${changed.goal.status}  ${changed.goal.description}`)
      return 0
    }
    case "refocus":
    case "not-drift": {
      const drift = readDrift(env)
      if (!drift) {
        err(`${commandName}: no goal drift to answer (none was shown here)`)
        return 1
      }
      // Into the session that drifted, so that it answers that session's streak and shows on its timeline.
      // Naming the drift's prompts lets their words count as the goal's even if the session has moved on since.
      const named = verb === "not-drift" && Array.isArray(drift.prompts) ? { prompts: drift.prompts } : {}
      const metadata = { goal_id: drift.goal_id, ...(verb === "not-drift" ? { on_goal: true, ...named } : {}) }
      const sent = await call("POST", "/signals", { type: "refocus-ack", adapter: drift.tool, session_id: drift.session_id, metadata }, {
        "idempotency-key": newKey()
      })
      if (!sent) return 1
      rmSync(driftPath(env), { force: true })
      out(verb === "not-drift" ? `noted: that was work on "${drift.goal}"` : `back on "${drift.goal}": the drift is answered`)
      return 0
    }
    default:
      err(usage)
      return 2
  }
}
