//! The 4 KiB page: the unit of a device read, which records and documents are laid out around.

pub const PAGE: u64 = 4096;

/// Where a record of `len` bytes should start if the next free byte is `at`:
/// `at`, or the next page boundary when starting there spans fewer pages
/// (so `len` bytes of at most one page never straddle two).
pub fn aligned_start(at: u64, len: u64) -> u64 {
    if len == 0 {
        return at;
    }
    let pages_here = (at + len - 1) / PAGE - at / PAGE + 1;
    if len.div_ceil(PAGE) < pages_here {
        at.next_multiple_of(PAGE)
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::aligned_start;

    #[test]
    fn aligns_only_when_it_saves_a_page() {
        assert_eq!(aligned_start(2048, 3000), 4096);
        assert_eq!(aligned_start(2048, 1000), 2048);
        assert_eq!(aligned_start(100, 4096), 4096);
        assert_eq!(aligned_start(4096, 5000), 4096);
        assert_eq!(aligned_start(5000, 9000), 5000, "spans three pages either way");
    }
}
