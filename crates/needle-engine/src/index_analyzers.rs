//! An index's own analyzers, as its settings define them (Elasticsearch's
//! `index.analysis`). A text field names one by its `analyzer`; the one
//! named `default` analyzes every text field that names none.
//!
//! - `analysis.analyzer.NAME`: a built-in analyzer (`type` `standard`,
//!   `english`, `snowball` (its `language` any Snowball stemmer Needle has),
//!   `stop`, or a language's (`danish`, `dutch`,
//!   `finnish`, `hungarian`, `norwegian`, `russian`, `turkish`: Lucene's
//!   analyzers of those languages, Snowball's stemmer after their stop words; `french`,
//!   `german`, `spanish`, `italian`, `portuguese`: its light stemmer instead, French and
//!   Italian articles elided first, German normalized; `cjk`: CJK pairs), with its own
//!   `stopwords`: a list, `_english_`, a language's (`_russian_`) or `_none_`;
//!   `simple`, `whitespace`), or `type: custom`: a
//!   `tokenizer` (`standard`, `whitespace`, `keyword`, `letter`,
//!   `lowercase`, `ngram`, `edge_ngram`, `pattern`, `char_group`,
//!   `path_hierarchy`) and a
//!   `filter` list, applied in order.
//! - `analysis.tokenizer.NAME`: an `ngram`, `edge_ngram`, `pattern`,
//!   `char_group` or `path_hierarchy` tokenizer with its parameters.
//! - `analysis.filter.NAME`: a filter a custom analyzer names, of type
//!   `stop` (`stopwords`, `ignore_case`), `stemmer` (`language`: `english`
//!   or `porter`, `porter2`, `light_english` or `kstem`,
//!   `possessive_english`, `minimal_english`, `light_french`, `light_german`,
//!   `light_spanish`, `light_italian`, `light_portuguese`; and Snowball's for `danish`,
//!   `dutch`, `finnish`, `french`, `hungarian`, `italian`, `norwegian`,
//!   `portuguese`, `russian`, `spanish`, `turkish`), `porter_stem`, `kstem`,
//!   `german_normalization`, `arabic_normalization`, `arabic_stem` (also the
//!   `stemmer` filter's `arabic`),
//!   `snowball` (`language`: each of `needle_analysis::Snowball`'s), `length` (`min`, `max`), `truncate`
//!   (`length`), `asciifolding`, `lowercase`, `uppercase`, `trim`, `reverse`,
//!   `apostrophe`, `decimal_digit`, `elision` (`articles`, `articles_case`),
//!   `keyword_marker` (`keywords`, `keywords_pattern`, `ignore_case`),
//!   `stemmer_override` (`rules`), `unique` (`only_on_same_position`),
//!   `word_delimiter_graph` (its options, `protected_words`; not
//!   `type_table`) and the older `word_delimiter` (the same but
//!   `adjust_offsets` and `ignore_keywords`), `cjk_width`, `cjk_bigram`
//!   (`ignored_scripts`, `output_unigrams`), `shingle` (its sizes, bounded by `index.max_shingle_diff`,
//!   `output_unigrams`, `output_unigrams_if_no_shingles`, `token_separator`,
//!   `filler_token`; one an analyzer),
//!   `limit` (`max_token_count`, `consume_all_tokens`: the tokens are the
//!   same either way), `ngram` and `edge_ngram`, or `synonym` and
//!   `synonym_graph` (`synonyms` in Solr's format, `expand`, `lenient`; rules
//!   of one-word terms). The built-in filters ([`PRE_BUILT_FILTERS`]) are
//!   named as they are. `_analyze` may define a tokenizer or filters in place.
//! - `analysis.normalizer.NAME`: what a keyword field's `normalizer` names
//!   (besides the built-in `lowercase`): a `filter` list of the filters that
//!   keep a value one term (`lowercase`, `uppercase`, `asciifolding`, `trim`).
//!
//! - `analysis.char_filter.NAME`: what a custom analyzer's or normalizer's
//!   `char_filter` names: `mapping` (`mappings`: `key => replacement`),
//!   `pattern_replace` (`pattern`, `replacement`, `flags`) or `html_strip`
//!   (`escaped_tags`; also built in, and refused by normalizers as in Elasticsearch).
//!
//! Anything else (other tokenizers and filters) is refused by
//! name: not supported yet. They are kept in the schema (so in
//! the manifest) as given: `{"analyzer": {"my_stop": {"type": "standard",
//! "stopwords": ["the", "a"]}}, "filter": {...}}`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use needle_analysis::{
    check_replacement, java_regex, Analyzer, AnalyzerKind, CharFilter, CharGroupTokenizer, CjkBigram,
    GramTokenizer, Grams, HtmlStrip, Language, LightStemmer, Mapping, PathHierarchy, PatternTokenizer,
    Shingle, Snowball, SynonymMap, TokenChars, TokenFilter, Tokenizer, WordDelimiter, ENGLISH_STOP_WORDS,
    SCRIPTS,
};
use needle_core::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An index's analysis settings: its analyzers and the filters they name, by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexAnalysis {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub analyzer: BTreeMap<String, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub filter: BTreeMap<String, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub normalizer: BTreeMap<String, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokenizer: BTreeMap<String, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub char_filter: BTreeMap<String, Map<String, Value>>,
    /// `index.max_ngram_diff`: the most an `ngram` filter's `max_gram` may
    /// exceed its `min_gram` (`None`: Elasticsearch's 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ngram_diff: Option<usize>,
    /// `index.max_shingle_diff`: the most a `shingle` filter's sizes may
    /// differ, plus one when it keeps unigrams (`None`: Elasticsearch's 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_shingle_diff: Option<usize>,
}

impl IndexAnalysis {
    pub fn is_empty(&self) -> bool {
        self.analyzer.is_empty()
            && self.filter.is_empty()
            && self.normalizer.is_empty()
            && self.tokenizer.is_empty()
            && self.char_filter.is_empty()
            && self.max_ngram_diff.is_none()
            && self.max_shingle_diff.is_none()
    }

    /// Normalizer `name`: these settings' own, or the built-in `lowercase`
    /// (`None`: neither). A keyword field's values and query text go through it whole.
    pub fn normalizer(&self, name: &str) -> Option<Result<Analyzer>> {
        let Some(p) = self.normalizer.get(name) else {
            return (name == "lowercase")
                .then(|| Ok(Analyzer::custom(Tokenizer::Keyword, vec![TokenFilter::Lowercase])));
        };
        let made = || -> Result<Analyzer> {
            let filters: Vec<_> = names(p.get("filter"))
                .iter()
                .map(|f| self.normalizing_filter(name, f))
                .collect::<Result<_>>()?;
            let chars = self.char_filters(name, p.get("char_filter"))?;
            // A normalizer's char filters must leave a value one term: markup stripped may not.
            if let Some(i) = chars.iter().position(|c| matches!(c, CharFilter::HtmlStrip(_))) {
                let named = names(p.get("char_filter")).into_iter().nth(i).filter(|n| !n.is_empty());
                return Err(Error::invalid(format!(
                    "Custom normalizer [{name}] may not use char filter [{}]",
                    named.as_deref().unwrap_or("_anonymous_charfilter")
                )));
            }
            Ok(Analyzer::custom(Tokenizer::Keyword, filters).with_char_filters(chars))
        };
        Some(made())
    }

    /// Filter `f` of normalizer `normalizer`, refused unless it normalizes
    /// (keeps a value one term: Elasticsearch's normalizing filters).
    fn normalizing_filter(&self, normalizer: &str, f: &str) -> Result<TokenFilter> {
        let filter = self.filter(normalizer, f)?;
        // Folding that keeps the original makes two terms of one.
        match filter.normalizes() && !matches!(filter, TokenFilter::AsciiFoldingKeepingOriginal) {
            true => Ok(filter),
            false => {
                Err(Error::invalid(format!("Custom normalizer [{normalizer}] may not use filter [{f}]")))
            }
        }
    }

    /// Analyzer `name` of these settings (`None`: they define none of that
    /// name); `stop_words`, when given, replace a built-in type's own.
    pub fn analyzer(&self, name: &str, stop_words: Option<&[String]>) -> Option<Result<Analyzer>> {
        let params = self.analyzer.get(name)?;
        Some(self.make(name, params, stop_words))
    }

