//! The query model: what a query string or a JSON query becomes.

use needle_core::FieldId;

use crate::multi_term::MultiTermQuery;

#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    Term(TermQuery),
    Phrase(PhraseQuery),
    Bool(BoolQuery),
    /// Every document, each scoring 1.
    MatchAll,
    /// No document.
    MatchNone,
    /// The inner query's scores multiplied by a factor (Lucene's BoostQuery:
    /// the factor goes into each term's BM25 weight).
    Boost(Box<Query>, f32),
    /// The documents the inner query matches, each scoring 1 (times the
    /// boosts around it: Lucene's ConstantScoreQuery).
    Constant(Box<Query>),
    /// The documents any clause matches, scored by the best clause plus
    /// `tie_breaker` times the others (Lucene's DisjunctionMaxQuery).
    DisMax {
        clauses: Vec<Query>,
        tie_breaker: f32,
    },
    /// Documents with a value of a numeric field in a range, each scoring 1.
    Range(RangeQuery),
    /// Documents with a value in a keyword or binary field's doc values, or a
    /// token in a text field (by its norms), each scoring 1.
    Exists(FieldId),
    /// A prefix, wildcard or fuzzy query: expanded over the index's terms
    /// into [`Query::TermSet`] or [`Query::Blended`] before it runs (see `multi_term.rs`).
    MultiTerm(MultiTermQuery),
    /// What `positive` matches, the score of those `negative` matches too
    /// multiplied by `factor` (Elasticsearch's `boosting`; see `iter/boosting.rs`).
    Boosting {
        positive: Box<Query>,
        negative: Box<Query>,
        factor: f32,
    },
    /// The documents of any of the terms (ascending), each scoring 1 (times
    /// the boosts around it): a prefix or wildcard query, expanded.
    TermSet {
        field: FieldId,
        terms: Vec<Vec<u8>>,
    },
    /// The sum of each term's BM25 score times its boost, every term scored
    /// with the largest document frequency among them (Lucene's
    /// BlendedTermQuery): a fuzzy query, expanded. Terms ascending.
    Blended {
        field: FieldId,
        terms: Vec<(Vec<u8>, f32)>,
    },
    /// One term in several fields (each with its boost), each field's score
    /// computed with a document frequency blended across the fields, then
    /// the best plus `tie_breaker` times the others: Elasticsearch's
    /// `cross_fields` (its BlendedTermQuery; see `IndexStats::blended_doc_freqs`).
    CrossFields {
        fields: Vec<(FieldId, f32)>,
        term: Vec<u8>,
        tie_breaker: f32,
    },
    /// Terms at one position of the analyzed text (synonyms, n-grams, a
    /// folded term and its original), scored as one term: a document's
    /// frequencies summed, the largest document frequency for the idf
    /// (Lucene's SynonymQuery; see `iter/synonym.rs`).
    Synonym {
        field: FieldId,
        terms: Vec<Vec<u8>>,
    },
    /// Lucene's span queries, as Elasticsearch makes a phrase without slop
    /// over a graph of terms: scored by the number of matches its spans
    /// find, with the idfs of its distinct terms summed (see `iter/span.rs`).
    Span {
        field: FieldId,
        span: Span,
    },
}

/// A span query's tree: Lucene's SpanTermQuery, SpanOrQuery, and
/// SpanNearQuery in order without slop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Span {
    Term(Vec<u8>),
    /// Any of the spans.
    Or(Vec<Span>),
    /// The spans in order, each right after the one before.
    Near(Vec<Span>),
}

