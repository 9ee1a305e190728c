// Starts `cairn lsp` for .cairn files. The grammar in syntaxes/ colours files on its own; the
// server adds diagnostics, hover, navigation, symbols, semantic tokens and quick fixes.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("cairn").get("server.path") || "cairn";
  const server = { command, args: ["lsp"] };
  client = new LanguageClient("cairn", "CAIRN", { run: server, debug: server }, {
    documentSelector: [{ scheme: "file", language: "cairn" }, { scheme: "untitled", language: "cairn" }],
    // The server reloads a project when its manifest changes.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/cairn.toml") },
  });
  context.subscriptions.push(vscode.commands.registerCommand("cairn.run", (target) => {
    const terminal = vscode.window.createTerminal("cairn run");
    terminal.show();
    terminal.sendText(`${command} run ${JSON.stringify(target)}`);
  }));
  context.subscriptions.push(vscode.commands.registerCommand("cairn.runTest", (target, name) => {
    const terminal = vscode.window.createTerminal("cairn test");
    terminal.show();
    terminal.sendText(`${command} test ${JSON.stringify(target)} --test ${JSON.stringify(name)}`);
  }));
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
