//! A hint to the processor to bring memory into the cache before it is read,
//! for loops whose reads are scattered but known a few steps ahead (a block's
//! norms, the hash slots of a document's next terms): each step's cache miss
//! is then waited for while the steps before it run, not one after another.

/// Asks for `items[i]` to be brought into the cache; nothing if `i` is out
/// of bounds, or on a processor without the instruction.
#[inline]
pub fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(i) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults and changes no
        // memory; SSE, which it needs, is part of every x86-64 processor.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}
