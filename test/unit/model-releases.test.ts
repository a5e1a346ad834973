import { describe, expect, it } from "vitest"
import { listsModel } from "../../src/domain/rule-evaluation.ts"

// A model_filter lists models by name; the tools report the dated id of the release they call.
describe("a model filter's list naming a model", () => {
  it.each([
    [["claude-sonnet-4"], "claude-sonnet-4-20250514", true],
    [["claude-sonnet-4"], "claude-sonnet-4-20250514-v1:0", true],
    [["claude-3-5-sonnet"], "claude-3-5-sonnet@20240620", true],
    [["claude-3-5-sonnet"], "claude-3-5-sonnet-latest", true],
    [["gpt-4o"], "gpt-4o-2024-08-06", true],
    [["gpt-4"], "gpt-4-0613", true],
    [["gpt-4"], "gpt-4-1106-preview", true],
    [["gemini-2.5-pro"], "gemini-2.5-pro", true],
    [["gpt-4o"], "gpt-4o-mini", false],
    [["gpt-4o"], "gpt-4o-mini-2024-07-18", false],
    [["claude-sonnet-4"], "claude-sonnet-4-5", false],
    [["llama-3.1"], "llama-3.1-405b", false],
    [["claude-sonnet-4-20250514"], "claude-sonnet-4", false],
    [["gpt-4o"], "o3-pro-2025-06-10", false],
    [["gpt-4o"], "chatgpt-4o-latest", false],
    [["gpt-4o", "claude-sonnet-4"], "claude-sonnet-4-20250514", true],
    [[], "gpt-4o", false]
  ])("%j names %s: %s", (list, model, named) => {
    expect(listsModel(list, model)).toBe(named)
  })
})
