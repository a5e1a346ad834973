// @ts-check
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "./builtins.js"
import { daemonFile } from "./daemon-start.js"
import { adapterHome } from "./settings.js"

/**
 * What the tools' configs run: a small sh script in the adapter's home, rewritten by every
 * install, that runs the hook with the Node and the adapter it was installed with. Those two paths
 * are what a Node upgrade, `nvm use` or `nvm uninstall` takes away; the script's own path is not.
 * When they are gone it runs the adapter with any `node` on PATH, or a `signal-engine-adapter`
 * on PATH, and else says what broke on stderr (exit 1, or 2, a block, when the adapter fails
 * closed). It costs the tool one `sh` exec, not a node start, as it `exec`s node.
 */
export const launcherPath = (env = process.env) => join(adapterHome(env), "bin", "signal-engine-adapter")

/** The adapter's own entry point, as this process found it. */
export const adapterScript = () => fileURLToPath(new URL("../bin/signal-engine-adapter.js", import.meta.url))

const shq = (/** @type {string} */ s) => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * The launcher's client of the resident hook process (daemon.js), run by bash: the hook's input,
 * its environment (`env -0`), folder and parent go over the loopback socket the daemon's file
 * names, and its answer is printed as a Node hook would print it. Whatever fails (no daemon, a
 * refused connection, a daemon that answers `fallback` or dies), the launcher runs the hook with
 * Node, telling it the daemon was missing so that it starts one.
 */
const daemonClient = `l=$1; d=$2; shift 2
IFS= read -r -d '' input
if read -r port token <"$d" 2>/dev/null && { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
  { printf '%s\\0' "$token" "$2" "$3" "$PWD" "$PPID"; env -0; printf '\\0%s\\0' "$input"; } >&3 2>/dev/null
  if IFS= read -r code <&3 && [ "$code" != fallback ]; then
    IFS= read -r -d '' out <&3; IFS= read -r -d '' err <&3
    printf '%s' "$out"; printf '%s' "$err" >&2
    exit "$code"
  fi
fi
export SIGNAL_ENGINE_DAEMON_MISSING=1
exec "$l" "$@" <<<"$input"
`

/** The launcher's text: the recorded node and adapter, then the fallbacks in order. */
export const launcherScript = (/** @type {{ node: string, adapter: string, failMode: "open" | "closed", daemon: string }} */ o) =>
  `#!/bin/sh
# signal-engine-adapter's hook launcher, written by \`signal-engine-adapter install\`: the coding
# tools' configs run this file, so a Node upgrade or nvm changes the two lines below, not them.
node=${shq(o.node)}
adapter=${shq(o.adapter)}
daemon=${shq(o.daemon)}
# A hook goes to the resident hook process when one runs (no Node start; Linux, bash).
if [ "$1" = hook ] && [ -z "$SIGNAL_ENGINE_DAEMON_MISSING" ] && [ "$SIGNAL_ENGINE_DAEMON" != off ] && [ -r "$daemon" ] && [ -d /proc/self ] && command -v bash >/dev/null 2>&1; then
  exec bash -c ${shq(daemonClient)} bash "$0" "$daemon" "$@"
fi
export SIGNAL_ENGINE_LAUNCHER=1
if [ -x "$node" ] && [ -f "$adapter" ]; then exec "$node" "$adapter" "$@"; fi
# The recorded Node is gone: any node on PATH runs the same adapter.
if [ -f "$adapter" ] && command -v node >/dev/null 2>&1; then exec node "$adapter" "$@"; fi
# The adapter is gone too (nvm removes a version's global packages): one installed on PATH.
found=$(command -v signal-engine-adapter 2>/dev/null) && [ "$found" != "$0" ] && exec "$found" "$@"
if [ -f "$adapter" ]; then why="$node is gone and no node is on PATH"; else why="$adapter is gone"; fi
echo "signal-engine: the hook cannot run: $why. Repair: signal-engine-adapter install <tool> (signal-engine-adapter doctor names the tools)" >&2
[ "\${SIGNAL_ENGINE_FAIL_MODE:-${o.failMode}}" = closed ] && exit 2
exit 1
`

