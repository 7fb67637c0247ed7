#![no_main]
//! Fuzz target `config`: see `tests/it/fuzz_support/mod.rs` (`config_loader`).

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::config_loader(data));
