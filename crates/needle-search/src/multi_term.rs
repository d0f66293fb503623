//! Queries over the terms a pattern matches (Lucene's MultiTermQuery), and
//! their expansion over an index's term maps before the query runs:
//!
//! - prefix, wildcard, regexp and term-range queries become [`Query::TermSet`]: every document
//!   of every matching term, each scoring the boost around the query
//!   (Lucene's default constant-score rewrite, as Elasticsearch runs them);
//! - fuzzy queries become [`Query::Blended`]: the `max_expansions` terms
//!   nearest the word (highest `1 - edits / min(term length, word length)`,
//!   then the lowest term), each scored by BM25 with that similarity as its
//!   boost and the largest document frequency among them (Lucene's
//!   TopTermsBlendedFreqScoringRewrite, the fuzzy query's default), so a
//!   rare misspelling does not outscore the word meant;
//! - a phrase ending in a prefix (Elasticsearch's `match_phrase_prefix`)
//!   becomes a phrase whose last place holds the first `max_expansions`
//!   terms the prefix begins, in term order (its MultiPhrasePrefixQuery), and
//!   a prefix alone a disjunction of those terms, as Lucene rewrites a
//!   multi-phrase of one place.

use needle_codecs::{SegmentRead, TermMatcher};
use needle_core::{FieldId, Result};

use crate::automata::{EditDistanceMatcher, PrefixMatcher, RangeMatcher, WildcardMatcher};
use crate::parser::MAX_CLAUSES;
use crate::regexp::{RegexpFlags, RegexpMatcher};
use crate::{PhraseQuery, Query, TermQuery};

#[derive(Debug, Clone, PartialEq)]
pub struct MultiTermQuery {
    pub field: FieldId,
    pub pattern: TermPattern,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TermPattern {
    /// Terms starting with `prefix`.
    Prefix {
        prefix: String,
        case_insensitive: bool,
    },
    /// Terms matching `pattern`: `*` any characters, `?` one, `\` escapes.
    Wildcard {
        pattern: String,
        case_insensitive: bool,
    },
    Fuzzy(Fuzzy),
    /// Terms the whole of which a Lucene regular expression matches (see `regexp.rs`).
    Regexp {
        pattern: String,
        flags: RegexpFlags,
        case_insensitive: bool,
    },
    /// Terms between two bounds in byte order (Lucene's TermRangeQuery).
    Range(TermRange),
    PhrasePrefix(PhrasePrefix),
}

/// A phrase whose last word is a prefix of the terms that may fill its place.
#[derive(Debug, Clone, PartialEq)]
pub struct PhrasePrefix {
    /// The phrase's terms before the prefix: (relative position, term).
    pub terms: Vec<(u32, Vec<u8>)>,
    /// The prefixes' place (several where the analyzer made several terms there).
    pub position: u32,
    pub prefixes: Vec<String>,
    pub slop: u32,
    /// How many terms the prefixes may stand for, the first in term order.
    pub max_expansions: u32,
}

/// The bounds of a range as written (`[a TO b]`, `{a TO *]`, `>=a`): a
/// `None` bound is open; an excluded bound is left out of the range.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TermRange {
    pub lower: Option<String>,
    pub upper: Option<String>,
    pub include_lower: bool,
    pub include_upper: bool,
}

/// Terms within `max_edits` (at most 2) of `term`, its first
/// `prefix_length` characters unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Fuzzy {
    pub term: String,
    pub max_edits: u32,
    pub prefix_length: u32,
    /// Whether swapping two adjacent characters counts as one edit (not two).
    pub transpositions: bool,
    /// How many of the nearest terms are searched.
    pub max_expansions: u32,
}

impl Fuzzy {
    /// The most edits Lucene's automata allow.
    pub const MAX_EDITS: u32 = 2;

    /// Elasticsearch's defaults: `AUTO` edits, no fixed prefix, transpositions, 50 terms.
    pub fn auto(term: &str) -> Fuzzy {
        Fuzzy {
            term: term.to_string(),
            max_edits: Fuzzy::auto_edits(term),
            prefix_length: 0,
            transpositions: true,
            max_expansions: 50,
        }
    }

    /// Elasticsearch's `AUTO` (`AUTO:3,6`): no edit for words of up to 2
    /// characters, 1 for 3 to 5, 2 for longer ones.
    pub fn auto_edits(word: &str) -> u32 {
        match word.chars().count() {
            0..=2 => 0,
            3..=5 => 1,
            _ => 2,
        }
    }
}

