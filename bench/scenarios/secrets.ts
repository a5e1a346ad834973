/**
 * secrets: the adapter's secret scanner in this process, no service: its figures on the labelled
 * corpus (test/secrets/), the cold import of the scanner (what a hook run by its own Node process
 * pays once), and what scanning adds to a post-tool hook whose tool output is 2 KB, 200 KB and
 * 5 MB of source code with one key in it (the resident hook process keeps the compiled rules).
 */
import { performance } from "node:perf_hooks"
import { join } from "node:path"
import { round } from "../measure.ts"
import type { Row } from "../report.ts"

const quantile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

export const secretsScenario = async (record: (row: Row) => void, smoke: boolean) => {
  const started = performance.now()
  const { applySecrets } = await import("../../adapters/src/secrets/findings.js")
  const importMs = performance.now() - started
  const { sourceNegatives } = await import("../../test/secrets/negatives.ts")
  const { evaluate } = await import("../../test/secrets/evaluate.ts")
  const { kindSpecs, seeded } = await import("../../test/secrets/positives.ts")
  const f = evaluate()
  record({
    scenario: "secrets",
    log: "-",
    figures: {
      measured: "corpus",
      positives: f.positives,
      kinds: f.kinds,
      negatives: f.negatives,
      recall: f.recall,
      false_positive_rate: f.false_positive_rate
    }
  })
  const source = sourceNegatives(join(import.meta.dirname, "..", "..")).join("\n")
  const key = kindSpecs[0]!.make(seeded(1))
  const ctx = { settings: { fingerprint_key: "k".repeat(64) }, env: { HOME: "/home/dev" } } as never
  const reps = smoke ? 3 : 30
  for (const bytes of [2_048, 204_800, 5_242_880]) {
    let text = source
    while (text.length < bytes) text += source
    const stdout = `${text.slice(0, bytes / 2)}\nAWS_ACCESS_KEY_ID=${key}\n${text.slice(bytes / 2, bytes)}`
    const input = { cwd: "/home/dev/app", tool_name: "Read", tool_input: { file_path: "/home/dev/app/notes.txt" }, tool_response: { stdout } }
    const times: Array<number> = []
    let found = 0
    for (let i = 0; i < reps + 2; i++) {
      const plan = {
        signals: [{ type: "post-tool", session_id: "s", idempotency_key: "k", metadata: { tool_name: "Read", tool_input: stdout.slice(0, 2000) } }]
      }
      const t = performance.now()
      await applySecrets(plan, input, ctx)
      if (i >= 2) times.push(performance.now() - t)
      found = ((plan.signals[0]!.metadata as { findings?: Array<unknown> }).findings ?? []).length
    }
    times.sort((a, b) => a - b)
    record({
      scenario: "secrets",
      log: "-",
      figures: {
        measured: "post-tool scan",
        payload_bytes: bytes,
        findings: found,
        added_p50_ms: round(quantile(times, 0.5)),
        added_p95_ms: round(quantile(times, 0.95)),
        scanner_import_ms: round(importMs)
      }
    })
  }
}
