//! A text field's tokens grouped by term, with each posting's phrase filters
//! already filled: everything about one document that does not depend on the
//! segment it goes into. A live index groups a document before it takes its
//! lock, so the segment only files one posting per distinct term under it
//! (a 300 KB document has tens of thousands of tokens but a few thousand terms).

use hashbrown::HashTable;
use needle_codecs::bloom::{self, BloomParams, FilterShape};

use crate::analyzed::{AnalyzedDoc, TokenRef};
use crate::mem_postings::{encode_occurrences, Occurrence};
use crate::term_table::{prefix, term_hash};

/// One distinct term of a field: its text (a range of the document's term
/// text), and its occurrences as a range of [`GroupedText`]'s arrays.
pub(crate) struct GroupedTerm {
    pub term: (u32, u32),
    /// Its [`term_hash`], which the segment's term table takes too.
    pub hash: u64,
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

/// The most distinct terms a document's grouping makes room for at once.
const GROUPS_ROOM: usize = 4096;

/// Groups `tokens` (one field of `doc`) by term and fills the filters of each
/// posting: for every occurrence, the terms at the positions right before and
/// after it, stop words left out, in a filter sized by the term's frequency.
pub(crate) fn group(doc: &AnalyzedDoc, tokens: &[TokenRef], bloom: Option<&BloomParams>) -> GroupedText {
    // Sized for a document of distinct words (capped: a long document repeats
    // its words), so most documents group without the table growing.
    let room = tokens.len().min(GROUPS_ROOM);
    let mut index: HashTable<u32> = HashTable::with_capacity(room);
    let mut first: Vec<(u32, u32, u64)> = Vec::with_capacity(room);
    let mut counts: Vec<usize> = Vec::with_capacity(room);
    let mut token_group: Vec<u32> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let bytes = doc.term(t);
        let hash = term_hash(bytes);
        let g = match index.find(hash, |&g| {
            let (start, len, _) = first[g as usize];
            doc.term_at((start, len)) == bytes
        }) {
            Some(&g) => g,
            None => {
                let g = first.len() as u32;
                first.push((t.term.0, t.term.1, hash));
                counts.push(0);
                index.insert_unique(hash, g, |&g| first[g as usize].2);
                g
            }
        };
        counts[g as usize] += 1;
        token_group.push(g);
    }
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
        .map(|((&(start, len, hash), &s), &c)| {
            let from = encoded.len();
            encode_occurrences(&occurrences[s..s + c], &mut encoded);
            GroupedTerm { term: (start, len), hash, occurrences: s..s + c, encoded: from..encoded.len() }
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
    // Once per distinct term of the document, not once per occurrence:
    // whether it is a stop word (never inserted), its filter's size and
    // probes, and its probe sequence.
    let stop_words = StopWords::new(b);
    let most = b.shape.most_hashes();
    let mut sequences = vec![0u64; g.terms.len() * most];
    let per_term: Vec<(bool, usize, usize)> = g
        .terms
        .iter()
        .zip(sequences.chunks_exact_mut(most))
        .map(|(t, sequence)| {
            let text = doc.term_at(t.term);
            let stop = stop_words.contains(text);
            if !stop {
                bloom::probe_sequence(bloom::term_hash(text), sequence);
            }
            let freq = t.occurrences.len() as u32;
            (stop, b.shape.bytes(freq), b.shape.hashes(freq) as usize)
        })
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        let group = token_group[i] as usize;
        let (_, len, probes) = per_term[group];
        let at = group * stride;
        // Tokens come in position order, several at one position when a
        // filter expands a term (n-grams): every token one position before
        // or after is a neighbor (most often just the one beside it).
        let insert = |side: &mut Vec<u8>, j: usize| {
            let n = token_group[j] as usize;
            if !per_term[n].0 {
                bloom::insert_sequence(&mut side[at..at + len], &sequences[n * most..n * most + probes]);
            }
        };
        let mut j = i;
        while j > 0 && tokens[j - 1].position + 1 >= t.position {
            j -= 1;
            if tokens[j].position + 1 == t.position {
                insert(&mut g.before, j);
            }
        }
        for (j, n) in tokens.iter().enumerate().skip(i + 1) {
            if n.position > t.position + 1 {
                break;
            }
            if n.position == t.position + 1 {
                insert(&mut g.after, j);
            }
        }
    }
}

/// The filters' stop words, tested once per distinct term of a document:
/// those of up to seven bytes as numbers (their bytes and length), compared
/// in registers rather than byte by byte.
struct StopWords<'a> {
    short: Vec<u64>,
    params: &'a BloomParams,
    longest: usize,
}

impl<'a> StopWords<'a> {
    fn new(params: &'a BloomParams) -> Self {
        let words = params.stop_words.iter().map(String::as_bytes);
        let short = words.clone().filter(|w| w.len() < 8).map(packed).collect();
        StopWords { short, params, longest: words.map(<[u8]>::len).max().unwrap_or(0) }
    }

    fn contains(&self, term: &[u8]) -> bool {
        match term.len() {
            n if n > self.longest => false,
            0..8 => self.short.contains(&packed(term)),
            _ => self.params.is_stop_word(term),
        }
    }
}

/// A term of up to seven bytes as one number: its bytes, and its length in the top byte.
fn packed(term: &[u8]) -> u64 {
    prefix(term) | (term.len() as u64) << 56
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_as_numbers_answer_as_the_list_does() {
        let list = ["a", "the", "their", "seventy", "abcdefgh", "internationalization", "\0"];
        let params = BloomParams::for_rate(5, 0.0009, list.iter().map(|w| w.to_string()).collect());
        let stop_words = StopWords::new(&params);
        let mut terms: Vec<Vec<u8>> = list.iter().map(|w| w.as_bytes().to_vec()).collect();
        for w in list {
            let w = w.as_bytes();
            terms.extend([&w[..w.len() - 1], &[w, b"s"].concat(), &[w, b"\0"].concat()].map(<[u8]>::to_vec));
        }
        terms.extend([b"".to_vec(), b"\0\0".to_vec(), b"th".to_vec(), b"thf".to_vec(), b"abcdefgi".to_vec()]);
        for t in &terms {
            assert_eq!(stop_words.contains(t), params.is_stop_word(t), "{t:?}");
        }
        assert!(list.iter().all(|w| stop_words.contains(w.as_bytes())));
    }
}
