//! Token filters: lowercasing and uppercasing (Java's per-character
//! mappings, so terms equal Lucene's), ASCII folding, stop words, the English
//! possessive, stemming and a few that cut or turn a term. Each changes a
//! token's term or removes the token (its position stays counted); the
//! expanding ones ([`TokenFilter::expands`]) turn one term into several at
//! the token's position (n-grams, a folded term and its original).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rust_stemmers::{Algorithm, Stemmer};

use regex::Regex;

use crate::analyzer::Token;
use crate::cjk_bigram::CjkBigram;
use crate::kstem;
use crate::light_stemmers::{arabic_normalize, german_normalize, LightStemmer};
use crate::porter;
use crate::shingle::Shingle;
use crate::synonyms::SynonymMap;
use crate::tables::ascii_folding::ASCII_FOLDING;
use crate::tables::char_classes::{DIGITS, NON_SPACING_MARKS};
use crate::tables::cjk_width::{HALFWIDTH_KANA, SEMI_VOICED, VOICED};
use crate::tokenizer::in_ranges;
use crate::word_delimiter::WordDelimiter;

/// One step of an analyzer after its tokenizer, as Lucene's filter of the same name.
pub enum TokenFilter {
    /// `LowerCaseFilter`.
    Lowercase,
    /// `TurkishLowerCaseFilter`: Turkish's dotted and dotless `i`.
    TurkishLowercase,
    /// `EnglishPossessiveFilter`: a final `'s` (or `'S`) goes, with any of
    /// the three apostrophes Unicode text writes it with.
    EnglishPossessive,
    /// `StopFilter`: removes the words of the set (compared as they are, or
    /// lowercased when `ignore_case`, the set then holding lowercase words).
    Stop { words: HashSet<String>, ignore_case: bool },
    /// `PorterStemFilter` (`porter.rs`).
    PorterStem,
    /// `SnowballFilter`: the Snowball stemmer of a language (English's is "Porter2").
    Snowball(Snowball),
    /// `ASCIIFoldingFilter`: letters, digits and symbols outside Basic Latin
    /// become their ASCII equivalents where one exists (`é` to `e`, `æ` to `ae`).
    AsciiFolding,
    /// `UpperCaseFilter`.
    Uppercase,
    /// `TrimFilter`: leading and trailing characters up to U+0020 go.
    Trim,
    /// `ReverseStringFilter`: the characters in reverse order.
    Reverse,
    /// `ApostropheFilter`: an apostrophe and all after it go.
    Apostrophe,
    /// `LengthFilter`: keeps terms of `min..=max` UTF-16 units.
    Length { min: usize, max: usize },
    /// `TruncateTokenFilter`: terms cut to their first `length` UTF-16 units.
    Truncate(usize),
    /// `ASCIIFoldingFilter` with `preserveOriginal`: the folded term, then
    /// the original when folding changed it.
    AsciiFoldingKeepingOriginal,
    /// `NGramTokenFilter` (`edge`: `EdgeNGramTokenFilter`): the term's
    /// pieces of `min..=max` characters (from its start only, when `edge`),
    /// by start then length; a term outside those lengths goes, or stays
    /// whole with `preserve_original`.
    Grams(Grams),
    /// `SynonymFilter` (`SynonymGraphFilter` when the map says so): a run of
    /// terms a rule names becomes its synonyms, beside the original when the
    /// rules keep it (`synonyms.rs`, `synonym_filter.rs`).
    Synonyms(Arc<SynonymMap>),
    /// `ElisionFilter`: an article and the apostrophe after it (`l'`, `qu’`)
    /// go from the front of a term (articles compared lowercased when `ignore_case`).
    Elision { articles: HashSet<String>, ignore_case: bool },
    /// `DecimalDigitFilter`: every decimal digit (Java's `isDigit`) becomes its ASCII digit.
    DecimalDigit,
    /// `EnglishMinimalStemFilter`: plurals made singular (`ponies` to `pony`, `cats` to `cat`).
    MinimalEnglish,
    /// `KStemFilter`: Krovetz's dictionary-checked stemmer (`kstem.rs`).
    KStem,
    /// A language's light stemmer (`FrenchLightStemFilter`, ...: `light_stemmers.rs`).
    LightStem(LightStemmer),
    /// `GermanNormalizationFilter`: `ß` to `ss`, umlauts (written or not) to their vowel.
    GermanNormalization,
    /// `ArabicNormalizationFilter`: hamza seats to a bare alef, teh marbuta
    /// to heh, alef maksura to yeh, no diacritics or tatweel.
    ArabicNormalization,
    /// `SetKeywordMarkerFilter` / `PatternKeywordMarkerFilter`: marks the
    /// terms of the set (compared lowercased when `ignore_case`), or those the
    /// whole `pattern` matches, as keywords: the stemmers after leave them be.
    KeywordMarker { words: HashSet<String>, ignore_case: bool, pattern: Option<Regex> },
    /// `StemmerOverrideFilter`: a term the map names (and no keyword) becomes
    /// its stem there, marked as a keyword.
    StemmerOverride(Arc<HashMap<String, String>>),
    /// Elasticsearch's `UniqueTokenFilter`: a term already given by the text
    /// goes (among the tokens of its own position alone when
    /// `only_on_same_position`). Unlike a stop word it leaves no hole: the
    /// token after it keeps its own position increment. One of the filters
    /// that look across tokens ([`TokenFilter::looks_across`]).
    Unique { only_on_same_position: bool },
    /// `LimitTokenCountFilter`: the text's first `max` tokens; the rest go.
    Limit(usize),
    /// `WordDelimiterGraphFilter` (`word_delimiter.rs`): a term cut into
    /// parts, each at a position of its own (the tokens after it move on by
    /// as many), a joined part or the original spanning several. It looks
    /// across tokens: it counts the positions it added.
    WordDelimiter(Box<WordDelimiter>),
    /// `ShingleFilter` (`shingle.rs`): each token joined with the ones after
    /// it. It sees a text's tokens whole, so the analyzer gathers them for it.
    Shingle(Box<Shingle>),
    /// `CJKWidthFilter`: fullwidth ASCII to ASCII, halfwidth katakana to
    /// their fullwidth forms (a halfwidth voiced mark joined to the kana before it).
    CjkWidth,
    /// `CJKBigramFilter` (`cjk_bigram.rs`): runs of CJK characters as
    /// overlapping pairs. It reads the next token before it gives one, so the
    /// analyzer gathers a text's tokens for it.
    CjkBigram(Box<CjkBigram>),
}

