import { Schema } from "effect"

/**
 * Text PostgreSQL cannot store: U+0000 (neither `text` nor `jsonb` accepts it) and unpaired UTF-16
 * surrogates (they have no UTF-8 form). JSON can carry both (`"\u0000"`, `"\ud800"`), so input is
 * checked for them before it is accepted: once in the log, a record with such text would fail
 * every write of its partition's projections.
 */
export const isStorableText = (s: string): boolean => !s.includes("\u0000") && s.isWellFormed()

/** Every string of a JSON value, keys included, is storable. */
export const isStorableJson = (value: unknown): boolean => {
  if (typeof value === "string") return isStorableText(value)
  if (typeof value !== "object" || value === null) return true
  if (Array.isArray(value)) return value.every(isStorableJson)
  for (const key in value) {
    if (!isStorableText(key) || !isStorableJson((value as Record<string, unknown>)[key])) return false
  }
  return true
}

export const unstorableTextMessage = "contains U+0000 or an unpaired UTF-16 surrogate, which cannot be stored"

/** A schema check for input strings and JSON values: their text must be storable. */
export const storableText = Schema.makeFilter((s: string) => isStorableText(s) || unstorableTextMessage)
export const storableJson = Schema.makeFilter((v: unknown) => isStorableJson(v) || unstorableTextMessage)
