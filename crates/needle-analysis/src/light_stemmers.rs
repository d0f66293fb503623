//! Jacques Savoy's light stemmers, as Lucene's FrenchLightStemFilter,
//! GermanLightStemFilter, SpanishLightStemFilter, ItalianLightStemFilter and
//! PortugueseLightStemFilter apply them (the stemmers of Elasticsearch's
//! `french`, `german`, `spanish`, `italian` and `portuguese` analyzers, and
//! of its `stemmer` filter's `light_*`
//! languages), and Lucene's GermanNormalizationFilter (`ß` to `ss`, umlauts
//! and `ae`, `oe`, `ue` to their vowel); Leah Larkey's light stemmer for
//! Arabic, as Lucene's ArabicStemFilter applies it (an article, conjunction
//! or preposition off the front, common endings off the back), and its
//! ArabicNormalizationFilter (hamza and madda seats to a bare alef, teh
//! marbuta to heh, alef maksura to yeh, no diacritics or tatweel). They cut a few endings and fold
//! accents, working on the term's UTF-16 units with Lucene's lengths, so a
//! threshold counts what Lucene counts. `tests/golden/lucene/light_stems.jsonl`
//! holds Lucene's stems of words in each language, compared here.

use crate::tokenizer::is_java_letter;

/// The languages of the light stemmers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LightStemmer {
    French,
    German,
    Spanish,
    Italian,
    Portuguese,
    Arabic,
}

impl LightStemmer {
    /// The stem of `term`.
    pub fn stem(self, term: &str) -> String {
        let mut s: Vec<u16> = term.encode_utf16().collect();
        let len = match self {
            LightStemmer::French => french(&mut s),
            LightStemmer::German => german(&mut s),
            LightStemmer::Spanish => spanish(&mut s),
            LightStemmer::Italian => italian(&mut s),
            LightStemmer::Portuguese => portuguese(&mut s),
            LightStemmer::Arabic => arabic(&mut s),
        };
        String::from_utf16_lossy(&s[..len])
    }
}

/// Arabic's article, conjunction and prepositions, in the order Lucene tries them.
const ARABIC_PREFIXES: [&str; 7] = [
    "\u{627}\u{644}",
    "\u{648}\u{627}\u{644}",
    "\u{628}\u{627}\u{644}",
    "\u{643}\u{627}\u{644}",
    "\u{641}\u{627}\u{644}",
    "\u{644}\u{644}",
    "\u{648}",
];

/// Arabic's endings, in the order Lucene takes them off (each at most once, one after another).
const ARABIC_SUFFIXES: [&str; 10] = [
    "\u{647}\u{627}",
    "\u{627}\u{646}",
    "\u{627}\u{62a}",
    "\u{648}\u{646}",
    "\u{64a}\u{646}",
    "\u{64a}\u{647}",
    "\u{64a}\u{629}",
    "\u{647}",
    "\u{629}",
    "\u{64a}",
];

/// Lucene's ArabicStemmer: the first prefix that leaves two units (three
/// for `و`) taken off, then every suffix in turn that leaves two.
fn arabic(s: &mut [u16]) -> usize {
    let mut len = s.len();
    for prefix in ARABIC_PREFIXES {
        let n = prefix.encode_utf16().count();
        let shortest = if n == 1 { 4 } else { n + 2 };
        if len >= shortest && prefix.encode_utf16().eq(s[..n].iter().copied()) {
            s.copy_within(n..len, 0);
            len -= n;
            break;
        }
    }
    for suffix in ARABIC_SUFFIXES {
        let n = suffix.encode_utf16().count();
        if len >= n + 2 && ends_with(s, len, suffix) {
            len -= n;
        }
    }
    len
}

