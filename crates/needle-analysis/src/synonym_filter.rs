//! The synonym filters over a text's tokens (the analyzer gathers them):
//! at each token the longest run of terms a rule names (`synonyms.rs`) is
//! matched, and the tokens after a match are matched again from there.
//!
//! - `synonym_graph`, Lucene's SynonymGraphFilter: a match becomes a graph.
//!   Each output starts a path of its own from the match's first position
//!   to the place after the match, the original run (when kept) one more;
//!   all paths meet there, so a token spans the positions its path skips
//!   (`ny` over `new york`: position length 2). Synonyms come first, then
//!   the original. Numbering the graph's places as Lucene does, a hole left
//!   by a removed word before or inside a match is not kept.
//! - `synonym`, Lucene's older SynonymFilter: every token keeps its place
//!   and a match's outputs are stacked on the matched tokens, an output's
//!   n-th term on the n-th token (past the match, on the tokens after it,
//!   or past the text, at places of their own); the original first. A
//!   one-term output of a kept match spans the match's positions.
//!
//! A synonym's offsets are the match's (a term of a longer output stacked
//! on a token: that token's), its type `SYNONYM`; an original keeps its own.
//! Each gives the position after the text as Lucene's filters pass on the
//! end's increment.

use crate::analyzer::{position_after, Token};
use crate::synonyms::{Mapping, SynonymMap};

impl SynonymMap {
    /// The filter over `tokens` (first at `first_position`; `end`: the
    /// position after the text before the filter), each token it makes
    /// given to `emit` with the word it was cut from; the position after.
    pub fn apply(
        &self,
        tokens: &[(Token, String)],
        first_position: u32,
        end: u32,
        mut emit: impl FnMut(&Token, &str),
    ) -> u32 {
        let last_out = match self.graph {
            true => self.graph_filter(tokens, first_position, &mut emit),
            false => self.stacking_filter(tokens, first_position, &mut emit),
        };
        let last_in = tokens.last().map(|(t, _)| t.position);
        position_after(first_position, last_in, end, last_out)
    }

    /// The longest match at `tokens[at]`.
    fn match_at(&self, tokens: &[(Token, String)], at: usize) -> Option<(usize, &Mapping)> {
        self.longest(tokens[at..].iter().map(|(t, _)| t.term.as_str()))
    }

    /// Lucene's SynonymGraphFilter; the position of the last token out.
    fn graph_filter(
        &self,
        tokens: &[(Token, String)],
        first_position: u32,
        emit: &mut impl FnMut(&Token, &str),
    ) -> Option<u32> {
        let mut nodes = Nodes { last: -1, next: 0, last_in: i64::from(first_position) - 1 };
        let mut last_out = None;
        let mut at = 0;
        while at < tokens.len() {
            let Some((matched, mapping)) = self.match_at(tokens, at) else {
                let (token, word) = &tokens[at];
                let mut out = token.clone();
                out.position = nodes.pass(token, first_position);
                emit(&out, word);
                last_out = Some(out.position);
                at += 1;
                continue;
            };
            let run = &tokens[at..at + matched];
            let mut last_place = nodes.next;
            for (token, word) in graph_of(run, mapping, nodes.next) {
                last_place = i64::from(token.position);
                let position = first_position + token.position;
                emit(&Token { position, ..token }, word.unwrap_or(&run[0].1));
                last_out = Some(position);
            }
            nodes.matched(run, mapping, last_place);
            at += matched;
        }
        last_out
    }

    /// Lucene's SynonymFilter; the position of the last token out.
    fn stacking_filter(
        &self,
        tokens: &[(Token, String)],
        first_position: u32,
        emit: &mut impl FnMut(&Token, &str),
    ) -> Option<u32> {
        let mut places: Vec<Place> = tokens.iter().map(|_| Place::default()).collect();
        let mut position = i64::from(first_position) - 1;
        let mut last_in = position;
        let mut at = 0;
        while at < tokens.len() {
            let matched = match self.match_at(tokens, at) {
                Some((matched, mapping)) => {
                    stack(&mut places, at, &tokens[at..at + matched], mapping);
                    matched
                }
                None => 1,
            };
            for i in at..at + matched {
                let (token, word) = &tokens[i];
                let place = std::mem::take(&mut places[i]);
                let increment = i64::from(token.position) - last_in;
                last_in = i64::from(token.position);
                let mut stacked = false;
                if place.keep_original || !place.matched {
                    position += increment;
                    emit(&Token { position: position as u32, ..token.clone() }, word);
                    stacked = true;
                }
                for output in place.outputs {
                    position += i64::from(!stacked);
                    stacked = true;
                    let end = output.end.unwrap_or(token.end);
                    let made = synonym(output.term, position, output.length, token.start, end);
                    emit(&made, word);
                }
            }
            at += matched;
        }
        // Terms of outputs longer than the text: at places of their own, on the last token's offsets.
        if let Some((last, word)) = tokens.last() {
            for place in places.drain(tokens.len()..) {
                for (i, output) in place.outputs.into_iter().enumerate() {
                    position += i64::from(i == 0);
                    emit(&synonym(output.term, position, 1, last.start, last.end), word);
                }
            }
        }
        (position >= i64::from(first_position)).then_some(position as u32)
    }
}

