//! UAX #29 word segmentation, keeping the words Lucene's StandardTokenizer
//! keeps: those holding a letter, a decimal digit, an ideograph, or an emoji.
//! Punctuation, spaces and lone symbols such as `²` between words are dropped.
//!
//! Three corrections bring `unicode-segmentation`'s words to Lucene's:
//! - a character that no UAX #29 rule lets inside a word (say U+00B8, the
//!   cedilla, which the crate lets join `19¸u`) ends the word there;
//! - a word longer than 255 characters is cut after 255, and the rest is
//!   segmented afresh (so `…,209,202` continues as `209,202`, as Lucene's
//!   scanner restarts);
//! - emoji and pictographs (`©`, `®`, `👍`) are words of their own.

use unicode_segmentation::UnicodeSegmentation;

use crate::gram_tokenizer::GramTokenizer;
use crate::pattern_tokenizer::{CharGroupTokenizer, PathHierarchy, PatternTokenizer};
use crate::tables::letters::LETTERS;

/// Lucene's default `maxTokenLength`: longer words are cut into pieces of this many characters.
pub const MAX_TOKEN_CHARS: usize = 255;

/// How an analyzer cuts text into tokens, as Lucene's tokenizer of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tokenizer {
    /// `StandardTokenizer`: UAX #29 words ([`for_each_word`]).
    Standard,
    /// `WhitespaceTokenizer`: runs of characters Java does not call whitespace.
    Whitespace,
    /// `KeywordTokenizer`: the whole text, one token.
    Keyword,
    /// `LetterTokenizer`: runs of what Java calls letters.
    Letter,
    /// Elasticsearch's `lowercase` tokenizer: `LetterTokenizer`'s tokens,
    /// lowercased (the analyzer lowercases them, as if a lowercase filter came first).
    Lowercase,
    /// `NGramTokenizer` or `EdgeNGramTokenizer` (`gram_tokenizer.rs`).
    Grams(GramTokenizer),
    /// `PatternTokenizer` (`pattern_tokenizer.rs`).
    Pattern(PatternTokenizer),
    /// Elasticsearch's `char_group` tokenizer (`pattern_tokenizer.rs`).
    CharGroup(CharGroupTokenizer),
    /// `PathHierarchyTokenizer` (`pattern_tokenizer.rs`).
    PathHierarchy(PathHierarchy),
}

impl Tokenizer {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "standard" => Some(Self::Standard),
            "whitespace" => Some(Self::Whitespace),
            "keyword" => Some(Self::Keyword),
            "letter" => Some(Self::Letter),
            "lowercase" => Some(Self::Lowercase),
            _ => None,
        }
    }

    /// Whether its tokens come out lowercased.
    pub fn lowercases(&self) -> bool {
        *self == Tokenizer::Lowercase
    }

    /// Calls `emit(start, end)` with the byte range of every token of `text`, in order.
    pub fn for_each_token(&self, text: &str, mut emit: impl FnMut(usize, usize)) {
        match self {
            Tokenizer::Standard => for_each_word(text, emit),
            Tokenizer::Whitespace => for_each_run(text, |c| !is_java_whitespace(c), MAX_TOKEN_CHARS, emit),
            Tokenizer::Letter | Tokenizer::Lowercase => {
                for_each_run(text, is_java_letter, MAX_TOKEN_CHARS, emit)
            }
            Tokenizer::Keyword => emit(0, text.len()),
            Tokenizer::Grams(g) => g.for_each_gram(text, emit),
            Tokenizer::Pattern(p) => p.for_each_token(text, emit),
            Tokenizer::CharGroup(g) => g.for_each_token(text, emit),
            Tokenizer::PathHierarchy(p) => p.for_each_token(text, emit),
        }
    }

    /// The type `_analyze` shows for `token` (Lucene's type attribute).
    pub fn token_type(&self, token: &str) -> &'static str {
        match self {
            Tokenizer::Standard => word_type(token),
            Tokenizer::Whitespace
            | Tokenizer::Keyword
            | Tokenizer::Letter
            | Tokenizer::Lowercase
            | Tokenizer::Grams(_)
            | Tokenizer::Pattern(_)
            | Tokenizer::CharGroup(_)
            | Tokenizer::PathHierarchy(_) => "word",
        }
    }
}

