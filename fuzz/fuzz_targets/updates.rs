//! `cargo fuzz run updates`: see `needle_engine::fuzzing::updates` for what it feeds where.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| needle_engine::fuzzing::updates(data));
