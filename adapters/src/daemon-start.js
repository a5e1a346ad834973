// @ts-check
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { existsSync } from "./builtins.js"
import { adapterHome } from "./settings.js"

/** Where the resident hook process (daemon.js) says where it listens: `<port> <token>`. */
export const daemonFile = (env = process.env) => join(adapterHome(env), "daemon")

/** Whether hooks may be served by the resident process: on Linux (the tools' helpers read /proc, and `env -0` is GNU's), unless SIGNAL_ENGINE_DAEMON=off. */
export const daemonAllowed = (env = process.env) => env.SIGNAL_ENGINE_DAEMON !== "off" && existsSync("/proc/self")

/**
 * Starts the resident hook process in the background unless one is said to run: a hook run by
 * Node through the launcher calls it, so the next hooks need no Node start. `missing`: the
 * launcher could not use the one its file names (gone, or another HOME or adapter).
 */
export const startDaemon = async (env = process.env, missing = false) => {
  if (!daemonAllowed(env) || (!missing && existsSync(daemonFile(env)))) return
  const { spawn } = await import("node:child_process")
  const bin = fileURLToPath(new URL("../bin/signal-engine-adapter.js", import.meta.url))
  const { SIGNAL_ENGINE_DAEMON_MISSING: _missing, SIGNAL_ENGINE_LAUNCHER: _launcher, ...rest } = env
  spawn(process.execPath, [bin, "daemon"], { detached: true, stdio: "ignore", env: rest, cwd: "/" }).unref()
}