/// Java's `Character.isWhitespace`: the Unicode space, line and paragraph
/// separators but the no-break spaces, and the ASCII controls that separate.
pub(crate) fn is_java_whitespace(c: char) -> bool {
    matches!(c, '\t'..='\r' | '\u{1C}'..='\u{1F}' | ' ' | '\u{1680}' | '\u{2000}'..='\u{2006}'
        | '\u{2008}'..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{205F}' | '\u{3000}')
}

/// Java's `Character.isLetter` (the table generated from it, `tables/letters.rs`).
pub(crate) fn is_java_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    in_ranges(LETTERS, c)
}

/// Whether `c` lies in one of `ranges` (inclusive, in order).
pub(crate) fn in_ranges(ranges: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    let i = ranges.partition_point(|&(_, last)| last < c);
    ranges.get(i).is_some_and(|&(first, _)| first <= c)
}

/// The tokens of Lucene's `CharTokenizer`s (`WhitespaceTokenizer`,
/// `LetterTokenizer`): runs of the characters `is_token_char` takes, cut once
/// a run reaches `max_units` UTF-16 units (255 by default, as `CharTokenizer` counts).
pub(crate) fn for_each_run(
    text: &str,
    is_token_char: impl Fn(char) -> bool,
    max_units: usize,
    mut emit: impl FnMut(usize, usize),
) {
    let mut start = None;
    let mut units = 0;
    for (i, c) in text.char_indices() {
        if !is_token_char(c) {
            if let Some(s) = start.take() {
                emit(s, i);
            }
            continue;
        }
        let s = *start.get_or_insert_with(|| {
            units = 0;
            i
        });
        units += c.len_utf16();
        if units >= max_units {
            emit(s, i + c.len_utf8());
            start = None;
        }
    }
    if let Some(s) = start {
        emit(s, text.len());
    }
}

/// Calls `emit(start, end)` with the byte range of every word of `text`, in order.
///
/// The text is cut into pieces after each space, tab or line break that an
/// ASCII character other than those follows. UAX #29 breaks there and no rule
/// looks across such a place (a separator is neither a letter, a digit nor a
/// mid-word character, and what follows is no combining mark), so each piece
/// is segmented alone: a piece of ASCII by [`ascii_words`], which needs no
/// Unicode tables (most text is such pieces), any other piece as before.
pub fn for_each_word(text: &str, mut emit: impl FnMut(usize, usize)) {
    let mut start = 0;
    while start < text.len() {
        let (end, ascii) = piece_end(text.as_bytes(), start);
        if ascii {
            ascii_words(text.as_bytes(), start, end, &mut emit);
        } else {
            words_in(&text[start..end], start, &mut emit);
        }
        start = end;
    }
}

fn is_separator(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// The end of the piece that begins at `start` (see [`for_each_word`]), and whether it is all ASCII.
fn piece_end(b: &[u8], start: usize) -> (usize, bool) {
    let mut ascii = true;
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        ascii &= c.is_ascii();
        i += 1;
        if is_separator(c) && b.get(i).is_some_and(|&n| n.is_ascii() && !is_separator(n)) {
            break;
        }
    }
    (i, ascii)
}

/// UAX #29 word classes of ASCII characters (the others are all "Other" but
/// for spaces and line breaks, which join only each other and no word).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ascii {
    Letter,
    Digit,
    /// ExtendNumLet: `_`.
    Connector,
    /// MidLetter: `:`.
    MidLetter,
    /// MidNum: `,` `;`.
    MidNum,
    /// MidNumLet and Single_Quote: `.` `'`.
    MidNumLet,
    Other,
}

/// [`class_of`] of every ASCII byte, looked up once per character of most text.
static ASCII_CLASSES: [Ascii; 128] = {
    let mut table = [Ascii::Other; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = class_of(b as u8);
        b += 1;
    }
    table
};

#[inline]
fn ascii_class(b: u8) -> Ascii {
    ASCII_CLASSES.get(usize::from(b)).copied().unwrap_or(Ascii::Other)
}

