import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { EnginePrincipal } from "../contract.ts"
import { EngineApi } from "./api.ts"
import { makeAnswerHook } from "./claude-code-hook-route.ts"
import type { ClaudeCodeHookOutput } from "./hooks-api.ts"

/** The HttpApi side of POST /hooks/claude-code (the path's other spellings; the direct route serves the exact one). */
export const HooksHandlers = HttpApiBuilder.group(EngineApi, "hooks", (handlers) =>
  Effect.gen(function*() {
    const answerHook = yield* makeAnswerHook
    return handlers.handle("claudeCode", ({ headers, payload, query }) =>
      Effect.flatMap(EnginePrincipal, (principal) =>
        Effect.map(
          answerHook(principal, payload, {
            model: headers["x-signal-engine-model"] || undefined,
            sendPrompts: query.send_prompts === "true",
            failClosed: query.fail_mode === "closed"
          }),
          (output) => output as typeof ClaudeCodeHookOutput.Type
        )))
  }))
