// @ts-check

/**
 * Where a hook runs, as the tool started it: its parent process (the tool, or the shell the tool
 * started it through) and its working folder. A hook run by its own Node process reads its own;
 * one served by the resident hook process (daemon.js) is told them by the launcher, and many run
 * at once there, so the daemon answers per request.
 * @typedef {{ ppid: number, cwd: string }} HookPlace
 */

/** @type {() => HookPlace | undefined} */
let served = () => undefined

/** The daemon's: the place of the request being served (undefined outside one). */
export const servePlacesWith = (/** @type {() => HookPlace | undefined} */ current) => {
  served = current
}

/** The hook's parent process id. */
export const hookParentPid = () => served()?.ppid ?? process.ppid

/** The hook's working folder. */
export const hookCwd = () => served()?.cwd ?? process.cwd()