/// A language's Snowball stemmer, by the name Lucene's SnowballFilter takes.
pub struct Snowball {
    pub language: &'static str,
    stemmer: SnowballStemmer,
}

enum SnowballStemmer {
    /// The rust-stemmers crate's.
    Crate(Stemmer),
    /// Written out here (`swedish.rs`): the crate's is an earlier Snowball's.
    Swedish,
    /// The crate's, whose letters with a cedilla (`ş`, `ţ`) Lucene's later
    /// Snowball writes with a comma below (`ș`, `ț`), as it reads both.
    Romanian(Stemmer),
    /// The crate's, after what Lucene's later Snowball adds before it
    /// (`german_umlauts`): `ae`, `oe`, `ue` read as umlauts.
    German(Stemmer),
}

/// The languages whose Snowball stemmer here (the rust-stemmers crate)
/// stems as Lucene's does: every word of `tests/golden/lucene/snowball.jsonl`
/// alike. Three more are offered by `Snowball::named` as Lucene's later
/// Snowball has them: Swedish written out here (`swedish.rs`), Romanian's
/// letters with a cedilla read and written as Lucene's (comma below), and
/// German reading `ae`, `oe`, `ue` as umlauts first (`german_umlauts`).
const SNOWBALL_LANGUAGES: &[(&str, Algorithm)] = &[
    ("Arabic", Algorithm::Arabic),
    ("Danish", Algorithm::Danish),
    ("Dutch", Algorithm::Dutch),
    ("English", Algorithm::English),
    ("Finnish", Algorithm::Finnish),
    ("French", Algorithm::French),
    ("Greek", Algorithm::Greek),
    ("Hungarian", Algorithm::Hungarian),
    ("Italian", Algorithm::Italian),
    ("Norwegian", Algorithm::Norwegian),
    ("Portuguese", Algorithm::Portuguese),
    ("Russian", Algorithm::Russian),
    ("Spanish", Algorithm::Spanish),
    ("Tamil", Algorithm::Tamil),
    ("Turkish", Algorithm::Turkish),
];

