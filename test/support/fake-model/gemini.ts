import type { ProtocolHandler } from "./server.ts"

/** Gemini (POST …/models/{model}:streamGenerateContent?alt=sse and :generateContent). TODO(adapters): implemented with the CLI that speaks it. */
export const gemini: ProtocolHandler = () => false