    /// An analyzer made on the spot (`_analyze`'s `tokenizer` and `filter`):
    /// the tokenizer named or defined (`keyword` when none is), then the
    /// filters named (these settings' or built-in ones) or defined in place.
    pub fn chain(
        &self,
        tokenizer: Option<&Value>,
        filters: Option<&Value>,
        char_filters: Option<&Value>,
    ) -> Result<Analyzer> {
        let tokenizer = match tokenizer {
            Some(Value::Object(p)) => {
                check_params("_anonymous_tokenizer", "tokenizer", p, tokenizer_params(p))?;
                self.configured_tokenizer("_anonymous_tokenizer", p)?
            }
            Some(t) => self.tokenizer("_analyze", Some(t))?,
            None => Tokenizer::Keyword,
        };
        let items = match filters {
            Some(Value::Array(items)) => items.clone(),
            Some(one) => vec![one.clone()],
            None => Vec::new(),
        };
        let refs: Vec<FilterRef> = items
            .iter()
            .map(|item| match item {
                Value::Object(p) => {
                    check_params(ANONYMOUS_FILTER, "filter", p, filter_params(p))?;
                    Ok(FilterRef::Defined(p))
                }
                named => Ok(FilterRef::Named(named.as_str().unwrap_or_default())),
            })
            .collect::<Result<_>>()?;
        let filters = self.filter_chain("_analyze", &tokenizer, &refs)?;
        let chars = self.char_filters("_analyze", char_filters)?;
        Ok(Analyzer::custom(tokenizer, filters).with_char_filters(chars))
    }

    /// The char filters a `char_filter` parameter names (these settings') or defines in place.
    fn char_filters(&self, analyzer: &str, v: Option<&Value>) -> Result<Vec<CharFilter>> {
        let items = match v {
            Some(Value::Array(items)) => items.clone(),
            Some(one) => vec![one.clone()],
            None => Vec::new(),
        };
        items
            .iter()
            .map(|item| match item {
                Value::Object(p) => {
                    check_params("_anonymous_charfilter", "char_filter", p, char_filter_params(p))?;
                    char_filter("_anonymous_charfilter", p)
                }
                named => {
                    let name = named.as_str().unwrap_or_default();
                    match self.char_filter.get(name) {
                        Some(p) => char_filter(name, p),
                        None if name == "html_strip" => Ok(CharFilter::HtmlStrip(Arc::default())),
                        None => Err(Error::invalid(format!(
                            "failed to find char_filter under [{name}], named by [{analyzer}]"
                        ))),
                    }
                }
            })
            .collect()
    }

    /// The filters of a chain after `tokenizer`, in order. A synonym
    /// filter's rules are analyzed by what comes before it, as
    /// Elasticsearch analyzes them.
    fn filter_chain(
        &self,
        analyzer: &str,
        tokenizer: &Tokenizer,
        refs: &[FilterRef],
    ) -> Result<Vec<TokenFilter>> {
        let mut out = Vec::with_capacity(refs.len());
        for (i, r) in refs.iter().enumerate() {
            out.push(match self.synonym_params(r) {
                Some((name, p)) => self.synonym_filter(analyzer, name, p, tokenizer, &refs[..i])?,
                None => self.one_filter(analyzer, r)?,
            });
        }
        // Shingles and CJK pairs over tokens that span several positions are not Lucene's yet.
        if out.iter().filter(|f| matches!(f, TokenFilter::Shingle(_) | TokenFilter::CjkBigram(_))).count() > 1
        {
            return Err(not_yet(format!("a second shingle or cjk_bigram filter in analyzer [{analyzer}]")));
        }
        Ok(out)
    }

    fn one_filter(&self, analyzer: &str, r: &FilterRef) -> Result<TokenFilter> {
        match r {
            FilterRef::Named(name) => self.filter(analyzer, name),
            FilterRef::Defined(p) => self.configured_filter(ANONYMOUS_FILTER, p),
        }
    }

    /// The name and parameters of `r` when it is a synonym filter.
    fn synonym_params<'p>(&'p self, r: &FilterRef<'p>) -> Option<(&'p str, &'p Map<String, Value>)> {
        let (name, p) = match *r {
            FilterRef::Named(name) => (name, self.filter.get(name)?),
            FilterRef::Defined(p) => (ANONYMOUS_FILTER, p),
        };
        is_synonyms(p).then_some((name, p))
    }

    /// Synonym filter `name` of `analyzer`, its rules' words analyzed by
    /// `tokenizer` and the filters `before` it (Elasticsearch's rules:
    /// folding keeps no original there, `synonym` filters are left out,
    /// n-gram filters cannot take part).
    fn synonym_filter(
        &self,
        analyzer: &str,
        name: &str,
        p: &Map<String, Value>,
        tokenizer: &Tokenizer,
        before: &[FilterRef],
    ) -> Result<TokenFilter> {
        let mut rule_filters = Vec::new();
        for (i, r) in before.iter().enumerate() {
            if let Some((earlier, p)) = self.synonym_params(r) {
                // Elasticsearch leaves a `synonym` filter out and runs a `synonym_graph` one,
                // whose stacked terms then fail the rule's check of positions.
                if p.get("type").and_then(Value::as_str) == Some("synonym_graph") {
                    rule_filters.push(self.synonym_filter(analyzer, earlier, p, tokenizer, &before[..i])?);
                }
                continue;
            }
            rule_filters.push(match self.one_filter(analyzer, r)? {
                TokenFilter::Grams(_) => {
                    let name = match r {
                        FilterRef::Named(n) => *n,
                        FilterRef::Defined(_) => ANONYMOUS_FILTER,
                    };
                    return Err(Error::invalid(format!(
                        "Token filter [{name}] cannot be used to parse synonyms"
                    )));
                }
                TokenFilter::AsciiFoldingKeepingOriginal => TokenFilter::AsciiFolding,
                other => other,
            });
        }
        let words = Analyzer::custom(tokenizer.clone(), rule_filters);
        let analyze = |word: &str| {
            let tokens = words.tokens(word);
            match tokens.iter().enumerate().find(|(i, t)| t.position != *i as u32) {
                Some((_, t)) => {
                    Err(format!("term: {word} analyzed to a token ({}) with position increment != 1", t.term))
                }
                None => Ok(tokens.into_iter().map(|t| t.term).collect()),
            }
        };
        let rules: Vec<String> = match p.get("synonyms") {
            Some(Value::Array(items)) => {
                items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect()
            }
            // Elasticsearch reads a string setting as a list of its comma-separated parts.
            Some(Value::String(one)) => one.split(',').map(str::to_string).collect(),
            _ => {
                return Err(Error::invalid(format!(
                    "synonym requires either `synonyms` or `synonyms_path` to be configured (filter [{name}])"
                )))
            }
        };
        if p.get("format").and_then(Value::as_str).is_some_and(|f| f != "solr") {
            return Err(not_yet(format!("the synonym format [{}] of filter [{name}] (solr)", p["format"])));
        }
        let expand = p.get("expand").is_none_or(is_true);
        let lenient = p.get("lenient").is_some_and(is_true);
        let graph = p.get("type").and_then(Value::as_str) == Some("synonym_graph");
        let map = SynonymMap::parse(&rules, expand, lenient, graph, analyze).map_err(|e| {
            Error::invalid(format!(
                "Failed to build synonyms of filter [{name}]: invalid synonym rule at line {}: {}",
                e.line, e.reason
            ))
        })?;
        Ok(TokenFilter::Synonyms(Arc::new(map)))
    }

    /// The `analysis` object of an index's settings, as Elasticsearch shows it.
    pub fn shown(&self) -> Value {
        let mut shown = serde_json::to_value(self).expect("analysis settings serialize");
        // Index settings of their own (`index.max_ngram_diff`, `index.max_shingle_diff`), kept here
        // because filters need them.
        let object = shown.as_object_mut().expect("an object");
        object.remove("max_ngram_diff");
        object.remove("max_shingle_diff");
        shown
    }

    fn make(&self, name: &str, p: &Map<String, Value>, stop_words: Option<&[String]>) -> Result<Analyzer> {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or("custom");
        if kind == "custom" {
            let tokenizer = self.tokenizer(name, p.get("tokenizer"))?;
            let names = names(p.get("filter"));
            let refs: Vec<FilterRef> = names.iter().map(|f| FilterRef::Named(f)).collect();
            let chars = self.char_filters(name, p.get("char_filter"))?;
            let filters = self.filter_chain(name, &tokenizer, &refs)?;
            return Ok(Analyzer::custom(tokenizer, filters).with_char_filters(chars));
        }
        let kind = built_in(name, kind)?;
        let own = p.get("stopwords").map(|v| stop_list(name, v)).transpose()?;
        let stop_words = stop_words.or(own.as_deref());
        if kind == AnalyzerKind::Snowball {
            let language =
                p.get("language").or_else(|| p.get("name")).and_then(Value::as_str).unwrap_or("English");
            return Analyzer::snowball(language, stop_words).ok_or_else(|| {
                let offered: Vec<&str> = Snowball::languages().collect();
                not_yet(format!(
                    "the language [{language}] of snowball analyzer [{name}] ({})",
                    offered.join(", ")
                ))
            });
        }
        Ok(Analyzer::built_in(kind, stop_words))
    }

    /// Filter `f` of analyzer `analyzer`: one these settings define, or a built-in one.
    fn filter(&self, analyzer: &str, f: &str) -> Result<TokenFilter> {
        match self.filter.get(f) {
            Some(p) => self.configured_filter(f, p),
            None => pre_built_filter(f).ok_or_else(|| {
                Error::invalid(format!(
                    "failed to find filter under [{f}], named by [{analyzer}] (Needle's built-in filters: {})",
                    PRE_BUILT_FILTERS.join(", ")
                ))
            }),
        }
    }

    /// Tokenizer `v` names, for analyzer `analyzer`: one these settings
    /// define, or a built-in one.
    fn tokenizer(&self, analyzer: &str, v: Option<&Value>) -> Result<Tokenizer> {
        let name = v.and_then(Value::as_str).unwrap_or_default();
        if let Some(p) = self.tokenizer.get(name) {
            return self.configured_tokenizer(name, p);
        }
        let pre_built = |edge| {
            Tokenizer::Grams(GramTokenizer {
                edge,
                min: 1,
                max: 2,
                chars: TokenChars::default(),
                custom: Arc::from([]),
            })
        };
        match name {
            "edge_ngram" => Ok(pre_built(true)),
            "ngram" => Ok(pre_built(false)),
            "pattern" => pattern_tokenizer(name, &Map::new()),
            "char_group" => char_group_tokenizer(name, &Map::new()),
            "path_hierarchy" => path_hierarchy(name, &Map::new()),
            _ => Tokenizer::parse(name).ok_or_else(|| {
                not_yet(format!(
                    "the tokenizer [{name}] of analyzer [{analyzer}] (Needle's: standard, whitespace, keyword, \
                     letter, lowercase, ngram, edge_ngram, pattern, char_group, path_hierarchy)"
                ))
            }),
        }
    }

    /// Tokenizer `name` as its parameters `p` define it.
    fn configured_tokenizer(&self, name: &str, p: &Map<String, Value>) -> Result<Tokenizer> {
        match p.get("type").and_then(Value::as_str).unwrap_or_default() {
            "edge_ngram" | "edgeNGram" => gram_tokenizer(name, p, true, usize::MAX),
            "ngram" | "nGram" => gram_tokenizer(name, p, false, self.max_ngram_diff.unwrap_or(1)),
            "pattern" => pattern_tokenizer(name, p),
            "char_group" => char_group_tokenizer(name, p),
            "path_hierarchy" | "PathHierarchy" => path_hierarchy(name, p),
            kind => Tokenizer::parse(kind)
                .filter(|t| !matches!(t, Tokenizer::Grams(_)))
                .ok_or_else(|| not_yet(format!("the tokenizer type [{kind}] of tokenizer [{name}]"))),
        }
    }

    /// Filter `f` as its parameters `p` define it.
    fn configured_filter(&self, f: &str, p: &Map<String, Value>) -> Result<TokenFilter> {
        match p.get("type").and_then(Value::as_str).unwrap_or_default() {
            "edge_ngram" | "edgeNGram" => grams(f, p, true, usize::MAX),
            "ngram" | "nGram" => grams(f, p, false, self.max_ngram_diff.unwrap_or(1)),
            "asciifolding" if p.get("preserve_original").is_some_and(is_true) => {
                Ok(TokenFilter::AsciiFoldingKeepingOriginal)
            }
            "shingle" => shingle(f, p, self.max_shingle_diff.unwrap_or(3)),
            "cjk_bigram" => cjk_bigram(f, p),
            "synonym" | "synonym_graph" => {
                Err(Error::invalid(format!("the synonym filter [{f}] can only be used in an analyzer")))
            }
            _ => configured_filter(f, p),
        }
    }
}

