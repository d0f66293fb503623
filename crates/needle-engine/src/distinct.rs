//! Counting distinct values (Elasticsearch's `cardinality`): exactly, by a
//! set of the values' 64-bit hashes, up to a threshold (`precision_threshold`,
//! 3,000 by default, as Elasticsearch counts near-exactly below it); past it,
//! by HyperLogLog with 2^14 registers (16 KiB, a standard error of about
//! 0.8%), linear counting while registers are still empty.

use rustc_hash::{FxHashSet, FxHasher};
use std::hash::Hasher;

/// Registers are chosen by the hash's top `P` bits.
const P: u32 = 14;
const M: usize = 1 << P;
/// How many registers a count past its threshold keeps.
pub(crate) const REGISTERS: usize = M;

/// Elasticsearch's default and largest `precision_threshold`.
pub const DEFAULT_THRESHOLD: usize = 3_000;
pub const MAX_THRESHOLD: usize = 40_000;

#[derive(Debug, Clone)]
pub struct Distinct {
    threshold: usize,
    exact: FxHashSet<u64>,
    /// Once past the threshold: the register of each bucket of hashes.
    registers: Option<Box<[u8]>>,
}

impl Distinct {
    pub fn new(threshold: usize) -> Self {
        Distinct { threshold: threshold.min(MAX_THRESHOLD), exact: FxHashSet::default(), registers: None }
    }

    pub fn insert(&mut self, hash: u64) {
        match &mut self.registers {
            Some(registers) => observe(registers, hash),
            None => {
                self.exact.insert(hash);
                if self.exact.len() > self.threshold {
                    self.switch_to_registers();
                }
            }
        }
    }

    /// Adds what `other` counted (the same values are counted once).
    pub fn merge(&mut self, other: Distinct) {
        match other.registers {
            None => other.exact.into_iter().for_each(|h| self.insert(h)),
            Some(theirs) => {
                self.switch_to_registers();
                let mine = self.registers.as_mut().expect("registers made");
                mine.iter_mut().zip(theirs.iter()).for_each(|(a, &b)| *a = (*a).max(b));
            }
        }
    }

    /// Its threshold, exact hashes and registers (past the threshold), to be carried elsewhere.
    pub(crate) fn parts(&self) -> (usize, &FxHashSet<u64>, Option<&[u8]>) {
        (self.threshold, &self.exact, self.registers.as_deref())
    }

    /// A count made of [`Distinct::parts`]; `registers` holds [`REGISTERS`] bytes.
    pub(crate) fn from_parts(
        threshold: usize,
        exact: FxHashSet<u64>,
        registers: Option<Box<[u8]>>,
    ) -> Distinct {
        Distinct { threshold: threshold.min(MAX_THRESHOLD), exact, registers }
    }

    pub fn count(&self) -> u64 {
        match &self.registers {
            None => self.exact.len() as u64,
            Some(registers) => estimate(registers),
        }
    }

    fn switch_to_registers(&mut self) {
        if self.registers.is_none() {
            let mut registers = vec![0u8; M].into_boxed_slice();
            self.exact.drain().for_each(|h| observe(&mut registers, h));
            self.registers = Some(registers);
        }
    }
}

fn observe(registers: &mut [u8], hash: u64) {
    let bucket = (hash >> (64 - P)) as usize;
    // The rank of the first 1 bit after the bucket's bits (a sentinel bounds it).
    let rank = ((hash << P) | (1 << (P - 1))).leading_zeros() as u8 + 1;
    registers[bucket] = registers[bucket].max(rank);
}

fn estimate(registers: &[u8]) -> u64 {
    let m = M as f64;
    let zeros = registers.iter().filter(|&&r| r == 0).count();
    let sum: f64 = registers.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
    let alpha = 0.7213 / (1.0 + 1.079 / m);
    let raw = alpha * m * m / sum;
    let estimate = if raw <= 2.5 * m && zeros > 0 { m * (m / zeros as f64).ln() } else { raw };
    estimate.round() as u64
}

/// A column value's hash.
pub fn hash_value(v: i64) -> u64 {
    mix(v as u64)
}

/// A keyword's hash.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    mix(h.finish())
}

/// MurmurHash3's finalizer: every input bit moves every output bit, as the registers need.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_below_the_threshold() {
        let mut d = Distinct::new(DEFAULT_THRESHOLD);
        for v in (0..2_000).chain(0..2_000) {
            d.insert(hash_value(v));
        }
        assert_eq!(d.count(), 2_000);
        assert!(d.registers.is_none());
    }

    #[test]
    fn estimates_within_two_percent_past_it_and_merges() {
        for n in [3_500i64, 20_000, 150_000, 1_000_000] {
            let (mut a, mut b) = (Distinct::new(DEFAULT_THRESHOLD), Distinct::new(DEFAULT_THRESHOLD));
            for v in 0..n {
                // Halves that overlap by a quarter: the union is n.
                if v < n * 3 / 4 {
                    a.insert(hash_value(v * 7919));
                }
                if v >= n / 2 {
                    b.insert(hash_value(v * 7919));
                }
            }
            a.merge(b);
            let error = (a.count() as f64 - n as f64).abs() / n as f64;
            assert!(error < 0.02, "{n}: counted {}", a.count());
        }
    }

    #[test]
    fn keywords_hash_by_their_bytes() {
        let mut d = Distinct::new(10);
        for word in ["a", "b", "a", "ab", "b"] {
            d.insert(hash_bytes(word.as_bytes()));
        }
        assert_eq!(d.count(), 3);
    }
}
