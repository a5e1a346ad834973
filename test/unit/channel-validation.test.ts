import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { type ChannelDraft, channelIdsOf, channelProblems, coalesceBounds, maxAddresses, redactUrl } from "../../src/domain/channels.ts"
import { jsonProblem, matching, storableText, unstorableTextMessage } from "../../src/domain/text.ts"

const slack: ChannelDraft = {
  name: "#ai-alerts",
  kind: "slack",
  url: "https://hooks.slack.com/services/T000/B000/XXXX",
  addresses: [],
  coalesce_seconds: 300
}
const email: ChannelDraft = { name: "Platform team", kind: "email", url: undefined, addresses: ["platform@example.com"], coalesce_seconds: 300 }
const addresses = (n: number) => Array.from({ length: n }, (_, i) => `dev${i}@example.com`)

describe("a notification channel's fields", () => {
  it.each<[string, ChannelDraft, ReadonlyArray<string>]>([
    ["a Slack channel with its webhook", slack, []],
    ["a Teams channel", { ...slack, kind: "teams", url: "https://example.webhook.office.com/webhookb2/x" }, []],
    ["an e-mail channel with one recipient", email, []],
    ["an e-mail channel with the most recipients", { ...email, addresses: addresses(maxAddresses) }, []],
    ["a blank name", { ...slack, name: "   " }, ["name: must not be blank"]],
    ["a chat channel with addresses", { ...slack, kind: "discord", addresses: ["a@example.com"] }, ["addresses: only an email channel has addresses"]],
    ["an e-mail channel with a url", { ...email, url: "https://hooks.slack.com/x" }, ["url: an email channel has addresses, not a url"]],
    ["an e-mail channel with no recipient", { ...email, addresses: [] }, ["addresses: an email channel needs at least one address"]],
    ["an e-mail channel with too many recipients", { ...email, addresses: addresses(maxAddresses + 1) }, [`addresses: at most ${maxAddresses}`]],
    [
      "recipients that are not addresses",
      {
        ...email,
        addresses: ["ops@example.com", "Ops <ops@example.com>", "ops@localhost", "x@y.z ", "@example.com", "a@@example.com", "a@ .com", "a@example. ",
          " ops@example.com"]
      },
      [`addresses: not e-mail addresses: "Ops <ops@example.com>", "ops@localhost", "x@y.z ", "@example.com", "a@@example.com", "a@ .com", "a@example. ", " ops@example.com"`]
    ],
    ["the shortest address", { ...email, addresses: ["a@b.co", "a.b+c@sub.example.org"] }, []],
    ["the shortest window", { ...slack, coalesce_seconds: coalesceBounds.minimum }, []],
    ["the longest window", { ...slack, coalesce_seconds: coalesceBounds.maximum }, []],
    ["no window", { ...slack, coalesce_seconds: 0 }, ["coalesce_seconds: must be between 1 and 86400, got 0"]],
    ["a window over a day", { ...slack, coalesce_seconds: 86_401 }, ["coalesce_seconds: must be between 1 and 86400, got 86401"]],
    ["a fractional window", { ...slack, coalesce_seconds: 2.5 }, ["coalesce_seconds: must be between 1 and 86400, got 2.5"]],
    [
      "every problem at once",
      { name: "", kind: "email", url: "https://x.example", addresses: [], coalesce_seconds: -1 },
      [
        "name: must not be blank",
        "url: an email channel has addresses, not a url",
        "addresses: an email channel needs at least one address",
        "coalesce_seconds: must be between 1 and 86400, got -1"
      ]
    ]
  ])("%s", (_, draft, problems) => {
    expect(channelProblems(draft)).toEqual(problems)
  })

  it.each([
    ["https://hooks.slack.com/services/T000/B000/XXXX", "https://hooks.slack.com/…"],
    ["https://discord.com:8443/api/webhooks/1/abc?wait=true", "https://discord.com:8443/…"],
    ["not a url", "…"]
  ])("the URL %s is shown as %s", (url, shown) => {
    expect(redactUrl(url)).toBe(shown)
  })
})

describe("the channels a rule's action_config names", () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `ch_${i}`)
  it.each<[string, string, Record<string, unknown>, unknown]>([
    ["none named", "notify", {}, { ids: [] }],
    ["an empty list on a block rule", "block", { channels: [] }, { ids: [] }],
    ["the most a rule may name", "notify", { channels: ids(20) }, { ids: ids(20) }],
    ["one too many", "notify", { channels: ids(21) }, { problem: "action_config.channels: at most 20 channels" }],
    ["a list with a number in it", "notify", { channels: ["ch_1", 2] }, { problem: "action_config.channels: must be a list of channel ids (ch_…)" }],
    ["a single id, not a list", "notify", { channels: "ch_1" }, { problem: "action_config.channels: must be a list of channel ids (ch_…)" }],
    ["channels on a block rule", "block", { channels: ["ch_1"] }, { problem: "action_config.channels: only a notify rule sends to channels" }]
  ])("%s", (_, action, config, expected) => {
    expect(channelIdsOf(action, config)).toEqual(expected)
  })
})

describe("text a request may carry", () => {
  it.each([
    ["plain text", "fix the failing test", true],
    ["emoji (a surrogate pair)", "ship it 🚀", true],
    ["a NUL", "a\u0000b", false],
    ["a lone high surrogate", "\ud800x", false]
  ])("%s is storable: %s", (_, text, ok) => {
    const decoded = Schema.decodeUnknownExit(Schema.String.check(storableText))(text)
    expect(decoded._tag === "Success").toBe(ok)
    if (!ok) expect(String(decoded)).toContain(unstorableTextMessage)
  })

  it.each<[string, unknown, string | undefined]>([
    ["a number", 42, undefined],
    ["null", null, undefined],
    ["an array of strings", ["a", "b"], undefined],
    ["an array with a NUL deep inside", ["ok", ["also ok", "bad\u0000"]], unstorableTextMessage],
    ["an object whose key has a lone surrogate", { ["\udc00"]: 1 }, unstorableTextMessage],
    ["an object with a NUL in a nested value", { a: { b: "x\u0000" } }, unstorableTextMessage]
  ])("a JSON value: %s", (_, value, problem) => {
    expect(jsonProblem(value)).toBe(problem)
  })

  it("a pattern check refuses with its own message when it has one, and is published in the documents", () => {
    const slug = Schema.String.check(matching(/^[a-z]+$/, "must be lower-case letters"))
    expect(String(Schema.decodeUnknownExit(slug)("Nope"))).toContain("must be lower-case letters")
    expect(Schema.decodeUnknownExit(slug)("yes")._tag).toBe("Success")
    const plain = Schema.String.check(matching(/^[a-z]+$/))
    expect(String(Schema.decodeUnknownExit(plain)("Nope"))).not.toContain("must be lower-case letters")
    expect(JSON.stringify(Schema.toJsonSchemaDocument(slug))).toContain(`"pattern":"^[a-z]+$"`)
  })
})