/// Elasticsearch's name for a filter defined in place.
const ANONYMOUS_FILTER: &str = "_anonymous_tokenfilter";

/// A filter of a chain: named (the index's or built-in), or defined in place.
enum FilterRef<'a> {
    Named(&'a str),
    Defined(&'a Map<String, Value>),
}

fn is_synonyms(p: &Map<String, Value>) -> bool {
    matches!(p.get("type").and_then(Value::as_str), Some("synonym" | "synonym_graph"))
}

/// The filters a custom analyzer may name without defining them.
const PRE_BUILT_FILTERS: &[&str] = &[
    "apostrophe",
    "asciifolding",
    "decimal_digit",
    "edge_ngram",
    "elision",
    "length",
    "lowercase",
    "ngram",
    "porter_stem",
    "reverse",
    "snowball",
    "stemmer",
    "stop",
    "trim",
    "truncate",
    "unique",
    "limit",
    "kstem",
    "german_normalization",
    "arabic_normalization",
    "arabic_stem",
    "uppercase",
    "word_delimiter_graph",
    "word_delimiter",
    "shingle",
    "cjk_bigram",
    "cjk_width",
];

/// Built-in filter `name`, as Elasticsearch pre-builds it.
fn pre_built_filter(name: &str) -> Option<TokenFilter> {
    Some(match name {
        "apostrophe" => TokenFilter::Apostrophe,
        "asciifolding" => TokenFilter::AsciiFolding,
        "edge_ngram" => TokenFilter::Grams(Grams { edge: true, min: 1, max: 1, preserve_original: false }),
        "ngram" => TokenFilter::Grams(Grams { edge: false, min: 1, max: 2, preserve_original: false }),
        "length" => TokenFilter::Length { min: 0, max: i32::MAX as usize },
        "lowercase" => TokenFilter::Lowercase,
        "porter_stem" | "stemmer" => TokenFilter::PorterStem,
        "kstem" => TokenFilter::KStem,
        "german_normalization" => TokenFilter::GermanNormalization,
        "arabic_normalization" => TokenFilter::ArabicNormalization,
        "arabic_stem" => TokenFilter::LightStem(LightStemmer::Arabic),
        "word_delimiter_graph" => TokenFilter::WordDelimiter(Box::default()),
        "word_delimiter" => {
            TokenFilter::WordDelimiter(Box::new(WordDelimiter { graph: false, ..Default::default() }))
        }
        "shingle" => TokenFilter::Shingle(Box::default()),
        "cjk_bigram" => TokenFilter::CjkBigram(Box::default()),
        "cjk_width" => TokenFilter::CjkWidth,
        "reverse" => TokenFilter::Reverse,
        "snowball" => TokenFilter::snowball_english(),
        "stop" => TokenFilter::stop(ENGLISH_STOP_WORDS, false),
        "trim" => TokenFilter::Trim,
        "truncate" => TokenFilter::Truncate(10),
        "uppercase" => TokenFilter::Uppercase,
        "decimal_digit" => TokenFilter::DecimalDigit,
        "unique" => TokenFilter::Unique { only_on_same_position: false },
        "limit" => TokenFilter::Limit(1),
        "elision" => TokenFilter::Elision {
            // Lucene's FrenchAnalyzer's articles, as Elasticsearch builds the filter in.
            articles: Language::French.articles().iter().map(|a| (*a).to_string()).collect(),
            ignore_case: true,
        },
        _ => return None,
    })
}

/// An `ngram` or `edge_ngram` filter (`edge`), its `max_gram` at most
/// `max_diff` over its `min_gram`.
fn grams(f: &str, p: &Map<String, Value>, edge: bool, max_diff: usize) -> Result<TokenFilter> {
    let (min, max) = gram_sizes(f, p, max_diff)?;
    if p.get("side").is_some_and(|s| s.as_str() != Some("front")) {
        return Err(not_yet(format!("[side] other than front of filter [{f}]")));
    }
    let preserve_original = p.get("preserve_original").is_some_and(is_true);
    Ok(TokenFilter::Grams(Grams { edge, min, max, preserve_original }))
}

/// A `cjk_bigram` filter: the scripts it pairs (all but its
/// `ignored_scripts`; other names there are passed over, as in Elasticsearch)
/// and whether it keeps every character (`output_unigrams`).
fn cjk_bigram(f: &str, p: &Map<String, Value>) -> Result<TokenFilter> {
    let ignored = match p.get("ignored_scripts") {
        Some(v) => stop_list(f, v)?,
        None => Vec::new(),
    };
    let types = SCRIPTS.iter().filter(|(name, _)| !ignored.iter().any(|s| s == name)).map(|(_, t)| *t);
    Ok(TokenFilter::CjkBigram(Box::new(CjkBigram {
        types: types.collect(),
        unigrams: p.get("output_unigrams").is_some_and(is_true),
    })))
}

/// A `shingle` filter: its sizes (2 and 2 when not given) at most
/// `max_diff` apart, one more when it keeps unigrams, as Elasticsearch checks them.
fn shingle(f: &str, p: &Map<String, Value>, max_diff: usize) -> Result<TokenFilter> {
    let size = |key: &str| -> Result<i64> {
        match p.get(key) {
            None => Ok(2),
            Some(v) => v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).ok_or_else(|| {
                Error::invalid(format!("Failed to parse value [{v}] for setting [{key}] of filter [{f}]"))
            }),
        }
    };
    let flag = |key: &str, default: bool| p.get(key).map_or(default, is_true);
    let (min, max, unigrams) =
        (size("min_shingle_size")?, size("max_shingle_size")?, flag("output_unigrams", true));
    let diff = max - min + i64::from(unigrams);
    if diff > max_diff as i64 {
        return Err(Error::invalid(format!(
            "In Shingle TokenFilter the difference between max_shingle_size and min_shingle_size (and +1 if \
             outputting unigrams) must be less than or equal to: [{max_diff}] but was [{diff}]. This limit can be \
             set by changing the [index.max_shingle_diff] index level setting."
        )));
    }
    if max < 2 {
        return Err(Error::invalid("Max shingle size must be >= 2"));
    }
    if min < 2 {
        return Err(Error::invalid("Min shingle size must be >= 2"));
    }
    if min > max {
        return Err(Error::invalid("Min shingle size must be <= max shingle size"));
    }
    let text = |key: &str, default: &str| p.get(key).and_then(Value::as_str).unwrap_or(default).to_string();
    Ok(TokenFilter::Shingle(Box::new(Shingle {
        min: min as usize,
        max: max as usize,
        unigrams,
        unigrams_if_none: flag("output_unigrams_if_no_shingles", false),
        separator: text("token_separator", " "),
        filler: text("filler_token", "_"),
    })))
}

