//! Queries from analyzed text, as Lucene's QueryBuilder makes them: a term
//! query for each position, a synonym query where the analyzer put several
//! terms at one position (synonyms, n-grams, a folded term beside its
//! original), a phrase over the positions, and a query over a graph of
//! terms (some spanning several positions).

use needle_analysis::{QueryTerms, Token};
use needle_core::FieldId;

use crate::{MultiTermQuery, PhrasePrefix, PhraseQuery, Query, Span, TermPattern, TermQuery};

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

/// Analyzed tokens of which some span several positions (a part
/// `word_delimiter_graph` joined or kept whole), as Lucene's QueryBuilder
/// reads such a graph for a boolean query (`analyzeGraphBoolean`): one query
/// for each stretch between the places every path passes through. A stretch
/// with paths of different lengths is a disjunction of its paths, each a
/// phrase of its terms (`phrases`, Elasticsearch's
/// `auto_generate_synonyms_phrase_query`) or a conjunction of them, one term
/// alone a term query; a stretch of one position is its term, or a synonym
/// query of its terms. The caller joins the stretches as it joins positions.
/// An error when a stretch has more than [`MAX_PATHS`] paths.
pub fn graph(field: FieldId, tokens: &[Token], phrases: bool) -> Result<Vec<Query>, String> {
    let graph = TokenGraph::new(tokens);
    let mut out = Vec::new();
    for stretch in graph.stretches() {
        if !stretch.side_paths {
            let terms = stretch.edges.iter().map(|e| tokens[e.token].term.clone().into_bytes()).collect();
            out.push(one_position(field, distinct(terms)));
            continue;
        }
        let paths = graph.paths(stretch.start, stretch.end);
        if paths.len() > MAX_PATHS {
            return Err(format!(
                "the query text's terms make more than {MAX_PATHS} paths between two positions (Elasticsearch's \
                 limit of clauses in a query)"
            ));
        }
        let paths: Vec<Query> =
            paths.iter().map(|path| path_query(field, tokens, &graph, path, phrases)).collect();
        out.push(match paths.len() {
            1 => paths.into_iter().next().expect("one path"),
            _ => Query::or(paths),
        });
    }
    Ok(out)
}

/// A phrase without slop over tokens of which some span several positions,
/// as Elasticsearch reads such a graph (its `analyzeGraphPhrase`): a span
/// query of the stretches between the places every path passes through, in
/// order, each right after the one before; a stretch with paths of
/// different lengths is any of its paths (each its terms right after one
/// another), a stretch of one position any of its terms. An error past
/// [`MAX_PATHS`] paths a stretch, or where a removed word left a hole
/// (Elasticsearch puts such a gap elsewhere than a phrase would; not supported yet).
pub fn graph_span_phrase(field: FieldId, tokens: &[Token]) -> Result<Query, String> {
    let graph = TokenGraph::new(tokens);
    if let Some(e) = graph.edges.iter().find(|e| e.to - e.from != tokens[e.token].position_length.max(1)) {
        return Err(format!(
            "the phrase's terms make a graph with a hole left by a removed word before [{}]; Needle takes a \
             phrase without slop over a graph of terms only without holes, not yet with them",
            tokens[e.token].term
        ));
    }
    let term = |e: &Edge| Span::Term(tokens[e.token].term.clone().into_bytes());
    let mut clauses = Vec::new();
    for stretch in graph.stretches() {
        if !stretch.side_paths {
            let mut terms: Vec<Span> = stretch.edges.iter().map(|e| term(e)).collect();
            clauses.push(if terms.len() == 1 { terms.pop().expect("one term") } else { Span::Or(terms) });
            continue;
        }
        let paths = graph.paths(stretch.start, stretch.end);
        if paths.len() > MAX_PATHS {
            return Err(format!(
                "the phrase's terms make more than {MAX_PATHS} paths between two positions (Elasticsearch's \
                 limit of clauses)"
            ));
        }
        let spans = paths.iter().map(|path| {
            let mut terms: Vec<Span> = path.iter().map(|&i| term(&graph.edges[i])).collect();
            if terms.len() == 1 {
                terms.pop().expect("one term")
            } else {
                Span::Near(terms)
            }
        });
        clauses.push(Span::Or(spans.collect()));
    }
    let span = match clauses.len() {
        0 => return Ok(Query::MatchNone),
        1 => clauses.pop().expect("one clause"),
        _ => Span::Near(clauses),
    };
    Ok(Query::Span { field, span })
}

