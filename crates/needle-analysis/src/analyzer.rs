//! Per-field analyzers, as Elasticsearch names them. `standard` (the default)
//! tokenizes and lowercases; `english` is Lucene's `EnglishAnalyzer`: it drops
//! a possessive `'s`, lowercases, removes Lucene's English stop words and
//! stems with Porter's algorithm (`porter.rs`); `snowball` is the same with
//! Snowball's English stemmer ("Porter2") in Porter's place; `keyword` keeps
//! the whole value as one term; `whitespace` cuts at whitespace and does
//! nothing more; a `custom` one is a tokenizer and filters
//! of one's choosing. A field may replace the stop list.

use crate::filters::{lowercase_into, TokenFilter};
use crate::stopwords::ENGLISH_STOP_WORDS;
use crate::tokenizer::Tokenizer;

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
    /// Lucene's `WhitespaceAnalyzer`: the whitespace tokenizer alone, no lowercasing.
    Whitespace,
    /// A tokenizer and filters of one's choosing ([`Analyzer::custom`]); no name gives it.
    Custom,
}

impl AnalyzerKind {
    /// The built-in analyzer `name` names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "standard" => Some(Self::Standard),
            "english" => Some(Self::English),
            "snowball" => Some(Self::Snowball),
            "keyword" => Some(Self::Keyword),
            "whitespace" => Some(Self::Whitespace),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::English => "english",
            Self::Snowball => "snowball",
            Self::Keyword => "keyword",
            Self::Whitespace => "whitespace",
            Self::Custom => "custom",
        }
    }

    /// The stop words this built-in analyzer removes unless told otherwise.
    pub fn default_stop_words(self) -> &'static [&'static str] {
        match self {
            Self::English | Self::Snowball => ENGLISH_STOP_WORDS,
            Self::Standard | Self::Keyword | Self::Whitespace | Self::Custom => &[],
        }
    }
}

/// A tokenizer and the filters its tokens go through, in order.
#[derive(Debug)]
pub struct Analyzer {
    kind: AnalyzerKind,
    tokenizer: Tokenizer,
    filters: Vec<TokenFilter>,
}

impl Analyzer {
    /// Built-in analyzer `kind`; `stop_words` (lowercased) replace its stop list when given.
    pub fn new(kind: AnalyzerKind, stop_words: Option<&[String]>) -> Self {
        let lowered: Option<Vec<String>> = stop_words.map(|w| w.iter().map(|w| w.to_lowercase()).collect());
        Self::built_in(kind, lowered.as_deref())
    }

    /// Built-in analyzer `kind`, as Lucene builds it; `stop_words` (compared
    /// as given with the lowercased terms) replace its stop list when given.
    pub fn built_in(kind: AnalyzerKind, stop_words: Option<&[String]>) -> Self {
        let stop = match stop_words {
            Some(words) => TokenFilter::stop(words, false),
            None => TokenFilter::stop(kind.default_stop_words(), false),
        };
        let has_stop = !matches!(&stop, TokenFilter::Stop { words, .. } if words.is_empty());
        let mut filters = Vec::new();
        let lowercases = !matches!(kind, AnalyzerKind::Keyword | AnalyzerKind::Whitespace);
        if lowercases {
            filters.push(TokenFilter::Lowercase);
        }
        // Lucene drops the possessive before lowercasing; it takes `'S` as `'s`, so after is the same.
        if matches!(kind, AnalyzerKind::English | AnalyzerKind::Snowball) {
            filters.push(TokenFilter::EnglishPossessive);
        }
        if has_stop && kind != AnalyzerKind::Keyword {
            filters.push(stop);
        }
        match kind {
            AnalyzerKind::English => filters.push(TokenFilter::PorterStem),
            AnalyzerKind::Snowball => filters.push(TokenFilter::snowball_english()),
            AnalyzerKind::Standard
            | AnalyzerKind::Keyword
            | AnalyzerKind::Whitespace
            | AnalyzerKind::Custom => {}
        }
        let tokenizer = match kind {
            AnalyzerKind::Keyword => Tokenizer::Keyword,
            AnalyzerKind::Whitespace => Tokenizer::Whitespace,
            _ => Tokenizer::Standard,
        };
        Analyzer { kind, tokenizer, filters }
    }

    /// `tokenizer`, then `filters` in order (Elasticsearch's `custom` analyzer).
    pub fn custom(tokenizer: Tokenizer, filters: Vec<TokenFilter>) -> Self {
        Analyzer { kind: AnalyzerKind::Custom, tokenizer, filters }
    }

    pub fn standard() -> Self {
        Self::new(AnalyzerKind::Standard, None)
    }

    pub fn kind(&self) -> AnalyzerKind {
        self.kind
    }

    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    /// Calls `emit` for every token of `text`, in order. Positions start at
    /// `first_position`; the return value is the position after the last
    /// token, counting removed stop words (so a next value can continue).
    pub fn analyze(&self, text: &str, first_position: u32, mut emit: impl FnMut(&Token)) -> u32 {
        let mut token = Token { term: String::new(), position: first_position, start: 0, end: 0 };
        // Most chains lowercase first: done while copying the word out.
        let (lowered, rest) = match self.filters.split_first() {
            Some((TokenFilter::Lowercase, rest)) => (true, rest),
            _ => (false, &self.filters[..]),
        };
        let mut next_position = first_position;
        self.tokenizer.for_each_token(text, |start, end| {
            let word = &text[start..end];
            if lowered {
                lowercase_into(word, &mut token.term);
            } else {
                token.term.clear();
                token.term.push_str(word);
            }
            token.position = next_position;
            next_position += 1;
            if rest.iter().all(|f| f.apply(&mut token.term)) {
                token.start = start as u32;
                token.end = end as u32;
                emit(&token);
            }
        });
        next_position
    }

    /// `text` as one term, the way Lucene's `Analyzer.normalize` makes a
    /// wildcard or fuzzy query's text: not split into words, stop words
    /// kept, not stemmed; lowercased if the analyzer lowercases.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::new();
        match self.filters.iter().any(|f| matches!(f, TokenFilter::Lowercase)) {
            true => lowercase_into(text, &mut out),
            false => out.push_str(text),
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