/// An n-gram filter's or tokenizer's `min_gram` and `max_gram` (1 and 2
/// when not given), the second at most `max_diff` over the first.
fn gram_sizes(f: &str, p: &Map<String, Value>, max_diff: usize) -> Result<(usize, usize)> {
    let min = count_param(f, p, "min_gram", 1)?;
    let max = count_param(f, p, "max_gram", 2)?;
    if min == 0 || min > max {
        return Err(Error::invalid(format!(
            "filter [{f}]: [min_gram] must be at least 1 and at most [max_gram] ({min} and {max})"
        )));
    }
    if max - min > max_diff {
        return Err(Error::invalid(format!(
            "The difference between max_gram and min_gram in NGram Tokenizer must be less than or equal to: \
             [{max_diff}] but was [{}]. This limit can be set by changing the [index.max_ngram_diff] index level setting.",
            max - min
        )));
    }
    Ok((min, max))
}

/// Filter `f` as its parameters `p` define it (the filters that need no index setting).
fn configured_filter(f: &str, p: &Map<String, Value>) -> Result<TokenFilter> {
    let language = p.get("language").or_else(|| p.get("name")).and_then(Value::as_str);
    let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "stop" => {
            let words = match p.get("stopwords") {
                Some(v) => stop_list(f, v)?,
                None => ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_string()).collect(),
            };
            Ok(TokenFilter::stop(&words, p.get("ignore_case").is_some_and(is_true)))
        }
        // Elasticsearch compares the language's name ignoring case.
        "stemmer" => match language.unwrap_or("english").to_ascii_lowercase().as_str() {
            "english" | "porter" => Ok(TokenFilter::PorterStem),
            "porter2" => Ok(TokenFilter::snowball_english()),
            "light_english" | "lightenglish" | "kstem" => Ok(TokenFilter::KStem),
            "possessive_english" | "possessiveenglish" => Ok(TokenFilter::EnglishPossessive),
            "minimal_english" | "minimalenglish" => Ok(TokenFilter::MinimalEnglish),
            "light_french" => Ok(TokenFilter::LightStem(LightStemmer::French)),
            "light_german" => Ok(TokenFilter::LightStem(LightStemmer::German)),
            "light_spanish" => Ok(TokenFilter::LightStem(LightStemmer::Spanish)),
            "light_italian" => Ok(TokenFilter::LightStem(LightStemmer::Italian)),
            "light_portuguese" => Ok(TokenFilter::LightStem(LightStemmer::Portuguese)),
            "arabic" => Ok(TokenFilter::LightStem(LightStemmer::Arabic)),
            // Elasticsearch's stemmer runs Snowball's stemmer for these languages.
            "danish" | "dutch" | "finnish" | "french" | "hungarian" | "italian" | "norwegian" | "german"
            | "portuguese" | "romanian" | "russian" | "spanish" | "swedish" | "turkish" => {
                snowball(f, language.unwrap_or_default())
            }
            _ => Err(not_yet(format!(
                "the stemmer language [{}] of filter [{f}]",
                language.unwrap_or_default()
            ))),
        },
        "length" => {
            let min = count_param(f, p, "min", 0)?;
            let max = count_param(f, p, "max", i32::MAX as usize)?;
            if min > max {
                return Err(Error::invalid("minimum length must be less than or equal to maximum length"));
            }
            Ok(TokenFilter::Length { min, max })
        }
        "truncate" => match count_param(f, p, "length", 10)? {
            0 => Err(Error::invalid(format!("length parameter must be provided for filter [{f}]"))),
            length => Ok(TokenFilter::Truncate(length)),
        },
        "snowball" => snowball(f, language.unwrap_or("English")),
        "elision" => {
            let articles = match p.get("articles") {
                Some(v) => stop_list(f, v)?,
                None => {
                    return Err(Error::invalid(format!(
                        "elision filter requires [articles] or [articles_path] setting (filter [{f}])"
                    )))
                }
            };
            let ignore_case = p.get("articles_case").is_some_and(is_true);
            let articles =
                articles.iter().map(|a| if ignore_case { a.to_lowercase() } else { a.clone() }).collect();
            Ok(TokenFilter::Elision { articles, ignore_case })
        }
        "keyword_marker" => keyword_marker(f, p),
        "word_delimiter_graph" => word_delimiter(f, p, true),
        "word_delimiter" => word_delimiter(f, p, false),
        "unique" => Ok(TokenFilter::Unique {
            only_on_same_position: p.get("only_on_same_position").is_some_and(is_true),
        }),
        "limit" => {
            let max = p.get("max_token_count").map_or(Some(1), |v| match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.parse().ok(),
                _ => None,
            });
            match max.map(usize::try_from) {
                None => Err(Error::invalid(format!(
                    "[max_token_count] of filter [{f}] must be a whole number, not {}",
                    p["max_token_count"]
                ))),
                Some(Ok(max)) if max > 0 => Ok(TokenFilter::Limit(max)),
                Some(_) => Err(Error::invalid("maxTokenCount must be greater than zero")),
            }
        }
        "stemmer_override" => {
            let rules = match p.get("rules") {
                Some(v) => stop_list(f, v)?,
                None => {
                    return Err(Error::invalid(format!(
                        "stemmer override filter requires either `rules` or `rules_path` to be configured (filter [{f}])"
                    )))
                }
            };
            let mut map = HashMap::new();
            for rule in &rules {
                let bad = || Error::invalid(format!("Invalid Keyword override Rule:{rule}"));
                let (keys, stem) =
                    rule.split_once("=>").filter(|(_, r)| !r.contains("=>")).ok_or_else(bad)?;
                let stem = stem.trim();
                if stem.is_empty() || stem.contains(',') {
                    return Err(bad());
                }
                for key in keys.split(',').map(str::trim) {
                    if key.is_empty() {
                        return Err(bad());
                    }
                    // The first rule for a term is the one kept, as Lucene's builder keeps it.
                    map.entry(key.to_string()).or_insert_with(|| stem.to_string());
                }
            }
            Ok(TokenFilter::StemmerOverride(Arc::new(map)))
        }
        "lowercase" if language.is_some() => match language.unwrap_or_default() {
            "turkish" => Ok(TokenFilter::TurkishLowercase),
            other => Err(not_yet(format!("the lowercase language [{other}] of filter [{f}]"))),
        },
        "lowercase"
        | "uppercase"
        | "asciifolding"
        | "trim"
        | "reverse"
        | "apostrophe"
        | "decimal_digit"
        | "porter_stem"
        | "kstem"
        | "german_normalization"
        | "arabic_normalization"
        | "arabic_stem" => Ok(pre_built_filter(kind).expect("a pre-built filter")),
        other => Err(not_yet(format!("the filter type [{other}] of filter [{f}]"))),
    }
}

