// Runs a Python script under Pyodide (CPython compiled to WebAssembly) with Node.js, for a
// machine that has no native CPython of that version: `tests/it/syntax_corpus.rs` uses it to
// ask CPython 3.14's parser about the syntax corpus.
//
// Usage: node scripts/syntax/pyodide_python.mjs PYODIDE_DIR SCRIPT.py [FILE...]
//
// PYODIDE_DIR is the `pyodide` npm package (`npm install pyodide`). The script and the
// files are copied into Pyodide's in-memory file system at the same absolute paths, the
// script runs in the same working directory with `sys.argv` set to [SCRIPT.py, FILE...] as
// given, so relative paths print as they were passed.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, script, ...files] = process.argv.slice(2);
if (!pyodideDir || !script) {
  console.error("usage: node pyodide_python.mjs PYODIDE_DIR SCRIPT.py [FILE...]");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(resolve(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: resolve(pyodideDir) + "/" });
pyodide.setStdout({ batched: (line) => console.log(line) });
pyodide.setStderr({ batched: (line) => console.error(line) });
const paths = [script, ...files];
for (const path of paths) {
  const absolute = resolve(path);
  pyodide.FS.mkdirTree(dirname(absolute));
  pyodide.FS.writeFile(absolute, readFileSync(absolute));
}
pyodide.FS.mkdirTree(process.cwd());
pyodide.FS.chdir(process.cwd());
pyodide.globals.set("argv", pyodide.toPy(paths));
try {
  await pyodide.runPythonAsync(`
import runpy, sys
sys.argv = list(argv)
runpy.run_path(sys.argv[0], run_name="__main__")
`);
} catch (error) {
  console.error(String(error));
  process.exit(1);
}
