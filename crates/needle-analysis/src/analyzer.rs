//! Per-field analyzers, as Elasticsearch names them. `standard` (the default)
//! tokenizes and lowercases; `english` is Lucene's `EnglishAnalyzer`: it drops
//! a possessive `'s`, lowercases, removes Lucene's English stop words and
//! stems with Porter's algorithm (`porter.rs`); `snowball` is the same with
//! Snowball's English stemmer ("Porter2") in Porter's place; `keyword` keeps
//! the whole value as one term; `whitespace` cuts at whitespace and does
//! nothing more; `simple` keeps runs of letters, lowercased, and `stop` drops
//! English stop words from those; a `custom` one is a tokenizer and filters
//! of one's choosing. A field may replace the stop list.

use std::collections::HashSet;

use crate::char_filters::{CharFilter, Filtered};
use crate::filters::{lowercase_into, Snowball, TokenFilter};
use crate::light_stemmers::LightStemmer;
use crate::stopwords::ENGLISH_STOP_WORDS;
use crate::tables::stop_words;
use crate::tokenizer::Tokenizer;
use crate::word_delimiter::{Part, PartOffsets, PlainState, Split, WordDelimiter};

/// One analyzed token. `start..end` are UTF-8 byte offsets into the analyzed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub term: String,
    pub position: u32,
    pub start: u32,
    pub end: u32,
    /// Made by a synonym rule (Elasticsearch's token type `SYNONYM`).
    pub synonym: bool,
    /// Marked as a keyword (Lucene's KeywordAttribute): stemmers leave it be.
    pub keyword: bool,
    /// The positions it spans (Lucene's PositionLengthAttribute): more than
    /// one for a part `word_delimiter_graph` joined or kept whole, or a shingle.
    pub position_length: u32,
    /// The type a filter gave it (`shingle`, `<DOUBLE>`), where the word it
    /// was cut from no longer tells it (Lucene's TypeAttribute set by a filter).
    pub token_type: Option<&'static str>,
}

impl Default for Token {
    fn default() -> Self {
        Token {
            term: String::new(),
            position: 0,
            start: 0,
            end: 0,
            synonym: false,
            keyword: false,
            position_length: 1,
            token_type: None,
        }
    }
}

/// Analyzed query text.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryTerms {
    /// Each term with its position.
    Positioned(Vec<(u32, String)>),
    /// Tokens of which some span several positions.
    Graph(Vec<Token>),
}

/// No terms (what text a lenient query cannot analyze for a field makes).
impl Default for QueryTerms {
    fn default() -> Self {
        QueryTerms::Positioned(Vec::new())
    }
}

impl QueryTerms {
    /// The terms with their positions; an error naming the first term that
    /// spans several positions, for a query that does not take a graph.
    pub fn positioned(self) -> Result<Vec<(u32, String)>, String> {
        match self {
            QueryTerms::Positioned(terms) => Ok(terms),
            QueryTerms::Graph(tokens) => {
                let term = tokens.iter().find(|t| t.position_length > 1).map_or("", |t| &t.term);
                Err(format!(
                    "the term [{term}] spans several positions (a word_delimiter_graph part joined or kept whole, \
                     a synonym of several words); \
                     Needle takes such a graph of terms in match, multi_match, query_string and \
                     simple_query_string queries and in phrases with a slop, not yet in this one"
                ))
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalyzerKind {
    Standard,
    English,
    Snowball,
    Keyword,
    /// Lucene's `WhitespaceAnalyzer`: the whitespace tokenizer alone, no lowercasing.
    Whitespace,
    /// Lucene's `SimpleAnalyzer`: runs of letters, lowercased.
    Simple,
    /// Lucene's `StopAnalyzer`: `Simple`'s terms less the English stop words.
    Stop,
    /// Lucene's language analyzers that stem with Snowball (`DanishAnalyzer`
    /// and the rest): the standard tokenizer, lowercase, the language's stop
    /// words, its Snowball stemmer.
    Language(Language),
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
            "simple" => Some(Self::Simple),
            "stop" => Some(Self::Stop),
            other => Language::ALL.iter().find(|l| l.name() == other).map(|l| Self::Language(*l)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::English => "english",
            Self::Snowball => "snowball",
            Self::Keyword => "keyword",
            Self::Whitespace => "whitespace",
            Self::Simple => "simple",
            Self::Stop => "stop",
            Self::Language(l) => l.name(),
            Self::Custom => "custom",
        }
    }

    /// The stop words this built-in analyzer removes unless told otherwise.
    pub fn default_stop_words(self) -> &'static [&'static str] {
        match self {
            Self::English | Self::Snowball | Self::Stop => ENGLISH_STOP_WORDS,
            Self::Language(l) => l.stop_words(),
            Self::Standard | Self::Keyword | Self::Whitespace | Self::Simple | Self::Custom => &[],
        }
    }
}

/// The languages of [`AnalyzerKind::Language`], by their analyzers' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Danish,
    Finnish,
    Hungarian,
    Norwegian,
    Russian,
    French,
    German,
    Spanish,
    Italian,
    Portuguese,
    Dutch,
    Turkish,
    Swedish,
    Romanian,
    /// Lucene's CJKAnalyzer: widths folded, lowercased, CJK runs as pairs of characters.
    Cjk,
    /// Lucene's ArabicAnalyzer: lowercased, digits to ASCII, its stop
    /// words, normalized, Larkey's light stemmer.
    Arabic,
}

impl Language {
    pub const ALL: [Language; 16] = [
        Language::Danish,
        Language::Finnish,
        Language::Hungarian,
        Language::Norwegian,
        Language::Russian,
        Language::French,
        Language::German,
        Language::Spanish,
        Language::Italian,
        Language::Portuguese,
        Language::Dutch,
        Language::Turkish,
        Language::Swedish,
        Language::Romanian,
        Language::Cjk,
        Language::Arabic,
    ];

