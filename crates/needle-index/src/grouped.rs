//! A text field's tokens grouped by term, with each posting's phrase filters
//! already filled: everything about one document that does not depend on the
//! segment it goes into. A live index groups a document before it takes its
//! lock, so the segment only files one posting per distinct term under it
//! (a 300 KB document has tens of thousands of tokens but a few thousand terms).

use needle_codecs::bloom::{self, BloomParams, FilterShape};
use rustc_hash::FxHashMap;

use crate::analyzed::{AnalyzedDoc, TokenRef};
use crate::mem_postings::{encode_occurrences, Occurrence};

/// One distinct term of a field: its text (a range of the document's term
/// text), and its occurrences as a range of [`GroupedText`]'s arrays.
pub(crate) struct GroupedTerm {
    pub term: (u32, u32),
    pub occurrences: std::ops::Range<usize>,
    /// Its occurrences encoded for a chunk (see `mem_postings::encode_occurrences`):
    /// a range of [`GroupedText::encoded`].
    pub encoded: std::ops::Range<usize>,
}

pub(crate) struct GroupedText {
    /// In order of first occurrence.
    pub terms: Vec<GroupedTerm>,
    /// Each term's occurrences in token order, encoded, term after term.
    pub encoded: Vec<u8>,
    /// Each term's before and after filters in a slot of the largest
    /// filter's size ([`GroupedText::stride`]; empty without filters).
    pub before: Vec<u8>,
    pub after: Vec<u8>,
    /// The filters' shape (none without filters).
    shape: Option<FilterShape>,
}

impl GroupedText {
    /// The bytes of a term's slot in `before` and `after` (0 without filters).
    fn stride(&self) -> usize {
        self.shape.map_or(0, FilterShape::max_bytes)
    }

    /// The `i`-th term's filters, each of its posting's size (empty without filters).
    pub fn filters(&self, i: usize) -> (&[u8], &[u8]) {
        let Some(shape) = self.shape else { return (&[], &[]) };
        let at = i * self.stride();
        let len = shape.bytes(self.terms[i].occurrences.len() as u32);
        (&self.before[at..at + len], &self.after[at..at + len])
    }
}

/// Groups `tokens` (one field of `doc`) by term and fills the filters of each
/// posting: for every occurrence, the terms at the positions right before and
/// after it, stop words left out, in a filter sized by the term's frequency.
pub(crate) fn group(doc: &AnalyzedDoc, tokens: &[TokenRef], bloom: Option<&BloomParams>) -> GroupedText {
    let mut index: FxHashMap<&[u8], u32> = FxHashMap::default();
    let mut first: Vec<(u32, u32)> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    let token_group: Vec<u32> = tokens
        .iter()
        .map(|t| {
            let g = *index.entry(doc.term(t)).or_insert_with(|| {
                first.push(t.term);
                counts.push(0);
                (first.len() - 1) as u32
            });
            counts[g as usize] += 1;
            g
        })
        .collect();
    let mut starts = Vec::with_capacity(counts.len());
    let mut at = 0;
    for &c in &counts {
        starts.push(at);
        at += c;
    }
    let mut occurrences = vec![Occurrence { position: 0, start: 0, end: 0 }; tokens.len()];
    let mut next = starts.clone();
    for (t, &g) in tokens.iter().zip(&token_group) {
        let slot = &mut next[g as usize];
        occurrences[*slot] = Occurrence { position: t.position, start: t.start, end: t.end };
        *slot += 1;
    }
    let mut encoded = Vec::with_capacity(4 * tokens.len());
    let terms = first
        .iter()
        .zip(&starts)
        .zip(&counts)
        .map(|((&term, &s), &c)| {
            let from = encoded.len();
            encode_occurrences(&occurrences[s..s + c], &mut encoded);
            GroupedTerm { term, occurrences: s..s + c, encoded: from..encoded.len() }
        })
        .collect();
    let mut grouped =
        GroupedText { terms, encoded, before: Vec::new(), after: Vec::new(), shape: bloom.map(|b| b.shape) };
    if let Some(b) = bloom {
        fill_filters(&mut grouped, doc, tokens, &token_group, b);
    }
    grouped
}

fn fill_filters(
    g: &mut GroupedText,
    doc: &AnalyzedDoc,
    tokens: &[TokenRef],
    token_group: &[u32],
    b: &BloomParams,
) {
    let stride = g.stride();
    g.before = vec![0; g.terms.len() * stride];
    g.after = vec![0; g.terms.len() * stride];
    // Once per distinct term of the document, not once per occurrence: the
    // term's hash (None for a stop word, never inserted) and its filter's size.
    let longest_stop_word = b.stop_words.iter().map(String::len).max().unwrap_or(0);
    let per_term: Vec<(Option<u64>, usize, u32)> = g
        .terms
        .iter()
        .map(|t| {
            let text = doc.term_at(t.term);
            let stop = text.len() <= longest_stop_word && b.is_stop_word(text);
            let freq = t.occurrences.len() as u32;
            ((!stop).then(|| bloom::term_hash(text)), b.shape.bytes(freq), b.shape.hashes(freq))
        })
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        let group = token_group[i] as usize;
        let (_, len, probes) = per_term[group];
        let at = group * stride;
        let before = i.checked_sub(1).filter(|&j| tokens[j].position + 1 == t.position);
        let after = Some(i + 1).filter(|&j| j < tokens.len() && tokens[j].position == t.position + 1);
        for (neighbor, side) in [(before, &mut g.before), (after, &mut g.after)] {
            if let Some(hash) = neighbor.and_then(|j| per_term[token_group[j] as usize].0) {
                bloom::insert(&mut side[at..at + len], hash, probes);
            }
        }
    }
}
