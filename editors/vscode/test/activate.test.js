// Activates the extension against stand-ins for `vscode` and `vscode-languageclient` (no
// editor, no npm packages needed) and checks what it asks of them: the server command,
// the documents, the initialization options, and a restart when `stridelint.path` changes.
// Run: `node test/activate.test.js` (exit 0 on success); `tests/it/editor_vscode.rs` runs it.
"use strict";

const assert = require("assert");
const Module = require("module");
const path = require("path");

const settings = { path: "stridelint", inlayHints: true };
const started = [];
const stopped = [];
let onConfigurationChange;

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions });
  }
  async start() {
    started.push(this);
  }
  async stop() {
    stopped.push(this);
  }
}

const vscode = {
  workspace: {
    getConfiguration: (section) => {
      assert.strictEqual(section, "stridelint");
      return { get: (key, fallback) => (key in settings ? settings[key] : fallback) };
    },
    onDidChangeConfiguration: (listener) => {
      onConfigurationChange = listener;
      return { dispose() {} };
    },
  },
  window: { showErrorMessage: (m) => assert.fail(`unexpected error: ${m}`) },
};

const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return { LanguageClient };
  return load.call(this, request, parent, isMain);
};

(async () => {
  const extension = require(path.join(__dirname, "..", "extension.js"));
  const context = { subscriptions: [] };
  await extension.activate(context);
  assert.strictEqual(started.length, 1);
  const client = started[0];
  assert.deepStrictEqual(client.serverOptions, { command: "stridelint", args: ["server"] });
  assert.deepStrictEqual(client.clientOptions.initializationOptions, { inlayHints: true });
  const languages = client.clientOptions.documentSelector.map((s) => s.language);
  assert.deepStrictEqual(languages, ["python", "rust", "python"]);
  assert.strictEqual(client.clientOptions.synchronize.configurationSection, "stridelint");

  // A new executable: the server is restarted with it.
  settings.path = "/opt/stridelint/bin/stridelint";
  await onConfigurationChange({ affectsConfiguration: (s) => s === "stridelint.path" });
  assert.deepStrictEqual(stopped, [client]);
  assert.strictEqual(started.length, 2);
  assert.strictEqual(started[1].serverOptions.command, "/opt/stridelint/bin/stridelint");
  // Another setting: no restart (the client sends it as a configuration change).
  await onConfigurationChange({ affectsConfiguration: (s) => s === "stridelint.inlayHints" });
  assert.strictEqual(started.length, 2);

  await extension.deactivate();
  assert.deepStrictEqual(stopped, [client, started[1]]);
  console.log("ok: the extension starts `stridelint server` and restarts it on a new path");
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
