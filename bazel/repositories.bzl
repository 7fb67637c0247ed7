"""The stridelint binary as an external repository, for the aspect of defs.bzl.

    load("@stridelint_rules//:repositories.bzl", "stridelint_binary")
    stridelint_binary(name = "stridelint")

gives `@stridelint//:stridelint`: the file `STRIDELINT_BIN` names (set it with
`--repo_env=STRIDELINT_BIN=/path/to/stridelint`), else the `path` attribute, else the
`stridelint` found on PATH. Only the binary's contents enter the lint actions' keys, never
where it was found, so machines with the same build share cache entries.
"""

def _impl(rctx):
    path = rctx.os.environ.get("STRIDELINT_BIN") or rctx.attr.path
    binary = rctx.path(path) if path else rctx.which("stridelint")
    if binary == None or not binary.exists:
        fail("stridelint not found: set STRIDELINT_BIN (--repo_env), the `path` attribute or PATH")
    rctx.symlink(binary, "stridelint")
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD.bazel", "exports_files([\"stridelint\"])\n")

stridelint_binary = repository_rule(
    implementation = _impl,
    attrs = {"path": attr.string(doc = "The binary's path, when STRIDELINT_BIN is not set")},
    environ = ["STRIDELINT_BIN", "PATH"],
    local = True,
)
