//! Per-field analyzers, as Elasticsearch names them. `standard` (the default)
//! tokenizes and lowercases; `english` is Lucene's `EnglishAnalyzer`: it drops
//! a possessive `'s`, lowercases, removes Lucene's English stop words and
//! stems with Porter's algorithm (`porter.rs`); `snowball` is the same with
//! Snowball's English stemmer ("Porter2") in Porter's place; `keyword` keeps
//! the whole value as one term. A field may replace the stop list.

use std::collections::HashSet;

use rust_stemmers::{Algorithm, Stemmer};

use crate::filters::lowercase_into;
use crate::porter;
use crate::stopwords::ENGLISH_STOP_WORDS;
use crate::tokenizer::for_each_word;

/// One analyzed token. `start..end` are UTF-8 byte offsets into the analyzed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub term: String,
    pub position: u32,
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalyzerKind {
    Standard,
    English,
    Snowball,
    Keyword,
}

impl AnalyzerKind {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "standard" => Some(Self::Standard),
            "english" => Some(Self::English),
            "snowball" => Some(Self::Snowball),
            "keyword" => Some(Self::Keyword),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::English => "english",
            Self::Snowball => "snowball",
            Self::Keyword => "keyword",
        }
    }

    /// Whether this kind stems, and so drops possessives and stop words by default.
    fn is_english(self) -> bool {
        matches!(self, Self::English | Self::Snowball)
    }
}

/// A stemming analyzer's stemmer.
enum Stemming {
    Porter,
    Snowball(Stemmer),
}

impl Stemming {
    fn stem(&self, term: &str) -> String {
        match self {
            Stemming::Porter => porter::stem(term),
            Stemming::Snowball(stemmer) => stemmer.stem(term).into_owned(),
        }
    }
}

pub struct Analyzer {
    kind: AnalyzerKind,
    stop: HashSet<String>,
    stemming: Option<Stemming>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer").field("kind", &self.kind).field("stop", &self.stop.len()).finish()
    }
}

impl Analyzer {
    /// `stop_words` replaces the kind's default stop list when given.
    pub fn new(kind: AnalyzerKind, stop_words: Option<&[String]>) -> Self {
        let default_stop: &[&str] = if kind.is_english() { ENGLISH_STOP_WORDS } else { &[] };
        let stop = match stop_words {
            Some(words) => words.iter().map(|w| w.to_lowercase()).collect(),
            None => default_stop.iter().map(|w| (*w).to_string()).collect(),
        };
        let stemming = match kind {
            AnalyzerKind::English => Some(Stemming::Porter),
            AnalyzerKind::Snowball => Some(Stemming::Snowball(Stemmer::create(Algorithm::English))),
            AnalyzerKind::Standard | AnalyzerKind::Keyword => None,
        };
        Analyzer { kind, stop, stemming }
    }

    pub fn standard() -> Self {
        Self::new(AnalyzerKind::Standard, None)
    }

    pub fn kind(&self) -> AnalyzerKind {
        self.kind
    }

    /// Calls `emit` for every token of `text`, in order. Positions start at
    /// `first_position`; the return value is the position after the last
    /// token, counting removed stop words (so a next value can continue).
    pub fn analyze(&self, text: &str, first_position: u32, mut emit: impl FnMut(&Token)) -> u32 {
        let mut token = Token { term: String::new(), position: first_position, start: 0, end: 0 };
        if self.kind == AnalyzerKind::Keyword {
            token.term.push_str(text);
            token.end = text.len() as u32;
            emit(&token);
            return first_position + 1;
        }
        let mut next_position = first_position;
        for_each_word(text, |start, end| {
            lowercase_into(&text[start..end], &mut token.term);
            token.position = next_position;
            next_position += 1;
            if self.kind.is_english() {
                strip_possessive(&mut token.term);
            }
            if self.stop.contains(token.term.as_str()) {
                return;
            }
            if let Some(stemming) = &self.stemming {
                token.term = stemming.stem(&token.term);
            }
            token.start = start as u32;
            token.end = end as u32;
            emit(&token);
        });
        next_position
    }

