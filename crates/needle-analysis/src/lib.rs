//! Text -> tokens. A token is a term with its position (counting every token
//! the tokenizer produced, removed stop words included, as Lucene does) and its
//! UTF-8 byte offsets into the original text.
//!
//! The default analyzer follows Lucene's `StandardAnalyzer`: UAX #29 word
//! boundaries, lowercase, no stop words, tokens longer than 255 characters
//! split into 255-character pieces. See [`Analyzer`] for per-field options.

mod analyzer;
mod char_filters;
mod cjk_bigram;
mod filters;
mod gram_tokenizer;
mod html_strip;
pub mod kstem;
mod light_stemmers;
#[cfg(test)]
mod lucene_cases;
mod pattern_tokenizer;
pub mod porter;
mod shingle;
mod stopwords;
mod swedish;
mod synonym_filter;
mod synonyms;
mod tables;
mod tokenizer;
mod word_delimiter;

pub use analyzer::{Analyzer, AnalyzerKind, Language, QueryTerms, Token};
pub use char_filters::{check_replacement, java_regex, CharFilter, Mapping};
pub use cjk_bigram::{CjkBigram, SCRIPTS};
pub use filters::{Grams, Snowball, TokenFilter};
pub use gram_tokenizer::{GramTokenizer, TokenChars};
pub use html_strip::HtmlStrip;
pub use light_stemmers::{arabic_normalize, german_normalize, LightStemmer};
pub use pattern_tokenizer::{CharGroupTokenizer, PathHierarchy, PatternTokenizer};
pub use shingle::Shingle;
pub use stopwords::ENGLISH_STOP_WORDS;
pub use synonyms::{RuleError, SynonymMap};
pub use tokenizer::{word_type, Tokenizer};
pub use word_delimiter::{Part, PartOffsets, PlainPart, PlainState, Split, WordDelimiter};
