// @ts-check
// TODO(adapters): the Codex CLI mapping, tested against the real tool.

/** @type {import("../hook.js").Tool} */
export const codex = {
  name: "codex",
  title: "Codex CLI",
  configPath: () => "/nonexistent",
  install: (config) => config,
  uninstall: (config) => config,
  check: () => ["not implemented"],
  plan: () => ({ signals: [] }),
  reply: () => ({ exitCode: 0 })
}
