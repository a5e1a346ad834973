// @ts-check
// TODO(adapters): the Copilot CLI mapping, tested against the real tool.

/** @type {import("../hook.js").Tool} */
export const copilotCli = {
  name: "copilot-cli",
  title: "Copilot CLI",
  configPath: () => "/nonexistent",
  install: (config) => config,
  uninstall: (config) => config,
  check: () => ["not implemented"],
  plan: () => ({ signals: [] }),
  reply: () => ({ exitCode: 0 })
}
