//! Highlighting from stored offsets: the byte spans of a hit's matched terms
//! (a phrase marked as a whole) come from the postings, the text from the
//! document store, and fragments around the spans are cut from the text.

use std::collections::BTreeMap;

use needle_codecs::{Postings, SegmentRead};
use needle_core::{DocId, DocSet, FieldId, Result};

use crate::iter::{phrase_exact_matches, UnionPostings};
use crate::{PhraseQuery, Query};

/// The most terms of one prefix or wildcard query marked in a hit: as many
/// as a query may have clauses.
const MAX_MARKED_TERMS: usize = crate::MAX_CLAUSES;

/// What to mark: a term, or a phrase's whole extent.
#[derive(Debug, Clone)]
enum Target {
    Term(FieldId, Vec<u8>),
    Phrase(FieldId, Vec<(u32, Vec<u8>)>, u32),
}

fn targets(q: &Query, out: &mut Vec<Target>) {
    match q {
        Query::Term(t) => out.push(Target::Term(t.field, t.term.clone())),
        Query::Phrase(p) => out.push(Target::Phrase(p.field, p.terms.clone(), p.slop)),
        Query::Bool(b) => b.must.iter().chain(&b.should).chain(&b.filter).for_each(|c| targets(c, out)),
        Query::MatchAll | Query::MatchNone | Query::Range(_) | Query::Exists(_) | Query::MultiTerm(_) => {}
        // Each term's postings are read for every hit: past this many terms, none are marked.
        Query::TermSet { field, terms } if terms.len() <= MAX_MARKED_TERMS => {
            out.extend(terms.iter().map(|t| Target::Term(*field, t.clone())))
        }
        Query::TermSet { .. } => {}
        Query::Synonym { field, terms } => out.extend(terms.iter().map(|t| Target::Term(*field, t.clone()))),
        Query::Blended { field, terms } => {
            out.extend(terms.iter().map(|(t, _)| Target::Term(*field, t.clone())))
        }
        Query::CrossFields { fields, term, .. } => {
            out.extend(fields.iter().map(|(f, _)| Target::Term(*f, term.clone())))
        }
        // Each run of terms the span stands for marked as a phrase (past as many as a
        // query may have clauses, its terms alone).
        Query::Span { field, span } => match span.sequences(MAX_MARKED_TERMS) {
            Some(runs) => out.extend(runs.into_iter().map(|run| match run.as_slice() {
                [one] => Target::Term(*field, one.to_vec()),
                _ => Target::Phrase(*field, (0..).zip(run.into_iter().map(<[u8]>::to_vec)).collect(), 0),
            })),
            None => span.each_term(&mut |t| out.push(Target::Term(*field, t.to_vec()))),
        },
        Query::Boost(q, _) | Query::Constant(q) => targets(q, out),
        Query::Boosting { positive, .. } => targets(positive, out),
        Query::DisMax { clauses, .. } => clauses.iter().for_each(|c| targets(c, out)),
    }
}

/// The terms `query` marks, by field: a keyword field's value is marked
/// whole where it is one of its field's terms (see [`keyword_fragments`]).
pub fn marked_terms(query: &Query) -> BTreeMap<FieldId, Vec<Vec<u8>>> {
    let mut list = Vec::new();
    targets(query, &mut list);
    let mut out: BTreeMap<FieldId, Vec<Vec<u8>>> = BTreeMap::new();
    for t in list {
        if let Target::Term(field, term) = t {
            out.entry(field).or_default().push(term);
        }
    }
    out
}

/// A keyword field's highlight: each of its `values` that is one of
/// `terms`, marked whole, in the document's order (the first
/// `max_fragments`), as OpenSearch highlights keyword fields.
pub fn keyword_fragments(values: &[String], terms: &[Vec<u8>], opts: &FragmentOptions) -> Vec<String> {
    let marked = values.iter().filter(|v| terms.iter().any(|t| t == v.as_bytes()));
    marked.take(opts.max_fragments).map(|v| format!("{}{v}{}", opts.pre_tag, opts.post_tag)).collect()
}