    /// The analyzer's name (and its stop list's, between underscores: `_danish_`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Danish => "danish",
            Language::Finnish => "finnish",
            Language::Hungarian => "hungarian",
            Language::Norwegian => "norwegian",
            Language::Russian => "russian",
            Language::French => "french",
            Language::German => "german",
            Language::Spanish => "spanish",
            Language::Italian => "italian",
            Language::Portuguese => "portuguese",
            Language::Dutch => "dutch",
            Language::Turkish => "turkish",
            Language::Swedish => "swedish",
            Language::Romanian => "romanian",
            Language::Cjk => "cjk",
            Language::Arabic => "arabic",
        }
    }

    /// The language's default stop words (Lucene's analyzer's).
    pub fn stop_words(self) -> &'static [&'static str] {
        match self {
            Language::Danish => stop_words::DANISH,
            Language::Finnish => stop_words::FINNISH,
            Language::Hungarian => stop_words::HUNGARIAN,
            Language::Norwegian => stop_words::NORWEGIAN,
            Language::Russian => stop_words::RUSSIAN,
            Language::French => stop_words::FRENCH,
            Language::German => stop_words::GERMAN,
            Language::Spanish => stop_words::SPANISH,
            Language::Italian => stop_words::ITALIAN,
            Language::Portuguese => stop_words::PORTUGUESE,
            Language::Dutch => stop_words::DUTCH,
            Language::Turkish => stop_words::TURKISH,
            Language::Swedish => stop_words::SWEDISH,
            Language::Romanian => stop_words::ROMANIAN,
            Language::Cjk => stop_words::CJK,
            Language::Arabic => stop_words::ARABIC,
        }
    }

    /// The articles its analyzer's elision filter takes off the front of a
    /// word (`l'`, `dell'`), compared ignoring case; none for most.
    pub fn articles(self) -> &'static [&'static str] {
        match self {
            Language::French => stop_words::FRENCH_ARTICLES,
            Language::Italian => stop_words::ITALIAN_ARTICLES,
            _ => &[],
        }
    }

    /// What its analyzer does before the stop words, as Lucene's: lowercase
    /// (Turkish's own, after taking off what follows an apostrophe), French
    /// and Italian articles taken off first (compared ignoring case).
    fn before_stop(self) -> Vec<TokenFilter> {
        match self {
            Language::Turkish => return vec![TokenFilter::Apostrophe, TokenFilter::TurkishLowercase],
            // Its stop words are matched before normalization, as Lucene's.
            Language::Arabic => return vec![TokenFilter::Lowercase, TokenFilter::DecimalDigit],
            Language::Cjk => {
                return vec![
                    TokenFilter::CjkWidth,
                    TokenFilter::Lowercase,
                    TokenFilter::CjkBigram(Box::default()),
                ]
            }
            _ => {}
        }
        let mut filters = Vec::new();
        if !self.articles().is_empty() {
            let articles = self.articles().iter().map(|a| (*a).to_string()).collect();
            filters.push(TokenFilter::Elision { articles, ignore_case: true });
        }
        filters.push(TokenFilter::Lowercase);
        filters
    }

    /// What its analyzer does after the stop words, as Lucene's: a Snowball
    /// stemmer (Dutch's after a few stems of its own), or German or Arabic
    /// normalization and a light stemmer.
    fn stemming(self) -> Vec<TokenFilter> {
        let snowball = |name| vec![TokenFilter::Snowball(Snowball::named(name).expect("offered"))];
        match self {
            Language::Danish => snowball("Danish"),
            Language::Finnish => snowball("Finnish"),
            Language::Hungarian => snowball("Hungarian"),
            Language::Norwegian => snowball("Norwegian"),
            Language::Russian => snowball("Russian"),
            Language::Turkish => snowball("Turkish"),
            Language::Swedish => snowball("Swedish"),
            Language::Romanian => snowball("Romanian"),
            Language::French => vec![TokenFilter::LightStem(LightStemmer::French)],
            Language::German => {
                vec![TokenFilter::GermanNormalization, TokenFilter::LightStem(LightStemmer::German)]
            }
            Language::Spanish => vec![TokenFilter::LightStem(LightStemmer::Spanish)],
            Language::Italian => vec![TokenFilter::LightStem(LightStemmer::Italian)],
            Language::Portuguese => vec![TokenFilter::LightStem(LightStemmer::Portuguese)],
            Language::Dutch => {
                let stems =
                    stop_words::DUTCH_STEM_OVERRIDES.iter().map(|(w, s)| (w.to_string(), s.to_string()));
                let mut filters = vec![TokenFilter::StemmerOverride(std::sync::Arc::new(stems.collect()))];
                filters.extend(snowball("Dutch"));
                filters
            }
            // Its pairs of characters stand for stems.
            Language::Cjk => Vec::new(),
            Language::Arabic => {
                vec![TokenFilter::ArabicNormalization, TokenFilter::LightStem(LightStemmer::Arabic)]
            }
        }
    }
}

