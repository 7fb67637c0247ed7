#![no_main]
//! Fuzz target `rust`: see `tests/fuzz_support/mod.rs` (`rust_frontend`).

#[path = "../../tests/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::rust_frontend(data));
