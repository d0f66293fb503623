//! UAX #29 word segmentation, keeping the segments Lucene's StandardTokenizer
//! keeps: those holding a letter, digit or ideograph. Punctuation and spaces
//! between words are dropped.

use unicode_segmentation::UnicodeSegmentation;

/// Lucene's default `maxTokenLength`: longer words are cut into pieces of this many characters.
pub const MAX_TOKEN_CHARS: usize = 255;

/// Calls `emit(start, end)` with the byte range of every word of `text`, in order.
pub fn for_each_word(text: &str, mut emit: impl FnMut(usize, usize)) {
    for (start, word) in text.split_word_bound_indices() {
        if !word.chars().any(char::is_alphanumeric) {
            continue;
        }
        split_long_word(word, start, &mut emit);
    }
}

fn split_long_word(word: &str, start: usize, emit: &mut impl FnMut(usize, usize)) {
    let mut piece_start = start;
    let mut chars = 0;
    for (i, _) in word.char_indices() {
        if chars == MAX_TOKEN_CHARS {
            emit(piece_start, start + i);
            piece_start = start + i;
            chars = 0;
        }
        chars += 1;
    }
    emit(piece_start, start + word.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_word(text, |s, e| out.push(&text[s..e]));
        out
    }

    #[test]
    fn splits_on_uax29_boundaries() {
        assert_eq!(words("Don't stop: U.S.A. 3.14, foo_bar e-mail!"), [
            "Don't", "stop", "U.S.A", "3.14", "foo_bar", "e", "mail"
        ]);
    }

    #[test]
    fn ideographs_are_single_tokens() {
        assert_eq!(words("日本語"), ["日", "本", "語"]);
    }

    #[test]
    fn long_words_are_cut_into_pieces() {
        let long = "a".repeat(300);
        let w = words(&long);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].len(), 255);
        assert_eq!(w[1].len(), 45);
    }
}
