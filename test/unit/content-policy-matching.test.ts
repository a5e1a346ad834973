import { describe, expect, it } from "vitest"
import { findingKind, findingKindsOf, globProblem, kindsActedOn, kindsMatch, pathsMatch, pathsOf } from "../../src/domain/content-policy.ts"

// What an org_policy's secret_kinds and protected_paths are judged on: the findings and paths an
// adapter puts in a signal's metadata, as they arrive (bounded, malformed entries skipped).

describe("the finding kinds and paths of a signal's metadata", () => {
  it("reads the first 50 findings' kinds, skipping entries without one", () => {
    const findings = [{ kind: "aws_access_token", where: "prompt" }, null, { kind: 7 }, "github_pat",
      ...Array.from({ length: 50 }, (_, i) => ({ kind: `k${i}` }))]
    const kinds = findingKindsOf(findings)
    expect(kinds.slice(0, 2)).toEqual(["aws_access_token", "k0"])
    expect(kinds).toHaveLength(47)
    expect(findingKindsOf({ kind: "aws_access_token" })).toEqual([])
  })

  it("reads the first 20 paths, skipping empty and non-text entries", () => {
    const paths = ["~/app/.env", "", 5, null, ...Array.from({ length: 20 }, (_, i) => `~/app/src/f${i}.ts`)]
    expect(pathsOf(paths)).toEqual(["~/app/.env", ...Array.from({ length: 16 }, (_, i) => `~/app/src/f${i}.ts`)])
    expect(pathsOf("~/app/.env")).toEqual([])
  })

  it.each([
    ["aws_access_token", true],
    ["*", true],
    ["a".repeat(100), true],
    ["a".repeat(101), false],
    ["AWS", false],
    ["_key", false],
    ["aws key", false],
    ["aws_key!", false],
    ["!aws_key", false],
    ["**", false]
  ])("takes %s as a finding kind: %s", (kind, ok) => {
    expect(findingKind.test(kind)).toBe(ok)
  })
})

describe("a rule's kinds and globs against a signal's", () => {
  it.each([
    [["aws_access_token"], ["github_pat", "aws_access_token"], true],
    [["*"], ["github_pat"], true],
    [["*"], [], false],
    [["github_pat"], ["aws_access_token"], false],
    [undefined, ["aws_access_token"], false]
  ])("kinds %j against findings %j: %s", (kinds, found, acts) => {
    expect(kindsMatch(kinds, found)).toBe(acts)
  })

  it.each([
    [["**/.env"], ["~/app/README.md", "~/app/.env"], true],
    [["~/.aws/**", "**/*.pem"], ["~/certs/server.pem"], true],
    [["**/.env"], ["~/app/.envrc"], false],
    [["a".repeat(70_000)], ["~/app/.env"], false],
    [undefined, ["~/app/.env"], false],
    [["**/.env"], [], false]
  ])("globs %j against paths %j: %s", (globs, paths, acts) => {
    expect(pathsMatch(globs, paths)).toBe(acts)
  })

  it.each([
    ["**/.env", undefined],
    ["~/.ssh/*", undefined],
    ["**", "it would match every file"],
    ["/**/*", "it would match every file"],
    ["/", "it would match every file"],
    [" * ", "it would match every file"],
    ["a".repeat(70_000), "pattern is too long"]
  ])("a protected path %j: %s", (glob, problem) => {
    expect(globProblem(glob)).toBe(problem)
  })

  it("acts on the rule's secret kinds and its own patterns' kinds, and on none without either", () => {
    expect(kindsActedOn({ secret_kinds: ["aws_access_token"], custom_patterns: [{ kind: "acme_token", pattern: "acme_[0-9]{8}" }] }))
      .toEqual(["aws_access_token", "acme_token"])
    expect(kindsActedOn({ secret_kinds: ["github_pat"] })).toEqual(["github_pat"])
    expect(kindsActedOn({ custom_patterns: [{ kind: "acme_token", pattern: "x" }] })).toEqual(["acme_token"])
    expect(kindsActedOn({ max_cost_usd: 5 })).toBeUndefined()
  })
})
