//! Two-way Bloom filters for phrases (WiSER's "two-way cost-aware" filters).
//!
//! For every posting (term `t` in document `d`) of a text field the index
//! keeps two small filters: `before`, the terms right before an occurrence of
//! `t` in `d`, and `after`, the terms right after. Stop words are never
//! inserted. A phrase `a b` then tests `b` in `after(a)` or `a` in `before(b)`,
//! whichever side the cost model prefers, and skips the document's positions
//! when the test is negative.
//!
//! A filter is `bytes` bytes (`bits = 8 * bytes`) with `hashes` probes: probe
//! `i` is bit `(x_i >> 32) * bits >> 32`, where `x_0` is the term's 64-bit hash
//! ([`term_hash`], FNV-1a then a SplitMix64 finalizer) and each `x_{i+1}` is
//! the SplitMix64 step of `x_i`. (Plain double hashing `h1 + i * h2 mod bits`
//! repeats bits when `bits` is not prime, tripling the false positives of a
//! 72-bit filter.) Fixed forever, since filters are stored.
//! Sizes follow the usual formulas: for `n` insertions and false positive
//! rate `p`, `bytes = ceil(-n ln p / (ln 2)^2 / 8 - 0.15)` and `hashes = round(8 * bytes / n * ln 2)`;
//! WiSER's `n = 5`, `p = 0.0009` give 9 bytes and 10 hashes. Unlike WiSER, a
//! filter is sized for its own posting: a term occurring `f` times in a
//! document has at most `f` neighbours on each side, so its filters are sized
//! for `n = min(f, max_insertions)` (2 bytes for the many postings with `f = 1`).
//! The reader knows `f` from the frequency block, so sizes cost no space.
//!
//! A record may keep filters only for postings of frequency `min_freq` or
//! more (its shape's): a posting below it has no filter (size 0), a test on
//! it answers "unknown" and the phrase reads its positions. A posting seen
//! once has a 2-byte filter a side and a 1 to 2-byte position, so in a list
//! of many blocks its filter outweighs what it spares; a list of one block
//! (a rarer term) keeps them all, as its filters are what rules a phrase
//! out before the common terms' lists seek. [`BloomParams::min_freq`] says
//! where longer lists start keeping them, and a list too common to be a
//! phrase's rarest term keeps none ([`keeps_filters`]); in memory every
//! posting has them.
//!
//! On disk the filters of a term sit at the end of its grouped record, in
//! groups of 128 postings (the doc blocks), each group
//! `BeforeBitmap AfterBitmap BeforeFilter^a AfterFilter^b`: a bitmap of
//! `ceil(n / 8)` bytes marks the non-empty filters (bit `i % 8` of byte
//! `i / 8`), and only those are stored, in posting order. Each doc block's
//! skip entry holds its group's length, so the skip list indexes the groups.
//! See [`crate::postings`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// WiSER's filter shape (at most 5 insertions, false-positive rate 0.0009),
/// the schema's default: a postings record of this shape writes it as one
/// byte (see [`crate::postings`]). Fixed forever, since records are stored.
pub const WISER_MAX_INSERTIONS: u32 = 5;
pub const WISER_FP_MILLIONTHS: u32 = 900;

/// How filters are sized: by their posting's frequency, up to `max_insertions`,
/// at false-positive rate `fp_millionths` / 10^6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ShapeSpec", into = "ShapeSpec")]
pub struct FilterShape {
    max_insertions: u32,
    fp_millionths: u32,
    /// The lowest frequency of a posting with filters.
    min_freq: u32,
    /// `ln` of the false-positive rate (its bits), computed once: sizes are
    /// asked for every posting written, grouped or merged.
    ln_fp: u64,
    /// Bytes and probes of a filter of `1..=SIZED` insertions, computed
    /// once for the same reason.
    bytes: [u16; SIZED],
    probes: [u8; SIZED],
    /// The most probes of any of its filters.
    most_probes: u8,
}

/// Insertions whose sizes a shape keeps (WiSER's filters take at most 5).
const SIZED: usize = 8;