/// Where SynonymGraphFilter is in the graph it gives out: the place of the
/// last token out and the place the next match starts at, numbered from
/// the text's first position; and the position of the last token in.
struct Nodes {
    last: i64,
    next: i64,
    last_in: i64,
}

impl Nodes {
    /// A token that matched nothing: it moves on by its own increment; its position.
    fn pass(&mut self, token: &Token, first_position: u32) -> u32 {
        self.last += i64::from(token.position) - self.last_in;
        self.last_in = i64::from(token.position);
        self.next = self.last + i64::from(token.position_length);
        (i64::from(first_position) + self.last) as u32
    }

    /// After the graph of a match whose last token out is at `last`: the place after it.
    fn matched(&mut self, run: &[(Token, String)], mapping: &Mapping, last: i64) {
        self.last = last;
        self.next += inner_places(run.len(), mapping) + 1;
        self.last_in = i64::from(run.last().expect("a match has tokens").0.position);
    }
}

/// The places inside a match's graph: one between each two terms of every path.
fn inner_places(matched: usize, mapping: &Mapping) -> i64 {
    let original = if mapping.keep_original { matched - 1 } else { 0 };
    let outputs: usize = mapping.outputs.iter().map(|o| o.len() - 1).sum();
    (original + outputs) as i64
}

/// The tokens of a match's graph in Lucene's order, positions counted from
/// the text's first: each path's first token (synonyms, then the original
/// run's), then the rest of each path. An original comes with its word.
fn graph_of<'t>(run: &'t [(Token, String)], mapping: &Mapping, start: i64) -> Vec<(Token, Option<&'t str>)> {
    let end = start + inner_places(run.len(), mapping) + 1;
    let (offset_start, offset_end) = (run[0].0.start, run[run.len() - 1].0.end);
    let place = |p: i64| p as u32;
    let mut firsts = Vec::new();
    let mut rests = Vec::new();
    // Each path's inner places, numbered in the order of the paths.
    let mut inner = start;
    let mut path = |terms: &mut dyn Iterator<Item = (Token, Option<&'t str>)>, len: usize| {
        let mut from = start;
        for (i, (mut token, word)) in terms.enumerate() {
            let to = if i + 1 == len { end } else { inner + 1 };
            if i + 1 < len {
                inner += 1;
            }
            token.position = place(from);
            token.position_length = (to - from) as u32;
            match i {
                0 => firsts.push((token, word)),
                _ => rests.push((token, word)),
            }
            from = to;
        }
    };
    for output in &mapping.outputs {
        let mut terms =
            output.iter().map(|term| (synonym(term.clone(), 0, 1, offset_start, offset_end), None));
        path(&mut terms, output.len());
    }
    if mapping.keep_original {
        let mut terms = run.iter().map(|(t, w)| (t.clone(), Some(w.as_str())));
        path(&mut terms, run.len());
    }
    firsts.extend(rests);
    firsts
}

/// A token a rule made.
fn synonym(term: String, position: i64, length: u32, start: u32, end: u32) -> Token {
    Token {
        term,
        position: position as u32,
        position_length: length,
        start,
        end,
        synonym: true,
        ..Token::default()
    }
}

/// What SynonymFilter holds for one token's place: the outputs stacked on
/// it, and whether a match took it and kept it.
#[derive(Default)]
struct Place {
    outputs: Vec<Stacked>,
    matched: bool,
    keep_original: bool,
}

struct Stacked {
    term: String,
    /// The match's end offset for a one-term output (else the token's).
    end: Option<u32>,
    length: u32,
}