/// Byte spans of `query`'s matches in `doc`, by field, sorted and merged.
pub fn match_spans(
    segment: &dyn SegmentRead,
    doc: DocId,
    query: &Query,
) -> Result<BTreeMap<FieldId, Vec<(u32, u32)>>> {
    let mut list = Vec::new();
    targets(query, &mut list);
    let mut spans: BTreeMap<FieldId, Vec<(u32, u32)>> = BTreeMap::new();
    for t in list {
        match t {
            Target::Term(field, term) => {
                let mut offsets = Vec::new();
                if let Some(mut p) = segment.postings(field, &term)? {
                    if p.seek(doc) == doc {
                        p.offsets(&mut offsets);
                    }
                }
                spans.entry(field).or_default().extend(offsets);
            }
            Target::Phrase(field, terms, slop) => {
                let found = phrase_spans(segment, doc, field, &terms, slop)?;
                spans.entry(field).or_default().extend(found);
            }
        }
    }
    for v in spans.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    spans.retain(|_, v| !v.is_empty());
    Ok(spans)
}

fn phrase_spans(
    segment: &dyn SegmentRead,
    doc: DocId,
    field: FieldId,
    terms: &[(u32, Vec<u8>)],
    slop: u32,
) -> Result<Vec<(u32, u32)>> {
    let phrase = PhraseQuery { field, terms: terms.to_vec(), slop };
    let mut per_term = Vec::with_capacity(terms.len());
    for (offset, place) in phrase.places() {
        let mut lists = Vec::new();
        for term in place {
            lists.extend(segment.postings(field, term)?);
        }
        let mut p: Box<dyn Postings> = match lists.len() {
            0 => return Ok(Vec::new()),
            1 => lists.pop().expect("one list"),
            _ => Box::new(UnionPostings::new(lists)),
        };
        if p.seek(doc) != doc {
            return Ok(Vec::new());
        }
        let (mut positions, mut offsets) = (Vec::new(), Vec::new());
        p.positions(&mut positions);
        p.offsets(&mut offsets);
        per_term.push((offset, positions, offsets));
    }
    if slop > 0 {
        // A sloppy phrase marks each of its terms.
        return Ok(per_term.into_iter().flat_map(|(_, _, o)| o).collect());
    }
    let lists: Vec<(u32, &[u32])> = per_term.iter().map(|(o, p, _)| (*o, p.as_slice())).collect();
    let offset_at = |i: usize, pos: i64| -> Option<(u32, u32)> {
        let (_, positions, offsets) = &per_term[i];
        let idx = positions.binary_search(&u32::try_from(pos).ok()?).ok()?;
        offsets.get(idx).copied()
    };
    let last = per_term.len() - 1;
    let mut out = Vec::new();
    phrase_exact_matches(&lists, |start| {
        let first = offset_at(0, start + i64::from(per_term[0].0));
        let end = offset_at(last, start + i64::from(per_term[last].0));
        if let (Some(a), Some(b)) = (first, end) {
            out.push((a.0, b.1));
        }
    });
    Ok(out)
}

/// How fragments are cut and marked.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct FragmentOptions {
    pub pre_tag: String,
    pub post_tag: String,
    /// Target fragment length in bytes.
    pub fragment_size: usize,
    pub max_fragments: usize,
    /// Where nothing in the field matched, show its first this many
    /// characters (see [`leading_text`]); 0: show nothing.
    pub no_match_size: usize,
}

impl Default for FragmentOptions {
    fn default() -> Self {
        FragmentOptions {
            pre_tag: "<em>".into(),
            post_tag: "</em>".into(),
            fragment_size: 150,
            max_fragments: 3,
            no_match_size: 0,
        }
    }
}

/// What a highlight shows of a field where nothing matched: the first
/// `size` characters of `text`, carried on to the end of the word the cut
/// falls in (or past the one other character there), trailing spaces
/// dropped, as OpenSearch's highlighter cuts at the next word boundary.
pub fn leading_text(text: &str, size: usize) -> String {
    let Some((cut, c)) = text.char_indices().nth(size) else { return text.trim_end().to_string() };
    let end = match c.is_alphanumeric() {
        true => text[cut..].find(|c: char| !c.is_alphanumeric()).map_or(text.len(), |i| cut + i),
        false => cut + c.len_utf8(),
    };
    text[..end].trim_end().to_string()
}