/// A tokenizer and the filters its tokens go through, in order.
#[derive(Debug)]
pub struct Analyzer {
    kind: AnalyzerKind,
    /// What the text goes through before the tokenizer (none for the built-in analyzers).
    char_filters: Vec<CharFilter>,
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
        if let AnalyzerKind::Language(l) = kind {
            filters.extend(l.before_stop());
        }
        // The simple and stop analyzers' tokenizer lowercases.
        let lowercases =
            matches!(kind, AnalyzerKind::Standard | AnalyzerKind::English | AnalyzerKind::Snowball);
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
            AnalyzerKind::Language(l) => filters.extend(l.stemming()),
            AnalyzerKind::Standard
            | AnalyzerKind::Keyword
            | AnalyzerKind::Whitespace
            | AnalyzerKind::Simple
            | AnalyzerKind::Stop
            | AnalyzerKind::Custom => {}
        }
        let tokenizer = match kind {
            AnalyzerKind::Keyword => Tokenizer::Keyword,
            AnalyzerKind::Whitespace => Tokenizer::Whitespace,
            AnalyzerKind::Simple | AnalyzerKind::Stop => Tokenizer::Lowercase,
            _ => Tokenizer::Standard,
        };
        Analyzer { kind, char_filters: Vec::new(), tokenizer, filters }
    }

    /// Elasticsearch's `snowball` analyzer in `language` (as Lucene names
    /// Snowball's stemmers: `Dutch`): the standard tokenizer, lowercase (the
    /// Turkish way for Turkish; the possessive dropped for English), its stop
    /// words (`stop_words`, else those of Lucene's analyzer of the language
    /// for English, Dutch and French, none for the others), then the
    /// language's stemmer. `None` when Needle
    /// has no Snowball stemmer of that name.
    pub fn snowball(language: &str, stop_words: Option<&[String]>) -> Option<Self> {
        let stemmer = Snowball::named(language)?;
        if language == "English" {
            return Some(Self::built_in(AnalyzerKind::Snowball, stop_words));
        }
        let lowercase =
            if language == "Turkish" { TokenFilter::TurkishLowercase } else { TokenFilter::Lowercase };
        let mut filters = vec![lowercase];
        let stop = match (stop_words, language) {
            (Some(words), _) => TokenFilter::stop(words, false),
            (None, "Dutch") => TokenFilter::stop(Language::Dutch.stop_words(), false),
            (None, "French") => TokenFilter::stop(Language::French.stop_words(), false),
            (None, "German") => TokenFilter::stop(Language::German.stop_words(), false),
            (None, _) => TokenFilter::stop::<&str>(&[], false),
        };
        if !matches!(&stop, TokenFilter::Stop { words, .. } if words.is_empty()) {
            filters.push(stop);
        }
        filters.push(TokenFilter::Snowball(stemmer));
        Some(Analyzer {
            kind: AnalyzerKind::Snowball,
            char_filters: Vec::new(),
            tokenizer: Tokenizer::Standard,
            filters,
        })
    }

    /// The analyzer with `char_filters` before its tokenizer.
    pub fn with_char_filters(mut self, char_filters: Vec<CharFilter>) -> Self {
        self.char_filters = char_filters;
        self
    }

    /// `tokenizer`, then `filters` in order (Elasticsearch's `custom` analyzer).
    pub fn custom(tokenizer: Tokenizer, filters: Vec<TokenFilter>) -> Self {
        Analyzer { kind: AnalyzerKind::Custom, char_filters: Vec::new(), tokenizer, filters }
    }

    pub fn standard() -> Self {
        Self::new(AnalyzerKind::Standard, None)
    }

    pub fn kind(&self) -> AnalyzerKind {
        self.kind
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Calls `emit` for every token of `text`, in order. Positions start at
    /// `first_position`; the return value is the position after the last
    /// token, counting removed stop words (so a next value can continue).
    pub fn analyze(&self, text: &str, first_position: u32, mut emit: impl FnMut(&Token)) -> u32 {
        self.analyze_words(text, first_position, |t, _| emit(t))
    }

    /// As [`Self::analyze`], each token given with the word its tokenizer
    /// cut (from the text as the char filters left it): what its type is read from.
    pub fn analyze_words(&self, text: &str, first_position: u32, emit: impl FnMut(&Token, &str)) -> u32 {
        self.analyze_through(self.filters.len(), text, first_position, emit)
    }

    /// As [`Self::analyze_words`], through the tokenizer and the first
    /// `filters` filters only: the chain stage by stage (`_analyze`'s `explain`).
    pub fn analyze_through(
        &self,
        filters: usize,
        text: &str,
        first_position: u32,
        mut emit: impl FnMut(&Token, &str),
    ) -> u32 {
        let filters = &self.filters[..filters.min(self.filters.len())];
        if self.char_filters.is_empty() {
            return self.analyze_filtered(filters, text, first_position, |at| at, &mut emit);
        }
        let filtered = Filtered::new(&self.char_filters, text);
        self.analyze_filtered(
            filters,
            &filtered.text,
            first_position,
            |at| filtered.original_offset(at),
            &mut emit,
        )
    }

    /// How many char filters and token filters the analyzer has.
    pub fn stages(&self) -> (usize, usize) {
        (self.char_filters.len(), self.filters.len())
    }

    /// `text` as the first `n` char filters leave it.
    pub fn char_filtered(&self, n: usize, text: &str) -> String {
        Filtered::new(&self.char_filters[..n.min(self.char_filters.len())], text).text
    }

    /// Whether tokens through the first `filters` filters carry a keyword
    /// mark (Lucene's KeywordAttribute, which the stemmers, the keyword
    /// marking filters and the word delimiter add to the stream).
    pub fn marks_keywords(&self, filters: usize) -> bool {
        self.filters[..filters.min(self.filters.len())].iter().any(|f| {
            matches!(
                f,
                TokenFilter::PorterStem
                    | TokenFilter::Snowball(_)
                    | TokenFilter::MinimalEnglish
                    | TokenFilter::KStem
                    | TokenFilter::LightStem(_)
                    | TokenFilter::WordDelimiter(_)
                    | TokenFilter::KeywordMarker { .. }
                    | TokenFilter::StemmerOverride(_)
            )
        })
    }

    /// The tokens of `text` (the char filters' output), their offsets
    /// moved back into the original text by `original`. A filter that sees
    /// the text's tokens whole (shingles, CJK bigrams, synonyms) gets those
    /// of the filters before it gathered, and each token it makes goes
    /// through the filters after.
    fn analyze_filtered(
        &self,
        filters: &[TokenFilter],
        text: &str,
        first_position: u32,
        original: impl Fn(usize) -> usize,
        emit: &mut impl FnMut(&Token, &str),
    ) -> u32 {
        let Some(at) = filters.iter().position(TokenFilter::sees_whole_text) else {
            return self.tokens_through(filters, text, first_position, original, emit);
        };
        let mut gathered: Vec<(Token, String)> = Vec::new();
        let final_offset = original(text.len()) as u32;
        let end = self.tokens_through(&filters[..at], text, first_position, original, &mut |t, word| {
            gathered.push((t.clone(), word.to_string()))
        });
        let text = WholeText { first_position, final_offset };
        self.whole_text_stages(&filters[at..], &gathered, &text, end, emit)
    }

    /// `filters`, the first of which sees the text's tokens whole and takes
    /// them `gathered` (`end`: the position after them): each token it makes
    /// goes through the filters after it, up to the next such filter, which
    /// takes them gathered in turn. The position after the text.
    fn whole_text_stages(
        &self,
        filters: &[TokenFilter],
        gathered: &[(Token, String)],
        text: &WholeText,
        end: u32,
        emit: &mut dyn FnMut(&Token, &str),
    ) -> u32 {
        let next =
            filters[1..].iter().position(TokenFilter::sees_whole_text).map_or(filters.len(), |p| p + 1);
        let after = &filters[1..next];
        let last_stage = next == filters.len();
        let mut across = Across::for_chain(after, text.first_position);
        let mut regathered: Vec<(Token, String)> = Vec::new();
        let mut token = Token::default();
        let mut then = |t: &Token, word: &str| {
            token.clone_from(t);
            through(after, &mut across, &mut token, &mut |t| match last_stage {
                true => emit(t, word),
                false => regathered.push((t.clone(), word.to_string())),
            });
        };
        let end = self.whole_text_filter(&filters[0], gathered, text, end, &mut then);
        let end = across.iter().fold(end, |end, state| state.end(end));
        match last_stage {
            true => end,
            false => self.whole_text_stages(&filters[next..], &regathered, text, end, emit),
        }
    }

    /// One filter that sees the text's tokens whole over `gathered`.
    fn whole_text_filter(
        &self,
        filter: &TokenFilter,
        gathered: &[(Token, String)],
        text: &WholeText,
        end: u32,
        then: &mut impl FnMut(&Token, &str),
    ) -> u32 {
        let first_position = text.first_position;
        match filter {
            TokenFilter::Shingle(shingle) => {
                shingle.apply(gathered, first_position, end, text.final_offset, then)
            }
            TokenFilter::CjkBigram(bigram) => {
                let typed: Vec<(Token, String, &'static str)> = gathered
                    .iter()
                    .map(|(t, word)| {
                        let kind = t.token_type.unwrap_or_else(|| self.tokenizer.token_type(word));
                        (t.clone(), word.clone(), kind)
                    })
                    .collect();
                bigram.apply(&typed, first_position, end, then)
            }
            TokenFilter::Synonyms(map) => map.apply(gathered, first_position, end, then),
            other => unreachable!("{other:?} sees tokens one at a time"),
        }
    }

    /// The tokens of `text` through `filters` (none of them one that sees the text whole).
    fn tokens_through(
        &self,
        filters: &[TokenFilter],
        text: &str,
        first_position: u32,
        original: impl Fn(usize) -> usize,
        emit: &mut impl FnMut(&Token, &str),
    ) -> u32 {
        let mut token = Token { position: first_position, ..Token::default() };
        // Most chains lowercase first: done while copying the word out.
        let (lowered, rest) = match filters.split_first() {
            Some((TokenFilter::Lowercase, rest)) => (true, rest),
            _ => (self.tokenizer.lowercases(), filters),
        };
        let expands = rest.iter().any(TokenFilter::expands);
        let mut across = Across::for_chain(rest, first_position);
        let mut next_position = first_position;
        self.tokenizer.for_each_token(text, |start, end| {
            let word = &text[start..end];
            if lowered {
                lowercase_into(word, &mut token.term);
            } else {
                token.term.clear();
                token.term.push_str(word);
            }
            if let Tokenizer::PathHierarchy(p) = &self.tokenizer {
                p.replace(&mut token.term);
            }
            token.position = next_position;
            next_position += 1;
            token.start = original(start) as u32;
            token.end = original(end) as u32;
            token.synonym = false;
            token.keyword = false;
            token.position_length = 1;
            if expands || !across.is_empty() {
                through(rest, &mut across, &mut token, &mut |t| emit(t, word));
            } else if rest.iter().all(|f| f.apply_token(&mut token)) {
                emit(&token, word);
            }
        });
        across.iter().fold(next_position, |end, state| state.end(end))
    }

    /// `text` as one term, the way Lucene's `Analyzer.normalize` makes a
    /// wildcard or fuzzy query's text: not split into words, stop words
    /// kept, not stemmed; lowercased if the analyzer lowercases, and through
    /// those of its filters Elasticsearch calls normalizing (`TokenFilter::normalizes`).
    pub fn normalize(&self, text: &str) -> String {
        let filtered;
        let text = match self.char_filters.is_empty() {
            true => text,
            false => {
                filtered = Filtered::new(&self.char_filters, text);
                filtered.text.as_str()
            }
        };
        let mut out = String::new();
        match self.tokenizer.lowercases() {
            true => lowercase_into(text, &mut out),
            false => out.push_str(text),
        }
        for f in self.filters.iter().filter(|f| f.normalizes()) {
            f.apply(&mut out);
        }
        out
    }

    /// The terms of `text`, in order, without positions: what a query string becomes.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.analyze(text, 0, |t| out.push(t.term.clone()));
        out
    }

    /// The terms of `text` as a query reads them: with their positions, or
    /// the tokens whole when some span several positions (a graph).
    pub fn query_terms(&self, text: &str) -> QueryTerms {
        let tokens = self.tokens(text);
        // Elasticsearch reads shingles of several sizes and CJK pairs beside characters by position.
        let graph_disabled = self.filters.iter().any(TokenFilter::disables_graph);
        if !graph_disabled && tokens.iter().any(|t| t.position_length > 1) {
            return QueryTerms::Graph(tokens);
        }
        QueryTerms::Positioned(tokens.into_iter().map(|t| (t.position, t.term)).collect())
    }

    /// The terms of `text` with their positions, as a query reads them; an
    /// error naming the first that spans several positions (a part
    /// `word_delimiter_graph` joined or kept whole): a graph of terms, which
    /// only some of Needle's queries take yet.
    pub fn positioned_terms(&self, text: &str) -> Result<Vec<(u32, String)>, String> {
        self.query_terms(text).positioned()
    }

    /// Tokens with their positions and offsets (for tests and tools).
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        self.analyze(text, 0, |t| out.push(t.clone()));
        out
    }
}

