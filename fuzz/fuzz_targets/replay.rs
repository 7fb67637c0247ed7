#![no_main]
//! Fuzz target `replay`: see `tests/it/fuzz_support/mod.rs` (`replay_ops`).

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::replay_ops(data));
