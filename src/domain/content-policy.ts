import { matchesGlob } from "node:path"
import { RE2JS } from "re2js"

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

/**
 * An org's own patterns (`custom_patterns`: {kind, pattern}), matched by the adapters on the
 * developer's machine with re2js, an RE2 port: its time is linear in the text whatever the
 * pattern, so no pattern can make a hook blow up. Bounded all the same, and refused at creation
 * when RE2 cannot take it (backreferences, lookaround, repeats over 1000), when its compiled
 * program is large, or when it matches the empty string (it would match everywhere).
 */
export const maxCustomPatterns = 20
export const maxPatternLength = 200
export const maxPatternProgram = 2_000

export const patternProblem = (pattern: string): string | undefined => {
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(pattern)
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
  if (compiled.programSize() > maxPatternProgram) return `its program is over ${maxPatternProgram} instructions`
  if (compiled.matches("")) return "it matches the empty string (so every text)"
  return undefined
}

/** The kinds a rule acts on: its secret_kinds and its own patterns' kinds. */
export const kindsActedOn = (c: Readonly<Record<string, unknown>>): ReadonlyArray<string> | undefined => {
  const kinds = c.secret_kinds as ReadonlyArray<string> | undefined
  const custom = (c.custom_patterns as ReadonlyArray<{ readonly kind: string }> | undefined)?.map((p) => p.kind)
  return kinds === undefined && custom === undefined ? undefined : [...(kinds ?? []), ...(custom ?? [])]
}
