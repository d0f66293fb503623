//! `scale`: a deterministic generator of corpora of any size that keep the real
//! corpus's statistics.
//!
//! It learns from a real corpus (words = lowercased alphanumeric runs): the
//! unigram distribution (Zipf), the word pairs (a first-order Markov chain over
//! observed successors, so phrases occur), the distribution of body lengths and
//! title lengths, and Heaps' law `V(n) = K n^beta` fitted to the vocabulary
//! growth of the real text. Generating, each word follows the previous one
//! through an observed pair with probability `pair_prob`, else is drawn from the
//! unigram distribution; whenever the distinct words so far fall below the Heaps
//! curve a brand-new (invented, pronounceable) word is emitted, and invented words
//! recur by preferential attachment (Simon's model), so new rare words keep
//! appearing and most occur in one or a few documents, as in real text.
//! The same seed gives the same corpus.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{df_histogram, for_each_doc, CorpusStats};
use crate::util::{create_output, for_each_word, Result};

/// How long generated documents are.
#[derive(Debug, Clone, Copy)]
pub enum DocLen {
    /// About this many bytes of body each (luceneutil's wikimedium uses 1 KB chunks).
    Fixed(usize),
    /// Body lengths drawn from the real corpus's.
    Real,
}

pub struct Model {
    words: Vec<String>,
    ids: HashMap<String, u32>,
    unigram: Alias,
    /// The words that followed word `w` (one entry per occurrence, so a uniform
    /// draw is a draw weighted by pair count) are `succ_word[succ_start[w]..succ_start[w + 1]]`.
    succ_start: Vec<u64>,
    succ_word: Vec<u32>,
    body_lens: Vec<u32>,
    title_words: Vec<u16>,
    pub heaps_k: f64,
    pub heaps_beta: f64,
    pub real: CorpusStats,
}