/// Fragments of `text` around `spans` (sorted byte ranges), with the spans
/// marked; the fragments with most matches, in text order.
pub fn fragments(text: &str, spans: &[(u32, u32)], opts: &FragmentOptions) -> Vec<String> {
    let spans: Vec<(usize, usize)> = merge_spans(spans, text.len());
    if spans.is_empty() {
        return Vec::new();
    }
    let mut windows: Vec<Window> = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        let (start, end) = window_around(text, spans[i], opts.fragment_size);
        let mut inside = Vec::new();
        while i < spans.len() && spans[i].1 <= end.max(spans[i].0) && spans[i].0 < end.max(spans[i].1) {
            inside.push(spans[i]);
            i += 1;
            if inside.last().unwrap().1 > end {
                break;
            }
        }
        let end = end.max(inside.last().unwrap().1);
        windows.push(Window { start, end, spans: inside });
    }
    let mut best: Vec<usize> = (0..windows.len()).collect();
    best.sort_by_key(|&w| std::cmp::Reverse(windows[w].spans.len()));
    best.truncate(opts.max_fragments);
    best.sort_unstable();
    best.into_iter().map(|w| mark(text, &windows[w], opts)).collect()
}

fn merge_spans(spans: &[(u32, u32)], len: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &(s, e) in spans {
        let (s, e) = (s as usize, (e as usize).min(len));
        if s >= e {
            continue;
        }
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// A window of about `size` bytes starting a little before `span`, on word boundaries.
fn window_around(text: &str, span: (usize, usize), size: usize) -> (usize, usize) {
    if text.len() <= size {
        return (0, text.len());
    }
    let mut start = span.0.saturating_sub(size / 3);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    if start > 0 {
        if let Some(ws) = text[start..span.0].find(char::is_whitespace) {
            start += ws + 1;
        }
    }
    let mut end = (start + size).min(text.len()).max(span.1);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    if end < text.len() {
        if let Some(ws) = text[span.1..end].rfind(char::is_whitespace) {
            end = span.1 + ws;
        }
    }
    (start, end)
}

/// A fragment: a byte range of the text and the match spans inside it.
struct Window {
    start: usize,
    end: usize,
    spans: Vec<(usize, usize)>,
}

fn mark(text: &str, w: &Window, opts: &FragmentOptions) -> String {
    let mut out = String::new();
    let mut at = w.start;
    for &(s, e) in &w.spans {
        out.push_str(&text[at..s]);
        out.push_str(&opts.pre_tag);
        out.push_str(&text[s..e]);
        out.push_str(&opts.post_tag);
        at = e;
    }
    out.push_str(&text[at..w.end]);
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenSearch 3.8's answers for `no_match_size` on this text.
    #[test]
    fn leading_text_ends_at_a_word_boundary() {
        let text = "The quick brown fox jumps over the lazy dog. A second sentence follows.";
        for (size, shown) in [
            (3, "The"),
            (5, "The quick"),
            (10, "The quick brown"),
            (20, "The quick brown fox jumps"),
            (30, "The quick brown fox jumps over"),
            (44, "The quick brown fox jumps over the lazy dog."),
            (45, "The quick brown fox jumps over the lazy dog. A"),
            (500, text),
        ] {
            assert_eq!(leading_text(text, size), shown, "no_match_size {size}");
        }
        assert_eq!(leading_text("Short one.", 8), "Short one");
        assert_eq!(leading_text("héllo wörld", 2), "héllo");
    }

    #[test]
    fn marks_spans_in_short_text() {
        let f = fragments("the quick brown fox", &[(4, 9), (16, 19)], &FragmentOptions::default());
        assert_eq!(f, ["the <em>quick</em> brown <em>fox</em>"]);
    }

    #[test]
    fn long_text_gives_windows_around_matches() {
        let text = format!("{} needle {} needle", "hay ".repeat(100), "hay ".repeat(100));
        let first = text.find("needle").unwrap() as u32;
        let second = text.rfind("needle").unwrap() as u32;
        let f = fragments(&text, &[(first, first + 6), (second, second + 6)], &FragmentOptions::default());
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|s| s.contains("<em>needle</em>") && s.len() < 200), "{f:?}");
    }
}
