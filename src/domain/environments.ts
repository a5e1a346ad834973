import { Schema } from "effect"

/** Every org has two isolated environments; each credential belongs to exactly one. */
export const Environment = Schema.Literals(["live", "test"])
export type Environment = typeof Environment.Type