/// A `snowball` filter of `language`, its first letter made uppercase as
/// Elasticsearch makes it (the rest must be as Lucene's class names it: `French`).
fn snowball(f: &str, language: &str) -> Result<TokenFilter> {
    let mut named = language.chars();
    let capitalized: String =
        named.next().map(|c| c.to_uppercase().chain(named).collect()).unwrap_or_default();
    match Snowball::named(&capitalized) {
        Some(stemmer) => Ok(TokenFilter::Snowball(stemmer)),
        None => Err(not_yet(format!("the Snowball language [{language}] of filter [{f}]"))),
    }
}

/// A `word_delimiter_graph` filter (`graph`) or the older `word_delimiter`:
/// its options (Elasticsearch's defaults where not given) and `protected_words`.
fn word_delimiter(f: &str, p: &Map<String, Value>, graph: bool) -> Result<TokenFilter> {
    let flag = |name: &str, default: bool| match p.get(name) {
        None => Ok(default),
        Some(v) if v.is_boolean() || v.as_str().is_some_and(|s| s == "true" || s == "false") => {
            Ok(is_true(v))
        }
        Some(v) => Err(Error::invalid(format!("[{name}] of filter [{f}] must be true or false, not {v}"))),
    };
    let defaults = WordDelimiter::default();
    let protected = match p.get("protected_words") {
        Some(v) => stop_list(f, v)?.into_iter().collect(),
        None => Default::default(),
    };
    Ok(TokenFilter::WordDelimiter(Box::new(WordDelimiter {
        generate_word_parts: flag("generate_word_parts", defaults.generate_word_parts)?,
        generate_number_parts: flag("generate_number_parts", defaults.generate_number_parts)?,
        catenate_words: flag("catenate_words", defaults.catenate_words)?,
        catenate_numbers: flag("catenate_numbers", defaults.catenate_numbers)?,
        catenate_all: flag("catenate_all", defaults.catenate_all)?,
        preserve_original: flag("preserve_original", defaults.preserve_original)?,
        split_on_case_change: flag("split_on_case_change", defaults.split_on_case_change)?,
        split_on_numerics: flag("split_on_numerics", defaults.split_on_numerics)?,
        stem_english_possessive: flag("stem_english_possessive", defaults.stem_english_possessive)?,
        ignore_keywords: flag("ignore_keywords", defaults.ignore_keywords)?,
        adjust_offsets: flag("adjust_offsets", defaults.adjust_offsets)?,
        protected,
        graph,
    })))
}

/// A `keyword_marker` filter: its `keywords` (compared lowercased with
/// `ignore_case`), or the terms its `keywords_pattern` matches whole.
fn keyword_marker(f: &str, p: &Map<String, Value>) -> Result<TokenFilter> {
    let ignore_case = p.get("ignore_case").is_some_and(is_true);
    match (p.get("keywords"), p.get("keywords_pattern").and_then(Value::as_str)) {
        (Some(_), Some(_)) => Err(Error::invalid(format!(
            "cannot specify both `keywords_pattern` and `keywords` or `keywords_path` (filter [{f}])"
        ))),
        (None, None) => Err(Error::invalid(format!(
            "keyword filter requires either `keywords`, `keywords_path`, or `keywords_pattern` to be configured (filter [{f}])"
        ))),
        (None, Some(pattern)) => {
            let whole = format!("^(?:{pattern})$");
            let pattern = java_regex(&whole, "").map_err(|e| Error::invalid(format!("filter [{f}]: {e}")))?;
            Ok(TokenFilter::KeywordMarker { words: Default::default(), ignore_case, pattern: Some(pattern) })
        }
        (Some(v), None) => {
            let words = stop_list(f, v)?;
            let words = words.iter().map(|w| if ignore_case { w.to_lowercase() } else { w.clone() }).collect();
            Ok(TokenFilter::KeywordMarker { words, ignore_case, pattern: None })
        }
    }
}

/// A whole-number parameter (a number, or a string of one, as settings keep
/// it), `default` when it is not given.
fn count_param(f: &str, p: &Map<String, Value>, key: &str, default: usize) -> Result<usize> {
    let Some(v) = p.get(key) else { return Ok(default) };
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    n.and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Error::invalid(format!("[{key}] of filter [{f}] must be a whole number, not {v}")))
}

/// The analysis settings `settings` define (nested or with dotted keys,
/// with or without the `index.` prefix; the rest of `settings` is not looked
/// at), each analyzer made once to check it: a part Needle does not support
/// is an error naming it.
pub fn read(settings: &Value) -> Result<IndexAnalysis> {
    let mut flat = Vec::new();
    crate::schema::flatten_settings("", settings, &mut flat);
    let mut analysis = IndexAnalysis::default();
    for (key, value) in flat {
        let key = key.strip_prefix("index.").unwrap_or(&key);
        if key == "max_ngram_diff" || key == "max_shingle_diff" {
            let diff = value.as_u64().or_else(|| value.as_str().and_then(|s| s.parse().ok()));
            let diff = diff.ok_or_else(|| {
                Error::invalid(format!("failed to parse value [{value}] for setting [index.{key}]"))
            })?;
            match key {
                "max_ngram_diff" => analysis.max_ngram_diff = Some(diff as usize),
                _ => analysis.max_shingle_diff = Some(diff as usize),
            }
            continue;
        }
        let Some(rest) = key.strip_prefix("analysis.") else { continue };
        let (part, rest) = rest.split_once('.').unwrap_or((rest, ""));
        let slot = match part {
            "analyzer" => &mut analysis.analyzer,
            "filter" => &mut analysis.filter,
            "normalizer" => &mut analysis.normalizer,
            "tokenizer" => &mut analysis.tokenizer,
            "char_filter" => &mut analysis.char_filter,
            _ => return Err(not_yet(format!("[index.{key}]"))),
        };
        let Some((name, param)) = rest.rsplit_once('.') else {
            return Err(Error::invalid(format!("[index.{key}]: a setting of a named {part}")));
        };
        slot.entry(name.to_string()).or_default().insert(param.to_string(), shown_value(value));
    }
    for (name, p) in &analysis.tokenizer {
        check_params(name, "tokenizer", p, tokenizer_params(p))?;
        analysis.configured_tokenizer(name, p)?;
    }
    for (name, p) in &analysis.char_filter {
        check_params(name, "char_filter", p, char_filter_params(p))?;
        char_filter(name, p)?;
    }
    for (name, p) in &analysis.filter {
        check_params(name, "filter", p, filter_params(p))?;
        // A synonym filter's rules are read by the chains that name it, as their words are analyzed there.
        if !is_synonyms(p) {
            analysis.filter(name, name)?;
        }
    }
    for (name, p) in &analysis.analyzer {
        check_analyzer(name, p)?;
        analysis.make(name, p, None)?;
    }
    for (name, p) in &analysis.normalizer {
        check_normalizer(name, p)?;
        analysis.normalizer(name).expect("a normalizer of the settings")?;
    }
    Ok(analysis)
}

/// A setting's value as Elasticsearch keeps it: a string, or a list of strings.
fn shown_value(value: Value) -> Value {
    let text = |v: Value| match v {
        Value::String(s) => Value::String(s),
        other => Value::String(other.to_string()),
    };
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(text).collect()),
        other => text(other),
    }
}

