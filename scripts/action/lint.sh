#!/usr/bin/env bash
# The GitHub Action's lint step (action.yml): runs `stridelint check` on INPUT_SRC with
# INPUT_ARGS, in INPUT_OUTPUT_FORMAT (default `github`: annotations on the pull request,
# with paths relative to GITHUB_WORKSPACE), and appends the Markdown summary to
# GITHUB_STEP_SUMMARY unless INPUT_SUMMARY is `false`. INPUT_FAIL_ON, when set, is
# `--fail-on`. The exit code is stridelint's: 1 when there are errors (and warnings, with
# `fail-on: warning`); add `--exit-zero` to `args` to only annotate.
set -euo pipefail

# `src` and `args` are split into words like a command line (no globbing: the shell
# would expand `*.py` before stridelint's own file discovery sees it).
set -f
# shellcheck disable=SC2206
src=(${INPUT_SRC:-.})
# shellcheck disable=SC2206
args=(${INPUT_ARGS:-})
set +f

format=()
explicit=false
for word in "${args[@]+"${args[@]}"}"; do
    case "$word" in
        --output-format | --output-format=*) explicit=true ;;
    esac
done
if [ "$explicit" = true ]; then
    echo "stridelint: \`args\` sets --output-format; the \`output-format\` input is not used" >&2
else
    format=(--output-format "${INPUT_OUTPUT_FORMAT:-github}")
fi

summary=()
if [ "${INPUT_SUMMARY:-true}" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    summary=(--summary "$GITHUB_STEP_SUMMARY")
fi

fail_on=()
if [ -n "${INPUT_FAIL_ON:-}" ]; then
    fail_on=(--fail-on "$INPUT_FAIL_ON")
fi

stridelint=${STRIDELINT_BIN:-stridelint}
exec "$stridelint" check "${format[@]+"${format[@]}"}" "${summary[@]+"${summary[@]}"}" \
    "${fail_on[@]+"${fail_on[@]}"}" "${args[@]+"${args[@]}"}" "${src[@]}"