/// The position after a text in the count of a filter that saw its tokens
/// whole: after its last output (`last_out`; none: the text's first
/// position), moved on by the removed words after the last token it took in
/// (`last_in`; `end` is the position after the text before the filter), as
/// Lucene's filters pass on the end's increment.
pub(crate) fn position_after(
    first_position: u32,
    last_in: Option<u32>,
    end: u32,
    last_out: Option<u32>,
) -> u32 {
    let last_in = last_in.map_or(i64::from(first_position) - 1, i64::from);
    let trailing = (i64::from(end) - last_in - 1).max(0) as u32;
    last_out.map_or(first_position, |p| p + 1) + trailing
}

/// `token` through `filters`, some of which turn a term into several (each
/// term they make goes through the rest, at the token's position and
/// offsets) and some of which look across tokens (`across` holds the state
/// of each filter then, else nothing).
fn through(filters: &[TokenFilter], across: &mut [Across], token: &mut Token, emit: &mut impl FnMut(&Token)) {
    for (i, f) in filters.iter().enumerate() {
        if f.expands() {
            let mut terms = Vec::new();
            f.expand(&token.term, &mut terms);
            let position = token.position;
            let rest = across.get_mut(i + 1..).unwrap_or_default();
            for term in terms {
                token.term = term;
                token.position = position;
                through(&filters[i + 1..], rest, token, emit);
            }
            token.position = position;
            return;
        }
        if let (TokenFilter::WordDelimiter(wd), Some((state, rest))) = (f, across[i..].split_first_mut()) {
            if !wd.graph {
                state.plain(wd, token, &mut |t| through(&filters[i + 1..], rest, t, emit));
                return;
            }
            match wd.split(&token.term, token.keyword) {
                Split::Whole => state.keep_whole(token),
                Split::Dropped => {
                    state.drop(token);
                    return;
                }
                Split::Parts(parts) => {
                    state.cut(wd, parts, token, &mut |t| through(&filters[i + 1..], rest, t, emit));
                    return;
                }
            }
            continue;
        }
        let kept = match across.get_mut(i) {
            Some(state) if f.looks_across() => state.pass(f, token),
            _ => f.apply_token(token),
        };
        if !kept {
            return;
        }
    }
    emit(token);
}

