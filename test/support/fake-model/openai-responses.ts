import type { ProtocolHandler } from "./server.ts"

/** OpenAI Responses (POST …/responses, SSE). TODO(adapters): implemented with the CLI that speaks it. */
export const openaiResponses: ProtocolHandler = () => false