/// What a shape is made from, and how it is recorded.
#[derive(Serialize, Deserialize)]
struct ShapeSpec {
    max_insertions: u32,
    fp_millionths: u32,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    min_freq: u32,
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

impl From<ShapeSpec> for FilterShape {
    fn from(s: ShapeSpec) -> Self {
        FilterShape::new(s.max_insertions, s.fp_millionths).with_min_freq(s.min_freq)
    }
}

impl From<FilterShape> for ShapeSpec {
    fn from(s: FilterShape) -> Self {
        ShapeSpec { max_insertions: s.max_insertions, fp_millionths: s.fp_millionths, min_freq: s.min_freq }
    }
}

impl FilterShape {
    pub fn new(max_insertions: u32, fp_millionths: u32) -> Self {
        let fp = (f64::from(fp_millionths) / 1e6).clamp(1e-9, 0.5);
        let mut shape = FilterShape {
            max_insertions,
            fp_millionths,
            min_freq: 1,
            ln_fp: fp.ln().to_bits(),
            bytes: [0; SIZED],
            probes: [0; SIZED],
            most_probes: 0,
        };
        // Shapes are made with at most 64 insertions (`BloomParams::for_rate`).
        let most = (1..=max_insertions.clamp(1, 4096)).map(|n| shape.probes_for(n)).max();
        shape.most_probes = most.unwrap_or(1) as u8;
        for n in 1..=SIZED.min(max_insertions.max(1) as usize) {
            // Filters never reach u16::MAX bytes at a rate the schema accepts.
            shape.bytes[n - 1] = shape.bytes_for(n as u32) as u16;
            shape.probes[n - 1] = shape.probes_for(n as u32) as u8;
        }
        shape
    }

    /// WiSER's shape, made once: most records have it, and each read of one asks for it.
    pub fn wiser() -> Self {
        static WISER: std::sync::LazyLock<FilterShape> =
            std::sync::LazyLock::new(|| FilterShape::new(WISER_MAX_INSERTIONS, WISER_FP_MILLIONTHS));
        *WISER
    }

    /// This shape, keeping filters only for postings of frequency `min_freq` or more.
    pub fn with_min_freq(self, min_freq: u32) -> Self {
        FilterShape { min_freq: min_freq.max(1), ..self }
    }

    pub fn min_freq(self) -> u32 {
        self.min_freq
    }

    /// Whether a posting of frequency `freq` has filters.
    #[inline]
    pub fn stores(self, freq: u32) -> bool {
        freq >= self.min_freq
    }

    /// Whether `other` sizes a posting's filter as `self` does (where both keep one).
    pub fn sizes_match(self, other: FilterShape) -> bool {
        self.max_insertions == other.max_insertions && self.fp_millionths == other.fp_millionths
    }

    /// Whether this is WiSER's shape, whatever its `min_freq`.
    pub fn is_wiser(self) -> bool {
        (self.max_insertions, self.fp_millionths) == (WISER_MAX_INSERTIONS, WISER_FP_MILLIONTHS)
    }

    pub fn max_insertions(self) -> u32 {
        self.max_insertions
    }

    pub fn fp_millionths(self) -> u32 {
        self.fp_millionths
    }

    #[inline]
    fn insertions(self, freq: u32) -> u32 {
        freq.clamp(1, self.max_insertions.max(1))
    }

    /// Bytes of the filter of a posting with frequency `freq` (0: it has none).
    #[inline]
    pub fn bytes(self, freq: u32) -> usize {
        if !self.stores(freq) {
            return 0;
        }
        match self.insertions(freq) as usize {
            n @ 1..=SIZED => usize::from(self.bytes[n - 1]),
            n => self.bytes_for(n as u32),
        }
    }

    /// Probes of the filter of a posting with frequency `freq`.
    #[inline]
    pub fn hashes(self, freq: u32) -> u32 {
        if !self.stores(freq) {
            return 0;
        }
        match self.insertions(freq) as usize {
            n @ 1..=SIZED => u32::from(self.probes[n - 1]),
            n => self.probes_for(n as u32),
        }
    }

    fn bytes_for(self, insertions: u32) -> usize {
        let ln2 = std::f64::consts::LN_2;
        let bits = -f64::from(insertions) * f64::from_bits(self.ln_fp) / (ln2 * ln2);
        // Rounded up, forgiving 0.15 byte, so 73 bits fit in 9 bytes as in WiSER.
        ceil_positive(bits / 8.0 - 0.15).max(1)
    }

    fn probes_for(self, insertions: u32) -> u32 {
        let bits = (self.bytes_for(insertions) * 8) as f64;
        round_positive(bits / f64::from(insertions) * std::f64::consts::LN_2).clamp(1, 32) as u32
    }

    /// The most probes a filter of this shape takes (at most 32).
    pub fn most_hashes(self) -> usize {
        usize::from(self.most_probes)
    }