/// Lucene's ArabicNormalizer: hamza and madda seats (`آ`, `أ`, `إ`) to a bare
/// alef, alef maksura to yeh, teh marbuta to heh; tatweel and the harakat removed.
pub fn arabic_normalize(term: &str) -> String {
    term.chars()
        .filter(|c| !matches!(c, '\u{640}' | '\u{64b}'..='\u{652}'))
        .map(|c| match c {
            '\u{622}' | '\u{623}' | '\u{625}' => '\u{627}',
            '\u{649}' => '\u{64a}',
            '\u{629}' => '\u{647}',
            c => c,
        })
        .collect()
}

/// `c` as a UTF-16 unit (the stemmers' letters are all in the BMP).
const fn u(c: char) -> u16 {
    c as u16
}

/// Whether `s[..len]` ends with `suffix` (Lucene's `StemmerUtil.endsWith`);
/// compared in place, as it is asked for every rule of every term.
fn ends_with(s: &[u16], len: usize, suffix: &str) -> bool {
    let n = suffix.encode_utf16().count();
    len >= n && suffix.encode_utf16().eq(s[len - n..len].iter().copied())
}

/// Removes `s[at]` from `s[..len]`, the length after.
fn delete(s: &mut [u16], at: usize, len: usize) -> usize {
    s.copy_within(at + 1..len, at);
    len - 1
}

fn is_letter(unit: u16) -> bool {
    char::from_u32(u32::from(unit)).is_some_and(is_java_letter)
}

/// Each accented vowel of the Spanish and Italian stemmers made plain.
fn fold_vowels(s: &mut [u16]) {
    for c in s.iter_mut() {
        *c = match char::from_u32(u32::from(*c)) {
            Some('à' | 'á' | 'â' | 'ä') => u('a'),
            Some('ò' | 'ó' | 'ô' | 'ö') => u('o'),
            Some('è' | 'é' | 'ê' | 'ë') => u('e'),
            Some('ù' | 'ú' | 'û' | 'ü') => u('u'),
            Some('ì' | 'í' | 'î' | 'ï') => u('i'),
            _ => *c,
        };
    }
}

fn spanish(s: &mut [u16]) -> usize {
    let len = s.len();
    if len < 5 {
        return len;
    }
    fold_vowels(s);
    let at = |i: usize| char::from_u32(u32::from(s[len - i])).unwrap_or('\0');
    match at(1) {
        'o' | 'a' | 'e' => len - 1,
        's' if at(2) == 'e' && at(3) == 's' && at(4) == 'e' => len - 2,
        's' if at(2) == 'e' && at(3) == 'c' => {
            s[len - 3] = u('z');
            len - 2
        }
        's' if matches!(at(2), 'o' | 'a' | 'e') => len - 2,
        _ => len,
    }
}

fn italian(s: &mut [u16]) -> usize {
    let len = s.len();
    if len < 6 {
        return len;
    }
    fold_vowels(s);
    let at = |i: usize| char::from_u32(u32::from(s[len - i])).unwrap_or('\0');
    match (at(1), at(2)) {
        ('e', 'i' | 'h') | ('i', 'h' | 'i') | ('a' | 'o', 'i') => len - 2,
        ('e' | 'i' | 'a' | 'o', _) => len - 1,
        _ => len,
    }
}

fn portuguese(s: &mut [u16]) -> usize {
    if s.len() < 4 {
        return s.len();
    }
    let mut len = portuguese_suffix(s, s.len());
    if len > 3 && s[len - 1] == u('a') {
        len = portuguese_feminine(s, len);
    }
    if len > 4 && matches!(char::from_u32(u32::from(s[len - 1])), Some('e' | 'a' | 'o')) {
        len -= 1;
    }
    for c in s[..len].iter_mut() {
        *c = match char::from_u32(u32::from(*c)) {
            Some('à' | 'á' | 'â' | 'ä' | 'ã') => u('a'),
            Some('ò' | 'ó' | 'ô' | 'ö' | 'õ') => u('o'),
            Some('è' | 'é' | 'ê' | 'ë') => u('e'),
            Some('ù' | 'ú' | 'û' | 'ü') => u('u'),
            Some('ì' | 'í' | 'î' | 'ï') => u('i'),
            Some('ç') => u('c'),
            _ => *c,
        };
    }
    len
}

