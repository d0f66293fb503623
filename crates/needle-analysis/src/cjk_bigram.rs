//! Lucene's CJKBigramFilter (Elasticsearch's `cjk_bigram`): runs of Han,
//! Hiragana, Katakana and Hangul characters, as the standard tokenizer types
//! them, become the overlapping pairs of their characters (`中文字` to `中文`,
//! `文字`), across tokens whose text touches; a character with no neighbour to
//! pair with stays alone. Each pair or lone character is one position (type
//! `<DOUBLE>` or `<SINGLE>`); with `unigrams` every character is kept as well,
//! each pair then stacked on its first character and spanning two positions.
//! Other tokens pass through with their own position increments. The filter
//! looks ahead to the next token, so `analyzer.rs` gathers a text's tokens for
//! it, as for the shingle filter. Positions are those of Lucene 10.6 (and of
//! the 10.5 OpenSearch 3.8 runs): a token after a run of pairs is not moved on
//! for the run's last character.

use crate::analyzer::position_after;
use crate::Token;

/// The scripts whose tokens are paired, by the standard tokenizer's types.
pub const SCRIPTS: [(&str, &str); 4] = [
    ("han", "<IDEOGRAPHIC>"),
    ("hiragana", "<HIRAGANA>"),
    ("katakana", "<KATAKANA>"),
    ("hangul", "<HANGUL>"),
];

/// The options of Elasticsearch's `cjk_bigram` filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CjkBigram {
    /// The token types paired (Elasticsearch's scripts less `ignored_scripts`).
    pub types: Vec<&'static str>,
    /// Every character kept as well (`output_unigrams`).
    pub unigrams: bool,
}

impl Default for CjkBigram {
    fn default() -> Self {
        CjkBigram { types: SCRIPTS.iter().map(|(_, t)| *t).collect(), unigrams: false }
    }
}

/// A character of a run, with its offsets.
#[derive(Clone, Copy)]
struct Char {
    c: char,
    start: u32,
    end: u32,
}

/// One text's walk through the filter (the state of Lucene's).
struct Walk<'a> {
    filter: &'a CjkBigram,
    tokens: &'a [(Token, String, &'static str)],
    next: usize,
    /// A token read ahead and to be read again (Lucene's `loneState`).
    again: Option<usize>,
    chars: Vec<Char>,
    index: usize,
    last_end: u32,
    /// With unigrams: the next output of a pair is the pair (else its first character).
    pair_next: bool,
}

/// What the walk gives: a pair or a lone character of `chars`, or an input token passed through.
enum Out {
    Pair(usize),
    Single(usize),
    Passed(usize),
}