    /// The largest filter: the slot size when filters are kept at a fixed stride.
    pub fn max_bytes(self) -> usize {
        self.bytes(self.max_insertions.max(self.min_freq))
    }
}

/// `x.ceil()` for `x` below 2^52 (0 for negatives) without a libm call:
/// sizes are asked for every posting grouped, written and merged.
fn ceil_positive(x: f64) -> usize {
    let t = x as usize;
    t + usize::from((t as f64) < x)
}

/// `x.round()` (halves away from zero) for `x` below 2^52 (0 for negatives), likewise.
fn round_positive(x: f64) -> usize {
    let t = x as usize;
    t + usize::from(x - t as f64 >= 0.5)
}

/// The filters of a segment, recorded in its meta.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BloomParams {
    /// Every posting's filters (as in memory).
    pub shape: FilterShape,
    /// Words never inserted (so never tested); shared, as every view of an
    /// in-memory segment copies its segment's parameters.
    pub stop_words: Arc<[String]>,
    /// The lowest frequency of a posting of a list longer than a block that
    /// keeps its filters on disk (1 in segments written before it existed).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub min_freq: u32,
}

impl BloomParams {
    /// Filters for up to `expected` insertions at false-positive rate `fp`.
    pub fn for_rate(expected: u32, fp: f64, stop_words: Vec<String>) -> Self {
        let fp_millionths = (fp * 1e6).round().clamp(1.0, 500_000.0) as u32;
        let stop_words = stop_words.into();
        BloomParams { shape: FilterShape::new(expected.clamp(1, 64), fp_millionths), stop_words, min_freq: 1 }
    }

    /// Lists longer than a block keep filters from frequency `min_freq` on.
    pub fn with_min_freq(self, min_freq: u32) -> Self {
        BloomParams { min_freq: min_freq.max(1), ..self }
    }

    /// The shape of a record of `doc_freq` postings, in a segment of
    /// `max_doc` documents, written from filters of `layout`; `None` when the
    /// list is too common to keep any ([`keeps_filters`]).
    pub fn record_shape(&self, layout: FilterShape, doc_freq: usize, max_doc: u32) -> Option<FilterShape> {
        if !keeps_filters(doc_freq, max_doc) {
            return None;
        }
        let from = if doc_freq > crate::BLOCK_LEN { self.min_freq } else { 1 };
        Some(layout.with_min_freq(layout.min_freq().max(from)))
    }

    /// The filters a merge of segments with filters `each` writes: theirs,
    /// keeping longer lists' filters from the highest `min_freq` of them;
    /// none when a segment has none or they differ otherwise.
    pub fn common<'a>(mut each: impl Iterator<Item = Option<&'a BloomParams>>) -> Option<BloomParams> {
        let mut common = each.next()??.clone();
        for p in each {
            let p = p?;
            if p.stop_words != common.stop_words || p.shape != common.shape {
                return None;
            }
            common.min_freq = common.min_freq.max(p.min_freq);
        }
        Some(common)
    }

    pub fn is_stop_word(&self, term: &[u8]) -> bool {
        self.stop_words.iter().any(|w| w.as_bytes() == term)
    }
}

/// How much rarer than every other term of a phrase its rarest term must be
/// for a search to test that term's filters before the other lists seek to
/// its documents (WiSER's gain: those seeks spared).
pub const EARLY_RATIO: u32 = 16;

/// Whether a list of `doc_freq` postings in a segment of `max_doc` documents
/// keeps filters on disk: a list of one block always does; a longer one only
/// while it is rare enough to be a phrase's rarest term by [`EARLY_RATIO`].
/// A more common list's filters are tested only against another common
/// term's, where a page of positions holds many candidates and one match
/// among them reads it anyway: on the shared corpus the 57 lists above that
/// line held 7.2 MB of filters (5% of the index) and phrases ran as fast
/// without them.
pub fn keeps_filters(doc_freq: usize, max_doc: u32) -> bool {
    doc_freq <= crate::BLOCK_LEN || doc_freq as u64 * u64::from(EARLY_RATIO) <= u64::from(max_doc)
}

