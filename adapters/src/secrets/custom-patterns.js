// @ts-check
import { join } from "node:path"
import { RE2JS } from "re2js"
import { request } from "../client.js"
import { readJson, writeJsonPrivate } from "../json-file.js"
import { adapterHome } from "../settings.js"

/**
 * The org's own patterns (org_policy custom_patterns), fetched from GET /engine/v1/content-policy
 * and kept in `content-policy.json` beside the settings for a minute: a hook asks at most once a
 * minute (answered or not), and without an answer what it last had stays in force. Matched with re2js like
 * the gitleaks rules (linear in the text); the service refused at creation what RE2 cannot take.
 *
 * @typedef {{ kind: string, pattern: string }} CustomPattern
 */
export const policyMaxAgeMs = 60_000
const fetchTimeoutMs = 1_000

const cachePath = (/** @type {NodeJS.ProcessEnv} */ env) => join(adapterHome(env), "content-policy.json")

/** @type {Map<string, RE2JS | null>} */
const compiled = new Map()

const compile = (/** @type {string} */ pattern) => {
  if (!compiled.has(pattern)) {
    try {
      compiled.set(pattern, RE2JS.compile(pattern))
    } catch {
      compiled.set(pattern, null) // refused by the service at creation; a stale copy is skipped
    }
  }
  return compiled.get(pattern) ?? undefined
}

/** The patterns in force for this install's org: the kept copy while fresh, else asked for. */
export const customPatterns = async (/** @type {import("../settings.js").Settings} */ settings, /** @type {NodeJS.ProcessEnv} */ env) => {
  /** @type {{ fetched_at?: number, url?: string, custom_patterns?: CustomPattern[] } | undefined} */
  let kept
  try {
    kept = readJson(cachePath(env))
  } catch {
    kept = undefined
  }
  const fresh = kept && kept.url === settings.url && Date.now() - Number(kept.fetched_at ?? 0) < policyMaxAgeMs
  if (fresh || !settings.url || !settings.license_key) return kept?.custom_patterns ?? []
  const answer = await request(
    { url: settings.url, license_key: settings.license_key },
    "GET",
    "/content-policy",
    undefined,
    Math.min(settings.timeout_ms, fetchTimeoutMs)
  )
  const body = "body" in answer ? answer.body : undefined
  // Without an answer the last copy stays in force, and is asked for again a minute later (not by every hook).
  const patterns = answer.status === 200 && Array.isArray(body?.custom_patterns)
    ? body.custom_patterns.filter((/** @type {any} */ p) => typeof p?.kind === "string" && typeof p?.pattern === "string")
    : kept?.custom_patterns ?? []
  try {
    writeJsonPrivate(cachePath(env), { fetched_at: Date.now(), url: settings.url, custom_patterns: patterns })
  } catch {
    // an unwritable home: asked again next time
  }
  return patterns
}

/** Matches of the patterns in `text`, as hits of their kinds. */
export const scanCustom = (/** @type {string} */ text, /** @type {CustomPattern[]} */ patterns) => {
  /** @type {{ kind: string, secret: string, start: number }[]} */
  const hits = []
  for (const { kind, pattern } of patterns) {
    const re = compile(pattern)
    if (!re) continue
    const m = re.matcher(text)
    let from = 0
    while (from <= text.length && m.find(from)) {
      const start = m.start()
      const end = m.end()
      from = end > start ? end : end + 1
      if (end > start) hits.push({ kind, secret: text.slice(start, end), start })
    }
  }
  return hits
}