/// Paths of one stretch of a graph a query takes at most.
pub const MAX_PATHS: usize = 1024;

/// A phrase with `slop` over tokens of which some span several positions,
/// as Elasticsearch reads such a graph when the slop is not 0: a
/// disjunction of the phrases of every path through the graph (each path of
/// one term its term query). An error past [`MAX_PATHS`] paths.
pub fn graph_phrases(field: FieldId, tokens: &[Token], slop: u32) -> Result<Query, String> {
    let graph = TokenGraph::new(tokens);
    let paths = graph.paths(0, graph.end);
    if paths.len() > MAX_PATHS {
        return Err(format!(
            "the phrase's terms make more than {MAX_PATHS} paths (Elasticsearch's limit of clauses)"
        ));
    }
    let mut phrases: Vec<Query> = paths
        .iter()
        .map(|path| match path_query(field, tokens, &graph, path, true) {
            Query::Phrase(p) => Query::Phrase(PhraseQuery { slop, ..p }),
            term => term,
        })
        .collect();
    Ok(match phrases.len() {
        0 => Query::MatchNone,
        1 => phrases.pop().expect("one phrase"),
        _ => Query::or(phrases),
    })
}

/// One path of a stretch: its term, or its terms as a phrase at their
/// positions (or all required).
fn path_query(field: FieldId, tokens: &[Token], graph: &TokenGraph, path: &[usize], phrases: bool) -> Query {
    let term = |&i: &usize| tokens[graph.edges[i].token].term.clone().into_bytes();
    if path.len() == 1 {
        return Query::Term(TermQuery { field, term: term(&path[0]) });
    }
    if !phrases {
        return Query::and(path.iter().map(|i| Query::Term(TermQuery { field, term: term(i) })).collect());
    }
    // Each term at its increment after the one before, as the path's tokens
    // keep them (Lucene gives a stacked token its position's increment).
    let mut position = 0u32;
    let mut terms = Vec::with_capacity(path.len());
    for (k, i) in path.iter().enumerate() {
        if k > 0 {
            position += graph.edges[*i].increment;
        }
        terms.push((position, term(i)));
    }
    Query::Phrase(PhraseQuery { field, terms, slop: 0 })
}