/// What the filters that see a text's tokens whole know of the text.
struct WholeText {
    first_position: u32,
    /// The end offset of the text, in the original.
    final_offset: u32,
}

/// What a filter that looks across tokens ([`TokenFilter::looks_across`])
/// knows of one text's tokens so far. A token leaves at the position of the
/// last one let through plus its own increment (from the token that came in
/// before it), so a token removed here leaves no hole: Elasticsearch's
/// `unique` and Lucene's token-count limit add no removed increment to the
/// next token, as a stop filter does.
struct Across {
    /// The terms let through (by `unique`; those of the current position alone when `only_on_same_position`).
    seen: HashSet<String>,
    /// Tokens let through.
    kept: usize,
    started: bool,
    /// The position of the last token in, and of the last one let through.
    last_in: u32,
    last_out: u32,
    /// Where the last part `word_delimiter_graph` cut starts (its parts' never start before).
    last_start: u32,
    /// What the older `word_delimiter` carries from term to term, and the
    /// position of the last token it gave out.
    plain: PlainState,
    plain_last: i64,
}

impl Across {
    /// A state for each of `filters` when one looks across tokens; none otherwise (the common case).
    fn for_chain(filters: &[TokenFilter], first_position: u32) -> Vec<Across> {
        match filters.iter().any(TokenFilter::looks_across) {
            true => filters.iter().map(|_| Across::new(first_position)).collect(),
            false => Vec::new(),
        }
    }