impl Snowball {
    /// The languages Needle has a stemmer of, as Lucene names them.
    pub fn languages() -> impl Iterator<Item = &'static str> {
        let mut all: Vec<&'static str> = SNOWBALL_LANGUAGES.iter().map(|(name, _)| *name).collect();
        all.extend(["Swedish", "Romanian", "German"]);
        all.sort_unstable();
        all.into_iter()
    }

    /// The stemmer of `language` (as Lucene names it: `French`), if Needle has it.
    pub fn named(language: &str) -> Option<Snowball> {
        match language {
            "Swedish" => return Some(Snowball { language: "Swedish", stemmer: SnowballStemmer::Swedish }),
            "Romanian" => {
                let stemmer = SnowballStemmer::Romanian(Stemmer::create(Algorithm::Romanian));
                return Some(Snowball { language: "Romanian", stemmer });
            }
            "German" => {
                let stemmer = SnowballStemmer::German(Stemmer::create(Algorithm::German));
                return Some(Snowball { language: "German", stemmer });
            }
            _ => {}
        }
        let &(language, algorithm) = SNOWBALL_LANGUAGES.iter().find(|(name, _)| *name == language)?;
        Some(Snowball { language, stemmer: SnowballStemmer::Crate(Stemmer::create(algorithm)) })
    }

    /// The stem of `term`.
    pub fn stem(&self, term: &str) -> String {
        match &self.stemmer {
            SnowballStemmer::Crate(stemmer) => stemmer.stem(term).into_owned(),
            SnowballStemmer::Swedish => crate::swedish::stem(term),
            SnowballStemmer::German(stemmer) => stemmer.stem(&german_umlauts(term)).into_owned(),
            SnowballStemmer::Romanian(stemmer) => {
                let cedillas: String = term
                    .chars()
                    .map(|c| match c {
                        'ș' => 'ş',
                        'ț' => 'ţ',
                        'Ș' => 'Ş',
                        'Ț' => 'Ţ',
                        c => c,
                    })
                    .collect();
                let stem = stemmer.stem(&cedillas);
                stem.chars()
                    .map(|c| match c {
                        'ş' => 'ș',
                        'ţ' => 'ț',
                        'Ş' => 'Ș',
                        'Ţ' => 'Ț',
                        c => c,
                    })
                    .collect()
            }
        }
    }
}

