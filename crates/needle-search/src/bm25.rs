//! Lucene 10's `BM25Similarity` (k1 = 1.2, b = 0.75), float for float: the
//! same idf, the same average length, the same 256-entry norm cache, the same
//! `weight - weight / (1 + freq * normInverse)` (no `(k1 + 1)` factor).

use needle_codecs::norms::decode_length;

pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;

/// Lucene's `idf`: `ln(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5))`, in double, cast to float.
pub fn idf(doc_freq: u64, doc_count: u64) -> f32 {
    let (df, n) = (doc_freq as f64, doc_count as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// Lucene's `avgFieldLength`.
pub fn avg_field_length(sum_total_term_freq: u64, doc_count: u64) -> f32 {
    (sum_total_term_freq as f64 / doc_count as f64) as f32
}

/// A term's (or phrase's) scorer for one field.
#[derive(Clone)]
pub struct Bm25 {
    weight: f32,
    cache: [f32; 256],
}

impl Bm25 {
    /// `weight`: the idf times the query's boost (Lucene's `boost * idf`).
    pub fn new(weight: f32, avgdl: f32) -> Self {
        let mut cache = [0f32; 256];
        for (i, c) in cache.iter_mut().enumerate() {
            let len = decode_length(i as u8) as f32;
            *c = 1.0 / (K1 * ((1.0 - B) + B * len / avgdl));
        }
        Bm25 { weight, cache }
    }

    #[inline]
    pub fn score(&self, freq: f32, norm: u8) -> f32 {
        let norm_inverse = self.cache[norm as usize];
        self.weight - self.weight / (1.0 + freq * norm_inverse)
    }

    /// Above every score: BM25 tends to `weight` as the frequency grows.
    pub fn weight(&self) -> f32 {
        self.weight
    }
}

/// Sums clause scores as Lucene's boolean scorers do: in double, cast to float once.
pub fn sum_scores(scores: impl Iterator<Item = f32>) -> f32 {
    scores.map(f64::from).sum::<f64>() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_with_freq_and_shrinks_with_length() {
        let s = Bm25::new(idf(3, 100), 10.0);
        assert!(s.score(2.0, 10) > s.score(1.0, 10));
        assert!(s.score(1.0, 5) > s.score(1.0, 20));
        assert!(s.score(1000.0, 1) < s.weight());
    }

    #[test]
    fn idf_matches_lucene_example() {
        // Lucene: idf(docFreq=1, docCount=10) = ln(1 + 9.5/1.5) = 1.9924302
        assert_eq!(idf(1, 10), 1.992_430_2);
    }
}
