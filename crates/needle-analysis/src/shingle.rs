//! Lucene's ShingleFilter: each token joined with the tokens after it into
//! shingles of `min..=max` tokens (`quick brown`), the token itself first
//! when `unigrams` are kept. A hole left by a removed word is filled with
//! the filler (`_`), at most `max - 1` of them, so that every shingle holds
//! a token (`_ brown` after a removed `the`). The filter sees one text's
//! tokens whole (it looks ahead by up to `max - 1` tokens), so `analyzer.rs`
//! gathers them before it and passes what it makes to the filters after.
//!
//! Positions are the filter's own, as Lucene counts them: each token and
//! each filler in a row is one position, the first shingle starting there
//! on it and the others stacked, so holes longer than the filler allows
//! shrink. A shingle of `n` tokens spans `n` positions when unigrams are
//! kept, else `n - min + 1`. Its attributes are its first token's; its type
//! is `shingle`.

use crate::analyzer::position_after;
use crate::Token;

/// The options of Elasticsearch's `shingle` filter, as Lucene's ShingleFilter takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shingle {
    pub min: usize,
    pub max: usize,
    /// Each token kept as well (`output_unigrams`).
    pub unigrams: bool,
    /// Each token kept when no shingle can be made (`output_unigrams_if_no_shingles`).
    pub unigrams_if_none: bool,
    pub separator: String,
    pub filler: String,
}

impl Default for Shingle {
    fn default() -> Self {
        Shingle {
            min: 2,
            max: 2,
            unigrams: true,
            unigrams_if_none: false,
            separator: " ".into(),
            filler: "_".into(),
        }
    }
}

/// One place of the filter's window: a token (with the word it was cut
/// from), or a filler standing for a removed word.
struct Place<'a> {
    token: &'a Token,
    word: &'a str,
    filler: bool,
    /// The filler's offsets (a filler takes no room), else the token's.
    start: u32,
    end: u32,
}

impl Shingle {
    /// Whether a query reads its tokens by position alone, not as a graph
    /// (Elasticsearch disables graph queries where shingles of several
    /// sizes, unigrams among them, are not aligned on positions).
    pub fn disables_graph(&self) -> bool {
        self.unigrams || self.min != self.max
    }

    /// The shingles of one text's `tokens` (each with its word), which
    /// start after `first_position`; `end` is the position after the text
    /// as the filters before count it and `final_offset` its length. Each
    /// is given to `emit` in Lucene's order; returns the position after the
    /// text in the filter's count (the removed words after the last token
    /// counted, as the filter passes on the end's increment).
    pub fn apply(
        &self,
        tokens: &[(Token, String)],
        first_position: u32,
        end: u32,
        final_offset: u32,
        mut emit: impl FnMut(&Token, &str),
    ) -> u32 {
        let places = self.places(tokens, first_position, end, final_offset);
        let mut min_size = if self.unigrams { 1 } else { self.min };
        let (mut shingled, mut position) = (false, None::<u32>);
        let mut token = Token::default();
        for start in 0..places.len() {
            let window = places.len() - start;
            if self.unigrams_if_none && !shingled && min_size > 1 && window.min(self.max) < self.min {
                min_size = 1;
            }
            let sizes = (min_size == 1).then_some(1).into_iter().chain(self.min..=self.max);
            let mut here = false;
            for size in sizes.take_while(|&size| size <= window) {
                let gram = &places[start..start + size];
                if gram.iter().all(|p| p.filler) {
                    continue;
                }
                let first = &gram[0];
                token.clone_from(first.token);
                token.term.clear();
                for (i, p) in gram.iter().enumerate() {
                    if i > 0 {
                        token.term.push_str(&self.separator);
                    }
                    token.term.push_str(if p.filler { &self.filler } else { &p.token.term });
                }
                let at = match (here, position) {
                    (true, Some(p)) => p,
                    (_, p) => p.map_or(first_position, |p| p + 1),
                };
                position = Some(at);
                here = true;
                token.position = at;
                token.start = first.start;
                token.end = gram[size - 1].end;
                token.position_length = match self.unigrams {
                    true => size as u32,
                    false => (size + 1).saturating_sub(self.min).max(1) as u32,
                };
                if size > 1 {
                    token.token_type = Some("shingle");
                }
                shingled |= size > 1;
                emit(&token, first.word);
            }
            if !here {
                break;
            }
        }
        position_after(first_position, tokens.last().map(|(t, _)| t.position), end, position)
    }