fn distinct(terms: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(terms.len());
    for t in terms {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// Analyzed text as one query a position, or a stretch where it makes a
/// graph of terms (see [`graph`]).
pub fn by_position_or_graph(field: FieldId, terms: QueryTerms, phrases: bool) -> Result<Vec<Query>, String> {
    match terms {
        QueryTerms::Positioned(tokens) => Ok(by_position(field, tokens)),
        QueryTerms::Graph(tokens) => graph(field, &tokens, phrases),
    }
}

/// Whether any token spans several positions: text a query reads as a graph.
pub fn is_graph(tokens: &[Token]) -> bool {
    tokens.iter().any(|t| t.position_length > 1)
}

/// Tokens as Lucene's GraphTokenStreamFiniteStrings lays them out: states
/// between positions, each token an edge from its state to the state its
/// length (and any hole of removed words before it) reaches; only the edges
/// on some path from the first state to the last are kept.
struct TokenGraph {
    edges: Vec<Edge>,
    /// The last state: where every path ends.
    end: u32,
}

/// A stretch of a graph between two places every path passes through.
struct Stretch<'g> {
    start: u32,
    end: u32,
    /// The edges from its start, in the tokens' order.
    edges: Vec<&'g Edge>,
    /// Whether its paths differ in length (else each edge spans it whole).
    side_paths: bool,
}

struct Edge {
    from: u32,
    to: u32,
    token: usize,
    /// Positions from the token before on its path (Lucene's increment; a
    /// token stacked on another takes that one's).
    increment: u32,
}

impl TokenGraph {
    fn new(tokens: &[Token]) -> Self {
        let (mut pos, mut state, mut gap) = (-1i64, -1i64, 0i64);
        let (mut previous, mut previous_increment) = (None::<u32>, 1u32);
        let mut edges = Vec::with_capacity(tokens.len());
        for (token, t) in tokens.iter().enumerate() {
            let increment = match previous {
                None => t.position + 1,
                Some(p) => t.position - p,
            };
            previous = Some(t.position);
            if increment == 0 {
                pos -= gap;
            } else {
                pos += 1;
                gap = i64::from(increment) - 1;
            }
            let to = pos + i64::from(t.position_length.max(1)) + gap;
            state = state.max(to);
            let increment = if increment == 0 { previous_increment } else { increment };
            edges.push(Edge { from: pos as u32, to: to as u32, token, increment });
            pos += gap;
            previous_increment = increment;
        }
        let end = state.max(0) as u32;
        let mut graph = TokenGraph { edges, end };
        graph.keep_live_edges();
        graph
    }

    /// Drops the edges no path from state 0 to the end takes.
    fn keep_live_edges(&mut self) {
        let states = self.end as usize + 1;
        let mut reached = vec![false; states];
        reached[0] = true;
        let mut sorted: Vec<usize> = (0..self.edges.len()).collect();
        sorted.sort_by_key(|&i| self.edges[i].from);
        for &i in &sorted {
            let e = &self.edges[i];
            if reached[e.from as usize] {
                reached[e.to as usize] = true;
            }
        }
        let mut leads = vec![false; states];
        leads[self.end as usize] = true;
        for &i in sorted.iter().rev() {
            let e = &self.edges[i];
            if leads[e.to as usize] {
                leads[e.from as usize] = true;
            }
        }
        self.edges.retain(|e| reached[e.from as usize] && leads[e.to as usize]);
    }

    /// State 0 and then the states every path passes through (the graph's
    /// articulation points): those no edge leaps over, in order.
    fn cuts(&self) -> Vec<u32> {
        let mut used: Vec<u32> = self.edges.iter().flat_map(|e| [e.from, e.to]).collect();
        used.sort_unstable();
        used.dedup();
        let mut out = vec![0];
        out.extend(
            used.into_iter()
                .filter(|&s| s > 0 && s < self.end && !self.edges.iter().any(|e| e.from < s && s < e.to)),
        );
        out
    }

    /// The edges from `state`, in the tokens' order.
    fn edges_from(&self, state: u32) -> Vec<&Edge> {
        self.edges.iter().filter(|e| e.from == state).collect()
    }

    /// The stretches between the places every path passes through, in
    /// order, up to the first place no token leaves.
    fn stretches(&self) -> Vec<Stretch<'_>> {
        let cuts = self.cuts();
        let mut out = Vec::new();
        for (i, &start) in cuts.iter().enumerate() {
            let Some(&end) = cuts.get(i + 1).or(Some(&self.end)).filter(|&&end| end > start) else { break };
            let edges = self.edges_from(start);
            if edges.is_empty() {
                break;
            }
            let side_paths = edges.iter().any(|e| e.to != edges[0].to);
            out.push(Stretch { start, end, edges, side_paths });
        }
        out
    }

    /// Every path from `start` to `end` (edge indexes), depth first in the tokens' order.
    fn paths(&self, start: u32, end: u32) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.walk(start, end, &mut path, &mut out);
        out
    }

    fn walk(&self, state: u32, end: u32, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if out.len() > MAX_PATHS {
            return;
        }
        if state == end {
            out.push(path.clone());
            return;
        }
        for (i, e) in self.edges.iter().enumerate() {
            if e.from == state && e.to <= end {
                path.push(i);
                self.walk(e.to, end, path, out);
                path.pop();
            }
        }
    }
}