fn check_analyzer(name: &str, p: &Map<String, Value>) -> Result<()> {
    match p.get("type").and_then(Value::as_str) {
        None if !p.contains_key("tokenizer") => Err(Error::invalid(format!(
            "analyzer [{name}] must specify either an analyzer type, or a tokenizer"
        ))),
        None | Some("custom") => {
            if !p.contains_key("tokenizer") {
                return Err(Error::invalid(format!(
                    "custom analyzer [{name}] must be configured with a tokenizer"
                )));
            }
            check_params(
                name,
                "analyzer",
                p,
                &["type", "tokenizer", "filter", "char_filter", "position_increment_gap"],
            )?;
            match p.get("position_increment_gap").and_then(Value::as_str) {
                None | Some("100") => Ok(()),
                Some(other) => {
                    Err(not_yet(format!("a [position_increment_gap] of {other} in analyzer [{name}]")))
                }
            }
        }
        Some("snowball") => check_params(name, "analyzer", p, &["type", "stopwords", "language", "name"]),
        Some("simple" | "whitespace") => check_params(name, "analyzer", p, &["type"]),
        Some(_) => check_params(name, "analyzer", p, &["type", "stopwords"]),
    }
}

fn check_normalizer(name: &str, p: &Map<String, Value>) -> Result<()> {
    match p.get("type").and_then(Value::as_str) {
        None | Some("custom") => check_params(name, "normalizer", p, &["type", "filter", "char_filter"]),
        Some(other) => Err(Error::invalid(format!("Unknown normalizer type [{other}] for [{name}]"))),
    }
}

/// The parameters a char filter of `p`'s type takes.
fn char_filter_params(p: &Map<String, Value>) -> &'static [&'static str] {
    match p.get("type").and_then(Value::as_str) {
        Some("mapping") => &["type", "mappings"],
        Some("pattern_replace") => &["type", "pattern", "replacement", "flags"],
        Some("html_strip") => &["type", "escaped_tags"],
        _ => &["type"],
    }
}

/// Char filter `name` as its parameters `p` define it: `mapping`, `pattern_replace` or `html_strip`.
fn char_filter(name: &str, p: &Map<String, Value>) -> Result<CharFilter> {
    let invalid = |e: String| Error::invalid(format!("char_filter [{name}]: {e}"));
    match p.get("type").and_then(Value::as_str).unwrap_or_default() {
        "mapping" => {
            let rules: Vec<String> = match p.get("mappings") {
                Some(Value::Array(items)) => items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect(),
                // Elasticsearch reads a string setting as a list of its comma-separated parts.
                Some(Value::String(one)) => one.split(',').map(str::to_string).collect(),
                _ => {
                    return Err(Error::invalid(format!(
                        "mapping requires either `mappings` or `mappings_path` to be configured (char_filter [{name}])"
                    )))
                }
            };
            let pairs = rules.iter().map(|r| mapping_rule(r)).collect::<Result<Vec<_>>>()?;
            Ok(CharFilter::Mapping(Arc::new(Mapping::new(pairs).map_err(invalid)?)))
        }
        "pattern_replace" => {
            let pattern = p.get("pattern").and_then(Value::as_str).ok_or_else(|| {
                Error::invalid(format!(
                    "pattern is missing for [{name}] char filter of type 'pattern_replace'"
                ))
            })?;
            let flags = p.get("flags").and_then(Value::as_str).unwrap_or_default();
            let pattern = java_regex(pattern, flags).map_err(invalid)?;
            let replacement = p.get("replacement").and_then(Value::as_str).unwrap_or_default().to_string();
            check_replacement(&pattern, &replacement).map_err(invalid)?;
            Ok(CharFilter::PatternReplace { pattern, replacement })
        }
        "html_strip" => {
            // A list, or a string of comma-separated names, as Elasticsearch reads a list setting.
            let tags: Vec<String> = match p.get("escaped_tags") {
                Some(Value::Array(items)) => {
                    items.iter().filter_map(Value::as_str).map(str::to_string).collect()
                }
                Some(Value::String(one)) => one.split(',').map(|t| t.trim().to_string()).collect(),
                _ => Vec::new(),
            };
            Ok(CharFilter::HtmlStrip(Arc::new(HtmlStrip::new(tags))))
        }
        other => Err(not_yet(format!("the char filter type [{other}] of char_filter [{name}]"))),
    }
}

/// A mapping rule `key => replacement`, each side with Elasticsearch's
/// escapes (`\n`, `\t`, `\uXXXX`, ...), as its MappingCharFilterFactory reads it.
fn mapping_rule(rule: &str) -> Result<(String, String)> {
    let bad = || Error::invalid(format!("Invalid Mapping Rule : [{rule}]"));
    let (lhs, rhs) = rule.rsplit_once("=>").ok_or_else(bad)?;
    let side = |s: &str| unescape_rule(s.trim()).ok_or_else(bad);
    Ok((side(lhs)?, side(rhs)?))
}

fn unescape_rule(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
            }
            other => other,
        });
    }
    Some(out)
}

/// The parameters `word_delimiter_graph` takes.
const WORD_DELIMITER_PARAMS: &[&str] = &[
    "type",
    "generate_word_parts",
    "generate_number_parts",
    "catenate_words",
    "catenate_numbers",
    "catenate_all",
    "preserve_original",
    "split_on_case_change",
    "split_on_numerics",
    "stem_english_possessive",
    "protected_words",
    "ignore_keywords",
    "adjust_offsets",
];

/// The parameters a filter of `p`'s type takes.
fn filter_params(p: &Map<String, Value>) -> &'static [&'static str] {
    match p.get("type").and_then(Value::as_str) {
        Some("stop") => &["type", "stopwords", "ignore_case"],
        Some("stemmer" | "snowball") => &["type", "language", "name"],
        Some("lowercase") => &["type", "language"],
        Some("asciifolding") => &["type", "preserve_original"],
        Some("edge_ngram" | "edgeNGram") => &["type", "min_gram", "max_gram", "preserve_original", "side"],
        Some("ngram" | "nGram") => &["type", "min_gram", "max_gram", "preserve_original"],
        Some("length") => &["type", "min", "max"],
        Some("truncate") => &["type", "length"],
        Some("elision") => &["type", "articles", "articles_case"],
        Some("keyword_marker") => &["type", "keywords", "keywords_pattern", "ignore_case"],
        Some("stemmer_override") => &["type", "rules"],
        Some("unique") => &["type", "only_on_same_position"],
        Some("word_delimiter_graph") => WORD_DELIMITER_PARAMS,
        // The older filter takes all but the last two.
        Some("word_delimiter") => &WORD_DELIMITER_PARAMS[..WORD_DELIMITER_PARAMS.len() - 2],
        Some("limit") => &["type", "max_token_count", "consume_all_tokens"],
        Some("cjk_bigram") => &["type", "ignored_scripts", "output_unigrams"],
        Some("shingle") => &[
            "type",
            "min_shingle_size",
            "max_shingle_size",
            "output_unigrams",
            "output_unigrams_if_no_shingles",
            "token_separator",
            "filler_token",
        ],
        Some("synonym" | "synonym_graph") => &["type", "synonyms", "expand", "lenient", "format"],
        _ => &["type"],
    }
}

/// `p` holds parameters of `known` alone.
fn check_params(name: &str, what: &str, p: &Map<String, Value>, known: &[&str]) -> Result<()> {
    match p.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(not_yet(format!("[index.analysis.{what}.{name}.{key}] ({})", known.join(", ")))),
        None => Ok(()),
    }
}

fn not_yet(what: String) -> Error {
    Error::invalid(format!("{what} is not supported yet by Needle"))
}

fn is_true(v: &Value) -> bool {
    v == &Value::Bool(true) || v.as_str() == Some("true")
}

/// A `filter` parameter's names: a list, or one name.
fn names(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => {
            items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect()
        }
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The parameters a tokenizer of `p`'s type takes.
fn tokenizer_params(p: &Map<String, Value>) -> &'static [&'static str] {
    match p.get("type").and_then(Value::as_str) {
        Some("edge_ngram" | "edgeNGram" | "ngram" | "nGram") => {
            &["type", "min_gram", "max_gram", "token_chars", "custom_token_chars"]
        }
        Some("pattern") => &["type", "pattern", "flags", "group"],
        Some("char_group") => &["type", "tokenize_on_chars", "max_token_length"],
        Some("path_hierarchy" | "PathHierarchy") => {
            &["type", "delimiter", "replacement", "skip", "reverse", "buffer_size"]
        }
        _ => &["type"],
    }
}