/// Portuguese plurals and `-mente`.
fn portuguese_suffix(s: &mut [u16], len: usize) -> usize {
    if len > 4
        && ends_with(s, len, "es")
        && matches!(char::from_u32(u32::from(s[len - 3])), Some('r' | 's' | 'l' | 'z'))
    {
        return len - 2;
    }
    if len > 3 && ends_with(s, len, "ns") {
        s[len - 2] = u('m');
        return len - 1;
    }
    if len > 4 && (ends_with(s, len, "eis") || ends_with(s, len, "éis")) {
        set_tail(s, len - 1, "el");
        return len - 1;
    }
    if len > 4 && ends_with(s, len, "ais") {
        s[len - 2] = u('l');
        return len - 1;
    }
    if len > 4 && ends_with(s, len, "óis") {
        set_tail(s, len - 1, "ol");
        return len - 1;
    }
    if len > 4 && ends_with(s, len, "is") {
        s[len - 1] = u('l');
        return len;
    }
    if len > 3 && (ends_with(s, len, "ões") || ends_with(s, len, "ães")) {
        set_tail(s, len - 1, "ão");
        return len - 1;
    }
    if len > 6 && ends_with(s, len, "mente") {
        return len - 5;
    }
    if len > 3 && s[len - 1] == u('s') {
        return len - 1;
    }
    len
}

/// Portuguese feminine endings made masculine.
fn portuguese_feminine(s: &mut [u16], len: usize) -> usize {
    if len > 7 && ["inha", "iaca", "eira"].iter().any(|e| ends_with(s, len, e)) {
        s[len - 1] = u('o');
        return len;
    }
    if len > 6 {
        if ["osa", "ica", "ida", "ada", "iva", "ama"].iter().any(|e| ends_with(s, len, e)) {
            s[len - 1] = u('o');
            return len;
        }
        if ends_with(s, len, "ona") {
            set_tail(s, len - 1, "ão");
            return len - 1;
        }
        if ends_with(s, len, "ora") {
            return len - 1;
        }
        if ends_with(s, len, "esa") {
            s[len - 3] = u('ê');
            return len - 1;
        }
        if ends_with(s, len, "na") {
            s[len - 1] = u('o');
            return len;
        }
    }
    len
}

fn german(s: &mut [u16]) -> usize {
    for c in s.iter_mut() {
        *c = match char::from_u32(u32::from(*c)) {
            Some('ä' | 'à' | 'á' | 'â') => u('a'),
            Some('ö' | 'ò' | 'ó' | 'ô') => u('o'),
            Some('ï' | 'ì' | 'í' | 'î') => u('i'),
            Some('ü' | 'ù' | 'ú' | 'û') => u('u'),
            _ => *c,
        };
    }
    let len = german_step1(s, s.len());
    german_step2(s, len)
}

/// The consonants before which a German `-s` or `-st` is an ending.
fn st_ending(c: u16) -> bool {
    "bdfghklmnt".encode_utf16().any(|e| e == c)
}

fn german_step1(s: &[u16], len: usize) -> usize {
    if len > 5 && ends_with(s, len, "ern") {
        return len - 3;
    }
    if len > 4 && s[len - 2] == u('e') && "mnrs".encode_utf16().any(|e| e == s[len - 1]) {
        return len - 2;
    }
    if len > 3 && s[len - 1] == u('e') {
        return len - 1;
    }
    if len > 3 && s[len - 1] == u('s') && st_ending(s[len - 2]) {
        return len - 1;
    }
    len
}

fn german_step2(s: &[u16], len: usize) -> usize {
    if len > 5 && ends_with(s, len, "est") {
        return len - 3;
    }
    if len > 4 && s[len - 2] == u('e') && (s[len - 1] == u('r') || s[len - 1] == u('n')) {
        return len - 2;
    }
    if len > 4 && ends_with(s, len, "st") && st_ending(s[len - 3]) {
        return len - 2;
    }
    len
}

