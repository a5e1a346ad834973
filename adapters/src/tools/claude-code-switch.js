// @ts-check

/**
 * Claude Code announces every model switch to hooks (`/model <name>`, the picker, for this session
 * only or saved): PreModelSwitch before it lands, awaited, and PostModelSwitch once it has, not
 * awaited. Both name the target by its full ID. The transcript says the same only after its next
 * flush (every 100 ms, later under load), which a prompt typed at once can beat, and says nothing
 * at all under `--no-session-persistence`; the hooks are the session's own word, in time.
 *
 * The session's state keeps `switching` (Pre: the target, and when) and `switched` (Post: the
 * switch that landed). A landed switch names the session's model until a model answers after it
 * (then the transcript's answer says the same, and more: a fallback, an overload).
 */

/** @typedef {{ to: string, at: number }} Switch */

/** The session's state after a switch hook: Pre marks the switch as under way, Post as landed. */
export const recordSwitch = (/** @type {any} */ input, /** @type {Record<string, any>} */ state, now = Date.now()) => {
  const to = typeof input.to_model === "string" ? input.to_model : ""
  if (input.hook_event_name === "PreModelSwitch") return { ...state, switching: { to, at: now } }
  const pending = /** @type {Switch | undefined} */ (state.switching)
  // The landing keeps the time of its Pre: an answer after the switch began is the new model's.
  return { ...state, switching: undefined, switched: { to, at: pending && pending.to === to ? pending.at : now } }
}

/**
 * The switch that landed last, once no switch is still under way: a PostModelSwitch hook can run
 * after the next prompt's hook has started (Claude Code does not wait for it). A switch that never
 * lands within `waitMs` (another hook refused it) is dropped, so that no later hook waits for it.
 * @returns {Promise<{ switched: Switch | undefined, switching: Switch | undefined }>}
 */
export const settledSwitch = async (
  /** @type {() => Record<string, any>} */ read,
  /** @type {(state: Record<string, any>) => void} */ write,
  waitMs = 1_000
) => {
  for (let waited = 0;; waited += 25) {
    const state = read()
    /** @type {Switch | undefined} */
    const switching = state.switching
    /** @type {Switch | undefined} */
    const switched = state.switched
    if (!switching || (switched && switched.at >= switching.at)) return { switched, switching: undefined }
    if (waited >= waitMs) {
      write({ ...state, switching: undefined })
      return { switched, switching: undefined }
    }
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** The model a landed switch names, while no model has answered since it began. */
export const switchedModel = (/** @type {Switch | undefined} */ switched, /** @type {number} */ answeredAt) =>
  switched && switched.at > answeredAt ? switched.to : undefined