    fn new(first_position: u32) -> Self {
        Across {
            seen: HashSet::new(),
            kept: 0,
            started: false,
            last_in: first_position,
            last_out: first_position,
            last_start: 0,
            plain: PlainState::default(),
            plain_last: i64::from(first_position) - 1,
        }
    }

    /// `token`'s position after the positions this filter added before it;
    /// it is the last token in.
    fn moved(&mut self, token: &Token) -> u32 {
        let position = token.position + (self.last_out - self.last_in);
        (self.started, self.last_in) = (true, token.position);
        position
    }

    /// `token` let through whole by `word_delimiter_graph`, at its moved position.
    fn keep_whole(&mut self, token: &mut Token) {
        token.position = self.moved(token);
        self.last_out = token.position;
    }

    /// `token` dropped by `word_delimiter_graph`: a hole, as a stop word leaves.
    fn drop(&mut self, token: &Token) {
        self.last_out = self.moved(token);
    }

    /// `token` cut into `parts` by `wd`, each given to `emit` at its
    /// position (the tokens after move on by the positions added), with its
    /// own offsets in the term's when it is as long as its text, never
    /// starting before the part before.
    fn cut(
        &mut self,
        wd: &WordDelimiter,
        parts: Vec<Part>,
        token: &mut Token,
        emit: &mut impl FnMut(&mut Token),
    ) {
        let position = self.moved(token);
        let (start, end) = (token.start, token.end);
        let adjusting = wd.adjust_offsets && (end - start) as usize == token.term.len();
        let mut last = 0;
        for part in parts {
            token.term = part.term;
            token.position = position + part.start_pos;
            token.position_length = part.end_pos - part.start_pos;
            let (from, to) = match adjusting {
                true => (start + part.start as u32, start + part.end as u32),
                false => (start, end),
            };
            token.start = from.max(self.last_start);
            token.end = to.max(self.last_start);
            self.last_start = token.start;
            last = part.start_pos;
            emit(token);
        }
        self.last_out = position + last;
    }

