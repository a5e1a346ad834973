import { createHash, randomBytes } from "node:crypto"
import type { Environment } from "./environments.ts"

/**
 * Credential formats (spec §5): API keys `<prefix>_live_<32 hex>` / `<prefix>_test_<32 hex>`,
 * license keys `lic_<20 hex>`. Only the SHA-256 of a key is stored; the key is shown once.
 */
export const apiKeyPattern = (prefix: string): RegExp => new RegExp(`^${prefix}_(live|test)_[0-9a-f]{32}$`)
export const licenseKeyPattern = /^lic_[0-9a-f]{20}$/

export const generateApiKey = (prefix: string, environment: Environment): string => `${prefix}_${environment}_${randomBytes(16).toString("hex")}`

export const generateLicenseKey = (): string => `lic_${randomBytes(10).toString("hex")}`

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex")

/** What listings show of a key: enough to recognise it, never enough to use it. */
export const keyHint = (key: string): string => `${key.slice(0, key.lastIndexOf("_") + 1)}…${key.slice(-4)}`

export const apiKeyEnvironment = (key: string): Environment | undefined => key.includes("_live_") ? "live" : key.includes("_test_") ? "test" : undefined
