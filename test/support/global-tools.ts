import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The bin folder of the coding tools' real CLIs (claude, codex, gemini, copilot), for the adapters' tests. */
    codingToolsBin: string
    /** Schemathesis's `st` command, for the OpenAPI documents' fuzzing test. */
    schemathesisBin: string
    /** The folder of docker-compose, helm and dockerfile-check, for the deployment files' tests. */
    deployToolsBin: string
  }
}

const run = promisify(execFile)
const infra = join(import.meta.dirname, "..", "..", "infra")

/**
 * The coding tools' CLIs: `CODING_TOOLS_BIN`, or infra/coding-tools/install.sh (a cache outside
 * the repository; nothing to do once it holds the pinned versions).
 */
const codingTools = async () => {
  const given = process.env.CODING_TOOLS_BIN
  if (given) return given
  const { stdout } = await run("bash", [join(infra, "coding-tools", "install.sh")], { maxBuffer: 16 * 1024 * 1024 })
  return stdout.trim().split("\n").at(-1) ?? ""
}

/** Schemathesis: `SCHEMATHESIS_BIN`, or infra/schemathesis/install.sh (a virtualenv in the same cache). */
const schemathesis = async () => {
  const given = process.env.SCHEMATHESIS_BIN
  if (given) return given
  const { stdout } = await run("bash", [join(infra, "schemathesis", "install.sh")])
  return stdout.trim().split("\n").at(-1) ?? ""
}

/**
 * docker-compose, helm and dockerfile-check: `DEPLOY_TOOLS_BIN`, or infra/deploy-tools/install.sh
 * (built with Go into the same cache). Without them (no Go, no root for apt-get) only the
 * deployment files' tests fail, saying so; the rest runs.
 */
const deployTools = async () => {
  const given = process.env.DEPLOY_TOOLS_BIN
  if (given) return given
  try {
    const { stdout } = await run("bash", [join(infra, "deploy-tools", "install.sh")], { maxBuffer: 16 * 1024 * 1024 })
    return stdout.trim().split("\n").at(-1) ?? ""
  } catch (error) {
    console.error(
      `infra/deploy-tools/install.sh failed; the deployment files' tests will fail:\n${(error as { readonly stderr?: string }).stderr ?? String(error)}`
    )
    return ""
  }
}

/** The external tools the end-to-end tier drives: the coding tools' CLIs, Schemathesis, the deployment tools. */
export default async function setup(project: TestProject) {
  const [tools, st, deploy] = await Promise.all([codingTools(), schemathesis(), deployTools()])
  project.provide("codingToolsBin", tools)
  project.provide("schemathesisBin", st)
  project.provide("deployToolsBin", deploy)
}