/// `term` as Lucene's later Snowball German reads it before stemming (the
/// earlier German2 variant's first steps): a `u` or `y` between vowels
/// marked as a consonant (`U`, `Y`, which the stemmer reads so and writes
/// back lowercase), then, left to right, `ae`, `oe` and `ue` as `ä`, `ö`
/// and `ü`, but a `u` after `q`.
fn german_umlauts(term: &str) -> String {
    let vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y' | 'ä' | 'ö' | 'ü');
    let mut marked: Vec<char> = term.chars().collect();
    let mut i = 1;
    while i + 1 < marked.len() {
        if matches!(marked[i], 'u' | 'y') && vowel(marked[i - 1]) && vowel(marked[i + 1]) {
            marked[i] = marked[i].to_ascii_uppercase();
            i += 2;
        } else {
            i += 1;
        }
    }
    let mut out = String::with_capacity(term.len());
    let mut i = 0;
    while i < marked.len() {
        let pair = (marked[i], marked.get(i + 1).copied());
        match pair {
            ('a', Some('e')) => out.push('ä'),
            ('o', Some('e')) => out.push('ö'),
            ('u', Some('e')) => out.push('ü'),
            ('q', Some('u')) => out.push_str("qu"),
            (c, _) => {
                out.push(c);
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    out
}

/// The parameters of [`TokenFilter::Grams`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grams {
    pub edge: bool,
    pub min: usize,
    pub max: usize,
    pub preserve_original: bool,
}

impl std::fmt::Debug for TokenFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenFilter::Lowercase => f.write_str("Lowercase"),
            TokenFilter::TurkishLowercase => f.write_str("TurkishLowercase"),
            TokenFilter::EnglishPossessive => f.write_str("EnglishPossessive"),
            TokenFilter::Stop { words, ignore_case } => {
                write!(f, "Stop({} words, ignore_case {ignore_case})", words.len())
            }
            TokenFilter::PorterStem => f.write_str("PorterStem"),
            TokenFilter::Snowball(s) => write!(f, "Snowball({})", s.language),
            TokenFilter::AsciiFolding => f.write_str("AsciiFolding"),
            TokenFilter::Uppercase => f.write_str("Uppercase"),
            TokenFilter::Trim => f.write_str("Trim"),
            TokenFilter::Reverse => f.write_str("Reverse"),
            TokenFilter::Apostrophe => f.write_str("Apostrophe"),
            TokenFilter::Length { min, max } => write!(f, "Length({min}..={max})"),
            TokenFilter::Truncate(length) => write!(f, "Truncate({length})"),
            TokenFilter::AsciiFoldingKeepingOriginal => f.write_str("AsciiFoldingKeepingOriginal"),
            TokenFilter::Grams(g) => write!(f, "{g:?}"),
            TokenFilter::Synonyms(_) => f.write_str("Synonyms"),
            TokenFilter::Elision { articles, ignore_case } => {
                write!(f, "Elision({} articles, ignore_case {ignore_case})", articles.len())
            }
            TokenFilter::DecimalDigit => f.write_str("DecimalDigit"),
            TokenFilter::MinimalEnglish => f.write_str("MinimalEnglish"),
            TokenFilter::KStem => f.write_str("KStem"),
            TokenFilter::LightStem(l) => write!(f, "LightStem({l:?})"),
            TokenFilter::GermanNormalization => f.write_str("GermanNormalization"),
            TokenFilter::ArabicNormalization => f.write_str("ArabicNormalization"),
            TokenFilter::KeywordMarker { words, ignore_case, pattern } => {
                write!(
                    f,
                    "KeywordMarker({} words, ignore_case {ignore_case}, pattern {pattern:?})",
                    words.len()
                )
            }
            TokenFilter::StemmerOverride(map) => write!(f, "StemmerOverride({} rules)", map.len()),
            TokenFilter::Unique { only_on_same_position } => {
                write!(f, "Unique(only_on_same_position {only_on_same_position})")
            }
            TokenFilter::Limit(max) => write!(f, "Limit({max})"),
            TokenFilter::WordDelimiter(wd) => write!(f, "{wd:?}"),
            TokenFilter::Shingle(s) => write!(f, "{s:?}"),
            TokenFilter::CjkWidth => f.write_str("CjkWidth"),
            TokenFilter::CjkBigram(b) => write!(f, "{b:?}"),
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
        TokenFilter::Snowball(Snowball::named("English").expect("English has a Snowball stemmer"))
    }

    /// Whether it may turn a term into several ([`Self::expand`] then, not [`Self::apply`]).
    pub fn expands(&self) -> bool {
        matches!(self, TokenFilter::AsciiFoldingKeepingOriginal | TokenFilter::Grams(_))
    }

    /// Whether a query reads the tokens it makes by position alone, not as
    /// a graph (Elasticsearch disables graph queries after shingles of several
    /// sizes and after CJK pairs kept beside their characters).
    pub fn disables_graph(&self) -> bool {
        match self {
            TokenFilter::Shingle(s) => s.disables_graph(),
            TokenFilter::CjkBigram(b) => b.unigrams,
            _ => false,
        }
    }

    /// Whether it normalizes a term without cutting it or adding others
    /// (Elasticsearch's normalizing filters): what a normalizer may hold,
    /// and what an analyzer's normalization of wildcard and fuzzy text runs.
    pub fn normalizes(&self) -> bool {
        matches!(
            self,
            TokenFilter::Lowercase
                | TokenFilter::Uppercase
                | TokenFilter::AsciiFolding
                | TokenFilter::AsciiFoldingKeepingOriginal
                | TokenFilter::Trim
                | TokenFilter::DecimalDigit
                | TokenFilter::ArabicNormalization
                | TokenFilter::GermanNormalization
                | TokenFilter::CjkWidth
                | TokenFilter::Elision { .. }
        )
    }

    /// Whether it sees a text's tokens whole (the analyzer gathers them for it).
    pub fn sees_whole_text(&self) -> bool {
        matches!(self, TokenFilter::Shingle(_) | TokenFilter::CjkBigram(_) | TokenFilter::Synonyms(_))
    }

    /// Whether it decides by the tokens before (see `analyzer.rs`'s
    /// `Across`); alone on a term it changes nothing.
    pub fn looks_across(&self) -> bool {
        matches!(self, TokenFilter::Unique { .. } | TokenFilter::Limit(_) | TokenFilter::WordDelimiter(_))
    }

    /// The terms an expanding filter makes of `term`, in Lucene's order,
    /// into `out` (none: the token is removed).
    pub fn expand(&self, term: &str, out: &mut Vec<String>) {
        match self {
            TokenFilter::AsciiFoldingKeepingOriginal => {
                let mut folded = term.to_string();
                fold_to_ascii(&mut folded);
                let changed = folded != term;
                out.push(folded);
                if changed {
                    out.push(term.to_string());
                }
            }
            TokenFilter::Grams(g) => grams(g, term, out),
            other => {
                let mut term = term.to_string();
                if other.apply(&mut term) {
                    out.push(term);
                }
            }
        }
    }

    /// Applies the filter to `term`; `false`: the token is removed.
    pub fn apply(&self, term: &mut String) -> bool {
        match self {
            TokenFilter::Lowercase => lowercase_in_place(term),
            TokenFilter::TurkishLowercase => turkish_lowercase(term),
            TokenFilter::EnglishPossessive => strip_possessive(term),
            TokenFilter::Stop { words, ignore_case: false } => return !words.contains(term.as_str()),
            TokenFilter::Stop { words, ignore_case: true } => {
                let mut lower = String::new();
                lowercase_into(term, &mut lower);
                return !words.contains(&lower);
            }
            TokenFilter::PorterStem => *term = porter::stem(term),
            TokenFilter::Snowball(s) => *term = s.stem(term),
            TokenFilter::AsciiFolding => fold_to_ascii(term),
            TokenFilter::Uppercase => uppercase_in_place(term),
            TokenFilter::Trim => {
                let trimmed = term.trim_matches(|c| c <= ' ');
                if trimmed.len() != term.len() {
                    *term = trimmed.to_string();
                }
            }
            TokenFilter::Reverse => *term = term.chars().rev().collect(),
            TokenFilter::Apostrophe => {
                if let Some(at) = term.find(['\'', '\u{2019}']) {
                    term.truncate(at);
                }
            }
            TokenFilter::Length { min, max } => return (*min..=*max).contains(&utf16_len(term)),
            TokenFilter::Truncate(length) => truncate_units(term, *length),
            TokenFilter::AsciiFoldingKeepingOriginal => fold_to_ascii(term),
            TokenFilter::Elision { articles, ignore_case } => {
                if let Some(at) = term.find(['\'', '\u{2019}']) {
                    let article = &term[..at];
                    let known = match ignore_case {
                        true => articles.contains(&article.to_lowercase()),
                        false => articles.contains(article),
                    };
                    if known {
                        let apostrophe = term[at..].chars().next().expect("found").len_utf8();
                        term.drain(..at + apostrophe);
                    }
                }
            }
            TokenFilter::DecimalDigit => {
                if !term.is_ascii() {
                    *term = term.chars().map(ascii_digit).collect();
                }
            }
            TokenFilter::MinimalEnglish => minimal_english(term),
            TokenFilter::KStem => {
                if let Some(stem) = kstem::stem(term) {
                    *term = stem;
                }
            }
            TokenFilter::LightStem(l) => *term = l.stem(term),
            TokenFilter::GermanNormalization => *term = german_normalize(term),
            TokenFilter::ArabicNormalization => *term = arabic_normalize(term),
            TokenFilter::CjkWidth => fold_cjk_width(term),
            TokenFilter::Grams(_)
            | TokenFilter::Synonyms(_)
            | TokenFilter::KeywordMarker { .. }
            | TokenFilter::StemmerOverride(_)
            | TokenFilter::Unique { .. }
            | TokenFilter::Limit(_)
            | TokenFilter::WordDelimiter(_)
            | TokenFilter::Shingle(_)
            | TokenFilter::CjkBigram(_) => {}
        }
        true
    }

    /// Applies the filter to `token`, its keyword mark included (stemmers
    /// leave a keyword be); `false`: the token is removed.
    pub fn apply_token(&self, token: &mut Token) -> bool {
        match self {
            TokenFilter::KeywordMarker { words, ignore_case, pattern } => {
                let marked = match pattern {
                    Some(p) => p.is_match(&token.term),
                    None if *ignore_case => words.contains(&token.term.to_lowercase()),
                    None => words.contains(&token.term),
                };
                token.keyword |= marked;
                true
            }
            TokenFilter::StemmerOverride(map) => {
                if let Some(stem) = map.get(&token.term).filter(|_| !token.keyword) {
                    token.term.clone_from(stem);
                    token.keyword = true;
                }
                true
            }
            TokenFilter::PorterStem
            | TokenFilter::Snowball(_)
            | TokenFilter::MinimalEnglish
            | TokenFilter::KStem
            | TokenFilter::LightStem(_)
                if token.keyword =>
            {
                true
            }
            other => other.apply(&mut token.term),
        }
    }
}