/** Writes the launcher for this node and this adapter (atomically: a tool may be running it). */
export const writeLauncher = (/** @type {"open" | "closed"} */ failMode, env = process.env) => {
  const path = launcherPath(env)
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, launcherScript({ node: process.execPath, adapter: adapterScript(), failMode, daemon: daemonFile(env) }), { mode: 0o755 })
  chmodSync(tmp, 0o755)
  renameSync(tmp, path)
  return path
}

/** The node and adapter a launcher file records; undefined when it is not there or not ours. */
export const readLauncher = (/** @type {string} */ path) => {
  let text
  try {
    text = readFileSync(path, "utf8")
  } catch {
    return undefined
  }
  const value = (/** @type {string} */ name) => {
    const m = new RegExp(`^${name}='((?:[^']|'\\\\'')*)'$`, "m").exec(text)
    return m?.[1]?.replace(/'\\''/g, "'")
  }
  const node = value("node")
  const adapter = value("adapter")
  return node && adapter ? { node, adapter } : undefined
}

/** The first executable `name` on PATH, as sh's `command -v` finds it. */
export const onPath = (/** @type {string} */ name, env = process.env) => {
  for (const dir of (env.PATH ?? "").split(":")) {
    const candidate = join(dir || ".", name)
    if (existsSync(candidate)) return candidate
  }
  return undefined
}

/** Every hook command of ours in a tool's config, wherever its shape keeps them. */
export const ourCommands = (/** @type {unknown} */ config) => {
  /** @type {Set<string>} */
  const found = new Set()
  const walk = (/** @type {unknown} */ v) => {
    if (typeof v === "string") {
      if (v.includes("signal-engine-adapter")) found.add(v)
    } else if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === "object") Object.values(v).forEach(walk)
  }
  walk(config)
  return [...found]
}

/** A command line's words, as sh splits the ones install writes (plain words and '…' quotes). */
const words = (/** @type {string} */ command) =>
  [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2] ?? ""))

/**
 * What keeps the hook commands from running, a line each with its repair: a launcher whose
 * recorded Node or adapter is gone (then they run with what is on PATH, or fail), or a command
 * written before the launcher naming a Node that is gone (then they fail).
 */
export const commandProblems = (/** @type {string[]} */ commands, /** @type {string} */ repair, env = process.env) => {
  /** @type {Set<string>} */
  const problems = new Set()
  for (const command of commands) {
    const [program = "", ...args] = words(command)
    if (program.endsWith("/bin/signal-engine-adapter") && args[0] === "hook") {
      if (!existsSync(program)) {
        problems.add(`its hooks run ${program}, which is gone, so they fail: run ${repair}`)
        continue
      }
      const recorded = readLauncher(program)
      if (!recorded) continue
      const node = onPath("node", env)
      if (!existsSync(recorded.node)) {
        const meanwhile = node ? `they run with the node on PATH (${node}) meanwhile` : "no node is on PATH, so they fail"
        problems.add(`the Node its hooks were installed with is gone (${recorded.node}): ${meanwhile}; run ${repair} to record ${process.execPath}`)
      }
      if (!existsSync(recorded.adapter)) {
        const other = onPath("signal-engine-adapter", env)
        const meanwhile = other ? `they run ${other} meanwhile` : "no signal-engine-adapter is on PATH, so they fail"
        problems.add(`the adapter its hooks were installed with is gone (${recorded.adapter}): ${meanwhile}; run ${repair}`)
      }
      continue
    }
    for (const word of [program, ...args]) {
      if (word.startsWith("/") && !existsSync(word)) {
        problems.add(`its hooks run ${word}, which is gone (a Node upgrade or nvm?), so they fail: run ${repair}`)
      }
    }
  }
  return [...problems]
}
