// @ts-check
// TODO(adapters): the Gemini CLI mapping, tested against the real tool.

/** @type {import("../hook.js").Tool} */
export const geminiCli = {
  name: "gemini-cli",
  title: "Gemini CLI",
  configPath: () => "/nonexistent",
  install: (config) => config,
  uninstall: (config) => config,
  check: () => ["not implemented"],
  plan: () => ({ signals: [] }),
  reply: () => ({ exitCode: 0 })
}
