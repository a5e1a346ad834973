import type { ProtocolHandler } from "./server.ts"

/** OpenAI Chat Completions (POST …/chat/completions, SSE when stream is true). TODO(adapters): implemented with the CLI that speaks it. */
export const chatCompletions: ProtocolHandler = () => false
