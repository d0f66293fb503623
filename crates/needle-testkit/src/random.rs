//! Seeded random documents and queries. A small Zipf-like vocabulary makes
//! terms repeat and phrases occur; documents vary in length, miss fields, and
//! sometimes hold several values.

use needle_core::FieldId;
use needle_search::{
    BoolQuery, Fuzzy, MultiTermQuery, PhrasePrefix, PhraseQuery, Query, TermPattern, TermQuery, TermRange,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

pub const WORDS: &[&str] = &[
    "the", "of", "and", "needle", "hay", "stack", "search", "engine", "fast", "disk", "memory", "query",
    "term", "phrase", "block", "score", "lucene", "rust", "index", "segment", "merge", "posting", "bloom",
    "filter", "cache", "latency", "zipf", "quick", "brown", "fox",
];

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A word, the first ones far more often (roughly Zipf).
pub fn word(rng: &mut StdRng) -> &'static str {
    let r: f64 = rng.gen();
    let i = ((WORDS.len() as f64).powf(r * r) as usize).saturating_sub(1);
    WORDS[i.min(WORDS.len() - 1)]
}

pub fn sentence(rng: &mut StdRng, max_words: usize) -> String {
    let n = rng.gen_range(1..=max_words);
    let words: Vec<String> = (0..n)
        .map(|_| {
            let w = word(rng);
            if rng.gen_ratio(1, 8) {
                w.to_uppercase()
            } else {
                w.to_string()
            }
        })
        .collect();
    words.join(if rng.gen_ratio(1, 4) { ", " } else { " " })
}

/// A document as a JSON line with `id`, `title` (text), `body` (text, maybe
/// several values) and `tag` (keyword), any of them possibly missing.
pub fn document(rng: &mut StdRng, id: usize) -> serde_json::Value {
    let mut doc = json!({ "id": format!("doc-{id}") });
    if rng.gen_ratio(4, 5) {
        doc["title"] = json!(sentence(rng, 6));
    }
    if rng.gen_ratio(9, 10) {
        doc["body"] = if rng.gen_ratio(1, 6) {
            json!([sentence(rng, 30), sentence(rng, 30)])
        } else {
            json!(sentence(rng, 80))
        };
    }
    if rng.gen_ratio(1, 2) {
        doc["tag"] = json!(WORDS[rng.gen_range(0..6)]);
    }
    doc
}

/// A random query over the given text and keyword fields; one in six boosted.
pub fn query(rng: &mut StdRng, text_fields: &[FieldId], keyword: FieldId, depth: u32) -> Query {
    let q = unboosted(rng, text_fields, keyword, depth);
    match rng.gen_ratio(1, 6) {
        true => Query::boosted(q, [0.5, 2.0, 3.7][rng.gen_range(0..3)]),
        false => q,
    }
}

fn unboosted(rng: &mut StdRng, text_fields: &[FieldId], keyword: FieldId, depth: u32) -> Query {
    let field = text_fields[rng.gen_range(0..text_fields.len())];
    match rng.gen_range(0..if depth == 0 { 6 } else { 10 }) {
        0 => Query::Term(TermQuery { field, term: word(rng).as_bytes().to_vec() }),
        4 => {
            let fields = text_fields.iter().map(|&f| (f, [1.0, 2.0, 0.5][rng.gen_range(0..3)])).collect();
            Query::CrossFields {
                fields,
                term: word(rng).as_bytes().to_vec(),
                tie_breaker: [0.0, 0.3][rng.gen_range(0..2)],
            }
        }
        3 => multi_term(rng, field),
        5 => {
            let terms = (0..rng.gen_range(2..=3)).map(|_| word(rng).as_bytes().to_vec()).collect();
            Query::Synonym { field, terms }
        }
        1 => {
            let n = rng.gen_range(2..=3);
            let mut terms: Vec<(u32, Vec<u8>)> =
                (0..n).map(|i| (i as u32, word(rng).as_bytes().to_vec())).collect();
            // One in three a multi-phrase: another term that may stand at one place.
            if rng.gen_ratio(1, 3) {
                let place = rng.gen_range(0..n) as u32;
                terms.push((place, word(rng).as_bytes().to_vec()));
                terms.sort();
                terms.dedup();
            }
            Query::Phrase(PhraseQuery { field, terms, slop: 0 })
        }
        2 => Query::Term(TermQuery { field: keyword, term: WORDS[rng.gen_range(0..6)].as_bytes().to_vec() }),
        6 => {
            let clauses =
                (0..rng.gen_range(2..=3)).map(|_| query(rng, text_fields, keyword, depth - 1)).collect();
            Query::DisMax { clauses, tie_breaker: [0.0, 0.3][rng.gen_range(0..2)] }
        }
        7 => Query::Constant(Box::new(query(rng, text_fields, keyword, depth - 1))),
        8 => Query::Boosting {
            positive: Box::new(query(rng, text_fields, keyword, depth - 1)),
            negative: Box::new(query(rng, text_fields, keyword, depth - 1)),
            factor: [0.0, 0.2, 0.5, 1.5][rng.gen_range(0..4)],
        },
        _ => {
            let mut b = BoolQuery::default();
            for _ in 0..rng.gen_range(1..=4) {
                let q = query(rng, text_fields, keyword, depth - 1);
                match rng.gen_range(0..10) {
                    0..=4 => b.should.push(q),
                    5..=6 => b.must.push(q),
                    7..=8 => b.must_not.push(q),
                    _ => b.filter.push(q),
                }
            }
            if rng.gen_ratio(1, 5) && b.should.len() > 1 {
                b.minimum_should_match = rng.gen_range(1..=b.should.len() as u32);
            }
            Query::Bool(b)
        }
    }
}