/// An `ngram` or `edge_ngram` tokenizer (`edge`), its `max_gram` at most `max_diff` over its `min_gram`.
fn gram_tokenizer(name: &str, p: &Map<String, Value>, edge: bool, max_diff: usize) -> Result<Tokenizer> {
    let (min, max) = gram_sizes(name, p, max_diff)?;
    let classes = names(p.get("token_chars"));
    let chars = TokenChars::parse(classes.iter().map(String::as_str)).map_err(|other| {
        Error::invalid(format!(
            "Unknown token type: '{other}', must be one of [symbol, punctuation, whitespace, letter, digit, custom]"
        ))
    })?;
    let custom: Arc<[char]> = match p.get("custom_token_chars").and_then(Value::as_str) {
        Some(given) => given.chars().collect(),
        None if chars.has_custom() => {
            return Err(Error::invalid("Token type: 'custom' requires setting `custom_token_chars`"))
        }
        None => Arc::from([]),
    };
    let bound = |n: usize| {
        u16::try_from(n).map_err(|_| Error::invalid(format!("[max_gram] of [{name}] is too large")))
    };
    Ok(Tokenizer::Grams(GramTokenizer { edge, min: bound(min)?, max: bound(max)?, chars, custom }))
}

/// A `pattern` tokenizer: Java's `pattern` (`\W+` when not given) with its
/// `flags`, its pieces between matches (`group` -1, the default) or a group of each.
fn pattern_tokenizer(name: &str, p: &Map<String, Value>) -> Result<Tokenizer> {
    let pattern = p.get("pattern").and_then(Value::as_str).unwrap_or("\\W+");
    let flags = p.get("flags").and_then(Value::as_str).unwrap_or_default();
    let pattern =
        java_regex(pattern, flags).map_err(|e| Error::invalid(format!("tokenizer [{name}]: {e}")))?;
    let group = match p.get("group") {
        None => -1,
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .filter(|&g| g >= -1 && g < pattern.captures_len() as i64)
            .ok_or_else(|| {
                Error::invalid(format!("tokenizer [{name}]: [group] {v} is not a group of the pattern"))
            })? as i32,
    };
    Ok(Tokenizer::Pattern(PatternTokenizer { pattern, group }))
}

/// A `char_group` tokenizer: split on the classes and characters
/// `tokenize_on_chars` names (one character, an escape such as `\n` or
/// `\u0041`, or a class), tokens of at most `max_token_length` units.
fn char_group_tokenizer(name: &str, p: &Map<String, Value>) -> Result<Tokenizer> {
    let (mut classes, mut chars) = (Vec::new(), Vec::new());
    for item in names(p.get("tokenize_on_chars")) {
        let mut it = item.chars();
        match (it.next(), it.next()) {
            (None, _) => return Err(Error::invalid("[tokenize_on_chars] cannot contain empty characters")),
            (Some(c), None) => chars.push(c),
            (Some('\\'), Some(e)) => chars.push(
                match e {
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    'f' => Some('\u{c}'),
                    'u' => u32::from_str_radix(&item[2..], 16).ok().and_then(char::from_u32),
                    _ => None,
                }
                .ok_or_else(|| {
                    Error::invalid(format!("Invalid escaped char in [{item}] of tokenizer [{name}]"))
                })?,
            ),
            _ => classes.push(item),
        }
    }
    // `custom` is an n-gram tokenizer's class, not a group's.
    let classes = TokenChars::parse(classes.iter().map(String::as_str).filter(|c| *c != "custom"))
        .and_then(|parsed| match classes.iter().any(|c| c == "custom") {
            true => Err("custom"),
            false => Ok(parsed),
        })
        .map_err(|other| {
            Error::invalid(format!(
                "Invalid escaped char in [{other}] of tokenizer [{name}] (classes: letter, digit, whitespace, \
                 punctuation, symbol)"
            ))
        })?;
    let max_token_length = count_param(name, p, "max_token_length", 255)?;
    if max_token_length == 0 {
        return Err(Error::invalid(format!("maxTokenLen must be greater than 0 (tokenizer [{name}])")));
    }
    Ok(Tokenizer::CharGroup(CharGroupTokenizer { classes, chars, max_token_length }))
}

/// A `path_hierarchy` tokenizer: `delimiter` (`/`), `replacement` (the
/// delimiter), `skip` (0), `reverse` (false).
fn path_hierarchy(name: &str, p: &Map<String, Value>) -> Result<Tokenizer> {
    let one_char = |key: &str, default: char| -> Result<char> {
        match p.get(key).and_then(Value::as_str) {
            None => Ok(default),
            Some(s) => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(c),
                    _ => Err(Error::invalid(format!("{key} must be a one char value (tokenizer [{name}])"))),
                }
            }
        }
    };
    let reverse = p.get("reverse").is_some_and(is_true);
    let delimiter = one_char("delimiter", '/')?;
    let replacement = one_char("replacement", delimiter)?;
    let skip = count_param(name, p, "skip", 0)?;
    Ok(Tokenizer::PathHierarchy(PathHierarchy { delimiter, replacement, skip, reverse }))
}

/// The built-in analyzer `kind`, for analyzer `name`.
fn built_in(name: &str, kind: &str) -> Result<AnalyzerKind> {
    match AnalyzerKind::parse(kind) {
        Some(k) if k != AnalyzerKind::Keyword => Ok(k),
        _ => Err(Error::invalid(format!(
            "Unknown analyzer type [{kind}] for [{name}] (Needle's are standard, english, snowball, simple, \
             stop, whitespace, danish, dutch, finnish, french, german, hungarian, italian, norwegian, \
             portuguese, russian, spanish, turkish, cjk and custom)"
        ))),
    }
}