impl Span {
    /// Its terms, each once, ascending (Lucene gathers a span query's
    /// statistics in a map sorted by term).
    pub fn distinct_terms(&self) -> Vec<&[u8]> {
        let mut out = Vec::new();
        self.each_term(&mut |t| out.push(t));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The runs of terms the span stands for (an or's any of its parts', a
    /// near's each of its first part's followed by each of the rest's), or
    /// `None` past `limit` of them.
    pub fn sequences(&self, limit: usize) -> Option<Vec<Vec<&[u8]>>> {
        match self {
            Span::Term(t) => Some(vec![vec![t.as_slice()]]),
            Span::Or(parts) => {
                let mut out = Vec::new();
                for part in parts {
                    out.extend(part.sequences(limit)?);
                    if out.len() > limit {
                        return None;
                    }
                }
                Some(out)
            }
            Span::Near(parts) => {
                let mut out: Vec<Vec<&[u8]>> = vec![Vec::new()];
                for part in parts {
                    let tails = part.sequences(limit)?;
                    if out.len().saturating_mul(tails.len()) > limit {
                        return None;
                    }
                    out = out
                        .iter()
                        .flat_map(|head| tails.iter().map(move |tail| [head.as_slice(), tail].concat()))
                        .collect();
                }
                Some(out)
            }
        }
    }

    /// Every term, in the query's order.
    pub fn each_term<'s>(&'s self, f: &mut impl FnMut(&'s [u8])) {
        match self {
            Span::Term(t) => f(t),
            Span::Or(parts) | Span::Near(parts) => parts.iter().for_each(|p| p.each_term(f)),
        }
    }
}

/// `lower..=upper` over a numeric field's doc values (as `i64`s: doubles in
/// their sortable form, see `needle_codecs::doc_values`): exclusive bounds are
/// made inclusive by whoever builds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RangeQuery {
    pub field: FieldId,
    pub lower: i64,
    pub upper: i64,
    /// For an exact value (`lower == upper`, a term query on a numeric
    /// field), its indexed term: a segment written before doc values, which
    /// has no column of the field, matches the documents with that term.
    pub indexed: Option<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TermQuery {
    pub field: FieldId,
    pub term: Vec<u8>,
}

/// Terms that must occur at the given relative positions, within `slop`
/// moves. Several terms at one position (synonyms, n-grams) make it Lucene's
/// MultiPhraseQuery: any of them may occur there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhraseQuery {
    pub field: FieldId,
    /// (relative position, term), positions ascending.
    pub terms: Vec<(u32, Vec<u8>)>,
    pub slop: u32,
}

impl PhraseQuery {
    /// The phrase's places: each relative position with its terms.
    pub fn places(&self) -> Vec<(u32, Vec<&[u8]>)> {
        let mut out: Vec<(u32, Vec<&[u8]>)> = Vec::new();
        for (offset, term) in &self.terms {
            match out.last_mut() {
                Some((last, terms)) if last == offset => terms.push(term),
                _ => out.push((*offset, vec![term])),
            }
        }
        out
    }

    /// Whether some place holds several terms (a multi-phrase).
    pub fn has_alternatives(&self) -> bool {
        self.terms.windows(2).any(|w| w[0].0 == w[1].0)
    }
}

/// Lucene's BooleanQuery: `must` clauses all match and score, `filter` clauses
/// all match without scoring, `should` clauses score when they match (and at
/// least `minimum_should_match` of them must, or one when there are no
/// `must`/`filter` clauses), `must_not` clauses exclude.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoolQuery {
    pub must: Vec<Query>,
    pub should: Vec<Query>,
    pub must_not: Vec<Query>,
    pub filter: Vec<Query>,
    pub minimum_should_match: u32,
}

impl BoolQuery {
    /// Only `should` clauses and no minimum: a plain disjunction.
    pub fn is_pure_disjunction(&self) -> bool {
        self.must.is_empty()
            && self.must_not.is_empty()
            && self.filter.is_empty()
            && self.minimum_should_match == 0
    }

    fn is_positive_free(&self) -> bool {
        self.must.is_empty() && self.should.is_empty() && self.filter.is_empty()
    }
}

impl Query {
    /// Appends every (field, term) the query reads postings of, in order, repeats included.
    pub fn terms(&self, out: &mut Vec<(FieldId, Vec<u8>)>) {
        match self {
            Query::Term(t) => out.push((t.field, t.term.clone())),
            Query::Phrase(p) => out.extend(p.terms.iter().map(|(_, t)| (p.field, t.clone()))),
            Query::Bool(b) => {
                for c in b.must.iter().chain(&b.should).chain(&b.filter).chain(&b.must_not) {
                    c.terms(out);
                }
            }
            Query::MatchAll | Query::MatchNone | Query::Range(_) | Query::Exists(_) | Query::MultiTerm(_) => {
            }
            Query::TermSet { field, terms } | Query::Synonym { field, terms } => {
                out.extend(terms.iter().map(|t| (*field, t.clone())))
            }
            Query::Blended { field, terms } => out.extend(terms.iter().map(|(t, _)| (*field, t.clone()))),
            Query::CrossFields { fields, term, .. } => {
                out.extend(fields.iter().map(|(f, _)| (*f, term.clone())))
            }
            Query::Span { field, span } => span.each_term(&mut |t| out.push((*field, t.to_vec()))),
            Query::Boost(q, _) | Query::Constant(q) => q.terms(out),
            Query::DisMax { clauses, .. } => clauses.iter().for_each(|c| c.terms(out)),
            Query::Boosting { positive, negative, .. } => {
                positive.terms(out);
                negative.terms(out);
            }
        }
    }

