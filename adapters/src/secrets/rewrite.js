// @ts-check
import { redactValue } from "./redact.js"

/**
 * A `redact` verdict where the tool's hook protocol lets a hook rewrite what it checks: the tool
 * call goes on with every secret found replaced by `[REDACTED:kind]`. Only a tool's input can be
 * rewritten, and only by these (checked against each tool's own build):
 *
 * - Claude Code: PreToolUse's `hookSpecificOutput.updatedInput` (without a permissionDecision, so
 *   the user's own permission rules still apply). UserPromptSubmit has no field that replaces the
 *   prompt (only additionalContext, sessionTitle, suppressOriginalPrompt).
 * - Gemini CLI: BeforeTool's `hookSpecificOutput.tool_input` (merged over the tool's input).
 *
 * Codex takes `updatedInput` only with `permissionDecision: "allow"`, which also approves the call
 * past the user's own approval policy: a model could then get any command approved by putting a
 * key-shaped string in it, so Codex blocks. Copilot CLI's preToolUse answer has no input field;
 * Cursor's neither. There, and for prompts and tool outputs everywhere, undefined: the caller blocks.
 */
const rewriters = /** @type {Record<string, Record<string, (input: any, message: string) => unknown>>} */ ({
  "claude-code": {
    PreToolUse: (toolInput, message) => ({
      hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: toolInput },
      systemMessage: message
    })
  },
  "gemini-cli": {
    BeforeTool: (toolInput, message) => ({ hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: toolInput }, systemMessage: message })
  }
})

/**
 * The reply that runs the call with the secrets out, or undefined where it cannot be done: the
 * tool or event cannot rewrite, or taking the secrets out leaves the input as it was (the rule
 * fired on something else: a protected path, a finding in the tool's output).
 * @returns {import("../hook.js").Reply | undefined}
 */
export const rewriteReply = (
  /** @type {string} */ tool,
  /** @type {string} */ event,
  /** @type {any} */ input,
  /** @type {{ kind: string, secret: string }[]} */ found,
  /** @type {string} */ message
) => {
  const rewrite = rewriters[tool]?.[event]
  const toolInput = input?.tool_input
  if (!rewrite || toolInput === null || typeof toolInput !== "object" || Array.isArray(toolInput)) return undefined
  const redacted = redactValue(toolInput, found)
  if (JSON.stringify(redacted) === JSON.stringify(toolInput)) return undefined
  return { exitCode: 0, stdout: JSON.stringify(rewrite(redacted, message)) }
}

/** Where no rewrite is possible, redact is a block, and the user is told why. */
export const redactAsBlock = (
  /** @type {string} */ message,
  /** @type {string} */ title,
  /** @type {string} */ event
) => /** @type {import("../hook.js").Decision} */ ({
  kind: "block",
  message: `${message} (${title} cannot have the secrets taken out at ${event}, so it is blocked)`
})
