//! The integration tests, one test binary (as rust-analyzer and Ruff have it): each module
//! below was a binary of its own, and linking some forty of them cost most of a test run's
//! build. A module is named after what it tests; `cargo test --test it realcode::` runs
//! one (the filter is a substring of the test's path, so `oracle::` also matches
//! `candle_oracle::`; `--exact` or `--skip` narrow it). The `*_support` modules are the
//! harnesses several of them share.
//!
//! A test module is a file of this directory with a `mod` line here; insta keeps its
//! snapshots in `snapshots/`, named `it__<module>__<name>.snap`. The tests that build
//! the Python wheel are the one other binary, `tests/wheel/` (see its `main.rs`).

// Harnesses shared by the test modules.
mod cli_support;
mod fixture_support;
mod fuzz_support;
mod oracle_support;
mod tool_support;

// The tests.
mod action;
mod bad_input;
mod bazel;
mod cache;
mod candle_block_fixture;
mod candle_oracle;
mod candle_oracle_join;
mod candle_real;
mod cli;
mod cli_exits;
mod config;
mod conformance;
mod cross_file;
mod dependency_features;
mod editor_neovim;
mod editor_vscode;
mod einsum_oracle;
mod file_safety;
mod fixtures;
mod format_following_oracle;
mod full_output_snapshots;
mod fuzz_regressions;
mod meshgrid_oracle;
mod model_config;
mod notebook;
mod oracle;
mod oracle_symbolic;
mod readme_quickstart;
mod realcode;
mod reliability;
mod reliability_budget;
mod report_formats;
mod report_html;
mod rules;
mod rust_fixtures;
mod rust_tables;
mod server;
mod server_robustness;
mod suppression;
mod syntax_corpus;
mod tidy;
mod verify_cli;
mod verify_cpu_engine;
mod verify_engine_selection;
mod verify_nvrtc;
mod workflows;