const fn class_of(b: u8) -> Ascii {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' => Ascii::Letter,
        b'0'..=b'9' => Ascii::Digit,
        b'_' => Ascii::Connector,
        b':' => Ascii::MidLetter,
        b',' | b';' => Ascii::MidNum,
        b'.' | b'\'' => Ascii::MidNumLet,
        _ => Ascii::Other,
    }
}

/// The words of the ASCII text `b[start..end]`: UAX #29's rules WB5-WB13b,
/// the only ones that join ASCII characters into a word, then the same
/// choices as [`words_in`] (a word holds a letter or digit; one longer than
/// 255 characters is cut there and the rest segmented afresh).
fn ascii_words(b: &[u8], start: usize, end: usize, emit: &mut impl FnMut(usize, usize)) {
    let mut i = start;
    while i < end {
        let first = ascii_class(b[i]);
        if !matches!(first, Ascii::Letter | Ascii::Digit | Ascii::Connector) {
            // A segment that begins with anything else holds no letter or digit.
            i += 1;
            continue;
        }
        let (segment_end, has_alnum) = ascii_segment(b, i, end, first);
        if !has_alnum {
            i = segment_end;
        } else if segment_end - i > MAX_TOKEN_CHARS {
            emit(i, i + MAX_TOKEN_CHARS);
            i += MAX_TOKEN_CHARS;
        } else {
            emit(i, segment_end);
            i = segment_end;
        }
    }
}

/// The end of the segment that begins at `i` with a character of class
/// `first` (a letter, digit or `_`), and whether it holds a letter or digit.
fn ascii_segment(b: &[u8], mut i: usize, end: usize, first: Ascii) -> (usize, bool) {
    let mut prev = first;
    let mut has_alnum = first != Ascii::Connector;
    i += 1;
    while i < end {
        let c = ascii_class(b[i]);
        let next = || b[..end].get(i + 1).map_or(Ascii::Other, |&n| ascii_class(n));
        match c {
            // WB5, WB8, WB9, WB10, WB13a, WB13b: letters, digits and `_` join each other.
            Ascii::Letter | Ascii::Digit | Ascii::Connector => {
                has_alnum |= c != Ascii::Connector;
                prev = c;
                i += 1;
            }
            // WB6, WB7: letter (MidLetter | MidNumLetQ) letter.
            Ascii::MidLetter | Ascii::MidNumLet if prev == Ascii::Letter && next() == Ascii::Letter => i += 2,
            // WB11, WB12: digit (MidNum | MidNumLetQ) digit.
            Ascii::MidNum | Ascii::MidNumLet if prev == Ascii::Digit && next() == Ascii::Digit => i += 2,
            _ => break,
        }
    }
    (i, has_alnum)
}

/// Segments `text` (at byte `base` of the whole). A segment cut (at the
/// characters that cannot join a word, or after 255 characters) has its
/// pieces segmented afresh before the segments after it: each piece is an
/// iterator on a stack, so many cuts need no deeper a call stack and no
/// second pass over the text, and a run of spaces or symbols, which holds no
/// word, is passed over at once.
fn words_in(text: &str, base: usize, emit: &mut impl FnMut(usize, usize)) {
    let mut pending = vec![(text.split_word_bound_indices(), base)];
    // UAX #29 leaves Thai, Lao, Khmer, Myanmar... to a dictionary and breaks
    // between their letters; Lucene keeps each run of them one token.
    let mut run: Option<(usize, usize)> = None;
    while let Some((segments, at)) = pending.last_mut() {
        let at = *at;
        let Some((start, word)) = segments.next() else {
            pending.pop();
            continue;
        };
        if !is_word(word) {
            continue;
        }
        let start = at + start;
        if word.chars().all(|c| is_southeast_asian(c) || is_combining(c)) {
            match &mut run {
                Some((_, end)) if *end == start => *end = start + word.len(),
                _ => {
                    emit_run(text, base, run.take(), emit);
                    run = Some((start, start + word.len()));
                }
            }
            continue;
        }
        emit_run(text, base, run.take(), emit);
        let joins = |(_, c): &(usize, char)| may_join(*c);
        if word.chars().nth(1).is_some() && !word.char_indices().all(|ic| joins(&ic)) {
            // The pieces between the characters that cannot join, each
            // segmented afresh, in order (pushed last first).
            let mut pieces = Vec::new();
            let mut from = 0;
            for (i, c) in word.char_indices().filter(|ic| !joins(ic)) {
                pieces.push((from, i));
                from = i + c.len_utf8();
            }
            pieces.push((from, word.len()));
            for &(a, b) in pieces.iter().rev().filter(|(a, b)| a < b) {
                pending.push((word[a..b].split_word_bound_indices(), start + a));
            }
            continue;
        }
        // Lucene's scanner restarts after a token cut at 255 characters.
        match word.char_indices().nth(MAX_TOKEN_CHARS) {
            None => emit(start, start + word.len()),
            Some((cut, _)) => {
                emit(start, start + cut);
                pending.push((word[cut..].split_word_bound_indices(), start + cut));
            }
        }
    }
    emit_run(text, base, run, emit);
}

