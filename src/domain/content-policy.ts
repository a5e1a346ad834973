import { matchesGlob } from "node:path"

/**
 * The content side of an org_policy (an additive v1 extension): `secret_kinds` acts on a signal
 * whose metadata.findings (what the adapter found in a prompt, a tool's input or its output, never
 * the secret) has one of the kinds, `*` any kind; `protected_paths` acts on a signal whose
 * metadata.paths (the files a tool call names, made absolute, the home as `~`) has one a glob
 * matches. Globs are Node's own (path.matchesGlob): `*`, `?`, `**`, `[...]`, `{a,b}`; dot files
 * match like any other, so `**\/.env` holds `~/app/.env`.
 */
export const maxFindingsJudged = 50
export const maxPathsJudged = 20

/** A finding kind as the adapters name them: gitleaks' rule ids in snake case, or `*`. */
export const findingKind = /^(?:\*|[a-z0-9][a-z0-9_]{0,99})$/

/** The finding kinds of a signal's metadata (malformed entries are skipped: judging never throws). */
export const findingKindsOf = (findings: unknown): ReadonlyArray<string> =>
  Array.isArray(findings)
    ? findings.slice(0, maxFindingsJudged).flatMap((f) => typeof f?.kind === "string" ? [f.kind as string] : [])
    : []

export const pathsOf = (paths: unknown): ReadonlyArray<string> =>
  Array.isArray(paths) ? paths.slice(0, maxPathsJudged).filter((p): p is string => typeof p === "string" && p.length > 0) : []

export const kindsMatch = (kinds: ReadonlyArray<string> | undefined, found: ReadonlyArray<string>): boolean =>
  kinds !== undefined && found.length > 0 && (kinds.includes("*") || found.some((k) => kinds.includes(k)))

export const pathsMatch = (globs: ReadonlyArray<string> | undefined, paths: ReadonlyArray<string>): boolean =>
  globs !== undefined && paths.some((p) => globs.some((g) => safeGlob(p, g)))

const safeGlob = (path: string, glob: string) => {
  try {
    return matchesGlob(path, glob)
  } catch {
    return false
  }
}

/** Why a glob cannot be a protected path (undefined when it can). */
export const globProblem = (glob: string): string | undefined => {
  try {
    matchesGlob("/", glob)
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
  return glob.replaceAll("*", "").replaceAll("/", "").trim().length === 0 ? "it would match every file" : undefined
}