/// Lucene's `EnglishMinimalStemmer`: `ies` to `y` (not after `a` or `e`),
/// a final `s` dropped unless after `u`, `s`, or an `e` after a vowel or `i`.
/// Lucene's CJKWidthFilter on `term`: fullwidth ASCII variants (U+FF01 to
/// U+FF5E) become ASCII; halfwidth katakana become their fullwidth forms, a
/// voiced or semi-voiced mark joining the kana before it where the two have
/// one form (tables from Lucene's filter, `tables/cjk_width.rs`).
fn fold_cjk_width(term: &mut String) {
    if !term.chars().any(|c| ('\u{FF01}'..='\u{FF9F}').contains(&c)) {
        return;
    }
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        match c {
            '\u{FF01}'..='\u{FF5E}' => out.push(char::from_u32(u32::from(c) - 0xFEE0).expect("ASCII")),
            '\u{FF65}'..='\u{FF9F}' => {
                let marks = match c {
                    '\u{FF9E}' => Some(VOICED),
                    '\u{FF9F}' => Some(SEMI_VOICED),
                    _ => None,
                };
                let joined = marks.and_then(|marks| {
                    let before = out.chars().next_back()?;
                    marks.iter().find(|(kana, _)| *kana == before).map(|&(_, both)| both)
                });
                match joined {
                    Some(both) => {
                        out.pop();
                        out.push(both);
                    }
                    None => out.push(HALFWIDTH_KANA[(u32::from(c) - 0xFF65) as usize]),
                }
            }
            c => out.push(c),
        }
    }
    *term = out;
}

