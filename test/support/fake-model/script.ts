/**
 * What the fake model answers, whatever protocol it is asked in: on a turn that carries no tool
 * result, a call of the protocol's shell tool with `shell` (when set); once a tool result has come
 * back (or with no `shell`), `finalText`. Every response reports `usage`, so a test knows exactly
 * what a run costs.
 */
export interface FakeUsage {
  /** Input tokens not read from or written to the cache. */
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

export interface FakeScript {
  readonly shell?: string
  /** Claude Code only: a call of this tool (by name, with this input) instead of the shell's, when the request offers it. */
  readonly tool?: { readonly name: string; readonly input: Record<string, unknown> }
  readonly finalText: string
  readonly usage: FakeUsage
}

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly body: unknown
}

export const defaultScript: FakeScript = {
  finalText: "Done.",
  usage: { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 }
}
