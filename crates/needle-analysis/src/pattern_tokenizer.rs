//! Lucene's `PatternTokenizer` and Elasticsearch's `char_group` tokenizer
//! (Lucene's `CharTokenizer` over the characters it is not told to split on).
//!
//! - `pattern`: the text between matches of a Java regular expression (its
//!   group -1, the default `\W+`), or each match's group `n`; empty pieces
//!   are left out.
//! - `char_group`: runs of characters outside the classes and characters
//!   named, cut once a run reaches `max_token_length` UTF-16 units.
//! - `path_hierarchy` (Lucene's `PathHierarchyTokenizer`): each path and
//!   the paths above it, `/a`, `/a/b`, `/a/b/c`, their first `skip` parts
//!   left out, the delimiter written as `replacement`; `reverse`d, the
//!   paths below it, `a/b/c`, `b/c`, `c`, the last `skip` parts left out.

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

/// See the module's comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathHierarchy {
    pub delimiter: char,
    pub replacement: char,
    pub skip: usize,
    /// Lucene's `ReversePathHierarchyTokenizer`: each path and the paths
    /// below it (`a/b/c`, `b/c`, `c`), their last `skip` parts left out.
    pub reverse: bool,
}

impl PathHierarchy {
    /// A part starts at the text's first character and at each delimiter
    /// after it; the tokens run from the start of part `skip + 1` to each
    /// later delimiter, and to the end. Reversed, see [`Self::for_each_suffix`].
    pub fn for_each_token(&self, text: &str, mut emit: impl FnMut(usize, usize)) {
        if self.reverse {
            return self.for_each_suffix(text, emit);
        }
        let mut cuts = text.char_indices().skip(1).filter(|&(_, c)| c == self.delimiter).map(|(i, _)| i);
        let start = match self.skip {
            0 if !text.is_empty() => 0,
            0 => return,
            n => match cuts.nth(n - 1) {
                Some(i) => i,
                None => return,
            },
        };
        for end in cuts {
            emit(start, end);
        }
        emit(start, text.len());
    }

    /// Reversed: the text is cut after the `skip`-th delimiter from its end
    /// (one that ends the text not counted); the tokens run to that cut from
    /// the text's start and from after each delimiter before it.
    fn for_each_suffix(&self, text: &str, mut emit: impl FnMut(usize, usize)) {
        let width = self.delimiter.len_utf8();
        let delimiters: Vec<usize> = text.match_indices(self.delimiter).map(|(i, _)| i).collect();
        let end = match self.skip {
            0 => text.len(),
            n => match delimiters.iter().rev().filter(|&&d| d + width < text.len()).nth(n - 1) {
                Some(&d) => d + width,
                None => return,
            },
        };
        if end == 0 {
            return;
        }
        emit(0, end);
        for start in delimiters.iter().map(|d| d + width).filter(|&s| s < end) {
            emit(start, end);
        }
    }

    /// A token's term: its delimiters written as the replacement.
    pub fn replace(&self, term: &mut String) {
        if self.replacement != self.delimiter && term.contains(self.delimiter) {
            *term = term.replace(self.delimiter, &self.replacement.to_string());
        }
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

    /// OpenSearch 3.8's tokens for the same text.
    #[test]
    fn paths_come_with_every_path_above_them() {
        let paths = |p: PathHierarchy, text: &str| {
            let mut out = Vec::new();
            p.for_each_token(text, |s, e| {
                let mut t = text[s..e].to_string();
                p.replace(&mut t);
                out.push((t, s, e));
            });
            out
        };
        let slash = PathHierarchy { delimiter: '/', replacement: '/', skip: 0, reverse: false };
        let all: Vec<String> = paths(slash, "one/two//three/").into_iter().map(|(t, _, _)| t).collect();
        assert_eq!(all, ["one", "one/two", "one/two/", "one/two//three", "one/two//three/"]);
        assert_eq!(paths(slash, "/"), [("/".to_string(), 0, 1)]);
        let dashes = PathHierarchy { delimiter: '-', replacement: '/', skip: 1, reverse: false };
        let skipped = paths(dashes, "a-b-c-d");
        assert_eq!(
            skipped,
            [("/b".to_string(), 1, 3), ("/b/c".to_string(), 1, 5), ("/b/c/d".to_string(), 1, 7)]
        );
        assert!(paths(PathHierarchy { skip: 5, ..dashes }, "a-b").is_empty());
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