fn minimal_english(term: &mut String) {
    let b = term.as_bytes();
    let n = b.len();
    if n < 3 || b[n - 1] != b's' {
        return;
    }
    match b[n - 2] {
        b'u' | b's' => {}
        b'e' if n > 3 && b[n - 3] == b'i' && b[n - 4] != b'a' && b[n - 4] != b'e' => {
            term.truncate(n - 3);
            term.push('y');
        }
        b'e' if matches!(b[n - 3], b'i' | b'a' | b'o' | b'e') => {}
        _ => {
            term.pop();
        }
    }
}

/// `c`'s ASCII digit when it is a decimal digit of another script. Java's
/// digits come in runs of ten from a zero, so a run's start tells the value.
fn ascii_digit(c: char) -> char {
    if c.is_ascii() {
        return c;
    }
    let code = c as u32;
    let i = DIGITS.partition_point(|&(_, last)| last < code);
    match DIGITS.get(i) {
        Some(&(first, _)) if first <= code => char::from(b'0' + ((code - first) % 10) as u8),
        _ => c,
    }
}

/// See [`TokenFilter::Grams`]; lengths count characters (code points), as Lucene's do.
fn grams(g: &Grams, term: &str, out: &mut Vec<String>) {
    let bounds: Vec<usize> = term.char_indices().map(|(i, _)| i).chain([term.len()]).collect();
    let chars = bounds.len() - 1;
    if chars < g.min {
        if g.preserve_original {
            out.push(term.to_string());
        }
        return;
    }
    let starts = if g.edge { 0..1 } else { 0..chars };
    for start in starts {
        for len in g.min..=g.max.min(chars - start) {
            out.push(term[bounds[start]..bounds[start + len]].to_string());
        }
    }
    if g.preserve_original && chars > g.max {
        out.push(term.to_string());
    }
}