    /// The window's places: the tokens, each after the fillers of the hole
    /// before it (at most `max - 1`), and the fillers of the hole after the last.
    fn places<'a>(
        &self,
        tokens: &'a [(Token, String)],
        first_position: u32,
        end: u32,
        final_offset: u32,
    ) -> Vec<Place<'a>> {
        let mut out = Vec::with_capacity(tokens.len() * 2);
        let mut previous = i64::from(first_position) - 1;
        let most = self.max - 1;
        for (token, word) in tokens {
            let hole = (i64::from(token.position) - previous - 1).max(0) as usize;
            previous = i64::from(token.position);
            let (start, end) = (token.start, token.end);
            out.extend((0..hole.min(most)).map(|_| Place { token, word, filler: true, start, end: start }));
            out.push(Place { token, word, filler: false, start, end });
        }
        let trailing = (i64::from(end) - previous - 1).max(0) as usize;
        if let Some((token, word)) = tokens.last() {
            let (start, end) = (final_offset, final_offset);
            out.extend((0..trailing.min(most)).map(|_| Place { token, word, filler: true, start, end }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Analyzer, TokenFilter, Tokenizer};

    fn shingles(shingle: Shingle, text: &str) -> Vec<(String, u32, u32, u32, u32)> {
        let stop = TokenFilter::stop(&["x"], false);
        let analyzer =
            Analyzer::custom(Tokenizer::Whitespace, vec![stop, TokenFilter::Shingle(Box::new(shingle))]);
        analyzer
            .tokens(text)
            .into_iter()
            .map(|t| (t.term, t.position, t.position_length, t.start, t.end))
            .collect()
    }

    fn terms(shingle: Shingle, text: &str) -> Vec<String> {
        shingles(shingle, text).into_iter().map(|t| t.0).collect()
    }

    #[test]
    fn each_token_is_followed_by_its_shingles() {
        let got = shingles(Shingle::default(), "a b c");
        let want = [
            ("a", 0, 1, 0, 1),
            ("a b", 0, 2, 0, 3),
            ("b", 1, 1, 2, 3),
            ("b c", 1, 2, 2, 5),
            ("c", 2, 1, 4, 5),
        ];
        let want: Vec<_> = want.iter().map(|&(t, p, l, s, e)| (t.to_string(), p, l, s, e)).collect();
        assert_eq!(got, want);
        let three = Shingle { max: 3, unigrams: false, ..Shingle::default() };
        assert_eq!(terms(three, "a b c"), ["a b", "a b c", "b c"]);
    }

    #[test]
    fn holes_are_filled_with_the_filler() {
        assert_eq!(terms(Shingle::default(), "x a x b x"), ["_ a", "a", "a _", "_ b", "b", "b _"]);
        let fill = Shingle { filler: "-".into(), separator: "+".into(), max: 3, ..Shingle::default() };
        assert_eq!(terms(fill, "a x x x b"), ["a", "a+-", "a+-+-", "-+-+b", "-+b", "b"]);
    }

    #[test]
    fn unigrams_only_when_no_shingle_can_be_made() {
        let lone = Shingle { unigrams: false, unigrams_if_none: true, ..Shingle::default() };
        assert_eq!(terms(lone.clone(), "a"), ["a"]);
        assert_eq!(terms(lone, "a b"), ["a b"]);
        assert!(terms(Shingle { unigrams: false, ..Shingle::default() }, "a").is_empty());
    }

    /// Lucene's ShingleFilter's tokens, recorded by `tables/shingle_cases.py`.
    #[test]
    fn shingles_equal_lucenes() {
        crate::lucene_cases::check("shingle", 3000, |case| {
            let o = &case["options"];
            let shingle = Shingle {
                min: o["min"].as_u64().expect("min") as usize,
                max: o["max"].as_u64().expect("max") as usize,
                unigrams: o["unigrams"].as_bool().expect("unigrams"),
                unigrams_if_none: o["unigrams_if_none"].as_bool().expect("unigrams_if_none"),
                separator: o["separator"].as_str().expect("separator").into(),
                filler: o["filler"].as_str().expect("filler").into(),
            };
            let text = case["text"].as_str().expect("a text");
            let stop = TokenFilter::stop(&["x"], false);
            let analyzer =
                Analyzer::custom(Tokenizer::Whitespace, vec![stop, TokenFilter::Shingle(Box::new(shingle))]);
            let mut tokens = Vec::new();
            let end = analyzer.analyze_words(text, 0, |t, word| {
                let kind = t.token_type.unwrap_or_else(|| Tokenizer::Whitespace.token_type(word));
                tokens.push(serde_json::json!([t.term, t.position, t.position_length, t.start, t.end, kind]));
            });
            let got = serde_json::json!({"end": end, "tokens": tokens});
            let want = serde_json::json!({"end": case["end"], "tokens": case["tokens"]});
            (got != want).then(|| format!("{text:?} {o}: Lucene {want}, Needle {got}"))
        });
    }
}