/// A match of `run` at `at`: each output's terms stacked on the places from
/// there (new places past the text), the matched places marked.
fn stack(places: &mut Vec<Place>, at: usize, run: &[(Token, String)], mapping: &Mapping) {
    let match_end = run[run.len() - 1].0.end;
    for output in &mapping.outputs {
        for (i, term) in output.iter().enumerate() {
            if places.len() <= at + i {
                places.resize_with(at + i + 1, Place::default);
            }
            let one = output.len() == 1;
            let length = if one && mapping.keep_original { run.len() as u32 } else { 1 };
            places[at + i].outputs.push(Stacked {
                term: term.clone(),
                end: one.then_some(match_end),
                length,
            });
        }
    }
    for place in &mut places[at..at + run.len()] {
        place.matched = true;
        place.keep_original |= mapping.keep_original;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{Analyzer, SynonymMap, TokenFilter, Tokenizer};

    /// A whitespace tokenizer, a stop filter removing `x` and the synonym filter of `rules`.
    fn analyzer(rules: &[String], expand: bool, graph: bool) -> Analyzer {
        let words = |w: &str| Ok(w.split_whitespace().map(str::to_string).collect());
        let map = SynonymMap::parse(rules, expand, false, graph, words).expect("rules parse");
        let stop = TokenFilter::stop(&["x"], false);
        Analyzer::custom(Tokenizer::Whitespace, vec![stop, TokenFilter::Synonyms(Arc::new(map))])
    }

    fn tokens(rules: &[&str], expand: bool, graph: bool, text: &str) -> Vec<(String, u32, u32)> {
        let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        let tokens = analyzer(&rules, expand, graph).tokens(text);
        tokens.into_iter().map(|t| (t.term, t.position, t.position_length)).collect()
    }

    fn want(list: &[(&str, u32, u32)]) -> Vec<(String, u32, u32)> {
        list.iter().map(|&(t, p, l)| (t.to_string(), p, l)).collect()
    }

    #[test]
    fn a_run_of_terms_becomes_a_path_beside_its_synonym() {
        let graph = tokens(&["ny, new york"], true, true, "new york city");
        assert_eq!(graph, want(&[("ny", 0, 2), ("new", 0, 1), ("york", 1, 1), ("city", 2, 1)]));
        let longer = tokens(&["ny, new york"], true, true, "ny city");
        assert_eq!(longer, want(&[("new", 0, 1), ("ny", 0, 2), ("york", 1, 1), ("city", 2, 1)]));
        let replaced = tokens(&["new york => ny"], true, true, "in new york");
        assert_eq!(replaced, want(&[("in", 0, 1), ("ny", 1, 1)]));
    }

    #[test]
    fn the_older_filter_stacks_outputs_on_the_tokens_it_matched() {
        let stacked = tokens(&["ny, new york"], true, false, "ny city");
        assert_eq!(stacked, want(&[("ny", 0, 1), ("new", 0, 1), ("city", 1, 1), ("york", 1, 1)]));
        let past_the_end = tokens(&["ny => new york state"], true, false, "ny");
        assert_eq!(past_the_end, want(&[("new", 0, 1), ("york", 1, 1), ("state", 2, 1)]));
    }

    /// Lucene's SynonymGraphFilter's and SynonymFilter's tokens, recorded by `tables/synonym_cases.py`.
    #[test]
    fn synonyms_equal_lucenes() {
        crate::lucene_cases::check("synonym", 3000, |case| {
            let rules: Vec<String> = case["rules"]
                .as_array()
                .expect("rules")
                .iter()
                .map(|r| r.as_str().expect("a rule").into())
                .collect();
            let (expand, graph) =
                (case["expand"].as_bool().expect("expand"), case["graph"].as_bool().expect("graph"));
            let text = case["text"].as_str().expect("a text");
            let mut tokens = Vec::new();
            let end = analyzer(&rules, expand, graph).analyze_words(text, 0, |t, word| {
                let kind = if t.synonym { "SYNONYM" } else { Tokenizer::Whitespace.token_type(word) };
                tokens.push(serde_json::json!([t.term, t.position, t.position_length, t.start, t.end, kind]));
            });
            let got = serde_json::json!({"end": end, "tokens": tokens});
            let want = serde_json::json!({"end": case["end"], "tokens": case["tokens"]});
            (got != want).then(|| {
                format!("{rules:?} expand {expand} graph {graph} {text:?}: Lucene {want}, Needle {got}")
            })
        });
    }
}
