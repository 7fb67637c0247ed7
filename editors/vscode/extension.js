// VS Code client for the stridelint language server (`stridelint server`, LSP over stdio).
// Plain CommonJS: no build step. The server does the work; this file only starts it,
// passes `stridelint.inlayHints` as initialization options, and restarts it when
// `stridelint.path` changes.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

/** @type {LanguageClient | undefined} */
let client;

function settings() {
  const config = vscode.workspace.getConfiguration("stridelint");
  return {
    path: config.get("path", "stridelint") || "stridelint",
    inlayHints: config.get("inlayHints", false) === true,
  };
}

function createClient() {
  const { path, inlayHints } = settings();
  /** @type {import("vscode-languageclient/node").ServerOptions} */
  const serverOptions = { command: path, args: ["server"] };
  /** @type {import("vscode-languageclient/node").LanguageClientOptions} */
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "file", language: "rust" },
      // The Python cells of notebooks (the server advertises notebook sync).
      { notebook: "*", language: "python" },
    ],
    initializationOptions: { inlayHints },
    // Sends `workspace/didChangeConfiguration` with the `stridelint` section when it changes.
    synchronize: { configurationSection: "stridelint" },
  };
  return new LanguageClient("stridelint", "stridelint", serverOptions, clientOptions);
}

async function startClient() {
  client = createClient();
  try {
    await client.start();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(
      `stridelint: could not start \`${settings().path} server\`: ${message}. ` +
        "Set `stridelint.path` to the stridelint executable.",
    );
  }
}

async function stopClient() {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch {
      // A server that failed to start cannot be stopped; nothing is left to clean up.
    }
  }
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("stridelint.path")) {
        await stopClient();
        await startClient();
      }
    }),
    { dispose: () => void stopClient() },
  );
  await startClient();
}

function deactivate() {
  return stopClient();
}

module.exports = { activate, deactivate };