/// A term's length as Java counts it (UTF-16 units).
fn utf16_len(term: &str) -> usize {
    term.chars().map(char::len_utf16).sum()
}

/// Cuts `term` to its first `units` UTF-16 units (a character that would
/// straddle the cut goes whole).
fn truncate_units(term: &mut String, units: usize) {
    let mut seen = 0;
    for (i, c) in term.char_indices() {
        seen += c.len_utf16();
        if seen > units {
            term.truncate(i);
            return;
        }
    }
}

/// See [`TokenFilter::AsciiFolding`]: each UTF-16 unit the table names is
/// replaced (characters beyond the Basic Multilingual Plane stay, as Lucene
/// folds one `char` at a time and has no entry for a surrogate).
fn fold_to_ascii(term: &mut String) {
    if term.is_ascii() {
        return;
    }
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        let folded = u16::try_from(c as u32)
            .ok()
            .and_then(|unit| ASCII_FOLDING.binary_search_by_key(&unit, |&(u, _)| u).ok());
        match folded {
            Some(i) => out.push_str(ASCII_FOLDING[i].1),
            None => out.push(c),
        }
    }
    *term = out;
}

/// Uppercases `term` one character at a time, as Java's
/// `Character.toUpperCase` does: a character whose uppercase is several
/// characters (`ß`) stays as it is.
fn uppercase_in_place(term: &mut String) {
    if term.is_ascii() {
        term.make_ascii_uppercase();
        return;
    }
    let word = std::mem::take(term);
    for c in word.chars() {
        let mut upper = c.to_uppercase();
        match (upper.next(), upper.next()) {
            (Some(u), None) => term.push(u),
            _ => term.push(c),
        }
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
    out.extend(word.chars().map(java_lowercase));
}

/// Java's `Character.toLowerCase` of one character.
fn java_lowercase(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        // Only U+0130 (capital I with dot) lowers to two characters; Java maps it to 'i'.
        _ if c == '\u{130}' => 'i',
        _ => c,
    }
}

