//! Snowball's Swedish stemmer, as Lucene's SnowballFilter runs it (its
//! generated `SwedishStemmer`), written out by hand: the rust-stemmers
//! crate's comes from an earlier Snowball and stems some words otherwise.
//!
//! R1 starts after the first consonant that follows a vowel, at least three
//! letters in. Three steps, each within R1: the longest of the main endings
//! goes (`s` only after one of `bcdfghjklmnoprtvy`); a final consonant pair
//! (`dd` `gd` `nn` `dt` `gt` `kt` `tt`) loses its last letter; then `lig`,
//! `ig`, `els` go, `öst` becomes `ös` after one of `iklnprtuv`, and `fullt`
//! becomes `full`. `tests/golden/lucene/snowball.jsonl` holds Lucene's stems
//! of Swedish words, compared in `filters.rs`.

const VOWELS: &[char] = &['a', 'e', 'i', 'o', 'u', 'y', 'ä', 'å', 'ö'];
const S_ENDING: &[char] =
    &['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'r', 't', 'v', 'y'];
const OST_ENDING: &[char] = &['i', 'k', 'l', 'n', 'p', 'r', 't', 'u', 'v'];

/// The main endings (of which `s` goes only after an s-ending).
const MAIN_SUFFIXES: &[&str] = &[
    "a", "arna", "erna", "heterna", "orna", "ad", "e", "ade", "ande", "arne", "are", "aste", "en", "anden",
    "aren", "heten", "ern", "ar", "er", "heter", "or", "s", "as", "arnas", "ernas", "ornas", "es", "ades",
    "andes", "ens", "arens", "hetens", "erns", "at", "andet", "het", "ast",
];

const CONSONANT_PAIRS: &[&str] = &["dd", "gd", "nn", "dt", "gt", "kt", "tt"];

/// The stem of `word` (lowercase letters, as the filters before leave them).
pub fn stem(word: &str) -> String {
    let mut w: Vec<char> = word.chars().collect();
    let p1 = region1(&w);
    main_suffix(&mut w, p1);
    consonant_pair(&mut w, p1);
    other_suffix(&mut w, p1);
    w.into_iter().collect()
}

/// Where R1 starts: after the first non-vowel that follows a vowel, and no
/// earlier than three letters in; the word's end when there is none.
fn region1(w: &[char]) -> usize {
    if w.len() < 3 {
        return w.len();
    }
    let Some(vowel) = w.iter().position(|c| VOWELS.contains(c)) else { return w.len() };
    match w[vowel..].iter().position(|c| !VOWELS.contains(c)) {
        Some(at) => (vowel + at + 1).max(3),
        None => w.len(),
    }
}

/// Whether `w` ends with `suffix` inside R1.
fn ends_in_region(w: &[char], p1: usize, suffix: &str) -> bool {
    let n = suffix.chars().count();
    w.len() >= n && w.len() - n >= p1 && w[w.len() - n..].iter().copied().eq(suffix.chars())
}

/// The longest main ending in R1 goes (`s` only after an s-ending, which may lie before R1).
fn main_suffix(w: &mut Vec<char>, p1: usize) {
    let Some(longest) =
        MAIN_SUFFIXES.iter().filter(|s| ends_in_region(w, p1, s)).max_by_key(|s| s.chars().count())
    else {
        return;
    };
    let n = longest.chars().count();
    if *longest == "s" && !(w.len() >= 2 && S_ENDING.contains(&w[w.len() - 2])) {
        return;
    }
    w.truncate(w.len() - n);
}

/// A final consonant pair in R1 loses its last letter.
fn consonant_pair(w: &mut Vec<char>, p1: usize) {
    if CONSONANT_PAIRS.iter().any(|pair| ends_in_region(w, p1, pair)) {
        w.pop();
    }
}

/// `lig`, `ig`, `els` in R1 go; `fullt` becomes `full`, and `öst` in R1
/// `ös` after an ost-ending (which may lie before R1): a `t` less.
fn other_suffix(w: &mut Vec<char>, p1: usize) {
    let dropped = match ["lig", "ig", "els"].into_iter().find(|s| ends_in_region(w, p1, s)) {
        Some(ending) => ending.len(),
        None if ends_in_region(w, p1, "fullt") => 1,
        None if ends_in_region(w, p1, "öst") && w.len() >= 4 && OST_ENDING.contains(&w[w.len() - 4]) => 1,
        None => 0,
    };
    w.truncate(w.len() - dropped);
}