/// Lucene's GermanNormalizationFilter: `ß` to `ss`; `ä`, `ö`, `ü` to their
/// vowel; `ae`, `oe` to `a`, `o`, and `ue` to `u` but after a vowel or `q`.
pub fn german_normalize(term: &str) -> String {
    #[derive(PartialEq)]
    enum State {
        Ordinary,
        // A vowel or `q` before: no umlaut state for a `u` after it.
        Vowel,
        // An `a`, `o` or `u` that an `e` after may stand for an umlaut of.
        Umlaut,
    }
    let mut out = String::with_capacity(term.len() + 1);
    let mut state = State::Ordinary;
    for c in term.chars() {
        state = match c {
            'a' | 'o' => State::Umlaut,
            'u' if state == State::Ordinary => State::Umlaut,
            'u' => State::Vowel,
            'e' if state == State::Umlaut => {
                // The `e` of an umlaut written out goes.
                state = State::Vowel;
                continue;
            }
            'e' | 'i' | 'q' | 'y' => State::Vowel,
            'ä' | 'ö' | 'ü' => State::Vowel,
            'ß' => State::Ordinary,
            _ => State::Ordinary,
        };
        match c {
            'ä' => out.push('a'),
            'ö' => out.push('o'),
            'ü' => out.push('u'),
            'ß' => out.push_str("ss"),
            other => out.push(other),
        }
    }
    out
}

/// What follows a French rule's match: the normalization (the stem found),
/// the next rules, or one of the two rules that look further first.
#[derive(Clone, Copy)]
enum Then {
    Norm,
    Next,
    /// `-ivement` becomes `-if`.
    Ement,
    /// `-ualisation` becomes `-uel`.
    Isation,
}

/// Lucene's French light rules in order: a term longer than `.0` units
/// ending in `.1` loses `.2` units, its last ones then written over by `.3`.
const FRENCH_RULES: &[(usize, &str, usize, &str, Then)] = &[
    (9, "issement", 6, "r", Then::Norm),
    (8, "issant", 4, "r", Then::Norm),
    (6, "ement", 4, "", Then::Ement),
    (11, "ficatrice", 5, "er", Then::Norm),
    (10, "ficateur", 4, "er", Then::Norm),
    (9, "catrice", 3, "quer", Then::Norm),
    (8, "cateur", 2, "quer", Then::Norm),
    (8, "atrice", 4, "er", Then::Norm),
    (7, "ateur", 3, "er", Then::Norm),
    (6, "trice", 1, "eur", Then::Next),
    (5, "ième", 4, "", Then::Norm),
    (7, "teuse", 2, "r", Then::Norm),
    (6, "teur", 1, "r", Then::Norm),
    (5, "euse", 2, "", Then::Norm),
    (8, "ère", 1, "er", Then::Norm),
    (7, "ive", 1, "f", Then::Norm),
    (4, "folle", 2, "u", Then::Norm),
    (4, "molle", 2, "u", Then::Norm),
    (9, "nnelle", 5, "", Then::Norm),
    (9, "nnel", 3, "", Then::Norm),
    (4, "ète", 1, "et", Then::Next),
    (8, "ique", 4, "", Then::Next),
    (8, "esse", 3, "", Then::Norm),
    (7, "inage", 3, "", Then::Norm),
    (9, "isation", 7, "", Then::Isation),
    (9, "isateur", 7, "", Then::Norm),
    (8, "ation", 5, "", Then::Norm),
    (8, "ition", 5, "", Then::Norm),
];

