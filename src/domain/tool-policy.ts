/**
 * The tool, command and MCP server lists of an org_policy, matched without regular expressions:
 * a pattern is cut at its `*`s and its literal parts are looked for in order with `indexOf`, so
 * matching is linear in the command and no pattern can make it blow up. The lists themselves are
 * bounded (100 entries of 200 characters, src/domain/rules.ts), and so is the command examined.
 */

/** The most of a command examined (the default metadata limit is 16 KB anyway). */
export const maxCommandExamined = 16_384

const whitespace = /\s+/g
const collapse = (s: string) => s.replace(whitespace, " ")

/** Whether the parts occur in `text` in order from `from`; with `anchored` the first at `from` and the last at the end. */
const partsInOrder = (parts: ReadonlyArray<string>, text: string, anchored: boolean): boolean => {
  let at = 0
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.length === 0) continue
    if (anchored && i === 0) {
      if (!text.startsWith(part)) return false
      at = part.length
      continue
    }
    if (anchored && i === parts.length - 1) {
      return text.length - part.length >= at && text.endsWith(part)
    }
    const found = text.indexOf(part, at)
    if (found < 0) return false
    at = found + part.length
  }
  return true
}

export interface ToolPolicy {
  readonly tool: (name: string) => boolean
  readonly command: (command: string) => boolean
  readonly mcpServer: (server: string) => boolean
}

const never = () => false

/** The matchers of one org_policy condition (compile once per condition, match per signal). */
export const compileToolPolicy = (condition: {
  readonly blocked_tools?: ReadonlyArray<string> | undefined
  readonly blocked_commands?: ReadonlyArray<string> | undefined
  readonly blocked_mcp_servers?: ReadonlyArray<string> | undefined
}): ToolPolicy => {
  const tools = condition.blocked_tools?.map((t) => {
    const parts = t.toLowerCase().split("*")
    // A single part is the whole name; otherwise anchored at both ends unless it starts or ends with *.
    return parts.length === 1 ? (name: string) => name === parts[0] : (name: string) => partsInOrder(parts, name, true)
  })
  const commands = condition.blocked_commands?.map((c) => collapse(c).split("*"))
  const servers = condition.blocked_mcp_servers ? new Set(condition.blocked_mcp_servers.map((s) => s.toLowerCase())) : undefined
  return {
    tool: tools ?
      (name) => {
        const lower = name.toLowerCase()
        return tools.some((m) => m(lower))
      } :
      never,
    command: commands ?
      (command) => {
        const text = collapse(command.length > maxCommandExamined ? command.slice(0, maxCommandExamined) : command)
        return commands.some((parts) => partsInOrder(parts, text, false))
      } :
      never,
    mcpServer: servers ? (server) => servers.has(server.toLowerCase()) : never
  }
}

const compiled = new WeakMap<object, ToolPolicy>()

/** `compileToolPolicy`, remembered per condition object (rules are cached and reloaded as new objects). */
export const toolPolicyOf = (condition: object): ToolPolicy => {
  let policy = compiled.get(condition)
  if (policy === undefined) {
    policy = compileToolPolicy(condition)
    compiled.set(condition, policy)
  }
  return policy
}
