//! Queries from analyzed text, as Lucene's QueryBuilder makes them: a term
//! query for each position, a synonym query where the analyzer put several
//! terms at one position (synonyms, n-grams, a folded term beside its
//! original), a phrase over the positions.

use needle_core::FieldId;

use crate::{MultiTermQuery, PhrasePrefix, PhraseQuery, Query, TermPattern, TermQuery};

/// Analyzed tokens (position, term), in position order, as one query per
/// position: its term, or a synonym query of its distinct terms.
pub fn by_position(field: FieldId, tokens: Vec<(u32, String)>) -> Vec<Query> {
    let mut out = Vec::new();
    let mut at: Option<u32> = None;
    let mut group: Vec<Vec<u8>> = Vec::new();
    for (position, term) in tokens {
        if at != Some(position) && !group.is_empty() {
            out.push(one_position(field, std::mem::take(&mut group)));
        }
        at = Some(position);
        let term = term.into_bytes();
        if !group.contains(&term) {
            group.push(term);
        }
    }
    if !group.is_empty() {
        out.push(one_position(field, group));
    }
    out
}

fn one_position(field: FieldId, mut terms: Vec<Vec<u8>>) -> Query {
    match terms.len() {
        1 => Query::Term(TermQuery { field, term: terms.pop().expect("one term") }),
        _ => {
            // Lucene's SynonymQuery.Builder sorts its terms.
            terms.sort();
            Query::Synonym { field, terms }
        }
    }
}

/// Analyzed tokens as a phrase (a term query, or a synonym query, when there
/// is one position), `None` when there is none. Several terms at a position
/// make it Lucene's MultiPhraseQuery: any of them may stand there.
pub fn phrase(field: FieldId, tokens: Vec<(u32, String)>, slop: u32) -> Option<Query> {
    let (first, last) = (tokens.first()?.0, tokens.last()?.0);
    if first == last {
        return by_position(field, tokens).pop();
    }
    let mut terms: Vec<(u32, Vec<u8>)> =
        tokens.into_iter().map(|(p, t)| (p - first, t.into_bytes())).collect();
    // Each place's terms sorted and distinct, as Lucene's builder keeps them.
    terms.sort();
    terms.dedup();
    Some(Query::Phrase(PhraseQuery { field, terms, slop }))
}

/// Analyzed tokens as a phrase whose last place is a prefix of the terms
/// that may fill it (see [`crate::PhrasePrefix`]), `None` when there is none.
pub fn phrase_prefix(
    field: FieldId,
    tokens: Vec<(u32, String)>,
    slop: u32,
    max_expansions: u32,
) -> Option<Query> {
    let (first, last) = (tokens.first()?.0, tokens.last()?.0);
    let (prefixes, before): (Vec<_>, Vec<_>) = tokens.into_iter().partition(|(p, _)| *p == last);
    let mut terms: Vec<(u32, Vec<u8>)> =
        before.into_iter().map(|(p, t)| (p - first, t.into_bytes())).collect();
    terms.sort();
    terms.dedup();
    let prefixes = prefixes.into_iter().map(|(_, t)| t).collect();
    let pattern = TermPattern::PhrasePrefix(PhrasePrefix {
        terms,
        position: last - first,
        prefixes,
        slop,
        max_expansions,
    });
    Some(Query::MultiTerm(MultiTermQuery { field, pattern }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(list: &[(u32, &str)]) -> Vec<(u32, String)> {
        list.iter().map(|&(p, t)| (p, t.to_string())).collect()
    }

    #[test]
    fn a_position_of_several_terms_is_one_synonym_query() {
        let q = by_position(3, tokens(&[(0, "quick"), (1, "fast"), (1, "rapid"), (1, "fast"), (2, "fox")]));
        assert_eq!(q.len(), 3);
        assert!(matches!(&q[0], Query::Term(t) if t.term == b"quick"));
        assert!(
            matches!(&q[1], Query::Synonym { field: 3, terms } if terms == &[b"fast".to_vec(), b"rapid".to_vec()])
        );
        assert!(matches!(&q[2], Query::Term(t) if t.term == b"fox"));
    }

    #[test]
    fn a_phrase_with_several_terms_at_a_position_keeps_them_all_there() {
        let Some(Query::Phrase(p)) =
            phrase(0, tokens(&[(3, "a"), (4, "c"), (4, "b"), (4, "c"), (6, "d")]), 0)
        else {
            panic!("a phrase")
        };
        let terms: Vec<(u32, &[u8])> = p.terms.iter().map(|(o, t)| (*o, t.as_slice())).collect();
        assert_eq!(terms, [(0, &b"a"[..]), (1, b"b"), (1, b"c"), (3, b"d")]);
        assert!(p.has_alternatives());
        assert!(matches!(phrase(0, tokens(&[(0, "a"), (0, "b")]), 0), Some(Query::Synonym { .. })));
        assert!(phrase(0, Vec::new(), 0).is_none());
    }
}
