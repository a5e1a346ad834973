import type { ProtocolHandler } from "./server.ts"

/** Anthropic Messages (POST /v1/messages, SSE when stream is true). TODO(adapters): implemented with the CLI that speaks it. */
export const anthropic: ProtocolHandler = () => false