    /// Terms and phrase terms: what Lucene counts against its `maxClauseCount`.
    pub fn leaf_count(&self) -> usize {
        match self {
            Query::Term(_) => 1,
            Query::Phrase(p) => p.terms.len(),
            Query::Bool(b) => b
                .must
                .iter()
                .chain(&b.should)
                .chain(&b.filter)
                .chain(&b.must_not)
                .map(Query::leaf_count)
                .sum(),
            Query::MatchAll | Query::MatchNone => 0,
            // One clause as written; what they expand to is bounded by the index (a
            // fuzzy query by its `max_expansions`), as Lucene counts them.
            Query::Range(_) | Query::Exists(_) | Query::MultiTerm(_) | Query::TermSet { .. } => 1,
            Query::Blended { terms, .. } => terms.len(),
            Query::Synonym { terms, .. } => terms.len(),
            Query::CrossFields { fields, .. } => fields.len(),
            Query::Span { span, .. } => {
                let mut n = 0;
                span.each_term(&mut |_| n += 1);
                n
            }
            Query::Boost(q, _) | Query::Constant(q) => q.leaf_count(),
            Query::DisMax { clauses, .. } => clauses.iter().map(Query::leaf_count).sum(),
            Query::Boosting { positive, negative, .. } => positive.leaf_count() + negative.leaf_count(),
        }
    }

    /// The query with each leaf (every query but bool, boost, constant and
    /// dis-max, whose clauses are walked) replaced by `f`'s answer for it.
    pub fn try_map_leaves<E>(self, f: &mut impl FnMut(Query) -> Result<Query, E>) -> Result<Query, E> {
        let mut all =
            |qs: Vec<Query>| qs.into_iter().map(|q| q.try_map_leaves(f)).collect::<Result<Vec<_>, E>>();
        Ok(match self {
            Query::Bool(b) => Query::Bool(BoolQuery {
                must: all(b.must)?,
                should: all(b.should)?,
                must_not: all(b.must_not)?,
                filter: all(b.filter)?,
                minimum_should_match: b.minimum_should_match,
            }),
            Query::Boost(q, boost) => Query::Boost(Box::new(q.try_map_leaves(f)?), boost),
            Query::Constant(q) => Query::Constant(Box::new(q.try_map_leaves(f)?)),
            Query::DisMax { clauses, tie_breaker } => Query::DisMax { clauses: all(clauses)?, tie_breaker },
            Query::Boosting { positive, negative, factor } => Query::Boosting {
                positive: Box::new(positive.try_map_leaves(f)?),
                negative: Box::new(negative.try_map_leaves(f)?),
                factor,
            },
            leaf => f(leaf)?,
        })
    }

    /// `query` with its scores multiplied by `boost`.
    pub fn boosted(query: Query, boost: f32) -> Query {
        Query::Boost(Box::new(query), boost)
    }

    pub fn term(field: FieldId, term: &str) -> Query {
        Query::Term(TermQuery { field, term: term.as_bytes().to_vec() })
    }

    pub fn or(clauses: Vec<Query>) -> Query {
        Query::Bool(BoolQuery { should: clauses, ..BoolQuery::default() })
    }

    pub fn and(clauses: Vec<Query>) -> Query {
        Query::Bool(BoolQuery { must: clauses, ..BoolQuery::default() })
    }

    /// Rewrites to the form that is executed, as Lucene's rewrite does:
    /// nested pure disjunctions under a `should` are flattened (which matters
    /// both for MaxScore and for scores being summed in one pass),
    /// single-clause disjunctions collapse, a boolean with nothing but
    /// `must_not` matches all documents except those (as Elasticsearch does).
    pub fn rewrite(self) -> Query {
        match self {
            Query::Bool(b) => rewrite_bool(b),
            Query::Boost(q, boost) => match (q.rewrite(), boost) {
                (q, 1.0) => q,
                (Query::MatchNone, _) => Query::MatchNone,
                // Nested boosts multiply, outer first, as Lucene passes them down.
                (Query::Boost(inner, b), outer) => Query::Boost(inner, outer * b),
                (q, b) => Query::Boost(Box::new(q), b),
            },
            Query::Constant(q) => match q.rewrite() {
                Query::MatchNone => Query::MatchNone,
                q => Query::Constant(Box::new(q)),
            },
            // Every clause's score counted whole is their sum: Lucene rewrites it to a
            // disjunction, whose nested disjunctions are flattened into one sum.
            Query::DisMax { clauses, tie_breaker } if tie_breaker == 1.0 => {
                rewrite_bool(BoolQuery { should: clauses, ..BoolQuery::default() })
            }
            Query::DisMax { clauses, tie_breaker } => {
                let mut clauses: Vec<Query> =
                    clauses.into_iter().map(Query::rewrite).filter(|q| *q != Query::MatchNone).collect();
                match clauses.len() {
                    0 => Query::MatchNone,
                    1 => clauses.pop().expect("one clause"),
                    _ => Query::DisMax { clauses, tie_breaker },
                }
            }
            // Not simplified further: the product is rounded as Lucene rounds it.
            Query::Boosting { positive, negative, factor } => match positive.rewrite() {
                Query::MatchNone => Query::MatchNone,
                positive => Query::Boosting {
                    positive: Box::new(positive),
                    negative: Box::new(negative.rewrite()),
                    factor,
                },
            },
            Query::Range(r) if r.lower > r.upper => Query::MatchNone,
            other => other,
        }
    }
}