/// Analyzed text as a phrase with `slop` (see [`phrase`]), or where it
/// makes a graph of terms as Elasticsearch reads one: without slop a span
/// query ([`graph_span_phrase`]), with one a disjunction of the phrases of
/// every path ([`graph_phrases`]). `None` when there are no terms.
pub fn phrase_or_graph(field: FieldId, terms: QueryTerms, slop: u32) -> Result<Option<Query>, String> {
    match terms {
        QueryTerms::Positioned(tokens) => Ok(phrase(field, tokens, slop)),
        QueryTerms::Graph(tokens) if slop == 0 => graph_span_phrase(field, &tokens).map(Some),
        QueryTerms::Graph(tokens) => graph_phrases(field, &tokens, slop).map(Some),
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
    // Each place's terms sorted; a term twice at a place kept twice, as Lucene's
    // MultiPhraseQuery keeps it (its idf counted twice, its postings walked twice).
    terms.sort();
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
        // A term twice at a place stays twice, as in Lucene's MultiPhraseQuery.
        assert_eq!(terms, [(0, &b"a"[..]), (1, b"b"), (1, b"c"), (1, b"c"), (3, b"d")]);
        assert!(p.has_alternatives());
        assert!(matches!(phrase(0, tokens(&[(0, "a"), (0, "b")]), 0), Some(Query::Synonym { .. })));
        assert!(phrase(0, Vec::new(), 0).is_none());
    }

    #[test]
    fn a_phrase_without_slop_over_a_graph_is_a_span_query_of_its_stretches() {
        let term = |t: &str| Span::Term(t.as_bytes().to_vec());
        let tokens = graph_tokens(&[("ny", 0, 2), ("new", 0, 1), ("york", 1, 1), ("city", 2, 1)]);
        let Ok(Query::Span { field: 0, span }) = graph_span_phrase(0, &tokens) else {
            panic!("a span query")
        };
        let either = Span::Or(vec![term("ny"), Span::Near(vec![term("new"), term("york")])]);
        assert_eq!(span, Span::Near(vec![either, term("city")]));
        assert_eq!(span.distinct_terms(), [&b"city"[..], b"new", b"ny", b"york"]);
        let runs = span.sequences(10).unwrap();
        assert_eq!(runs, [vec![&b"ny"[..], b"city"], vec![b"new", b"york", b"city"]]);
        // A hole left by a removed word is refused by name.
        let holed = graph_tokens(&[("ny", 0, 2), ("new", 0, 1), ("york", 1, 1), ("city", 3, 1)]);
        assert!(graph_span_phrase(0, &holed).unwrap_err().contains("hole"));
    }

    fn graph_tokens(list: &[(&str, u32, u32)]) -> Vec<Token> {
        let token = |&(term, position, position_length): &(&str, u32, u32)| Token {
            term: term.to_string(),
            position,
            start: 0,
            end: 0,
            synonym: false,
            keyword: false,
            position_length,
            token_type: None,
        };
        list.iter().map(token).collect()
    }

    fn shown(q: &Query) -> String {
        match q {
            Query::Term(t) => String::from_utf8_lossy(&t.term).into_owned(),
            Query::Synonym { terms, .. } => {
                let terms: Vec<_> = terms.iter().map(|t| String::from_utf8_lossy(t).into_owned()).collect();
                format!("syn({})", terms.join(","))
            }
            Query::Phrase(p) => {
                let terms: Vec<_> =
                    p.terms.iter().map(|(o, t)| format!("{}@{o}", String::from_utf8_lossy(t))).collect();
                format!("\"{}\"", terms.join(" "))
            }
            Query::Bool(b) if !b.should.is_empty() => {
                format!("or({})", b.should.iter().map(shown).collect::<Vec<_>>().join(", "))
            }
            Query::Bool(b) => format!("and({})", b.must.iter().map(shown).collect::<Vec<_>>().join(", ")),
            other => format!("{other:?}"),
        }
    }

    fn shown_graph(list: &[(&str, u32, u32)], phrases: bool) -> Vec<String> {
        graph(0, &graph_tokens(list), phrases).unwrap().iter().map(shown).collect()
    }

    #[test]
    fn a_stretch_with_paths_of_different_lengths_is_a_disjunction_of_its_paths() {
        // word_delimiter_graph with catenate_words over `wi-fi network`.
        let tokens = [("wifi", 0, 2), ("wi", 0, 1), ("fi", 1, 1), ("network", 2, 1)];
        assert_eq!(shown_graph(&tokens, true), ["or(wifi, \"wi@0 fi@1\")", "network"]);
        assert_eq!(shown_graph(&tokens, false), ["or(wifi, and(wi, fi))", "network"]);
        // The original kept as well, and a stretch before that every path passes.
        let tokens = [("the", 0, 1), ("wi-fi", 1, 2), ("wifi", 1, 2), ("wi", 1, 1), ("fi", 2, 1)];
        assert_eq!(shown_graph(&tokens, true), ["the", "or(wi-fi, wifi, \"wi@0 fi@1\")"]);
    }

    #[test]
    fn a_stretch_without_side_paths_is_its_term_or_a_synonym_query() {
        assert_eq!(shown_graph(&[("wifi", 0, 2)], true), ["wifi"]);
        let tokens = [("a", 0, 1), ("b", 1, 2), ("c", 1, 2), ("b", 1, 2)];
        assert_eq!(shown_graph(&tokens, true), ["a", "syn(b,c)"]);
    }

    #[test]
    fn a_hole_left_by_a_removed_word_stays_in_the_phrase_of_a_path() {
        // `wi-fi of x` with `of` removed after the parts were made: `x` two positions on.
        let tokens = [("wifi", 0, 2), ("wi", 0, 1), ("fi", 1, 1), ("x", 3, 1)];
        assert_eq!(shown_graph(&tokens, true), ["or(wifi, \"wi@0 fi@1\")", "x"]);
        let tokens = [("a", 0, 1), ("bc", 2, 2), ("b", 2, 1), ("c", 3, 1)];
        assert_eq!(shown_graph(&tokens, true), ["a", "or(bc, \"b@0 c@1\")"]);
    }

    #[test]
    fn a_token_no_path_reaches_the_end_through_is_left_out() {
        // `a` ends where nothing goes on; only `abc` spans the whole text.
        assert_eq!(shown_graph(&[("a", 0, 1), ("abc", 0, 3)], true), ["abc"]);
        assert!(graph(0, &[], true).unwrap().is_empty());
        // An increment past a spanning token is a hole in Lucene's reading, so no path goes through.
        assert!(shown_graph(&[("wifi", 0, 2), ("router", 2, 1)], true).is_empty());
        assert!(is_graph(&graph_tokens(&[("a", 0, 2)])));
        assert!(!is_graph(&graph_tokens(&[("a", 0, 1), ("b", 0, 1)])));
    }

    #[test]
    fn too_many_paths_are_refused() {
        // Each of 11 stretches doubled by a part joined: 2^11 paths through one stretch.
        let mut list = Vec::new();
        let names: Vec<String> = (0..24).map(|i| format!("t{i}")).collect();
        list.push((names[0].as_str(), 0, 24));
        for i in 0..12u32 {
            list.push((names[(2 * i) as usize].as_str(), 2 * i, 2));
            list.push((names[(2 * i + 1) as usize].as_str(), 2 * i, 1));
            list.push((names[(2 * i + 1) as usize].as_str(), 2 * i + 1, 1));
        }
        list.sort_by_key(|&(_, p, _)| p);
        let err = graph(0, &graph_tokens(&list), true).unwrap_err();
        assert!(err.contains("more than 1024 paths"), "{err}");
    }
}