fn french(s: &mut [u16]) -> usize {
    let mut len = s.len();
    if len > 5 && s[len - 1] == u('x') {
        if s[len - 3] == u('a') && s[len - 2] == u('u') && s[len - 4] != u('e') {
            s[len - 2] = u('l');
        }
        len -= 1;
    }
    if len > 3 && s[len - 1] == u('x') {
        len -= 1;
    }
    if len > 3 && s[len - 1] == u('s') {
        len -= 1;
    }
    for &(longer_than, suffix, cut, tail, then) in FRENCH_RULES {
        if len <= longer_than || !ends_with(s, len, suffix) {
            continue;
        }
        len -= cut;
        set_tail(s, len, tail);
        match then {
            Then::Next => continue,
            Then::Norm => {}
            Then::Ement if len > 3 && ends_with(s, len, "ive") => {
                len -= 1;
                s[len - 1] = u('f');
            }
            Then::Isation if len > 5 && ends_with(s, len, "ual") => s[len - 2] = u('e'),
            Then::Ement | Then::Isation => {}
        }
        return french_norm(s, len);
    }
    french_norm(s, len)
}

/// Overwrites the last units of `s[..len]` with `tail`.
fn set_tail(s: &mut [u16], len: usize, tail: &str) {
    let n = tail.encode_utf16().count();
    for (unit, t) in s[len - n..len].iter_mut().zip(tail.encode_utf16()) {
        *unit = t;
    }
}

fn french_norm(s: &mut [u16], mut len: usize) -> usize {
    if len > 4 {
        for c in s[..len].iter_mut() {
            *c = match char::from_u32(u32::from(*c)) {
                Some('à' | 'á' | 'â') => u('a'),
                Some('ô') => u('o'),
                Some('è' | 'é' | 'ê') => u('e'),
                Some('ù' | 'û') => u('u'),
                Some('î') => u('i'),
                Some('ç') => u('c'),
                _ => *c,
            };
        }
        // A letter doubled is made single.
        let mut previous = s[0];
        let mut i = 1;
        while i < len {
            if s[i] == previous && is_letter(previous) {
                len = delete(s, i, len);
            } else {
                previous = s[i];
                i += 1;
            }
        }
    }
    if len > 4 && ends_with(s, len, "ie") {
        len -= 2;
    }
    if len > 4 {
        if s[len - 1] == u('r') {
            len -= 1;
        }
        if s[len - 1] == u('e') {
            len -= 1;
        }
        if s[len - 1] == u('e') {
            len -= 1;
        }
        if s[len - 1] == s[len - 2] && is_letter(s[len - 1]) {
            len -= 1;
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_come_off_as_in_the_examples() {
        assert_eq!(LightStemmer::Spanish.stem("chicas"), "chic");
        assert_eq!(LightStemmer::Italian.stem("ragazzi"), "ragazz");
        assert_eq!(german_normalize("straße"), "strasse");
        assert_eq!(german_normalize("schoen"), "schon");
        assert_eq!(german_normalize("quelle"), "quelle");
    }

    /// Lucene's light stemmers', German and Arabic normalization's and Turkish lowercasing's
    /// output, recorded by `tables/light_stem_cases.py`.
    #[test]
    fn stems_equal_lucenes() {
        crate::lucene_cases::check("light_stems", 5_001, |case| {
            let [filter, word, want]: [String; 3] = serde_json::from_value(case).expect("a case");
            let got = match filter.as_str() {
                "French" => LightStemmer::French.stem(&word),
                "German" => LightStemmer::German.stem(&word),
                "Spanish" => LightStemmer::Spanish.stem(&word),
                "Italian" => LightStemmer::Italian.stem(&word),
                "Portuguese" => LightStemmer::Portuguese.stem(&word),
                "GermanNormalization" => german_normalize(&word),
                "Arabic" => LightStemmer::Arabic.stem(&word),
                "ArabicNormalization" => arabic_normalize(&word),
                "TurkishLowerCase" => {
                    let mut term = word.clone();
                    crate::TokenFilter::TurkishLowercase.apply(&mut term);
                    term
                }
                other => panic!("unknown filter {other}"),
            };
            (got != want).then(|| format!("{filter} {word}: {got} (Lucene: {want})"))
        });
    }
}
