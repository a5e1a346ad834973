import { createHmac } from "node:crypto"

/** Spec §6.3: `sha256=<hex HMAC-SHA256 of the exact body bytes, keyed with the webhook secret>`. */
export const signatureHeader = "X-Service-Signature"

export const sign = (secret: string, body: string | Uint8Array): string => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`