    /// `token` through the older `word_delimiter` (`wd`): each token it
    /// makes given to `emit` at the position its increment reaches.
    fn plain(&mut self, wd: &WordDelimiter, token: &mut Token, emit: &mut impl FnMut(&mut Token)) {
        let increment = token.position - self.last_in + u32::from(!self.started);
        (self.started, self.last_in) = (true, token.position);
        if wd.ignore_keywords && token.keyword {
            self.plain_last += i64::from(increment);
            token.position = self.plain_last as u32;
            self.last_out = token.position;
            emit(token);
            return;
        }
        let (start, end) = (token.start, token.end);
        let placed = (end - start) as usize == token.term.len();
        let term = std::mem::take(&mut token.term);
        for part in wd.split_plain(&term, increment, placed, &mut self.plain) {
            self.plain_last += i64::from(part.increment);
            token.term = part.term;
            token.position = self.plain_last as u32;
            token.position_length = 1;
            (token.start, token.end) = match part.offsets {
                PartOffsets::Within(from, to) => (start + from as u32, start + to as u32),
                PartOffsets::From(from) if start + from as u32 <= end => (start + from as u32, end),
                PartOffsets::From(_) | PartOffsets::Whole => (start, end),
            };
            self.last_out = token.position;
            emit(token);
        }
        (token.start, token.end) = (start, end);
    }

    /// Whether `filter` lets `token` through; its position, if so, moved to the filter's own count.
    fn pass(&mut self, filter: &TokenFilter, token: &mut Token) -> bool {
        let increment = token.position - self.last_in;
        let new_position = !self.started || increment > 0;
        (self.started, self.last_in) = (true, token.position);
        let kept = match filter {
            TokenFilter::Unique { only_on_same_position } => {
                if *only_on_same_position && new_position {
                    self.seen.clear();
                }
                !self.seen.contains(&token.term) && self.seen.insert(token.term.clone())
            }
            TokenFilter::Limit(max) => self.kept < *max,
            _ => true,
        };
        if kept {
            self.kept += 1;
            self.last_out += increment;
            token.position = self.last_out;
        }
        kept
    }