fn rewrite_bool(b: BoolQuery) -> Query {
    // Only a query written with nothing but exclusions matches everything else:
    // one whose clauses came to match nothing (a fuzzy word near no term) matches nothing.
    let written_positive = !b.is_positive_free();
    let rw = |v: Vec<Query>| v.into_iter().map(Query::rewrite).collect::<Vec<_>>();
    let mut out = BoolQuery {
        must: rw(b.must),
        should: Vec::new(),
        must_not: rw(b.must_not),
        filter: rw(b.filter),
        minimum_should_match: b.minimum_should_match,
    };
    for clause in rw(b.should) {
        match clause {
            Query::Bool(inner) if out.minimum_should_match <= 1 && inner.is_pure_disjunction() => {
                out.should.extend(inner.should)
            }
            Query::MatchNone => {}
            other => out.should.push(other),
        }
    }
    if out.is_positive_free() {
        if out.must_not.is_empty() || written_positive {
            return Query::MatchNone;
        }
        out.must.push(Query::MatchAll);
    }
    if out.must.iter().chain(&out.filter).any(|q| *q == Query::MatchNone) {
        return Query::MatchNone;
    }
    // Fewer optional clauses than must match (some came to match nothing): nothing can.
    if out.minimum_should_match as usize > out.should.len() {
        return Query::MatchNone;
    }
    if out.should.len() == 1 && out.must.is_empty() && out.filter.is_empty() && out.must_not.is_empty() {
        return out.should.pop().unwrap();
    }
    Query::Bool(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lucene rewrites a dis-max whose tie breaker counts every clause whole
    /// to a disjunction, so its clauses' own disjunctions are summed as one.
    #[test]
    fn a_dis_max_counting_every_clause_whole_is_one_flat_disjunction() {
        let (a, b, c) = (Query::term(0, "a"), Query::term(1, "b"), Query::term(1, "c"));
        let dis_max = |tie_breaker| Query::DisMax {
            clauses: vec![Query::or(vec![a.clone(), b.clone()]), c.clone()],
            tie_breaker,
        };
        assert_eq!(dis_max(1.0).rewrite(), Query::or(vec![a.clone(), b.clone(), c.clone()]));
        assert!(matches!(dis_max(0.5).rewrite(), Query::DisMax { .. }));
    }

    #[test]
    fn exclusions_alone_match_the_rest_only_as_written() {
        let not_a = |should: Vec<Query>| {
            Query::Bool(BoolQuery { should, must_not: vec![Query::term(0, "a")], ..BoolQuery::default() })
        };
        let Query::Bool(b) = not_a(vec![]).rewrite() else { panic!() };
        assert_eq!(b.must, [Query::MatchAll]);
        assert_eq!(not_a(vec![Query::MatchNone]).rewrite(), Query::MatchNone);
    }

    #[test]
    fn a_minimum_should_match_above_the_clauses_left_matches_nothing() {
        let q = Query::Bool(BoolQuery {
            should: vec![Query::MatchNone, Query::term(0, "a")],
            minimum_should_match: 2,
            ..BoolQuery::default()
        });
        assert_eq!(q.rewrite(), Query::MatchNone, "one clause left cannot make two");
    }

    #[test]
    fn nested_disjunctions_flatten() {
        let q = Query::or(vec![
            Query::or(vec![Query::term(0, "a"), Query::term(1, "a")]),
            Query::or(vec![Query::term(0, "b")]),
        ]);
        let Query::Bool(b) = q.rewrite() else { panic!() };
        assert_eq!(b.should.len(), 3);
    }

    #[test]
    fn pure_negation_matches_all_but() {
        let q = Query::Bool(BoolQuery { must_not: vec![Query::term(0, "a")], ..Default::default() });
        let Query::Bool(b) = q.rewrite() else { panic!() };
        assert_eq!(b.must, vec![Query::MatchAll]);
    }
}