impl CjkBigram {
    /// The filter over one text's `tokens` (each with its word and type),
    /// whose positions start at `first_position`; `end` is the position after
    /// the text as the filters before count it. Each output is given to
    /// `emit` with the word of the token it comes from; returns the position
    /// after the text in the filter's count.
    pub fn apply(
        &self,
        tokens: &[(Token, String, &'static str)],
        first_position: u32,
        end: u32,
        mut emit: impl FnMut(&Token, &str),
    ) -> u32 {
        let mut walk = Walk {
            filter: self,
            tokens,
            next: 0,
            again: None,
            chars: Vec::new(),
            index: 0,
            last_end: 0,
            pair_next: false,
        };
        let mut position = i64::from(first_position) - 1;
        let mut token = Token::default();
        while let Some(out) = walk.step() {
            let (increment, word) = match out {
                Out::Passed(i) => {
                    let (t, word, _) = &tokens[i];
                    token.clone_from(t);
                    let before = if i == 0 {
                        i64::from(first_position) - 1
                    } else {
                        i64::from(tokens[i - 1].0.position)
                    };
                    (i64::from(t.position) - before, word.as_str())
                }
                Out::Pair(i) => {
                    let (a, b) = (walk.chars[i], walk.chars[i + 1]);
                    token = Token {
                        term: [a.c, b.c].iter().collect(),
                        start: a.start,
                        end: b.end,
                        ..Token::default()
                    };
                    token.token_type = Some("<DOUBLE>");
                    if self.unigrams {
                        token.position_length = 2;
                    }
                    (i64::from(!self.unigrams), "")
                }
                Out::Single(i) => {
                    let a = walk.chars[i];
                    token = Token { term: a.c.to_string(), start: a.start, end: a.end, ..Token::default() };
                    token.token_type = Some("<SINGLE>");
                    (1, "")
                }
            };
            position += increment;
            token.position = position.max(0) as u32;
            emit(&token, word);
        }
        let last_out = (position >= i64::from(first_position)).then_some(position as u32);
        position_after(first_position, tokens.last().map(|(t, _, _)| t.position), end, last_out)
    }
}

impl Walk<'_> {
    /// The next output, as Lucene's `incrementToken` gives it.
    fn step(&mut self) -> Option<Out> {
        loop {
            if self.chars.len() - self.index > 1 {
                if !self.filter.unigrams {
                    return Some(self.pair());
                }
                // With unigrams: A, then AB (stacked), then B, then BC...
                let out = match self.pair_next {
                    true => self.pair(),
                    false => {
                        let single = self.single();
                        self.index -= 1;
                        single
                    }
                };
                self.pair_next = !self.pair_next;
                return Some(out);
            }
            let Some(i) = self.read() else {
                return self.lone_waiting().then(|| self.single());
            };
            let (token, _, kind) = &self.tokens[i];
            if self.filter.types.contains(kind) {
                if token.start != self.last_end {
                    if self.lone_waiting() {
                        self.again = Some(i);
                        return Some(self.single());
                    }
                    self.chars.clear();
                    self.index = 0;
                }
                self.refill(token);
            } else {
                if self.lone_waiting() {
                    self.again = Some(i);
                    return Some(self.single());
                }
                return Some(Out::Passed(i));
            }
        }
    }

    /// The next input token: the one read ahead, else the next.
    fn read(&mut self) -> Option<usize> {
        if let Some(i) = self.again.take() {
            return Some(i);
        }
        let i = self.next;
        self.next += 1;
        (i < self.tokens.len()).then_some(i)
    }

    /// A character waits whose fate the next token decides (Lucene's `hasBufferedUnigram`).
    fn lone_waiting(&self) -> bool {
        match self.filter.unigrams {
            true => self.chars.len() - self.index == 1,
            false => self.chars.len() == 1 && self.index == 0,
        }
    }

    /// Adds `token`'s characters to the run, each with its own offsets when
    /// the token is as long as its text (else the token's).
    fn refill(&mut self, token: &Token) {
        let (mut start, end) = (token.start, token.end);
        let placed = (end - start) as usize == token.term.len();
        for c in token.term.chars() {
            let (from, to) = match placed {
                true => (start, start + c.len_utf8() as u32),
                false => (token.start, end),
            };
            self.chars.push(Char { c, start: from, end: to });
            start = to;
        }
        self.last_end = end;
    }

    fn pair(&mut self) -> Out {
        self.index += 1;
        Out::Pair(self.index - 1)
    }

    fn single(&mut self) -> Out {
        self.index += 1;
        Out::Single(self.index - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Analyzer, TokenFilter, Tokenizer};

    fn analyzer(width: bool, flags: u64, unigrams: bool) -> Analyzer {
        let types = SCRIPTS.iter().enumerate().filter(|(i, _)| flags & (1 << i) != 0).map(|(_, (_, t))| *t);
        let bigram = CjkBigram { types: types.collect(), unigrams };
        let mut filters = Vec::new();
        if width {
            filters.push(TokenFilter::CjkWidth);
        }
        filters.extend([TokenFilter::Lowercase, TokenFilter::CjkBigram(Box::new(bigram))]);
        Analyzer::custom(Tokenizer::Standard, filters)
    }

    fn terms(text: &str, unigrams: bool) -> Vec<(String, u32, u32)> {
        analyzer(true, 15, unigrams)
            .tokens(text)
            .into_iter()
            .map(|t| (t.term, t.position, t.position_length))
            .collect()
    }

    fn t(term: &str, position: u32, length: u32) -> (String, u32, u32) {
        (term.to_string(), position, length)
    }

    #[test]
    fn runs_become_pairs_and_a_lone_character_stays() {
        assert_eq!(
            terms("中文字 abc 中", false),
            [t("中文", 0, 1), t("文字", 1, 1), t("abc", 2, 1), t("中", 3, 1)]
        );
        let both = [t("中", 0, 1), t("中文", 0, 2), t("文", 1, 1), t("文字", 1, 2), t("字", 2, 1)];
        assert_eq!(terms("中文字", true), both);
        assert_eq!(terms("ｶﾞｷﾞ", false), [t("ガギ", 0, 1)]);
    }

    /// Lucene's CJKWidthFilter and CJKBigramFilter, recorded by `tables/cjk_cases.py`.
    #[test]
    fn pairs_equal_lucenes() {
        crate::lucene_cases::check("cjk", 3000, |case| {
            let flags = case["flags"].as_u64().expect("flags");
            let unigrams = case["unigrams"].as_bool().expect("unigrams");
            let analyzer = analyzer(case["width"].as_bool().expect("width"), flags, unigrams);
            let text = case["text"].as_str().expect("a text");
            let units = |byte: u32| text[..byte as usize].encode_utf16().count();
            let mut tokens = Vec::new();
            let end = analyzer.analyze_words(text, 0, |t, word| {
                let kind = t.token_type.unwrap_or_else(|| Tokenizer::Standard.token_type(word));
                let (start, end) = (units(t.start), units(t.end));
                tokens.push(serde_json::json!([t.term, t.position, t.position_length, start, end, kind]));
            });
            let got = serde_json::json!({"end": end, "tokens": tokens});
            let want = serde_json::json!({"end": case["end"], "tokens": case["tokens"]});
            (got != want)
                .then(|| format!("{text:?} flags {flags} unigrams {unigrams}: Lucene {want}, Needle {got}"))
        });
    }
}