    /// The position after the text (`end`, as the filter before counts it), in this filter's count.
    fn end(&self, end: u32) -> u32 {
        self.last_out + (end - self.last_in)
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
    fn word_delimiter_parts_take_positions_and_the_tokens_after_move_on() {
        use crate::WordDelimiter;
        let parts = |wd: WordDelimiter, text: &str| {
            let filters = vec![TokenFilter::WordDelimiter(Box::new(wd)), TokenFilter::Lowercase];
            let analyzer = Analyzer::custom(Tokenizer::Whitespace, filters);
            let mut out = Vec::new();
            let end = analyzer.analyze(text, 0, |t| {
                out.push((t.term.clone(), t.position, t.position_length, t.start, t.end))
            });
            (out, end)
        };
        let t = |term: &str, pos, len, start, end| (term.to_string(), pos, len, start, end);
        let (tokens, end) = parts(WordDelimiter::default(), "Wi-Fi -- PowerShot");
        // `--` is all delimiters: dropped, a hole where it was.
        assert_eq!(
            tokens,
            [t("wi", 0, 1, 0, 2), t("fi", 1, 1, 3, 5), t("power", 3, 1, 9, 14), t("shot", 4, 1, 14, 18)]
        );
        assert_eq!(end, 5);
        let joined =
            WordDelimiter { catenate_words: true, preserve_original: true, ..WordDelimiter::default() };
        let (tokens, end) = parts(joined, "Wi-Fi ok");
        assert_eq!(
            tokens,
            [
                t("wi-fi", 0, 2, 0, 5),
                t("wifi", 0, 2, 0, 5),
                t("wi", 0, 1, 0, 2),
                t("fi", 1, 1, 3, 5),
                t("ok", 2, 1, 6, 8)
            ]
        );
        assert_eq!(end, 3);
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
    fn simple_and_stop_keep_runs_of_letters_lowercased() {
        let text = "The U.S.A.'s café-au-lait, 3 Ωmega x2y";
        let simple = Analyzer::new(AnalyzerKind::Simple, None).tokens(text);
        let summary: Vec<_> = simple.iter().map(|t| (t.term.as_str(), t.position, t.start, t.end)).collect();
        assert_eq!(
            &summary[..4],
            [("the", 0, 0, 3), ("u", 1, 4, 5), ("s", 2, 6, 7), ("a", 3, 8, 9)],
            "{summary:?}"
        );
        let terms = |kind| Analyzer::new(kind, None).terms(text);
        assert_eq!(terms(AnalyzerKind::Simple)[4..], ["s", "café", "au", "lait", "ωmega", "x", "y"]);
        assert_eq!(terms(AnalyzerKind::Stop), ["u", "s", "s", "café", "au", "lait", "ωmega", "x", "y"]);
    }

    #[test]
    fn normalizing_applies_lowercase_folding_and_uppercase_in_order() {
        let folded =
            Analyzer::custom(Tokenizer::Whitespace, vec![TokenFilter::AsciiFolding, TokenFilter::Lowercase]);
        assert_eq!(folded.normalize("CAFÉ* Straße"), "cafe* strasse");
        let upper =
            Analyzer::custom(Tokenizer::Lowercase, vec![TokenFilter::Uppercase, TokenFilter::PorterStem]);
        assert_eq!(upper.normalize("Running?"), "RUNNING?");
    }

    #[test]
    fn expanding_filters_put_their_terms_at_the_token_position() {
        let grams = TokenFilter::Grams(crate::Grams { edge: true, min: 2, max: 3, preserve_original: false });
        let a = Analyzer::custom(
            Tokenizer::Standard,
            vec![
                TokenFilter::Lowercase,
                TokenFilter::AsciiFoldingKeepingOriginal,
                grams,
                TokenFilter::stop(&["caf"], false),
            ],
        );
        let tokens = a.tokens("Café au lait");
        let summary: Vec<_> = tokens.iter().map(|t| (t.term.as_str(), t.position, t.start, t.end)).collect();
        assert_eq!(
            summary,
            [("ca", 0, 0, 5), ("ca", 0, 0, 5), ("au", 1, 6, 8), ("la", 2, 9, 13), ("lai", 2, 9, 13)]
        );
    }

    #[test]
    fn unique_leaves_no_hole_where_stop_does_and_limit_counts_tokens() {
        let summary = |a: &Analyzer, text: &str, first: u32| {
            let mut tokens = Vec::new();
            let end = a.analyze(text, first, |t| tokens.push((t.term.clone(), t.position)));
            (tokens, end)
        };
        let unique = || TokenFilter::Unique { only_on_same_position: false };
        let stop = || TokenFilter::stop(&["the"], false);
        let stop_then_unique = Analyzer::custom(Tokenizer::Whitespace, vec![stop(), unique()]);
        let (tokens, end) = summary(&stop_then_unique, "the cat the dog cat bird cat", 10);
        let want = [("cat", 11), ("dog", 13), ("bird", 14)].map(|(t, p)| (t.to_string(), p));
        assert_eq!((tokens, end), (want.to_vec(), 15));
        let unique_then_stop = Analyzer::custom(Tokenizer::Whitespace, vec![unique(), stop()]);
        let (tokens, end) = summary(&unique_then_stop, "the cat the dog cat bird cat", 0);
        let want = [("cat", 1), ("dog", 2), ("bird", 3)].map(|(t, p)| (t.to_string(), p));
        assert_eq!((tokens, end), (want.to_vec(), 4));
        let first_two = Analyzer::custom(Tokenizer::Whitespace, vec![TokenFilter::Limit(2)]);
        let (tokens, end) = summary(&first_two, "a b c d", 0);
        assert_eq!((tokens, end), (vec![("a".to_string(), 0), ("b".to_string(), 1)], 2));
    }

    #[test]
    fn keyword_is_one_term() {
        let terms = Analyzer::new(AnalyzerKind::Keyword, None).terms("New York");
        assert_eq!(terms, ["New York"]);
    }
}