/// Walker's alias table: O(1) draws from a discrete distribution.
struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    fn new(weights: &[u64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().map(|&w| w as f64).sum();
        let mut prob: Vec<f64> = weights.iter().map(|&w| w as f64 * n as f64 / total).collect();
        let mut alias = vec![0u32; n];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| prob[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l as u32;
            prob[l] -= 1.0 - prob[s];
            if prob[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in large.into_iter().chain(small) {
            prob[i] = 1.0;
        }
        Alias { prob, alias }
    }

    fn sample(&self, rng: &mut StdRng) -> u32 {
        let i = rng.gen_range(0..self.prob.len());
        if rng.gen::<f64>() < self.prob[i] {
            i as u32
        } else {
            self.alias[i]
        }
    }
}

impl Model {
    /// Learns from the first `limit` documents of a corpus (all when None).
    pub fn learn(path: &Path, limit: Option<u64>) -> Result<Model> {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut words: Vec<String> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        let mut df: Vec<u32> = Vec::new();
        let mut last_doc: Vec<u32> = Vec::new();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut body_lens = Vec::new();
        let mut title_words = Vec::new();
        let mut heaps_points: Vec<(f64, f64)> = Vec::new();
        let mut next_point = 1u64 << 14;
        let (mut tokens, mut bytes, mut doc) = (0u64, 0u64, 0u32);
        let mut buf = String::new();
        let docs = for_each_doc(path, limit, |d| {
            doc += 1;
            body_lens.push(d.body.len().min(u32::MAX as usize) as u32);
            bytes += (d.title.len() + d.body.len()) as u64;
            let mut nt = 0u16;
            for (fi, text) in [&d.title, &d.body].into_iter().enumerate() {
                let mut prev: Option<u32> = None;
                for_each_word(text, &mut buf, |w| {
                    let id = match ids.get(w) {
                        Some(&id) => id,
                        None => {
                            let id = words.len() as u32;
                            ids.insert(w.to_string(), id);
                            words.push(w.to_string());
                            counts.push(0);
                            df.push(0);
                            last_doc.push(0);
                            id
                        }
                    };
                    let i = id as usize;
                    counts[i] += 1;
                    if last_doc[i] != doc {
                        last_doc[i] = doc;
                        df[i] += 1;
                    }
                    if let Some(p) = prev {
                        pairs.push((p, id));
                    }
                    prev = Some(id);
                    tokens += 1;
                    if fi == 0 {
                        nt = nt.saturating_add(1);
                    }
                    if tokens == next_point {
                        heaps_points.push(((tokens as f64).ln(), (words.len() as f64).ln()));
                        next_point *= 2;
                    }
                });
            }
            title_words.push(nt);
        })?;
        if words.is_empty() {
            return Err(format!("{}: no words", path.display()).into());
        }
        heaps_points.push(((tokens as f64).ln(), (words.len() as f64).ln()));
        let (heaps_k, heaps_beta) = fit_heaps(&heaps_points, tokens, words.len() as u64);
        // Successor lists, grouped by first word (a counting sort).
        let mut succ_start = vec![0u64; words.len() + 1];
        for &(a, _) in &pairs {
            succ_start[a as usize + 1] += 1;
        }
        for i in 1..succ_start.len() {
            succ_start[i] += succ_start[i - 1];
        }
        let mut fill: Vec<u64> = succ_start[..words.len()].to_vec();
        let mut succ_word = vec![0u32; pairs.len()];
        for &(a, b) in &pairs {
            succ_word[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
        }
        drop(pairs);
        let real = CorpusStats {
            docs,
            tokens,
            bytes,
            vocabulary: words.len() as u64,
            df_histogram: df_histogram(df.iter().map(|&d| u64::from(d))),
        };
        Ok(Model {
            unigram: Alias::new(&counts),
            words,
            ids,
            succ_start,
            succ_word,
            body_lens,
            title_words,
            heaps_k,
            heaps_beta,
            real,
        })
    }

    fn successor(&self, prev: u32, rng: &mut StdRng) -> Option<u32> {
        let (s, e) = (self.succ_start[prev as usize], self.succ_start[prev as usize + 1]);
        if s == e {
            return None;
        }
        Some(self.succ_word[rng.gen_range(s..e) as usize])
    }
}

/// Least squares over (ln n, ln V) points; falls back to beta = 0.6 through the last point.
fn fit_heaps(points: &[(f64, f64)], tokens: u64, vocab: u64) -> (f64, f64) {
    let pts: Vec<_> = points.iter().copied().filter(|p| p.0 >= 65_536f64.ln()).collect();
    if pts.len() >= 3 {
        let n = pts.len() as f64;
        let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
        let (mx, my) = (sx / n, sy / n);
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let beta = (sxy / sxx).clamp(0.3, 0.9);
        // Anchor the curve at the full corpus so V(N_real) = V_real.
        let k = vocab as f64 / (tokens as f64).powf(beta);
        return (k, beta);
    }
    let beta = 0.6;
    (vocab as f64 / (tokens.max(1) as f64).powf(beta), beta)
}

/// Options of one generation.
pub struct ScaleOptions {
    pub target_bytes: u64,
    pub doc_len: DocLen,
    pub pair_prob: f64,
    /// Probability that a word repeats one already in the document (burstiness).
    pub repeat_prob: f64,
    pub seed: u64,
}

#[derive(serde::Serialize)]
struct OutDoc<'a> {
    id: String,
    title: &'a str,
    body: &'a str,
    source: &'static str,
}

/// Writes a generated corpus to `out` and returns its statistics.
pub fn generate(model: &Model, opts: &ScaleOptions, out: &Path) -> Result<CorpusStats> {
    let mut w = create_output(out)?;
    let mut g = Gen {
        m: model,
        rng: StdRng::seed_from_u64(opts.seed),
        pair_prob: opts.pair_prob,
        repeat_prob: opts.repeat_prob,
        doc_words: Vec::new(),
        seen_real: vec![false; model.words.len()],
        drawn: 0,
        invented: Vec::new(),
        occurrences: Vec::new(),
        tokens: 0,
        next_update: 0,
        target: 0.0,
        new_rate: 0.0,
        df: vec![0; model.words.len()],
        last_doc: vec![0; model.words.len()],
        doc: 0,
    };
    let (mut bytes, mut docs) = (0u64, 0u64);
    let (mut title, mut body) = (String::new(), String::new());
    let mut next_report = 256u64 << 20;
    while bytes < opts.target_bytes {
        g.doc += 1;
        let body_len = match opts.doc_len {
            DocLen::Fixed(n) => n,
            DocLen::Real => model.body_lens[g.rng.gen_range(0..model.body_lens.len())] as usize,
        };
        let title_len = model.title_words[g.rng.gen_range(0..model.title_words.len())].clamp(1, 24);
        title.clear();
        body.clear();
        g.doc_words.clear();
        let mut prev = None;
        for _ in 0..title_len {
            let id = g.next_word(prev);
            g.push(&mut title, id);
            prev = Some(id);
        }
        let mut prev = None;
        while body.len() < body_len.max(1) {
            let id = g.next_word(prev);
            g.push(&mut body, id);
            prev = Some(id);
        }
        docs += 1;
        bytes += (title.len() + body.len()) as u64;
        let doc = OutDoc { id: format!("s{docs}"), title: &title, body: &body, source: "scale" };
        serde_json::to_writer(&mut w, &doc)?;
        w.write_all(b"\n")?;
        if bytes >= next_report {
            eprintln!("  {} MB, {docs} docs, vocabulary {}", bytes >> 20, g.drawn + g.invented.len() as u64);
            next_report += 256 << 20;
        }
    }
    w.flush()?;
    drop(w);
    Ok(CorpusStats {
        docs,
        tokens: g.tokens,
        bytes,
        vocabulary: g.drawn + g.invented.len() as u64,
        df_histogram: df_histogram(g.df.iter().map(|&d| u64::from(d))),
    })
}

struct Gen<'a> {
    m: &'a Model,
    rng: StdRng,
    pair_prob: f64,
    repeat_prob: f64,
    /// The words of the current document so far.
    doc_words: Vec<u32>,
    seen_real: Vec<bool>,
    drawn: u64,
    /// Strings of the invented words (ids from `m.words.len()` on).
    invented: Vec<String>,
    /// Every occurrence of an invented word so far (preferential attachment).
    occurrences: Vec<u32>,
    tokens: u64,
    next_update: u64,
    target: f64,
    new_rate: f64,
    df: Vec<u32>,
    last_doc: Vec<u32>,
    doc: u32,
}

impl Gen<'_> {
    fn next_word(&mut self, prev: Option<u32>) -> u32 {
        self.tokens += 1;
        if self.tokens >= self.next_update {
            // The Heaps curve and its slope, refreshed every 64 tokens.
            let n = self.tokens as f64;
            let (k, beta) = (self.m.heaps_k, self.m.heaps_beta);
            self.target = k * n.powf(beta);
            self.new_rate = k * beta * n.powf(beta - 1.0);
            self.next_update = self.tokens + 64;
        }
        let vocab = self.drawn + self.invented.len() as u64;
        let real_v = self.m.words.len() as u32;
        if (vocab as f64) < self.target {
            let id = real_v + self.invented.len() as u32;
            let mut s = invented_word(self.invented.len() as u64);
            while self.m.ids.contains_key(&s) {
                s.push('q');
            }
            self.invented.push(s);
            self.occurrences.push(id);
            return id;
        }
        // Invented words recur about as often as new ones appear.
        if !self.occurrences.is_empty() && self.rng.gen::<f64>() < self.new_rate {
            let id = self.occurrences[self.rng.gen_range(0..self.occurrences.len())];
            self.occurrences.push(id);
            return id;
        }
        if !self.doc_words.is_empty() && self.rng.gen::<f64>() < self.repeat_prob {
            let id = self.doc_words[self.rng.gen_range(0..self.doc_words.len())];
            if id >= real_v {
                self.occurrences.push(id);
            }
            return id;
        }
        let succ = match prev {
            Some(p) if p < real_v && self.rng.gen::<f64>() < self.pair_prob => {
                self.m.successor(p, &mut self.rng)
            }
            _ => None,
        };
        let id = succ.unwrap_or_else(|| self.m.unigram.sample(&mut self.rng));
        if !self.seen_real[id as usize] {
            self.seen_real[id as usize] = true;
            self.drawn += 1;
        }
        id
    }

    fn push(&mut self, text: &mut String, id: u32) {
        let i = id as usize;
        self.doc_words.push(id);
        if i >= self.df.len() {
            self.df.resize(i + 1, 0);
            self.last_doc.resize(i + 1, 0);
        }
        if self.last_doc[i] != self.doc {
            self.last_doc[i] = self.doc;
            self.df[i] += 1;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        let real_v = self.m.words.len();
        if i < real_v {
            text.push_str(&self.m.words[i]);
        } else {
            text.push_str(&self.invented[i - real_v]);
        }
    }
}

/// A pronounceable word for invented word number `i`: consonant-vowel
/// syllables, distinct for distinct `i`, at least two syllables.
fn invented_word(i: u64) -> String {
    const C: &[u8] = b"bcdfghjklmnprstvz";
    const V: &[u8] = b"aeiou";
    let base = (C.len() * V.len()) as u64;
    // Bijective base-85 numeration of i + 85: injective, two syllables or more.
    let mut i = i + base;
    let mut s = String::new();
    loop {
        let d = (i % base) as usize;
        s.push(C[d / V.len()] as char);
        s.push(V[d % V.len()] as char);
        i /= base;
        if i == 0 {
            break;
        }
        i -= 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invented_words_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000 {
            assert!(seen.insert(invented_word(i)), "{i}");
        }
    }
}
