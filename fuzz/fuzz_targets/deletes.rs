//! `cargo fuzz run deletes`: see `needle_engine::fuzzing::deletes` for what it feeds where.
#![no_main]

libfuzzer_sys::fuzz_target!(
    // The engine catches the panics of the `fst` crate on a malformed term map
    // (and turns them into errors): keep the default hook, which does not abort.
    // A panic the engine does not catch still aborts the run (libfuzzer-sys).
    init: drop(std::panic::take_hook()),
    |data: &[u8]| needle_engine::fuzzing::deletes(data)
);
