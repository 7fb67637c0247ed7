//! The tests that build the Python wheel with maturin (the wheel itself, and the
//! pre-commit hook installed from it): a binary apart from `tests/it/`. maturin's cargo
//! build of `stridelint` differs from `cargo test`'s in features, so it relinks
//! `target/release/stridelint`; cargo runs test binaries one after another, so no test of
//! `tests/it/` runs that binary while it is being relinked. Within this binary,
//! `precommit.rs` serialises its runs of the binary with the wheel build.

#[path = "../it/tool_support/mod.rs"]
mod tool_support;
mod wheel_support;

mod precommit;
mod wheel;
