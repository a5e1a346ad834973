import { execFile } from "node:child_process"
import { join } from "node:path"
import { inject } from "vitest"

export const repoRoot = join(import.meta.dirname, "..", "..")

export interface ToolRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs one of the deployment tools (docker-compose, helm, dockerfile-check) from the repository's root. */
export const runTool = (name: "docker-compose" | "helm" | "dockerfile-check", args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  new Promise<ToolRun>((resolve, reject) => {
    const bin = inject("deployToolsBin")
    if (bin === "") {
      reject(new Error("the deployment tools are not installed: run bash infra/deploy-tools/install.sh (needs Go, and docker-compose or root for apt-get)"))
      return
    }
    execFile(join(bin, name), args, { cwd: repoRoot, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== "number") reject(error)
      else resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr })
    })
  })