/// Emits a run of Southeast Asian letters (bytes `start..end` of the whole
/// text, `text` starting at byte `base`), cut every 255 characters.
fn emit_run(text: &str, base: usize, run: Option<(usize, usize)>, emit: &mut impl FnMut(usize, usize)) {
    let Some((mut start, end)) = run else { return };
    while let Some((cut, _)) = text[start - base..end - base].char_indices().nth(MAX_TOKEN_CHARS) {
        emit(start, start + cut);
        start += cut;
    }
    emit(start, end);
}

/// Letters of the scripts UAX #29 leaves to a dictionary (Line_Break=SA):
/// Thai, Lao, Myanmar, Khmer, Tai Le, New Tai Lue, Tai Tham, Tai Viet.
fn is_hangul(c: char) -> bool {
    matches!(c, '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}' | '\u{A960}'..='\u{A97F}' | '\u{AC00}'..='\u{D7FF}')
}

fn is_southeast_asian(c: char) -> bool {
    matches!(c, '\u{0E00}'..='\u{0EFF}' | '\u{1000}'..='\u{109F}' | '\u{1780}'..='\u{17FF}'
        | '\u{1950}'..='\u{19DF}' | '\u{19E0}'..='\u{19FF}' | '\u{1A20}'..='\u{1AAF}'
        | '\u{A9E0}'..='\u{A9FF}' | '\u{AA60}'..='\u{AADF}')
}

/// The type Lucene's StandardTokenizer gives a word of [`for_each_word`]
/// (`<ALPHANUM>`, `<NUM>`, `<IDEOGRAPHIC>`, ...), from the script of its
/// first character (Hangul: of all of them), then whether it holds a letter or only digits.
pub fn word_type(word: &str) -> &'static str {
    let Some(first) = word.chars().find(|c| !is_combining(*c)) else { return "<ALPHANUM>" };
    match first as u32 {
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x323AF => "<IDEOGRAPHIC>",
        0x3040..=0x309F => "<HIRAGANA>",
        0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => "<KATAKANA>",
        // A word of Hangul alone; Hangul joined with other letters or digits is alphanumeric.
        _ if word.chars().all(|c| is_hangul(c) || is_combining(c)) && is_hangul(first) => "<HANGUL>",
        // Their scripts' digits are numbers, not complex-context letters (Unicode's line breaking).
        _ if is_southeast_asian(first) && !is_decimal_digit(first) => "<SOUTHEAST_ASIAN>",
        _ if is_pictographic(first) => "<EMOJI>",
        _ if !word.chars().any(char::is_alphabetic) && word.chars().any(is_decimal_digit) => "<NUM>",
        _ => "<ALPHANUM>",
    }
}

/// Whether a word is kept: Lucene's token types (alphanumeric, numeric, ideographic, emoji...).
fn is_word(word: &str) -> bool {
    word.chars().any(|c| (c.is_alphabetic() && !is_combining(c)) || is_decimal_digit(c) || is_pictographic(c))
}

