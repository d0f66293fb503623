//! Lucene's `PatternTokenizer` and Elasticsearch's `char_group` tokenizer
//! (Lucene's `CharTokenizer` over the characters it is not told to split on).
//!
//! - `pattern`: the text between matches of a Java regular expression (its
//!   group -1, the default `\W+`), or each match's group `n`; empty pieces
//!   are left out.
//! - `char_group`: runs of characters outside the classes and characters
//!   named, cut once a run reaches `max_token_length` UTF-16 units.

use regex::Regex;

use crate::gram_tokenizer::TokenChars;
use crate::tokenizer::for_each_run;

/// See the module's comment.
#[derive(Debug, Clone)]
pub struct PatternTokenizer {
    pub pattern: Regex,
    /// -1: the pieces between matches; otherwise the group of each match.
    pub group: i32,
}

impl PartialEq for PatternTokenizer {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.as_str() == other.pattern.as_str() && self.group == other.group
    }
}

impl Eq for PatternTokenizer {}

impl PatternTokenizer {
    pub fn for_each_token(&self, text: &str, mut emit: impl FnMut(usize, usize)) {
        if self.group < 0 {
            let mut from = 0;
            for m in self.pattern.find_iter(text) {
                if m.start() > from {
                    emit(from, m.start());
                }
                from = m.end();
            }
            if text.len() > from {
                emit(from, text.len());
            }
            return;
        }
        for caps in self.pattern.captures_iter(text) {
            if let Some(g) = caps.get(self.group as usize).filter(|g| !g.is_empty()) {
                emit(g.start(), g.end());
            }
        }
    }
}

/// See the module's comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharGroupTokenizer {
    /// The classes split on.
    pub classes: TokenChars,
    /// The characters split on besides.
    pub chars: Vec<char>,
    pub max_token_length: usize,
}

impl CharGroupTokenizer {
    pub fn for_each_token(&self, text: &str, emit: impl FnMut(usize, usize)) {
        let splits = |c: char| self.chars.contains(&c) || self.classes.names(c);
        for_each_run(text, |c| !splits(c), self.max_token_length, emit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::char_filters::java_regex;

    fn pieces(t: &PatternTokenizer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        t.for_each_token(text, |s, e| out.push(text[s..e].to_string()));
        out
    }

    /// OpenSearch 3.8's tokens for the same text.
    #[test]
    fn splits_between_matches_or_takes_a_group() {
        let words = PatternTokenizer { pattern: java_regex(r"\W+", "").unwrap(), group: -1 };
        assert_eq!(pieces(&words, "The foo_bar-size, ٣x"), ["The", "foo_bar", "size", "x"]);
        let commas = PatternTokenizer { pattern: java_regex(",", "").unwrap(), group: -1 };
        assert_eq!(pieces(&commas, "a, b,,c ,"), ["a", " b", "c "]);
        let digits = PatternTokenizer { pattern: java_regex(r"\d", "").unwrap(), group: 0 };
        assert_eq!(pieces(&digits, "a1b22c"), ["1", "2", "2"]);
    }

    #[test]
    fn char_groups_split_on_their_classes_and_characters() {
        let t = CharGroupTokenizer {
            classes: TokenChars::parse(["punctuation", "digit"]).unwrap(),
            chars: Vec::new(),
            max_token_length: 3,
        };
        let mut out = Vec::new();
        t.for_each_token("abcdef,gh1ij", |s, e| out.push((s, e)));
        assert_eq!(out, [(0, 3), (3, 6), (7, 9), (10, 12)]);
    }
}
