#![no_main]
//! Fuzz target `rust`: see `tests/it/fuzz_support/mod.rs` (`rust_frontend`).

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::rust_frontend(data));