/// The stable 64-bit hash of a term.
#[inline]
pub fn term_hash(term: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in term {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[inline]
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline]
fn probes(hash: u64, bits: u32, hashes: u32) -> impl Iterator<Item = usize> {
    let mut x = hash;
    (0..hashes).map(move |_| {
        let bit = ((x >> 32) * u64::from(bits)) >> 32;
        x = mix(x);
        bit as usize
    })
}

/// Inserts a term hash into a filter, probe by probe: the definition the
/// writers' [`insert_sequence`] is checked against.
pub fn insert(filter: &mut [u8], hash: u64, hashes: u32) {
    if filter.is_empty() {
        return; // a posting without filters
    }
    let bits = filter.len() as u32 * 8;
    for bit in probes(hash, bits, hashes) {
        filter[bit / 8] |= 1 << (bit % 8);
    }
}

/// The first `out.len()` values of a term hash's probe sequence (`x_0`,
/// `x_1`, ...), which filters of every size share: a document inserts a term
/// into the filters of each of its neighbours, so it works them out once
/// rather than once a neighbour.
pub fn probe_sequence(hash: u64, out: &mut [u64]) {
    let mut x = hash;
    for o in out {
        *o = x;
        x = mix(x);
    }
}

/// [`insert`] with a term's probe sequence ([`probe_sequence`]), as many
/// values of it as the filter takes probes.
#[inline]
pub fn insert_sequence(filter: &mut [u8], sequence: &[u64]) {
    if filter.is_empty() {
        return;
    }
    let bits = filter.len() as u64 * 8;
    let bit = |x: u64| ((x >> 32) * bits) >> 32;
    if filter.len() <= 8 {
        // Most filters (those of postings seen up to four times): the bits
        // gathered in a register, bit `b` of the filter being bit `b` of
        // its bytes read little-endian, and set at once.
        let mask = sequence.iter().fold(0u64, |m, &x| m | 1 << bit(x));
        for (i, b) in filter.iter_mut().enumerate() {
            *b |= (mask >> (8 * i)) as u8;
        }
        return;
    }
    for &x in sequence {
        let bit = bit(x) as usize;
        filter[bit / 8] |= 1 << (bit % 8);
    }
}

/// Whether a filter may hold a term hash (false: it certainly does not).
#[inline]
pub fn may_contain(filter: &[u8], hash: u64, hashes: u32) -> bool {
    let bits = filter.len() as u32 * 8;
    bits > 0 && probes(hash, bits, hashes).all(|bit| filter[bit / 8] & (1 << (bit % 8)) != 0)
}

/// Which filter of a posting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserting_a_probe_sequence_sets_the_bits_insert_sets() {
        let shape = FilterShape::new(WISER_MAX_INSERTIONS, WISER_FP_MILLIONTHS);
        let mut sequence = vec![0; shape.most_hashes()];
        for i in 0..500u64 {
            let hash = term_hash(&i.to_le_bytes());
            probe_sequence(hash, &mut sequence);
            let freq = 1 + (i % 9) as u32;
            let (len, hashes) = (shape.bytes(freq), shape.hashes(freq));
            assert!(hashes <= sequence.len() as u32);
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
            insert(&mut a, hash, hashes);
            insert_sequence(&mut b, &sequence[..hashes as usize]);
            assert_eq!(a, b, "hash {hash:x}, {len} bytes");
        }
        assert_eq!(shape.most_hashes(), (1..=5).map(|f| shape.hashes(f)).max().unwrap() as usize);
    }

    #[test]
    fn kept_sizes_are_the_formulas() {
        for (n, fp) in [(5, 900), (1, 900), (3, 10), (8, 50_000), (12, 900), (40, 1)] {
            let shape = FilterShape::new(n, fp).with_min_freq(2);
            for freq in 0..60 {
                let insertions = shape.insertions(freq);
                let stored = shape.stores(freq);
                assert_eq!(shape.bytes(freq), if stored { shape.bytes_for(insertions) } else { 0 });
                assert_eq!(shape.hashes(freq), if stored { shape.probes_for(insertions) } else { 0 });
            }
        }
    }

    #[test]
    fn wiser_parameters() {
        let s = BloomParams::for_rate(5, 0.0009, vec![]).shape;
        assert_eq!((s.bytes(5), s.hashes(5)), (9, 10));
        assert_eq!((s.bytes(1), s.bytes(2), s.bytes(40)), (2, 4, 9));
    }

    #[test]
    fn sizes_follow_the_formula_for_every_shape() {
        for fp_millionths in [1, 7, 100, 900, 1000, 12_345, 100_000, 500_000] {
            let s = FilterShape::new(64, fp_millionths);
            let fp = (f64::from(fp_millionths) / 1e6).clamp(1e-9, 0.5);
            for n in 1..=64u32 {
                let bits = -f64::from(n) * fp.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
                let bytes = (bits / 8.0 - 0.15).ceil().max(1.0) as usize;
                assert_eq!(s.bytes(n), bytes);
                let hashes = (bytes as f64 * 8.0 / f64::from(n) * std::f64::consts::LN_2).round();
                assert_eq!(s.hashes(n), hashes.clamp(1.0, 32.0) as u32);
            }
        }
        for x in [-0.4, 0.0, 0.2, 0.5, 0.9999999999999999, 1.0, 1.5, 2.4999999999999996, 2.5, 3.0, 1e15 + 0.5]
        {
            assert_eq!(ceil_positive(x), x.ceil().max(0.0) as usize, "ceil {x}");
            assert_eq!(round_positive(x), x.round().max(0.0) as usize, "round {x}");
        }
        let json = serde_json::to_string(&FilterShape::new(5, 900)).unwrap();
        assert_eq!(json, r#"{"max_insertions":5,"fp_millionths":900}"#);
        assert_eq!(serde_json::from_str::<FilterShape>(&json).unwrap(), FilterShape::new(5, 900));
    }

    #[test]
    fn postings_below_the_lowest_frequency_have_no_filter() {
        let s = BloomParams::for_rate(5, 0.0009, vec![]).shape.with_min_freq(3);
        assert_eq!((s.bytes(1), s.bytes(2), s.bytes(3), s.hashes(2)), (0, 0, 6, 0));
        let mut empty = [];
        insert(&mut empty, 7, 3);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"max_insertions":5,"fp_millionths":900,"min_freq":3}"#);
        assert_eq!(serde_json::from_str::<FilterShape>(&json).unwrap(), s);
    }

    /// A merge keeps longer lists' filters from the highest `min_freq` of
    /// its inputs; inputs whose filters differ otherwise give none.
    #[test]
    fn merged_segments_keep_filters_all_their_inputs_have() {
        let p = |min: u32, fp: f64| BloomParams::for_rate(5, fp, vec!["the".into()]).with_min_freq(min);
        let (one, two, other) = (p(1, 0.0009), p(2, 0.0009), p(2, 0.01));
        let common = BloomParams::common([Some(&one), Some(&two), Some(&one)].into_iter()).unwrap();
        assert_eq!((common.min_freq, common.shape), (2, one.shape));
        assert_eq!(BloomParams::common([Some(&two), Some(&other)].into_iter()), None);
        assert_eq!(BloomParams::common([Some(&two), None].into_iter()), None);
        let mut words = two.clone();
        words.stop_words = Arc::from([]);
        assert_eq!(BloomParams::common([Some(&two), Some(&words)].into_iter()), None);
    }

    /// A list of one block keeps every posting's filters; a longer one from `min_freq`.
    #[test]
    fn longer_lists_keep_filters_from_the_lowest_frequency() {
        let p = BloomParams::for_rate(5, 0.0009, vec![]).with_min_freq(3);
        let full = p.shape;
        let shape =
            |layout: FilterShape, doc_freq| p.record_shape(layout, doc_freq, 1 << 20).unwrap().min_freq();
        assert_eq!(shape(full, 128), 1);
        assert_eq!(shape(full, 129), 3);
        assert_eq!(shape(full.with_min_freq(2), 1), 2);
        assert_eq!(shape(full.with_min_freq(4), 500), 4);
        // A list of more than a sixteenth of the documents keeps none, unless it is one block.
        assert!(p.record_shape(full, 129, 16 * 129).is_some());
        assert_eq!(p.record_shape(full, 130, 16 * 129), None);
        assert!(p.record_shape(full, 128, 200).is_some());
        let json = serde_json::to_string(&BloomParams::for_rate(5, 0.0009, vec![])).unwrap();
        assert!(!json.contains("min_freq"), "{json}");
        assert_eq!(serde_json::from_str::<BloomParams>(&json).unwrap().min_freq, 1);
    }

    #[test]
    fn measured_false_positive_rate_is_within_twice_the_configured_one() {
        let s = BloomParams::for_rate(5, 0.0009, vec![]).shape;
        for n in 1..=5u32 {
            let (mut tests, mut false_positives) = (0u64, 0u64);
            let (bytes, hashes) = (s.bytes(n), s.hashes(n));
            for f in 0..3000u64 {
                let mut filter = vec![0u8; bytes];
                for i in 0..n {
                    insert(&mut filter, term_hash(format!("in-{f}-{i}").as_bytes()), hashes);
                }
                for i in 0..n {
                    assert!(may_contain(&filter, term_hash(format!("in-{f}-{i}").as_bytes()), hashes));
                }
                for i in 0..100 {
                    tests += 1;
                    let out = term_hash(format!("out-{f}-{i}").as_bytes());
                    false_positives += u64::from(may_contain(&filter, out, hashes));
                }
            }
            let rate = false_positives as f64 / tests as f64;
            assert!(
                rate < 2.0 * 0.0009,
                "{n} insertions in {bytes} bytes: measured false-positive rate {rate}"
            );
        }
    }
}
