#![no_main]
//! Fuzz target `notebook`: see `tests/it/fuzz_support/mod.rs` (`notebook_reader`).

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::notebook_reader(data));
