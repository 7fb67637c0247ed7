"""Print CPython's verdict on Python files, as `tests/it/syntax_corpus.rs` reads it.

Usage: python3.X scripts/syntax/cpython_verdicts.py FILE...

The first line is `{"version": [3, 14, 0], "implementation": "..."}`; then one JSON line
per file: `{"path": FILE, "ok": true}` when `ast.parse` accepts it, or
`{"path": FILE, "ok": false, "line": L, "column": C, "message": M}` with the location of
the `SyntaxError` (1-based line and character column, as CPython reports them). Only the
parser is asked (`ast.parse`), not the compiler: errors the compiler finds later
(`return` outside a function, `nonlocal` at module level) are not syntax errors here.
"""

import ast
import json
import platform
import sys
import warnings


def verdict(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        with warnings.catch_warnings():
            # Only errors are verdicts (an invalid escape sequence is a warning).
            warnings.simplefilter("ignore")
            ast.parse(source, filename=path)
    except SyntaxError as error:
        return {
            "path": path,
            "ok": False,
            "line": error.lineno,
            "column": error.offset,
            "message": error.msg,
        }
    return {"path": path, "ok": True}


def main(paths):
    implementation = f"{platform.python_implementation()} {platform.python_version()}"
    if sys.platform == "emscripten":
        implementation += " (Pyodide)"
    print(json.dumps({"version": list(sys.version_info[:3]), "implementation": implementation}))
    for path in paths:
        print(json.dumps(verdict(path)))


if __name__ == "__main__":
    main(sys.argv[1:])
