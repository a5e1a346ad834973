import { Schema } from "effect"

/**
 * `Schema.isPattern` with its pattern in the JSON Schema (and so in the OpenAPI documents):
 * effect 4.1.0's own leaves it out, and a client generated from the documents then sends what
 * the server refuses.
 */
export const matching = (regExp: RegExp, message?: string) =>
  Schema.isPattern(regExp, { ...(message === undefined ? {} : { message }), toJsonSchema: () => ({ pattern: regExp.source }) })

/**
 * Lists a string's values in the documents while leaving the check to the handler, for a field
 * whose refusal has a code of its own (a signal's `type`: 400 invalid_signal_type, spec §7).
 */
export const documentedEnum = (values: ReadonlyArray<string>) => Schema.makeFilter((_: string) => true, { toJsonSchema: () => ({ enum: [...values] }) })

/** An object body that must name at least one field (the handler says which), as the documents say it. */
export const documentedAtLeastOneField = Schema.makeFilter((_: object) => true, { toJsonSchema: () => ({ minProperties: 1 }) })

/**
 * Text PostgreSQL cannot store: U+0000 (neither `text` nor `jsonb` accepts it) and unpaired UTF-16
 * surrogates (they have no UTF-8 form). JSON can carry both (`"\u0000"`, `"\ud800"`), so input is
 * checked for them before it is accepted: once in the log, a record with such text would fail
 * every write of its partition's projections.
 */
export const isStorableText = (s: string): boolean => !s.includes("\u0000") && s.isWellFormed()

export const unstorableTextMessage = "contains U+0000 or an unpaired UTF-16 surrogate, which cannot be stored"

/**
 * How deep a JSON value of a request may nest objects and arrays. Deeper is refused at the door:
 * serializing it, checking it or storing it as jsonb recurses once per level, and a few thousand
 * levels (a few kilobytes of `[`) exhaust the stack, which answered 500 and failed a whole batch.
 */
export const maxJsonDepth = 64

export const tooDeepMessage = `nests objects and arrays deeper than ${maxJsonDepth} levels`

const problemAt = (value: unknown, depth: number): string | undefined => {
  if (typeof value === "string") return isStorableText(value) ? undefined : unstorableTextMessage
  if (typeof value !== "object" || value === null) return undefined
  if (depth > maxJsonDepth) return tooDeepMessage
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = problemAt(item, depth + 1)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  for (const key in value) {
    if (!isStorableText(key)) return unstorableTextMessage
    const problem = problemAt((value as Record<string, unknown>)[key], depth + 1)
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * Why a JSON value cannot be stored, or undefined when it can: a string (keys included) that is
 * not storable text, or objects and arrays nested deeper than `maxJsonDepth` (the value itself
 * is level 1).
 */
export const jsonProblem = (value: unknown): string | undefined => problemAt(value, 1)

/** A schema check for input strings and JSON values: their text must be storable, their nesting bounded. */
export const storableText = Schema.makeFilter((s: string) => isStorableText(s) || unstorableTextMessage)
export const storableJson = Schema.makeFilter((v: unknown) => jsonProblem(v) ?? true)