/// Lucene's `TurkishLowerCaseFilter`: `I` becomes dotless `ı`, unless a
/// combining dot above follows it (other non-spacing marks may come
/// between), which makes it `i` and goes; the rest as Java lowercases.
fn turkish_lowercase(term: &mut String) {
    const COMBINING_DOT_ABOVE: char = '\u{307}';
    let mark = |c: char| in_ranges(NON_SPACING_MARKS, c);
    let chars: Vec<char> = term.chars().collect();
    let mut out = String::with_capacity(term.len());
    let mut i_or_after = false;
    for (i, &c) in chars.iter().enumerate() {
        i_or_after = c == 'I' || (i_or_after && mark(c));
        match c {
            COMBINING_DOT_ABOVE if i_or_after => {}
            'I' => {
                let dotted =
                    chars[i + 1..].iter().take_while(|&&m| mark(m)).any(|&m| m == COMBINING_DOT_ABOVE);
                out.push(if dotted { 'i' } else { '\u{131}' });
                i_or_after = dotted;
            }
            other => out.push(java_lowercase(other)),
        }
    }
    *term = out;
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
    fn folds_to_ascii_as_lucene_table_says() {
        let mut term = "Ærøskøbing café naïve ﬁ straße ①Ⓐ 𝔸".to_string();
        assert!(TokenFilter::AsciiFolding.apply(&mut term));
        assert_eq!(term, "AEroskobing cafe naive fi strasse 1A 𝔸");
        assert!(ASCII_FOLDING.windows(2).all(|w| w[0].0 < w[1].0), "the table is in order");
    }

    #[test]
    fn grams_come_by_start_then_length_and_keep_the_original_when_asked() {
        let expand = |edge, min, max, preserve_original, term: &str| {
            let mut out = Vec::new();
            TokenFilter::Grams(Grams { edge, min, max, preserve_original }).expand(term, &mut out);
            out
        };
        assert_eq!(expand(true, 1, 3, false, "qüick"), ["q", "qü", "qüi"]);
        assert_eq!(expand(true, 1, 3, true, "qüick"), ["q", "qü", "qüi", "qüick"]);
        assert_eq!(expand(true, 2, 3, false, "a"), Vec::<String>::new());
        assert_eq!(expand(true, 2, 3, true, "a"), ["a"]);
        assert_eq!(expand(false, 1, 2, false, "abc"), ["a", "ab", "b", "bc", "c"]);
        assert_eq!(expand(false, 2, 2, true, "ab"), ["ab"]);
        let mut out = Vec::new();
        TokenFilter::AsciiFoldingKeepingOriginal.expand("café", &mut out);
        TokenFilter::AsciiFoldingKeepingOriginal.expand("cafe", &mut out);
        assert_eq!(out, ["cafe", "café", "cafe"]);
    }

    /// OpenSearch 3.8's `minimal_english` stems of the same words.
    #[test]
    fn minimal_english_makes_plurals_singular() {
        let stem = |w: &str| {
            let mut t = w.to_string();
            TokenFilter::MinimalEnglish.apply(&mut t);
            t
        };
        let words = ["ponies", "horses", "cats", "bus", "glass", "queries", "plays", "toes", "jumpings"];
        let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
        assert_eq!(stems, ["pony", "horse", "cat", "bus", "glass", "query", "play", "toes", "jumping"]);
    }

    #[test]
    fn cutting_filters_count_utf16_units() {
        let apply = |f: TokenFilter, word: &str| {
            let mut term = word.to_string();
            f.apply(&mut term).then_some(term)
        };
        assert_eq!(apply(TokenFilter::Truncate(3), "ab😀c"), Some("ab".to_string()));
        assert_eq!(apply(TokenFilter::Truncate(4), "ab😀c"), Some("ab😀".to_string()));
        assert_eq!(apply(TokenFilter::Length { min: 2, max: 3 }, "😀"), Some("😀".to_string()));
        assert_eq!(apply(TokenFilter::Length { min: 2, max: 3 }, "abcd"), None);
        assert_eq!(apply(TokenFilter::Apostrophe, "l’homme's"), Some("l".to_string()));
        assert_eq!(apply(TokenFilter::Reverse, "añb😀"), Some("😀bña".to_string()));
        assert_eq!(apply(TokenFilter::Trim, "\t x y \n"), Some("x y".to_string()));
        assert_eq!(apply(TokenFilter::Uppercase, "straße ǆ"), Some("STRAßE Ǆ".to_string()));
    }

    #[test]
    fn lowercases_like_java() {
        let mut s = String::new();
        lowercase_into("İstanbul ΣΊΣΥΦΟΣ ABC", &mut s);
        assert_eq!(s, "istanbul σίσυφοσ abc");
    }

    /// Lucene's SnowballFilter's stems, recorded by `tables/snowball_cases.py`:
    /// every language offered stems each word as Lucene does; the others are not offered.
    #[test]
    fn snowball_stems_equal_lucenes_in_every_language_offered() {
        let (mut cases, mut languages) = (0, HashSet::new());
        crate::lucene_cases::check("snowball", 1, |case| {
            let [language, word, stem]: [String; 3] = serde_json::from_value(case).expect("a case");
            let snowball = Snowball::named(&language)?;
            languages.insert(language.clone());
            cases += 1;
            let got = snowball.stem(&word);
            (got != stem).then(|| format!("{language} {word}: {got} (Lucene: {stem})"))
        });
        assert_eq!(
            languages.len(),
            Snowball::languages().count(),
            "a language offered without recorded stems"
        );
        assert!(cases > 20_000, "only {cases} recorded stems");
        for unlike in ["Porter", "french"] {
            assert!(Snowball::named(unlike).is_none(), "{unlike}");
        }
    }
}
