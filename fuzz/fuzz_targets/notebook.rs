#![no_main]
//! Fuzz target `notebook`: see `tests/fuzz_support/mod.rs` (`notebook_reader`).

#[path = "../../tests/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::notebook_reader(data));
