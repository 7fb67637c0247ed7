#![no_main]
//! Fuzz target `python`: see `tests/it/fuzz_support/mod.rs` (`python_frontend`).

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| support::python_frontend(data));