/// `query` with each multi-term query replaced by the terms it matches in
/// `segments` (a query matching none becomes [`Query::MatchNone`]).
pub(crate) fn expand(query: Query, segments: &[&dyn SegmentRead]) -> Result<Query> {
    query.try_map_leaves(&mut |leaf| match leaf {
        Query::MultiTerm(m) => expand_one(&m, segments),
        other => Ok(other),
    })
}

fn expand_one(m: &MultiTermQuery, segments: &[&dyn SegmentRead]) -> Result<Query> {
    let field = m.field;
    let terms = match &m.pattern {
        TermPattern::Prefix { prefix, case_insensitive } => {
            matching(segments, field, &PrefixMatcher::new(prefix, *case_insensitive))?
        }
        TermPattern::Wildcard { pattern, case_insensitive } => {
            matching(segments, field, &WildcardMatcher::new(pattern, *case_insensitive))?
        }
        TermPattern::Fuzzy(f) => return fuzzy(f, field, segments),
        TermPattern::Regexp { pattern, flags, case_insensitive } => {
            let matcher =
                RegexpMatcher::new(pattern, *flags, *case_insensitive).map_err(needle_core::Error::query)?;
            matching(segments, field, &matcher)?
        }
        TermPattern::Range(r) => {
            let matcher =
                RangeMatcher::new(r.lower.as_deref(), r.upper.as_deref(), r.include_lower, r.include_upper);
            matching(segments, field, &matcher)?
        }
        TermPattern::PhrasePrefix(p) => return phrase_prefix(p, field, segments),
    };
    Ok(match terms.is_empty() {
        true => Query::MatchNone,
        false => Query::TermSet { field, terms },
    })
}

/// The terms of `field` in any segment that `matcher` accepts, ascending, once each.
fn matching(
    segments: &[&dyn SegmentRead],
    field: FieldId,
    matcher: &dyn TermMatcher,
) -> Result<Vec<Vec<u8>>> {
    let mut terms = Vec::new();
    for s in segments {
        terms.extend(s.matching_terms(field, matcher)?);
    }
    terms.sort_unstable();
    terms.dedup();
    Ok(terms)
}

fn phrase_prefix(p: &PhrasePrefix, field: FieldId, segments: &[&dyn SegmentRead]) -> Result<Query> {
    let mut expansions = Vec::new();
    for prefix in &p.prefixes {
        expansions.extend(matching(segments, field, &PrefixMatcher::new(prefix, false))?);
    }
    expansions.sort_unstable();
    expansions.dedup();
    expansions.truncate((p.max_expansions as usize).min(MAX_CLAUSES));
    if expansions.is_empty() {
        return Ok(Query::MatchNone);
    }
    let term = |term| Query::Term(TermQuery { field, term });
    if p.terms.is_empty() {
        return Ok(Query::or(expansions.into_iter().map(term).collect()));
    }
    let mut terms = p.terms.clone();
    terms.extend(expansions.into_iter().map(|t| (p.position, t)));
    Ok(Query::Phrase(PhraseQuery { field, terms, slop: p.slop }))
}

fn fuzzy(f: &Fuzzy, field: FieldId, segments: &[&dyn SegmentRead]) -> Result<Query> {
    let max_edits = f.max_edits.min(Fuzzy::MAX_EDITS);
    let matcher = EditDistanceMatcher::new(&f.term, max_edits, f.prefix_length as usize, f.transpositions);
    let word_len = f.term.chars().count();
    let mut ranked: Vec<(f32, Vec<u8>)> = matching(segments, field, &matcher)?
        .into_iter()
        .filter_map(|term| {
            let edits = matcher.distance(&term)?;
            Some((similarity(edits, &term, word_len), term))
        })
        .collect();
    // Best first: highest similarity, then the lowest term (Lucene's ScoreTerm order).
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    ranked.truncate((f.max_expansions as usize).min(MAX_CLAUSES));
    if ranked.is_empty() {
        return Ok(Query::MatchNone);
    }
    ranked.sort_by(|a, b| a.1.cmp(&b.1));
    // Negative similarities rank terms but score as 0 (as Lucene truncates them).
    let terms = ranked.into_iter().map(|(s, term)| (term, s.max(0.0))).collect();
    Ok(Query::Blended { field, terms })
}

/// Lucene's FuzzyTermsEnum boost: 1 for the word itself, else
/// `1 - edits / min(term length, word length)` in code points.
fn similarity(edits: u32, term: &[u8], word_len: usize) -> f32 {
    if edits == 0 {
        return 1.0;
    }
    let term_len = std::str::from_utf8(term).map_or(0, |t| t.chars().count());
    1.0 - edits as f32 / term_len.min(word_len) as f32
}
