//! Lucene's `NGramTokenizer` and `EdgeNGramTokenizer`: the text's pieces of
//! `min..=max` characters (code points), each a token at a position of its
//! own, made only of the characters the tokenizer's classes take (any
//! character, when it names none; `custom` names the tokenizer's own
//! characters); the edge one only from the start of a run of such
//! characters. Pieces come by start, then by length.

use std::sync::Arc;

use crate::tables::char_classes::{DIGITS, PUNCTUATION, SYMBOLS};
use crate::tokenizer::{in_ranges, is_java_letter, is_java_whitespace};

/// The classes of characters an n-gram tokenizer's tokens are made of
/// (Elasticsearch's `token_chars`), as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenChars(u8);

impl TokenChars {
    const NAMES: [&'static str; 6] = ["letter", "digit", "whitespace", "punctuation", "symbol", "custom"];
    const CUSTOM: u8 = 1 << 5;

    /// The classes `names` names, or the first name that is none.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<TokenChars, &'a str> {
        let mut bits = 0;
        for name in names {
            let i = Self::NAMES.iter().position(|n| *n == name).ok_or(name)?;
            bits |= 1 << i;
        }
        Ok(TokenChars(bits))
    }

    /// Whether `custom` is named: the tokenizer's own characters (`custom_token_chars`).
    pub fn has_custom(self) -> bool {
        self.0 & Self::CUSTOM != 0
    }

    /// Whether `c` is of a class named.
    pub fn names(self, c: char) -> bool {
        let classes = [
            is_java_letter(c),
            in_ranges(DIGITS, c),
            is_java_whitespace(c),
            in_ranges(PUNCTUATION, c),
            in_ranges(SYMBOLS, c),
        ];
        classes.iter().enumerate().any(|(i, &is)| is && self.0 & (1 << i) != 0)
    }
}

/// The n-gram tokenizers' parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GramTokenizer {
    pub edge: bool,
    pub min: u16,
    pub max: u16,
    pub chars: TokenChars,
    /// The characters `custom` names (`custom_token_chars`).
    pub custom: Arc<[char]>,
}

impl GramTokenizer {
    /// Whether a token may hold `c` (any character, with no class named).
    fn takes(&self, c: char) -> bool {
        self.chars.0 == 0 || self.chars.names(c) || (self.chars.has_custom() && self.custom.contains(&c))
    }

    /// Calls `emit(start, end)` with the byte range of every piece of `text`, in order.
    pub fn for_each_gram(&self, text: &str, mut emit: impl FnMut(usize, usize)) {
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let taken: Vec<bool> = text.chars().map(|c| self.takes(c)).collect();
        let (min, max) = (usize::from(self.min), usize::from(self.max));
        for start in 0..taken.len() {
            if self.edge && start > 0 && taken[start - 1] {
                continue;
            }
            for len in min..=max {
                let end = start + len;
                if end > taken.len()
                    || !taken[end - 1]
                    || (len == min && !taken[start..end].iter().all(|&t| t))
                {
                    break;
                }
                emit(bounds[start], bounds[end]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams<'a>(t: &GramTokenizer, text: &'a str) -> Vec<&'a str> {
        let mut out = Vec::new();
        t.for_each_gram(text, |s, e| out.push(&text[s..e]));
        out
    }

    #[test]
    fn pieces_keep_to_runs_of_the_classes_named() {
        let words = TokenChars::parse(["letter", "digit"]).unwrap();
        let none: Arc<[char]> = Arc::from([]);
        let edge = GramTokenizer { edge: true, min: 2, max: 3, chars: words, custom: none.clone() };
        assert_eq!(grams(&edge, "Quick-fox 2b ü"), ["Qu", "Qui", "fo", "fox", "2b"]);
        let all =
            GramTokenizer { edge: false, min: 1, max: 2, chars: TokenChars::default(), custom: none.clone() };
        assert_eq!(grams(&all, "a b"), ["a", "a ", " ", " b", "b"]);
        let inner = GramTokenizer { edge: false, min: 2, max: 2, chars: words, custom: none };
        assert_eq!(grams(&inner, "abc de😀f"), ["ab", "bc", "de"]);
        assert_eq!(TokenChars::parse(["letter", "nope"]), Err("nope"));
        let with_plus = TokenChars::parse(["letter", "custom"]).unwrap();
        let plus = GramTokenizer { edge: false, min: 2, max: 2, chars: with_plus, custom: Arc::from(['+']) };
        assert_eq!(grams(&plus, "c++ x-y"), ["c+", "++"]);
    }
}