/// A prefix, wildcard, regular expression, fuzzy or phrase-prefix query made from a vocabulary word: a prefix
/// of it (maybe upper-cased and case-insensitive), the word with some
/// letters turned into `?` or `*`, or a misspelling of it within 0-3 edits
/// searched with random options (few expansions, so the cut to the nearest
/// terms is exercised).
pub fn multi_term(rng: &mut StdRng, field: FieldId) -> Query {
    let w: Vec<char> = word(rng).chars().collect();
    let pattern = match rng.gen_range(0..6) {
        5 => {
            // A phrase of 0-2 words ending in a prefix, cut to few expansions at times.
            let n = rng.gen_range(0..=2);
            let terms = (0..n).map(|i| (i, word(rng).as_bytes().to_vec())).collect();
            let prefix: String = w[..rng.gen_range(1..=w.len().min(3))].iter().collect();
            TermPattern::PhrasePrefix(PhrasePrefix {
                terms,
                position: n,
                prefixes: vec![prefix],
                slop: 0, // the oracle knows exact phrases only
                max_expansions: [1, 3, 50][rng.gen_range(0..3)],
            })
        }
        4 => {
            // Bounds that are words, their prefixes or longer, open or left out.
            let bound = |rng: &mut StdRng| {
                let w = word(rng);
                match rng.gen_range(0..4) {
                    0 => None,
                    1 => Some(w[..w.len() / 2].to_string()),
                    2 => Some(format!("{w}a")),
                    _ => Some(w.to_string()),
                }
            };
            let (lower, upper) = (bound(rng), bound(rng));
            TermPattern::Range(TermRange { lower, upper, include_lower: rng.gen(), include_upper: rng.gen() })
        }
        0 => {
            let prefix: String = w[..rng.gen_range(0..=w.len().min(3))].iter().collect();
            let case_insensitive = rng.gen_ratio(1, 3);
            let prefix = if case_insensitive { prefix.to_uppercase() } else { prefix };
            TermPattern::Prefix { prefix, case_insensitive }
        }
        1 => {
            let pattern = w
                .iter()
                .map(|&c| match rng.gen_range(0..10) {
                    0 | 1 => '?',
                    2 => '*',
                    _ => c,
                })
                .collect();
            TermPattern::Wildcard { pattern, case_insensitive: false }
        }
        3 => {
            let mut pattern: String = w
                .iter()
                .map(|&c| match rng.gen_range(0..8) {
                    0 => ".".to_string(),
                    1 => format!("[{c}x]"),
                    2 => format!("{c}?"),
                    _ => c.to_string(),
                })
                .collect();
            if rng.gen_ratio(1, 3) {
                pattern.push_str(".*");
            }
            if rng.gen_ratio(1, 4) {
                pattern = format!("({pattern}|{})", word(rng));
            }
            TermPattern::Regexp {
                pattern,
                flags: needle_search::regexp::RegexpFlags::ALL,
                case_insensitive: false,
            }
        }
        _ => {
            let mut typo = w.clone();
            for _ in 0..rng.gen_range(0..=3) {
                let at = rng.gen_range(0..=typo.len());
                let letter = (b'a' + rng.gen_range(0..26)) as char;
                match rng.gen_range(0..4) {
                    0 if at < typo.len() => drop(typo.remove(at)),
                    1 if at < typo.len() => typo[at] = letter,
                    2 if at + 1 < typo.len() => typo.swap(at, at + 1),
                    _ => typo.insert(at, letter),
                }
            }
            TermPattern::Fuzzy(Fuzzy {
                term: typo.into_iter().collect(),
                max_edits: rng.gen_range(0..=2),
                prefix_length: rng.gen_range(0..=2),
                transpositions: rng.gen(),
                max_expansions: rng.gen_range(1..=6),
            })
        }
    };
    Query::MultiTerm(MultiTermQuery { field, pattern })
}
