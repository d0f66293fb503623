//! Token filters: lowercasing (Java's per-character mapping, so terms equal
//! Lucene's), stop words, the English possessive and stemming. Each changes
//! a token's term or removes the token (its position stays counted).

use std::collections::HashSet;

use rust_stemmers::{Algorithm, Stemmer};

use crate::porter;

/// One step of an analyzer after its tokenizer, as Lucene's filter of the same name.
pub enum TokenFilter {
    /// `LowerCaseFilter`.
    Lowercase,
    /// `EnglishPossessiveFilter`: a final `'s` (or `'S`) goes, with any of
    /// the three apostrophes Unicode text writes it with.
    EnglishPossessive,
    /// `StopFilter`: removes the words of the set (compared as they are, or
    /// lowercased when `ignore_case`, the set then holding lowercase words).
    Stop { words: HashSet<String>, ignore_case: bool },
    /// `PorterStemFilter` (`porter.rs`).
    PorterStem,
    /// `SnowballFilter` with the English ("Porter2") stemmer.
    SnowballEnglish(Stemmer),
}

impl std::fmt::Debug for TokenFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenFilter::Lowercase => f.write_str("Lowercase"),
            TokenFilter::EnglishPossessive => f.write_str("EnglishPossessive"),
            TokenFilter::Stop { words, ignore_case } => {
                write!(f, "Stop({} words, ignore_case {ignore_case})", words.len())
            }
            TokenFilter::PorterStem => f.write_str("PorterStem"),
            TokenFilter::SnowballEnglish(_) => f.write_str("SnowballEnglish"),
        }
    }
}

impl TokenFilter {
    /// A stop filter of `words` (see [`TokenFilter::Stop`]).
    pub fn stop<S: AsRef<str>>(words: &[S], ignore_case: bool) -> Self {
        let word = |w: &S| if ignore_case { w.as_ref().to_lowercase() } else { w.as_ref().to_string() };
        TokenFilter::Stop { words: words.iter().map(word).collect(), ignore_case }
    }

    pub fn snowball_english() -> Self {
        TokenFilter::SnowballEnglish(Stemmer::create(Algorithm::English))
    }

    /// Applies the filter to `term`; `false`: the token is removed.
    pub fn apply(&self, term: &mut String) -> bool {
        match self {
            TokenFilter::Lowercase => lowercase_in_place(term),
            TokenFilter::EnglishPossessive => strip_possessive(term),
            TokenFilter::Stop { words, ignore_case: false } => return !words.contains(term.as_str()),
            TokenFilter::Stop { words, ignore_case: true } => {
                let mut lower = String::new();
                lowercase_into(term, &mut lower);
                return !words.contains(&lower);
            }
            TokenFilter::PorterStem => *term = porter::stem(term),
            TokenFilter::SnowballEnglish(stemmer) => *term = stemmer.stem(term).into_owned(),
        }
        true
    }
}

/// [`lowercase_into`] of `term` itself.
fn lowercase_in_place(term: &mut String) {
    if term.is_ascii() {
        term.make_ascii_lowercase();
    } else {
        let word = std::mem::take(term);
        lowercase_into(&word, term);
    }
}

/// Lowercases `word` into `out` one character at a time, as Java's
/// `Character.toLowerCase` does: no context-dependent rules (final sigma) and
/// a single character out for every character in.
pub fn lowercase_into(word: &str, out: &mut String) {
    out.clear();
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
            continue;
        }
        let mut lower = c.to_lowercase();
        match (lower.next(), lower.next()) {
            (Some(l), None) => out.push(l),
            // Only U+0130 (capital I with dot) lowers to two characters; Java maps it to 'i'.
            _ => out.push(if c == '\u{130}' { 'i' } else { c }),
        }
    }
}

/// See [`TokenFilter::EnglishPossessive`].
fn strip_possessive(term: &mut String) {
    let Some(rest) = term.strip_suffix(['s', 'S']) else { return };
    if let Some(stem) = rest.strip_suffix(['\'', '\u{2019}', '\u{FF07}']) {
        let len = stem.len();
        term.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn possessives_go_whatever_the_apostrophe_or_the_case() {
        for (word, want) in [
            ("nation's", "nation"),
            ("NATION'S", "NATION"),
            ("people’s", "people"),
            ("x＇s", "x"),
            ("'s", ""),
            ("boss", "boss"),
            ("its", "its"),
        ] {
            let mut term = word.to_string();
            assert!(TokenFilter::EnglishPossessive.apply(&mut term));
            assert_eq!(term, want, "{word}");
        }
    }

    #[test]
    fn stop_words_match_as_given_unless_case_is_ignored() {
        let mut the = "The".to_string();
        assert!(TokenFilter::stop(&["the"], false).apply(&mut the));
        assert!(!TokenFilter::stop(&["THE"], true).apply(&mut the));
    }

    #[test]
    fn lowercases_like_java() {
        let mut s = String::new();
        lowercase_into("İstanbul ΣΊΣΥΦΟΣ ABC", &mut s);
        assert_eq!(s, "istanbul σίσυφοσ abc");
    }
}
