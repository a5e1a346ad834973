import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

const settingName = "webhook_secret_key"

/** A 32-byte key from 64 hex digits or base64 of 32 bytes; undefined otherwise. */
export const parseKey = (text: string): Buffer | undefined => {
  const t = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex")
  const b = Buffer.from(t, "base64")
  return b.length === 32 ? b : undefined
}

/**
/**
 * The warning that secrets are sealed with the generated key, for `serve` to print once at
 * start: a command (replay, admin) that builds the SecretBox too has nothing to do about it.
 */
export const warnOfGeneratedKey = Effect.gen(function*() {
  const secretKey = yield* Config.option(Config.Redacted("WEBHOOK_SECRET_KEY"))
  if (Option.isNone(secretKey)) {
    yield* Effect.logWarning("WEBHOOK_SECRET_KEY is not set: webhook secrets are encrypted with a generated key stored in the database")
  }
})

/**
 * Secrets at rest (webhook secrets, chat URLs): AES-256-GCM, `v1.<iv>.<tag>.<ciphertext>` (base64url), a fresh
 * 12-byte IV per secret. The key is WEBHOOK_SECRET_KEY; without it, a random key generated on
 * the first start and kept in the `settings` table (convenient for development; production sets
 * the variable so that a database dump alone does not reveal the secrets).
 */
export class SecretBox extends Context.Service<SecretBox, {
  readonly seal: (plain: string) => string
  /** Dies when the secret was sealed with another key (WEBHOOK_SECRET_KEY changed). */
  readonly open: (sealed: string) => Effect.Effect<string>
}>()("signal-engine/store/SecretBox") {
  static readonly layer = Layer.effect(
    SecretBox,
    Effect.gen(function*() {
      // WEBHOOK_SECRET_KEY: the AES-256 key (32 bytes, hex or base64).
      const secretKey = yield* Config.option(Config.Redacted("WEBHOOK_SECRET_KEY"))
      const sql = yield* SqlClient.SqlClient
      let key: Buffer
      if (Option.isSome(secretKey)) {
        const parsed = parseKey(Redacted.value(secretKey.value))
        if (parsed === undefined) return yield* Effect.die(new Error("WEBHOOK_SECRET_KEY must be 32 bytes, as 64 hex digits or base64"))
        key = parsed
      } else {
        // Several nodes starting together agree on one key: the first insert wins, all read it back.
        yield* sql`INSERT INTO settings (name, value) VALUES (${settingName}, ${randomBytes(32).toString("hex")})
          ON CONFLICT (name) DO NOTHING`.pipe(Effect.orDie)
        const rows = yield* sql<{ readonly value: string }>`SELECT value FROM settings WHERE name = ${settingName}`.pipe(Effect.orDie)
        key = Buffer.from(rows[0]!.value, "hex")
      }
      const seal = (plain: string): string => {
        const iv = randomBytes(12)
        const cipher = createCipheriv("aes-256-gcm", key, iv)
        const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
        return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ct.toString("base64url")].join(".")
      }
      const open = (sealed: string): Effect.Effect<string> => {
        const [v, iv, tag, ct] = sealed.split(".")
        if (v !== "v1" || iv === undefined || tag === undefined || ct === undefined) {
          return Effect.die(new Error("a webhook secret in an unknown format"))
        }
        return Effect.try({
          try: () => {
            const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
            decipher.setAuthTag(Buffer.from(tag, "base64url"))
            return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8")
          },
          catch: () => new Error("a webhook secret cannot be decrypted: WEBHOOK_SECRET_KEY differs from the key it was sealed with")
        }).pipe(Effect.orDie)
      }
      return SecretBox.of({ seal, open })
    })
  )
}