    /// `text` as one term, the way Lucene's `Analyzer.normalize` makes a
    /// wildcard or fuzzy query's text: lowercased (unless this is the
    /// keyword analyzer), not split into words, stop words kept, not stemmed.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::new();
        match self.kind {
            AnalyzerKind::Keyword => out.push_str(text),
            AnalyzerKind::Standard | AnalyzerKind::English | AnalyzerKind::Snowball => {
                lowercase_into(text, &mut out)
            }
        }
        out
    }

    /// The terms of `text`, in order, without positions: what a query string becomes.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.analyze(text, 0, |t| out.push(t.term.clone()));
        out
    }

    /// Tokens with their positions and offsets (for tests and tools).
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        self.analyze(text, 0, |t| out.push(t.clone()));
        out
    }
}

/// Lucene's `EnglishPossessiveFilter`: a final `'s` goes, with any of the
/// three apostrophes Unicode text writes it with (the term is lowercase).
fn strip_possessive(term: &mut String) {
    for apostrophe in ["'s", "\u{2019}s", "\u{FF07}s"] {
        if term.ends_with(apostrophe) {
            term.truncate(term.len() - apostrophe.len());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_keeps_stop_words_and_offsets() {
        let tokens = Analyzer::standard().tokens("The  Quick fox");
        let summary: Vec<_> = tokens.iter().map(|t| (t.term.as_str(), t.position, t.start, t.end)).collect();
        assert_eq!(summary, [("the", 0, 0, 3), ("quick", 1, 5, 10), ("fox", 2, 11, 14)]);
    }

    #[test]
    fn english_removes_stop_words_keeping_position_holes_and_stems() {
        let tokens = Analyzer::new(AnalyzerKind::English, None).tokens("the running dogs");
        let summary: Vec<_> = tokens.iter().map(|t| (t.term.as_str(), t.position)).collect();
        assert_eq!(summary, [("run", 1), ("dog", 2)]);
    }

    /// Every word occurring twice or more in the bundled corpus, and a few
    /// possessives, is analyzed as a real OpenSearch node's `english`
    /// analyzer analyzes it (tests/golden/opensearch/english_stems.tsv,
    /// recorded by the script beside it).
    #[test]
    fn english_analyzes_every_corpus_word_as_opensearch_english_analyzer() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/golden/opensearch/english_stems.tsv");
        let text = std::fs::read_to_string(file).unwrap();
        let english = Analyzer::new(AnalyzerKind::English, None);
        let mut differ = Vec::new();
        for line in text.lines() {
            let (word, want) = line.split_once('\t').unwrap();
            let got = english.terms(word);
            if got != [want] {
                differ.push(format!("{word}: {got:?}, OpenSearch {want}"));
            }
        }
        assert!(text.lines().count() > 16_000, "the recorded words are missing");
        assert!(differ.is_empty(), "{} words differ: {:?}", differ.len(), &differ[..differ.len().min(20)]);
    }

    #[test]
    fn a_possessive_goes_before_the_stop_list_is_consulted() {
        for kind in [AnalyzerKind::English, AnalyzerKind::Snowball] {
            let terms = Analyzer::new(kind, None).terms("it's the nation’s people＇s");
            assert_eq!(terms, ["nation", "peopl"], "{kind:?}");
        }
        assert_eq!(Analyzer::standard().terms("nation's"), ["nation's"]);
    }

    #[test]
    fn snowball_stems_with_porter2_where_english_stems_with_porter() {
        let stems = |kind| Analyzer::new(kind, None).terms("generously");
        assert_eq!(stems(AnalyzerKind::English), ["gener"]);
        assert_eq!(stems(AnalyzerKind::Snowball), ["generous"]);
    }

    #[test]
    fn custom_stop_list_replaces_default() {
        let stop = vec!["Quick".to_string()];
        let terms = Analyzer::new(AnalyzerKind::Standard, Some(&stop)).terms("the quick fox");
        assert_eq!(terms, ["the", "fox"]);
    }

    #[test]
    fn keyword_is_one_term() {
        let terms = Analyzer::new(AnalyzerKind::Keyword, None).terms("New York");
        assert_eq!(terms, ["New York"]);
    }
}
