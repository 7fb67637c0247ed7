"""stridelint as a Bazel aspect, and a test that fails on its findings.

The aspect runs one lint action per target: `stridelint check --follow-imports` on the
target's own sources (`py_library`, `py_binary`, `py_test`: its `.py` files; `filegroup`: its
`.rs` files, e.g. a candle crate), with the target's transitive Python sources, the
configuration files and the stridelint binary as its only inputs. Its outputs, per target:

    <name>.stridelint.txt    one line per finding (stridelint's `concise` format)
    <name>.stridelint.json   the findings as a JSON array (`--output-format json`)
    <name>.stridelint.sarif  SARIF 2.1.0

with paths relative to the workspace root. Make the aspect and the test rule in a `.bzl`
file of your workspace (the rules_lint pattern):

    load("@stridelint_rules//:defs.bzl", "stridelint_aspect", "stridelint_test")

    stridelint = stridelint_aspect(
        binary = "@stridelint//:stridelint",
        configs = ["@//:stridelint.toml"],
    )
    stridelint_lint_test = stridelint_test(aspect = stridelint)

then `bazel build //... --aspects=//tools/lint:linters.bzl%stridelint
--output_groups=stridelint` lints every target, and `stridelint_lint_test(name = ...,
srcs = [...], severity = "error")` fails when a report holds a finding at or above
`severity`.
"""

StridelintInfo = provider(
    doc = "The stridelint reports of one target.",
    fields = {
        "txt": "File: the findings, one a line",
        "json": "File: the findings as a JSON array",
        "sarif": "File: the findings in SARIF 2.1.0",
    },
)

_PYTHON_RULES = ["py_library", "py_binary", "py_test"]

# A fixed PATH (not the client's) keeps the action key the same on every machine.
_ENV = {"PATH": "/usr/bin:/bin"}

def _repository_path(f):
    """Where a file lies relative to its repository's root (imports resolve from there)."""
    path = f.short_path
    if path.startswith("../"):
        # A file of another repository: `../repo/pkg/x.py`.
        path = path.split("/", 2)[2]
    return path

def _input_and_place(f):
    return [f.path, _repository_path(f)]

def _lint_sources(target, ctx):
    """The files to lint and the Python sources they may import, or None."""
    kind = ctx.rule.kind
    srcs = getattr(ctx.rule.files, "srcs", [])
    if kind in _PYTHON_RULES:
        own = [f for f in srcs if f.extension == "py"]
        if PyInfo in target:
            reach = target[PyInfo].transitive_sources
        else:
            reach = depset(own)
        return own, reach
    if kind == "filegroup":
        own = [f for f in srcs if f.extension == "rs"]
        return own, depset(own)
    return None

def _aspect_impl(target, ctx):
    found = _lint_sources(target, ctx)
    if not found or not found[0]:
        return []
    own, reach = found
    name = target.label.name
    txt = ctx.actions.declare_file(name + ".stridelint.txt")
    json = ctx.actions.declare_file(name + ".stridelint.json")
    sarif = ctx.actions.declare_file(name + ".stridelint.sarif")
    stridelint = ctx.executable._stridelint
    configs = ctx.files._configs
    staged = depset(direct = configs + own, transitive = [reach])

    args = ctx.actions.args()
    args.add(stridelint.path)
    args.add_all([txt, json, sarif])
    args.add("--follow-imports")
    args.add("--")
    args.add_all(own, map_each = _repository_path)
    args.add("--")
    args.add_all(staged, map_each = _input_and_place)

    ctx.actions.run(
        executable = ctx.executable._lint,
        arguments = [args],
        inputs = depset(direct = [stridelint], transitive = [staged]),
        outputs = [txt, json, sarif],
        mnemonic = "StridelintLint",
        progress_message = "Linting %s with stridelint" % target.label,
        env = _ENV,
    )
    outputs = depset([txt, json, sarif])
    return [
        StridelintInfo(txt = txt, json = json, sarif = sarif),
        OutputGroupInfo(
            stridelint = outputs,
            # The output groups rules_lint's aspects fill.
            rules_lint_human = depset([txt]),
            rules_lint_machine = depset([sarif]),
        ),
    ]

def stridelint_aspect(binary, configs = []):
    """An aspect that lints each target it visits with stridelint.

    Args:
      binary: the label of the stridelint executable (e.g. `@stridelint//:stridelint`,
        made by `stridelint_binary` of repositories.bzl).
      configs: the labels of the configuration files that apply (`stridelint.toml`,
        `.stridelint.toml`, `pyproject.toml` with `[tool.stridelint]`), each staged at its
        path in the repository; a change to one re-lints every target.
    Returns:
      The aspect; assign it to a global of a `.bzl` file.
    """
    return aspect(
        implementation = _aspect_impl,
        attrs = {
            "_stridelint": attr.label(
                default = binary,
                executable = True,
                cfg = "exec",
                allow_single_file = True,
            ),
            "_configs": attr.label_list(default = configs, allow_files = True),
            "_lint": attr.label(
                default = Label("//:lint.sh"),
                executable = True,
                cfg = "exec",
                allow_single_file = True,
            ),
        },
    )

_LEVELS = {
    "error": "error",
    "warning": "error|warning",
    "info": "error|warning|info",
}

def _test_impl(ctx):
    reports = [t[StridelintInfo] for t in ctx.attr.srcs if StridelintInfo in t]
    lines = [
        "#!/usr/bin/env bash",
        "# Generated by stridelint_test: fails when a report holds a finding at or above %s." % ctx.attr.severity,
        "set -uo pipefail",
        "status=0",
        "check() { # JSON TXT",
        "  local n",
        # A finding's `severity` is a key of a top-level object of the pretty-printed array.
        "  n=$(grep -cE '^    \"severity\": \"(%s)\",?$' \"$1\")" % _LEVELS[ctx.attr.severity],
        "  if [ \"$n\" -gt 0 ]; then",
        "    echo \"$1: $n finding(s) at or above %s:\"" % ctx.attr.severity,
        "    cat \"$2\"",
        "    status=1",
        "  fi",
        "}",
    ]
    for r in reports:
        lines.append("check '%s' '%s'" % (r.json.short_path, r.txt.short_path))
    lines.append("[ \"$status\" = 0 ] && echo 'stridelint: %d report(s), no finding at or above %s'" % (len(reports), ctx.attr.severity))
    lines.append("exit \"$status\"")
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    files = [r.json for r in reports] + [r.txt for r in reports]
    return [DefaultInfo(executable = script, runfiles = ctx.runfiles(files = files))]

def stridelint_test(aspect):
    """A test rule over targets linted by `aspect` (as rules_lint's `lint_test`).

    The rule's attributes: `srcs`, the targets whose reports are read, and `severity`
    ("error", the default, "warning" or "info"): the test fails when a report holds a
    finding at or above it, and prints those reports.

    Args:
      aspect: an aspect made by `stridelint_aspect`.
    Returns:
      The test rule; assign it to a global of a `.bzl` file.
    """
    return rule(
        implementation = _test_impl,
        attrs = {
            "srcs": attr.label_list(aspects = [aspect], doc = "The targets to lint"),
            "severity": attr.string(default = "error", values = ["error", "warning", "info"]),
        },
        test = True,
    )
