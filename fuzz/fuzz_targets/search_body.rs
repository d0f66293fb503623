//! `cargo fuzz run search_body`: see `needle_server::fuzzing::search_body` for what it feeds where.
#![no_main]

libfuzzer_sys::fuzz_target!(
    // As the `query` target: panics the engine catches (the `fst` crate's) keep the default hook.
    init: drop(std::panic::take_hook()),
    |data: &[u8]| needle_server::fuzzing::search_body(data)
);