/// The words a `stopwords` parameter names: a list (or one word),
/// `_english_` or a built-in language's (`_russian_`), or `_none_`.
fn stop_list(name: &str, v: &Value) -> Result<Vec<String>> {
    let listed = |words: &[&str]| words.iter().map(|w| (*w).to_string()).collect();
    match v {
        Value::String(s) if s == "_english_" => Ok(listed(ENGLISH_STOP_WORDS)),
        Value::String(s) if s == "_none_" => Ok(Vec::new()),
        Value::String(s) if s.len() > 2 && s.starts_with('_') && s.ends_with('_') => {
            match Language::ALL.iter().find(|l| l.name() == &s[1..s.len() - 1]) {
                Some(language) => Ok(listed(language.stop_words())),
                None => Err(not_yet(format!(
                    "the stop words [{s}] of [{name}] (_english_, a built-in language's such as _french_, \
                     _none_ or a list)"
                ))),
            }
        }
        Value::Array(words) => Ok(words.iter().map(|w| w.as_str().unwrap_or_default().to_string()).collect()),
        Value::String(s) => Ok(vec![s.clone()]),
        _ => Err(Error::invalid(format!("the stop words of [{name}] must be a list"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn terms(a: &IndexAnalysis, name: &str, text: &str) -> Vec<String> {
        a.analyzer(name, None).unwrap().unwrap().terms(text)
    }

    #[test]
    fn reads_nested_and_dotted_settings() {
        let nested = json!({"index": {"analysis": {"analyzer": {
            "default": {"type": "english"},
            "my.stop": {"type": "standard", "stopwords": ["quick", "The"]},
        }}}, "number_of_shards": 1});
        let dotted = json!({
            "analysis.analyzer.default.type": "english",
            "index.analysis.analyzer.my.stop.type": "standard",
            "analysis.analyzer.my.stop.stopwords": ["quick", "The"],
        });
        let (a, b) = (read(&nested).unwrap(), read(&dotted).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.analyzer.keys().collect::<Vec<_>>(), ["default", "my.stop"]);
        // Stop words are compared as given with the lowercased terms, as Elasticsearch compares them.
        assert_eq!(terms(&a, "my.stop", "The quick brown fox"), ["the", "brown", "fox"]);
        assert_eq!(terms(&a, "default", "the running foxes"), ["run", "fox"]);
        assert!(a.analyzer("other", None).is_none());
        assert_eq!(
            a.shown(),
            json!({"analyzer": {"default": {"type": "english"}, "my.stop": {"type": "standard", "stopwords": ["quick", "The"]}}})
        );
    }

    #[test]
    fn named_stop_lists() {
        let a = read(&json!({"analysis": {"analyzer": {
            "plain": {"type": "english", "stopwords": "_none_"},
            "std": {"type": "standard", "stopwords": "_english_"},
        }}}))
        .unwrap();
        assert_eq!(terms(&a, "plain", "the dogs"), ["the", "dog"]);
        assert_eq!(terms(&a, "std", "the dogs"), ["dogs"]);
    }

    #[test]
    fn custom_analyzers_apply_their_filters_in_order() {
        let a = read(&json!({"analysis": {
            "analyzer": {
                "ws": {"type": "custom", "tokenizer": "whitespace", "filter": ["stop", "lowercase", "porter_stem"]},
                "mine": {"tokenizer": "standard", "filter": ["lowercase", "no_fox", "stem", "possessive"]},
                "exact": {"type": "custom", "tokenizer": "keyword", "filter": "lowercase"},
            },
            "filter": {
                "no_fox": {"type": "stop", "stopwords": ["fox"], "ignore_case": true},
                "stem": {"type": "stemmer", "language": "english"},
                "possessive": {"type": "stemmer", "language": "possessive_english"},
            },
        }}))
        .unwrap();
        // `stop` before `lowercase` keeps a capitalized stop word.
        assert_eq!(terms(&a, "ws", "The quick foxes, the end"), ["the", "quick", "foxes,", "end"]);
        assert_eq!(terms(&a, "mine", "The Fox jumped FOX's"), ["the", "jump", "fox'"]);
        assert_eq!(terms(&a, "exact", "New York"), ["new york"]);
        assert_eq!(a.analyzer("ws", None).unwrap().unwrap().normalize("Fo*"), "fo*");
    }

    #[test]
    fn more_filters_and_tokenizers_by_name_or_defined() {
        let a = read(&json!({"analysis": {
            "analyzer": {
                "folded": {"tokenizer": "standard", "filter": ["asciifolding", "lowercase", "short", "cut"]},
                "letters": {"tokenizer": "lowercase", "filter": ["reverse"]},
                "stopped": {"type": "stop", "stopwords": ["über"]},
            },
            "filter": {
                "short": {"type": "length", "max": "6"},
                "cut": {"type": "truncate", "length": 3},
            },
        }}))
        .unwrap();
        assert_eq!(terms(&a, "folded", "Über Ærøskøbing café naïveté"), ["ube", "caf"]);
        assert_eq!(terms(&a, "letters", "Ab1cD"), ["ba", "dc"]);
        assert_eq!(terms(&a, "stopped", "Über alles"), ["alles"]);
        let chain = a.chain(
            Some(&json!({"type": "whitespace"})),
            Some(&json!(["uppercase", {"type": "truncate", "length": 2}, "cut"])),
            None,
        );
        assert_eq!(chain.unwrap().terms("abcd é"), ["AB", "É"]);
        let wide = read(&json!({"index": {"max_ngram_diff": "2", "analysis": {
            "filter": {"g": {"type": "ngram", "min_gram": 1, "max_gram": 3}, "e": {"type": "edge_ngram", "max_gram": 9}},
            "analyzer": {"grams": {"tokenizer": "whitespace", "filter": ["g"]}, "edges": {"tokenizer": "whitespace", "filter": ["e"]}},
        }}}))
        .unwrap();
        assert_eq!(terms(&wide, "grams", "abc"), ["a", "ab", "abc", "b", "bc", "c"]);
        assert_eq!(terms(&wide, "edges", "abc"), ["a", "ab", "abc"]);
        assert_eq!(wide.shown()["filter"]["g"]["type"], "ngram");
        assert!(wide.shown().get("max_ngram_diff").is_none());
        let tokenized = read(&json!({"analysis": {
            "tokenizer": {"auto": {"type": "edge_ngram", "min_gram": "2", "max_gram": "4", "token_chars": ["letter"]}},
            "analyzer": {"auto": {"tokenizer": "auto", "filter": ["lowercase"]}},
        }}))
        .unwrap();
        assert_eq!(terms(&tokenized, "auto", "Quick fox1"), ["qu", "qui", "quic", "fo", "fox"]);
        let inline = a.chain(Some(&json!({"type": "ngram", "token_chars": ["digit"]})), None, None).unwrap();
        assert_eq!(inline.terms("a12"), ["1", "12", "2"]);
        let bad = a.chain(None, Some(&json!([{"type": "truncate", "size": 2}])), None).unwrap_err();
        assert!(bad.to_string().contains(".size]"), "{bad}");
    }

    #[test]
    fn normalizers_keep_a_value_one_term() {
        let a = read(&json!({"analysis": {
            "normalizer": {"folded": {"type": "custom", "filter": ["asciifolding", "lowercase", "tidy"]}},
            "filter": {"tidy": {"type": "trim"}},
        }}))
        .unwrap();
        let norm = |name: &str, text: &str| a.normalizer(name).unwrap().unwrap().normalize(text);
        assert_eq!(norm("folded", " Crème Brûlée "), "creme brulee");
        assert_eq!(norm("lowercase", "ÀB c"), "àb c");
        assert!(a.normalizer("other").is_none());
        for (analysis, says) in [
            (json!({"normalizer": {"n": {"filter": ["porter_stem"]}}}), "may not use filter [porter_stem]"),
            (json!({"normalizer": {"n": {"filter": ["nope"]}}}), "[nope]"),
            (
                json!({"normalizer": {"n": {"char_filter": ["html_strip"]}}}),
                "Custom normalizer [n] may not use char filter [html_strip]",
            ),
            (
                json!({"normalizer": {"n": {"char_filter": ["tags"]}}, "char_filter": {"tags": {"type": "html_strip"}}}),
                "Custom normalizer [n] may not use char filter [tags]",
            ),
            (json!({"normalizer": {"n": {"type": "odd"}}}), "Unknown normalizer type [odd]"),
        ] {
            let e = read(&json!({"analysis": analysis})).unwrap_err().to_string();
            assert!(e.contains(says), "{analysis}: {e}");
        }
    }

    #[test]
    fn what_is_not_supported_is_refused_by_name() {
        for (analysis, says) in [
            (json!({"analyzer": {"x": {"stopwords": ["a"]}}}), "must specify either an analyzer type"),
            (json!({"analyzer": {"x": {"type": "klingon"}}}), "Unknown analyzer type [klingon] for [x]"),
            (json!({"analyzer": {"x": {"type": "custom"}}}), "must be configured with a tokenizer"),
            (json!({"analyzer": {"x": {"type": "custom", "tokenizer": "classic"}}}), "tokenizer [classic]"),
            (
                json!({"analyzer": {"x": {"tokenizer": "standard", "filter": ["common_grams"]}}}),
                "[common_grams]",
            ),
            (
                json!({"analyzer": {"x": {"tokenizer": "standard", "filter": ["shingle", "shingle"]}}}),
                "a second shingle or cjk_bigram filter",
            ),
            (json!({"analyzer": {"x": {"type": "keyword"}}}), "Unknown analyzer type [keyword]"),
            (json!({"tokenizer": {"t": {"type": "ngram", "token_chars": ["letter", "odd"]}}}), "'odd'"),
            (json!({"tokenizer": {"t": {"type": "ngram", "min_gram": 2, "max_gram": 4}}}), "max_ngram_diff"),
            (json!({"filter": {"f": {"type": "common_grams"}}}), "filter type [common_grams]"),
            (json!({"filter": {"f": {"type": "word_delimiter", "adjust_offsets": false}}}), "adjust_offsets"),
            (
                json!({"filter": {"f": {"type": "ngram", "min_gram": 1, "max_gram": 3}}}),
                "index.max_ngram_diff",
            ),
            (json!({"filter": {"f": {"type": "edge_ngram", "min_gram": 0}}}), "[min_gram]"),
            (json!({"filter": {"f": {"type": "length", "min": 3, "max": 2}}}), "minimum length"),
            (json!({"filter": {"f": {"type": "truncate", "length": "x"}}}), "whole number"),
            (json!({"analyzer": {"x": {"type": "simple", "stopwords": ["a"]}}}), "stopwords"),
            (
                json!({"filter": {"f": {"type": "stemmer", "language": "german2"}}}),
                "stemmer language [german2]",
            ),
            (json!({"analyzer": {"x": {"type": "english", "stem_exclusion": ["a"]}}}), "stem_exclusion"),
            (json!({"analyzer": {"x": {"type": "snowball", "language": "Armenian"}}}), "language [Armenian]"),
            (
                json!({"filter": {"f": {"type": "snowball", "language": "Klingon"}}}),
                "Snowball language [Klingon]",
            ),
            (
                json!({"filter": {"f": {"type": "stemmer", "language": "armenian"}}}),
                "stemmer language [armenian]",
            ),
            (json!({"analyzer": {"x": {"type": "english", "stopwords": "_klingon_"}}}), "_klingon_"),
        ] {
            let e = read(&json!({"analysis": analysis})).unwrap_err().to_string();
            assert!(e.contains(says), "{analysis}: {e}");
        }
    }
}
