// @ts-check
// TODO(adapters): the Cursor mapping, tested against the real tool.

/** @type {import("../hook.js").Tool} */
export const cursor = {
  name: "cursor",
  title: "Cursor",
  configPath: () => "/nonexistent",
  install: (config) => config,
  uninstall: (config) => config,
  check: () => ["not implemented"],
  plan: () => ({ signals: [] }),
  reply: () => ({ exitCode: 0 })
}
