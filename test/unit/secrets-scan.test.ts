import { describe, expect, it } from "@effect/vitest"
import { fingerprintOf } from "../../adapters/src/secrets/fingerprint.js"
import { maxScanned, scanHookInput } from "../../adapters/src/secrets/hook-input.js"
import { pathsOf } from "../../adapters/src/secrets/paths.js"
import { redactText, redactValue } from "../../adapters/src/secrets/redact.js"
import { scanText } from "../../adapters/src/secrets/scan.js"
import { chars, kindSpecs, seeded } from "../secrets/positives.ts"

const r = seeded(3)
const make = (kind: string) => kindSpecs.find((s) => s.kind === kind)!.make(r)
const aws = make("aws_access_token")
const github = make("github_pat")

describe("the secret scanner", () => {
  it("finds each secret with its kind and where it was", () => {
    const { found, truncated } = scanHookInput({
      session_id: "s1",
      prompt: `deploy with ${aws} please`,
      tool_input: { command: `git push https://x:${github}@github.com/o/r.git`, description: "push" }
    })
    expect(truncated).toBe(false)
    expect(found).toEqual([
      { kind: "aws_access_token", where: "prompt", secret: aws },
      { kind: "github_pat", where: "tool_input.command", secret: github }
    ])
  })

  it("reports a secret a specific rule knows by that kind alone, not as a generic one too", () => {
    expect(scanText(`GITHUB_TOKEN=${github}\napi_key = "q8Fk29Dk3lQpZ7xW0vN5bM1c"`).map((h) => h.kind).sort()).toEqual(["generic_api_key", "github_pat"])
    expect(scanText(`GITHUB_TOKEN=${github}`).map((h) => h.kind)).toEqual(["github_pat"])
  })

  it("fingerprints a secret by key: the same secret and key agree, another key does not, and the secret is not in it", () => {
    const a = fingerprintOf("k".repeat(64), "aws_access_token", aws)
    expect(a).toBe(fingerprintOf("k".repeat(64), "aws_access_token", aws))
    expect(a).not.toBe(fingerprintOf("j".repeat(64), "aws_access_token", aws))
    expect(a).toMatch(/^[0-9a-f]{32}$/)
  })

  it("takes secrets out of everything sent, a clipped tail of one included", () => {
    const found = [{ kind: "aws_access_token", secret: aws }, { kind: "github_pat", secret: github }]
    expect(redactValue({ command: `echo ${aws}`, list: [github], n: 3 }, found)).toEqual({
      command: "echo [REDACTED:aws_access_token]",
      list: ["[REDACTED:github_pat]"],
      n: 3
    })
    const clipped = `{"content":"token=${github.slice(0, 12)}…`
    expect(redactText(clipped, found)).toBe(`{"content":"token=[REDACTED:github_pat]…`)
  })

  it("scans at most its cap and says when it stopped", () => {
    const filler = "x".repeat(maxScanned)
    const { found, truncated } = scanHookInput({ tool_response: { stdout: `${aws}\n${filler}\n${github}` } })
    expect(truncated).toBe(true)
    expect(found.map((f) => f.kind)).toEqual(["aws_access_token"])
  })

  it("scans a megabyte payload and binary output", () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} token_count=${i} key=${chars(r, "abcdef", 6)}`).join("\n")
    expect(scanText(`${lines}\n${aws}\n${lines}`).map((h) => h.secret)).toEqual([aws])
    const binary = String.fromCharCode(...Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))
    expect(scanText(`${binary}${github}\u0000${binary}`).map((h) => h.kind)).toEqual(["github_pat"])
  })

  it("names the files a tool call reads, from its home as ~", () => {
    expect(pathsOf({ file_path: "/home/dev/app/.env" }, undefined, "/home/dev/app", "/home/dev")).toEqual(["~/app/.env"])
    expect(pathsOf({}, "cat .env && head -n 3 ~/.aws/credentials | grep key", "/srv/app", "/home/dev")).toEqual([
      "/srv/app/.env",
      "~/.aws/credentials"
    ])
  })
})
