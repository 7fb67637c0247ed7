"""The linters of this workspace (as rules_lint's `linters.bzl`)."""

load("@stridelint_rules//:defs.bzl", "stridelint_aspect", "stridelint_test")

stridelint = stridelint_aspect(
    binary = "@stridelint//:stridelint",
    configs = ["@//:stridelint.toml"],
)

stridelint_lint_test = stridelint_test(aspect = stridelint)
