// @ts-check
import { isAbsolute, join, normalize } from "node:path"

/**
 * The files a tool call names, for protected-path rules: the path arguments of file tools (at any
 * depth of the input, by the names the tools give them) and the path-like words of a shell
 * command (with a `/` or `.` in them, or starting with `~`, after the command's own name). Each
 * is made absolute from the tool's working folder, and the user's home becomes `~` (so
 * `~/.ssh/*` can be named, and no user name is sent).
 */
const pathKeys = new Set(["file_path", "filePath", "path", "notebook_path", "absolute_path", "target_file", "file", "dir_path", "directory"])
const maxPaths = 20
const maxPathLength = 500

/** Words of a shell command, without quotes, split at whitespace and the shell's operators. */
const words = (/** @type {string} */ command) =>
  command.slice(0, 16_384).split(/[\s;|&<>()]+/).map((w) => w.replace(/^['"]+|['"]+$/g, "")).filter((w) => w.length > 0)

const pathLike = (/** @type {string} */ w) =>
  !w.startsWith("-") && !w.includes("=") && !/^[a-z]+:\/\//i.test(w) && (w.includes("/") || w.includes(".") || w.startsWith("~"))

export const pathsOf = (
  /** @type {any} */ toolInput,
  /** @type {string | undefined} */ command,
  /** @type {string | undefined} */ cwd,
  /** @type {string | undefined} */ home
) => {
  /** @type {string[]} */
  const raw = []
  const walk = (/** @type {unknown} */ v, /** @type {number} */ depth) => {
    if (v === null || typeof v !== "object" || depth > 3) return
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string" && pathKeys.has(k)) raw.push(x)
      else if (Array.isArray(x) && pathKeys.has(k.replace(/s$/, ""))) raw.push(...x.filter((p) => typeof p === "string"))
      else walk(x, depth + 1)
    }
  }
  walk(toolInput, 0)
  if (command) {
    const ws = words(command)
    raw.push(...ws.filter((w, i) => i > 0 && pathLike(w)))
  }
  const out = new Set(raw.map((p) => absolute(p, cwd, home)).filter((p) => p.length > 0 && p.length <= maxPathLength))
  return [...out].slice(0, maxPaths)
}

const absolute = (/** @type {string} */ p, /** @type {string | undefined} */ cwd, /** @type {string | undefined} */ home) => {
  let full = p
  if (home && (p === "~" || p.startsWith("~/"))) full = join(home, p.slice(1))
  else if (!isAbsolute(p) && cwd) full = join(cwd, p)
  full = normalize(full)
  if (home && (full === home || full.startsWith(`${home}/`))) return `~${full.slice(home.length)}`
  return full
}