/// Characters UAX #29 allows inside a word besides letters and digits:
/// MidLetter, MidNum, MidNumLet, ExtendNumLet, Format, and combining marks.
fn may_join(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '\'' | '.' | ',' | ':' | ';' | '_' | '\u{00AD}' | '\u{00B7}' | '\u{0387}' | '\u{055F}' | '\u{05F4}'
                | '\u{060C}' | '\u{060D}' | '\u{066C}' | '\u{07F8}' | '\u{200B}'..='\u{200F}' | '\u{2018}' | '\u{2019}'
                | '\u{2024}' | '\u{2027}' | '\u{202A}'..='\u{202F}' | '\u{203F}' | '\u{2040}' | '\u{2044}'
                | '\u{2054}' | '\u{2060}'..='\u{206F}' | '\u{FE10}' | '\u{FE13}' | '\u{FE14}' | '\u{FE33}'
                | '\u{FE34}' | '\u{FE4D}'..='\u{FE50}' | '\u{FE52}' | '\u{FE54}' | '\u{FE55}' | '\u{FEFF}'
                | '\u{FF07}' | '\u{FF0C}' | '\u{FF0E}' | '\u{FF1A}' | '\u{FF1B}' | '\u{FF3F}'
        )
        || is_combining(c)
}

/// Combining marks and joiners, which attach to the character before them.
fn is_combining(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036F}' | '\u{0483}'..='\u{0489}' | '\u{0591}'..='\u{05BD}' | '\u{0610}'..='\u{061A}'
        | '\u{064B}'..='\u{065F}' | '\u{0900}'..='\u{0903}' | '\u{093A}'..='\u{094F}' | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}' | '\u{20D0}'..='\u{20FF}' | '\u{FE00}'..='\u{FE0F}' | '\u{FE20}'..='\u{FE2F}'
        | '\u{1F3FB}'..='\u{1F3FF}' | '\u{E0020}'..='\u{E007F}'
        // The halfwidth voiced marks extend the kana before them (UAX #29's Extend), making no word alone.
        | '\u{FF9E}' | '\u{FF9F}')
}

/// A decimal digit of any script (Unicode Nd): numeric, and not one of the
/// superscripts, fractions or enclosed numbers (No) that make no word alone.
fn is_decimal_digit(c: char) -> bool {
    c.is_numeric()
        && !matches!(c, '\u{00B2}' | '\u{00B3}' | '\u{00B9}' | '\u{00BC}'..='\u{00BE}' | '\u{09F4}'..='\u{09F9}'
            | '\u{2070}'..='\u{209F}' | '\u{2150}'..='\u{218F}' | '\u{2460}'..='\u{24FF}' | '\u{2776}'..='\u{2793}'
            | '\u{3192}'..='\u{3195}' | '\u{3220}'..='\u{3229}' | '\u{3248}'..='\u{325F}' | '\u{3280}'..='\u{3289}'
            | '\u{32B1}'..='\u{32BF}' | '\u{1F100}'..='\u{1F10C}')
}

