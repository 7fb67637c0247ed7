#![no_main]
//! Fuzz target `pipeline`: see `tests/it/fuzz_support/mod.rs` (`pipeline`).

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::pipeline(data));