/// Pictographs, as Lucene's emoji rule takes them (Unicode Extended_Pictographic:
/// the symbol blocks listed exactly, the supplementary planes as ranges).
fn is_pictographic(c: char) -> bool {
    matches!(c, '\u{00A9}' | '\u{00AE}' | '\u{203C}' | '\u{2049}' | '\u{2122}' | '\u{2139}' | '\u{2194}'..='\u{2199}'
        | '\u{21A9}' | '\u{21AA}' | '\u{231A}' | '\u{231B}' | '\u{2328}' | '\u{2388}' | '\u{23CF}' | '\u{23E9}'..='\u{23F3}'
        | '\u{23F8}'..='\u{23FA}' | '\u{24C2}' | '\u{25AA}' | '\u{25AB}' | '\u{25B6}' | '\u{25C0}'
        | '\u{25FB}'..='\u{25FE}' | '\u{2600}'..='\u{2605}' | '\u{2607}'..='\u{2612}' | '\u{2614}'..='\u{2685}'
        | '\u{2690}'..='\u{2705}' | '\u{2708}'..='\u{2712}' | '\u{2714}' | '\u{2716}' | '\u{271D}' | '\u{2721}'
        | '\u{2728}' | '\u{2733}' | '\u{2734}' | '\u{2744}' | '\u{2747}' | '\u{274C}' | '\u{274E}'
        | '\u{2753}'..='\u{2755}' | '\u{2757}' | '\u{2763}'..='\u{2767}' | '\u{2795}'..='\u{2797}' | '\u{27A1}'
        | '\u{27B0}' | '\u{27BF}' | '\u{2934}' | '\u{2935}' | '\u{2B05}'..='\u{2B07}'
        | '\u{2B1B}' | '\u{2B1C}' | '\u{2B50}' | '\u{2B55}' | '\u{3030}' | '\u{303D}' | '\u{3297}' | '\u{3299}'
        | '\u{1F000}'..='\u{1F0FF}' | '\u{1F10D}'..='\u{1F10F}' | '\u{1F12F}' | '\u{1F16C}'..='\u{1F171}'
        | '\u{1F17E}' | '\u{1F17F}' | '\u{1F18E}' | '\u{1F191}'..='\u{1F19A}' | '\u{1F1AD}'..='\u{1F1E5}'
        | '\u{1F201}'..='\u{1F20F}' | '\u{1F21A}' | '\u{1F22F}' | '\u{1F232}'..='\u{1F23A}' | '\u{1F23C}'..='\u{1F23F}'
        | '\u{1F249}'..='\u{1F3FA}' | '\u{1F400}'..='\u{1F53D}' | '\u{1F546}'..='\u{1F64F}' | '\u{1F680}'..='\u{1F6FF}'
        | '\u{1F774}'..='\u{1F77F}' | '\u{1F7D5}'..='\u{1F7FF}' | '\u{1F80C}'..='\u{1F80F}' | '\u{1F848}'..='\u{1F84F}'
        | '\u{1F85A}'..='\u{1F85F}' | '\u{1F888}'..='\u{1F88F}' | '\u{1F8AE}'..='\u{1F8FF}' | '\u{1F90C}'..='\u{1F93A}'
        | '\u{1F93C}'..='\u{1F945}' | '\u{1F947}'..='\u{1FAFF}' | '\u{1FC00}'..='\u{1FFFD}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_runs_are_tokens_cut_at_255_units() {
        let mut got = Vec::new();
        let text = format!("a\u{A0}b  c,d\u{3000}e\n{}", "x".repeat(300));
        Tokenizer::Whitespace.for_each_token(&text, |s, e| got.push(text[s..e].to_string()));
        // A no-break space is not whitespace to Java.
        assert_eq!(got[..3], ["a\u{A0}b", "c,d", "e"]);
        assert_eq!((got[3].len(), got[4].len(), got.len()), (255, 45, 5));
    }

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_word(text, |s, e| out.push(&text[s..e]));
        out
    }

    #[test]
    fn splits_like_lucene_standard_tokenizer() {
        // Tokens Lucene 10.6's StandardAnalyzer produces for the same text (before lowercasing).
        assert_eq!(
            words("don't U.S.A. 3.14 foo_bar e-mail a:b x.y 1,000 café"),
            ["don't", "U.S.A", "3.14", "foo_bar", "e", "mail", "a:b", "x.y", "1,000", "café"]
        );
        assert_eq!(words("日本語 カタカナ 👍"), ["日", "本", "語", "カタカナ", "👍"]);
    }

    #[test]
    fn runs_of_southeast_asian_letters_are_one_word() {
        assert_eq!(words("ไทย ภาษาไทย abc ລາວ"), ["ไทย", "ภาษาไทย", "abc", "ລາວ"]);
        let long = "ก".repeat(300);
        assert_eq!(words(&long).iter().map(|w| w.chars().count()).collect::<Vec<_>>(), [255, 45]);
    }

    #[test]
    fn words_are_typed_as_lucene_types_them() {
        let text = "quick 3.14 1,000 abc123 123abc 東 ひ カタカナ 한국어 ไทย 😀";
        let types: Vec<&str> = words(text).into_iter().map(word_type).collect();
        let want = [
            "<ALPHANUM>",
            "<NUM>",
            "<NUM>",
            "<ALPHANUM>",
            "<ALPHANUM>",
            "<IDEOGRAPHIC>",
            "<HIRAGANA>",
            "<KATAKANA>",
            "<HANGUL>",
            "<SOUTHEAST_ASIAN>",
            "<EMOJI>",
        ];
        assert_eq!(types, want);
    }

    #[test]
    fn symbols_neither_join_nor_stand_alone() {
        assert_eq!(
            words("19\u{b8}u \u{b8}u 3² ² © ☆ ✓ ★ x \u{fffd}\u{363}"),
            ["19", "u", "u", "3", "©", "★", "x"]
        );
    }

    #[test]
    fn long_runs_without_words_and_many_cuts_stay_linear_and_shallow() {
        // A run of spaces is one segment without a word; once each space was
        // cut off and the rest segmented again, by a call each (quadratic
        // time, a stack overflow past about 100,000).
        let spaces = format!("{}text", " ".repeat(200_000));
        assert_eq!(words(&spaces), ["text"]);
        let cuts = "a\u{b8}".repeat(50_000);
        assert_eq!(words(&cuts).len(), 50_000);
        assert_eq!(words("x\u{b8}\u{b8}y\u{b8}"), ["x", "y"]);
        let long = "b".repeat(255 * 500);
        assert_eq!(words(&long).len(), 500);
    }

    /// Every word range of the Unicode path run on the whole text: the reference the pieces must equal.
    fn unicode_words(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        words_in(text, 0, &mut |s, e| out.push((s, e)));
        out
    }

    fn word_ranges(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for_each_word(text, |s, e| out.push((s, e)));
        out
    }

    /// Characters of every ASCII word class, separators, and non-ASCII ones
    /// that join, attach, stand alone or pair up (combining marks, a Tamil
    /// vowel sign that makes a word of a space before it, ZWJ, regional indicators).
    const ALPHABET: &[char] = &[
        'a',
        'Z',
        'q',
        '5',
        '0',
        '_',
        ':',
        ',',
        ';',
        '.',
        '\'',
        '"',
        '-',
        '!',
        '/',
        ' ',
        ' ',
        '\t',
        '\n',
        '\r',
        '\u{b}',
        '\u{c}',
        'é',
        'ß',
        'İ',
        '’',
        '\u{301}',
        '\u{bbe}',
        '\u{200d}',
        '\u{1f1e6}',
        '\u{a0}',
        '日',
        '👍',
        '\u{b8}',
        '²',
        '\u{2024}',
        '\u{ff0e}',
        'ｶ',
        'א',
    ];

    /// The ASCII characters lead [`ALPHABET`].
    const ASCII_LEN: usize = 22;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        #[test]
        fn pieces_segment_as_the_whole_text_does(
            picks in proptest::collection::vec(0..ALPHABET.len(), 0..48),
        ) {
            let text: String = picks.iter().map(|&i| ALPHABET[i]).collect();
            proptest::prop_assert_eq!(word_ranges(&text), unicode_words(&text), "text {:?}", text);
        }

        #[test]
        fn ascii_text_segments_as_unicode_segmentation_does(
            picks in proptest::collection::vec(0..ASCII_LEN, 0..48),
        ) {
            let text: String = picks.iter().map(|&i| ALPHABET[i]).collect();
            proptest::prop_assert_eq!(word_ranges(&text), unicode_words(&text), "text {:?}", text);
        }

        #[test]
        fn long_ascii_words_are_cut_as_the_whole_text_does(
            run in 250usize..800,
            unit in proptest::sample::select(vec!["a", "7", "a.", "1,", "_", "x_"]),
            tail in proptest::collection::vec(0..ALPHABET.len(), 0..8),
        ) {
            let mut text = unit.repeat(run / unit.len());
            text.extend(tail.iter().map(|&i| ALPHABET[i]));
            proptest::prop_assert_eq!(word_ranges(&text), unicode_words(&text));
        }
    }

    #[test]
    fn long_words_are_cut_and_the_rest_segmented_again() {
        let long = "a".repeat(300);
        let w = words(&long);
        assert_eq!(w.iter().map(|w| w.len()).collect::<Vec<_>>(), [255, 45]);
        let digits = format!("{},209,202", "1".repeat(254));
        assert_eq!(words(&digits)[1], "209,202");
    }
}
