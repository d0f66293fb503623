//! Krovetz's stemmer as Lucene's `KStemFilter` applies it (Elasticsearch's
//! `kstem` filter and its `stemmer` of language `light_english`): an ending
//! is taken off only when what is left is a word of its dictionary (about
//! 28,000 English words, a few with a stem of their own: `aging` to `age`,
//! `italian` to `italy`), with a default for each ending when nothing is
//! found. So `organizational` becomes `organization` and `treaties`
//! `treaty`, where Porter gives `organiz` and `treati`; a word the
//! dictionary holds (`happiness`) stays whole.
//!
//! The steps, their order and every dictionary lookup follow Lucene's
//! `KStemmer` (the dictionary is read out of it: `tables/generate.sh`),
//! down to its word buffer keeping letters past its end when it is cut, as
//! some steps read them back. `tests/golden/lucene/kstem.jsonl` holds
//! Lucene's stems of 39,065 words, which the tests compare with these.
//! A term with anything but the letters a-z (uppercase included), shorter
//! than three or longer than 49 letters, is left as it is, as Lucene leaves it.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::tables::kstem_dictionary::KSTEM_DICTIONARY;

/// A dictionary word: the stem it maps to directly (`None`: itself), and
/// whether it is one of the words an ending must not be taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    stem: Option<&'static str>,
    exception: bool,
}

static DICTIONARY: LazyLock<HashMap<&'static str, Entry>> = LazyLock::new(|| {
    KSTEM_DICTIONARY
        .lines()
        .map(|line| match line.split_once(' ') {
            None => (line, Entry { stem: None, exception: false }),
            Some((word, "!")) => (word, Entry { stem: Some(word), exception: true }),
            Some((word, stem)) => (word, Entry { stem: Some(stem), exception: false }),
        })
        .collect()
});

const MAX_WORD_LEN: usize = 50;

/// The stem of `term`, or `None` when it stays as it is.
pub fn stem(term: &str) -> Option<String> {
    let len = term.len();
    if len <= 2 || len >= MAX_WORD_LEN || !term.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    if let Some(entry) = DICTIONARY.get(term) {
        return entry.stem.filter(|s| *s != term).map(str::to_string);
    }
    let mut w = Word { buf: term.as_bytes().to_vec(), len, j: 0, k: len as isize - 1, matched: None };
    w.run_steps();
    let stem = match w.matched.and_then(|e| e.stem) {
        Some(direct) => direct.to_string(),
        None => String::from_utf8_lossy(&w.buf[..w.len]).into_owned(),
    };
    (stem != term).then_some(stem)
}

/// The word being stemmed, as Lucene's KStemmer holds it: `buf[..len]`,
/// letters past `len` kept (cutting the word does not clear them); `k` the
/// index of its last letter as the steps count it, `j` the index of the
/// letter before the ending last matched; `matched` the entry the last
/// lookup found.
struct Word {
    buf: Vec<u8>,
    len: usize,
    j: isize,
    k: isize,
    matched: Option<Entry>,
}

impl Word {
    /// Each step in turn until one finds a word (some leave the word changed
    /// for the next when they find none).
    fn run_steps(&mut self) {
        let steps: [fn(&mut Word); 9] = [
            Word::plural,
            Word::past_tense,
            Word::aspect,
            Word::ity_endings,
            Word::ness_endings,
            Word::ion_endings,
            Word::er_and_or_endings,
            Word::ly_endings,
            Word::al_endings,
        ];
        for step in steps {
            step(self);
            if self.matched.is_some() {
                return;
            }
        }
        self.word_in_dict();
        let rest: [fn(&mut Word); 8] = [
            Word::ive_endings,
            Word::ize_endings,
            Word::ment_endings,
            Word::ble_endings,
            Word::ism_endings,
            Word::ic_endings,
            Word::ncy_endings,
            Word::nce_endings,
        ];
        for step in rest {
            step(self);
            if self.matched.is_some() {
                return;
            }
        }
    }

    /// The letter at `i` (past the end too, as the buffer holds it; a letter
    /// before the start, which Lucene never reads, as 0).
    fn at(&self, i: isize) -> u8 {
        usize::try_from(i).ok().and_then(|i| self.buf.get(i).copied()).unwrap_or(0)
    }

    fn set_at(&mut self, i: isize, b: u8) {
        let i = i.max(0) as usize;
        if i >= self.buf.len() {
            self.buf.resize(i + 1, 0);
        }
        self.buf[i] = b;
    }

    fn set_len(&mut self, len: isize) {
        let len = len.max(0) as usize;
        if len > self.buf.len() {
            self.buf.resize(len, 0);
        }
        self.len = len;
    }

    fn push(&mut self, b: u8) {
        self.set_at(self.len as isize, b);
        self.len += 1;
    }

    fn is_cons(&self, i: isize) -> bool {
        match self.at(i) {
            b'a' | b'e' | b'i' | b'o' | b'u' => false,
            b'y' if i > 0 => !self.is_cons(i - 1),
            _ => true,
        }
    }

    fn vowel_in_stem(&self) -> bool {
        (0..=self.j).any(|i| !self.is_cons(i))
    }

    /// Whether the word ends in a doubled consonant at `i`.
    fn double_c(&self, i: isize) -> bool {
        i >= 1 && self.at(i) == self.at(i - 1) && self.is_cons(i)
    }

    /// Whether the word ends in `suffix` (as Lucene's `endsIn(char[])`: set
    /// `j` to `k` when it does not, but not when the suffix is too long).
    fn ends_in(&mut self, suffix: &str) -> bool {
        let s = suffix.as_bytes();
        if s.len() as isize > self.k {
            return false;
        }
        let r = self.len as isize - s.len() as isize;
        self.j = self.k;
        if s.iter().enumerate().any(|(i, &b)| self.at(r + i as isize) != b) {
            return false;
        }
        self.j = r - 1;
        true
    }

    /// Whether the letters up to `k` end in `suffix` (as Lucene's
    /// `endsIn(char, ...)`, which leave `j` alone when they do not).
    fn ends_with(&mut self, suffix: &[u8]) -> bool {
        let n = suffix.len() as isize;
        if n > self.k {
            return false;
        }
        let first = self.k - n + 1;
        if suffix.iter().enumerate().all(|(i, &b)| self.at(first + i as isize) == b) {
            self.j = self.k - n;
            return true;
        }
        false
    }

    /// Looks the word up; `matched` is what it found.
    fn lookup(&mut self) -> bool {
        self.matched = self.entry();
        self.matched.is_some()
    }

    fn entry(&self) -> Option<Entry> {
        let word = std::str::from_utf8(&self.buf[..self.len]).ok()?;
        DICTIONARY.get(word).copied()
    }

    /// The entry found last, or the word's, kept as found unless an exception.
    fn word_in_dict(&mut self) -> Option<Entry> {
        if self.matched.is_some() {
            return self.matched;
        }
        let entry = self.entry();
        if entry.is_some_and(|e| !e.exception) {
            self.matched = entry;
        }
        entry
    }

    /// Whether the word is in the dictionary and not an exception.
    fn in_dict_not_exception(&mut self) -> bool {
        self.word_in_dict().is_some_and(|e| !e.exception)
    }

    /// The word cut to `keep` letters with `ending` after them, `k` at its
    /// last letter: what a step settles on when no lookup finds a word.
    fn settle(&mut self, keep: isize, ending: &[u8]) {
        self.set_len(keep);
        ending.iter().for_each(|&b| self.push(b));
        self.k = self.len as isize - 1;
    }

    /// [`Self::settle`], then whether the dictionary holds the word.
    fn tried(&mut self, keep: isize, ending: &[u8]) -> bool {
        self.settle(keep, ending);
        self.lookup()
    }

    /// Plurals to singular, `-ies` to `-y`.
    fn plural(&mut self) {
        if self.at(self.k) != b's' {
            return;
        }
        if self.ends_with(b"ies") {
            let j = self.j;
            if !self.tried(j + 3, b"") {
                self.tried(j + 1, b"y");
            }
        } else if self.ends_with(b"es") {
            let j = self.j;
            // Not after a double s: `crosses` is more often the verb than the plural of `crosse`.
            let try_e = j > 0 && !(self.at(j) == b's' && self.at(j - 1) == b's');
            if try_e && self.tried(j + 2, b"") || self.tried(j + 1, b"") {
                return;
            }
            self.settle(j + 1, b"e");
            if !try_e {
                self.lookup();
            }
        } else if self.len > 3 && self.at(self.k - 1) != b's' && !self.ends_with(b"ous") {
            self.tried(self.k, b"");
        }
    }

    /// `-ed` to the present, `-ied` to `-y`.
    fn past_tense(&mut self) {
        if self.len <= 4 {
            return;
        }
        if self.ends_with(b"ied") {
            let j = self.j;
            if !self.tried(j + 3, b"") {
                self.tried(j + 1, b"y");
            }
            return;
        }
        // A vowel before the ending, so acronyms stay.
        if self.ends_with(b"ed") && self.vowel_in_stem() {
            let j = self.j;
            self.settle(j + 2, b"");
            if self.in_dict_not_exception() || self.tried(j + 1, b"") {
                return;
            }
            if self.double_c(self.k) {
                self.undouble();
            } else if self.at(0) == b'u' && self.at(1) == b'n' {
                self.settle(j + 1, b"ed");
            } else {
                self.settle(j + 1, b"e");
            }
        }
    }

    /// A doubled last consonant made single if that is a word, else kept.
    fn undouble(&mut self) {
        let k = self.k;
        if !self.tried(k, b"") {
            self.tried(k, &[self.at(k - 1)]);
        }
    }

    /// `-ing`.
    fn aspect(&mut self) {
        if self.len <= 5 || !(self.ends_with(b"ing") && self.vowel_in_stem()) {
            return;
        }
        let j = self.j;
        self.settle(j + 1, b"e");
        if self.in_dict_not_exception() || self.tried(j + 1, b"") {
            return;
        }
        if self.double_c(self.k) {
            self.undouble();
        } else if j > 0 && self.is_cons(j) && self.is_cons(j - 1) {
            self.settle(j + 1, b"");
        } else {
            self.settle(j + 1, b"e");
        }
    }

    /// `-ity`; `-ability` and `-ibility` to `-ble`, `-ivity` to `-ive`, `-ality` to `-al`.
    fn ity_endings(&mut self) {
        if !self.ends_with(b"ity") {
            return;
        }
        let j = self.j;
        if self.tried(j + 1, b"") || self.tried(j + 1, b"e") {
            return;
        }
        self.settle(j + 1, b"ity");
        match (j > 0, self.at(j - 1), self.at(j)) {
            (true, b'i', b'l') => _ = self.tried(j - 1, b"le"),
            (true, b'i', b'v') => _ = self.tried(j + 1, b"e"),
            (true, b'a', b'l') => _ = self.tried(j + 1, b""),
            _ => {
                if !self.lookup() {
                    self.settle(j + 1, b"");
                }
            }
        }
    }

    /// `-ence` and `-ance`.
    fn nce_endings(&mut self) {
        if !self.ends_with(b"nce") {
            return;
        }
        let j = self.j;
        let vowel = self.at(j);
        if vowel != b'e' && vowel != b'a' {
            return;
        }
        if !(self.tried(j, b"e") || self.tried(j, b"")) {
            self.settle(j, &[vowel, b'n', b'c', b'e']);
        }
    }

    /// `-ness`, always taken off.
    fn ness_endings(&mut self) {
        if self.ends_with(b"ness") {
            let j = self.j;
            self.settle(j + 1, b"");
            if self.at(j) == b'i' {
                self.set_at(j, b'y');
            }
            self.lookup();
        }
    }

    /// `-ism`, always taken off.
    fn ism_endings(&mut self) {
        if self.ends_with(b"ism") {
            self.tried(self.j + 1, b"");
        }
    }

    /// `-ment`.
    fn ment_endings(&mut self) {
        if self.ends_with(b"ment") && !self.tried(self.j + 1, b"") {
            self.settle(self.j + 1, b"ment");
        }
    }

    /// `-ize`.
    fn ize_endings(&mut self) {
        if !self.ends_with(b"ize") {
            return;
        }
        let j = self.j;
        let found =
            self.tried(j + 1, b"") || self.double_c(j) && self.tried(j, b"") || self.tried(j + 1, b"e");
        if !found {
            self.settle(j + 1, b"ize");
        }
    }

    /// `-ency` and `-ancy`: to `-nt`, else `-nce`.
    fn ncy_endings(&mut self) {
        if self.ends_with(b"ncy") {
            let j = self.j;
            if (self.at(j) == b'e' || self.at(j) == b'a') && !self.tried(j + 2, b"t") {
                self.tried(j + 2, b"ce");
            }
        }
    }

    /// `-able` and `-ible`.
    fn ble_endings(&mut self) {
        if !self.ends_with(b"ble") {
            return;
        }
        let j = self.j;
        let vowel = self.at(j);
        if vowel != b'a' && vowel != b'i' {
            return;
        }
        let found = self.tried(j, b"")
            || self.double_c(j - 1) && self.tried(j - 1, b"")
            || self.tried(j, b"e")
            || self.tried(j, b"ate");
        if !found {
            self.settle(j, &[vowel, b'b', b'l', b'e']);
        }
    }

    /// `-ic`: to `-ical` (the one ending made longer), `-y`, `-e`, or off.
    fn ic_endings(&mut self) {
        if !self.ends_with(b"ic") {
            return;
        }
        let j = self.j;
        let found = self.tried(j + 3, b"al")
            || self.tried(j + 1, b"y")
            || self.tried(j + 1, b"e")
            || self.tried(j + 1, b"");
        if !found {
            self.settle(j + 1, b"ic");
        }
    }

    /// `-ion`, `-ition`, `-ation`, `-ication`; `-ization` always to `-ize`.
    fn ion_endings(&mut self) {
        if !self.ends_with(b"ion") {
            return;
        }
        if self.ends_in("ization") {
            self.tried(self.j + 3, b"e");
            return;
        }
        if self.ends_in("ition") {
            let j = self.j;
            if self.tried(j + 1, b"e") {
                return;
            }
            self.settle(j + 1, b"ition");
        } else if self.ends_in("ation") {
            let j = self.j;
            if self.tried(j + 3, b"e") || self.tried(j + 1, b"e") || self.tried(j + 1, b"") {
                return;
            }
            self.settle(j + 1, b"ation");
        }
        // After -ation, so `complication` becomes `complicate`, not `comply`.
        if self.ends_in("ication") {
            let j = self.j;
            if self.tried(j + 1, b"y") {
                return;
            }
            self.settle(j + 1, b"ication");
        }
        let j = self.k - 3;
        self.j = j;
        if !(self.tried(j + 1, b"e") || self.tried(j + 1, b"")) {
            self.settle(j + 1, b"ion");
        }
    }

    /// `-er`, `-or`, `-ier`, `-eer`; `-izer` always to `-ize`.
    fn er_and_or_endings(&mut self) {
        if self.at(self.k) != b'r' {
            return;
        }
        if self.ends_with(b"izer") {
            self.tried(self.j + 4, b"");
            return;
        }
        if !(self.ends_with(b"er") || self.ends_with(b"or")) {
            return;
        }
        let j = self.j;
        let vowel = self.at(j + 1);
        if self.double_c(j) && self.tried(j, b"") {
            return;
        }
        if self.at(j) == b'i' {
            if self.tried(j, b"y") {
                return;
            }
            self.settle(j, b"ie");
        }
        let found = self.at(j) == b'e' && self.tried(j, b"")
            || self.tried(j + 1, &[vowel])
            || self.tried(j + 1, b"")
            || self.tried(j + 1, b"e");
        if !found {
            self.settle(j + 1, &[vowel, b'r']);
        }
    }

    /// `-ly`; `-ally` always to `-al`, `-ably` to `-able`.
    fn ly_endings(&mut self) {
        if !self.ends_with(b"ly") {
            return;
        }
        let j = self.j;
        if self.tried(j + 2, b"e") {
            return;
        }
        self.set_at(j + 2, b'y');
        if self.tried(j + 1, b"") {
            return;
        }
        if j > 0 && (self.at(j - 1), self.at(j)) == (b'a', b'l') {
            return;
        }
        self.settle(j + 1, b"ly");
        if j > 0 && (self.at(j - 1), self.at(j)) == (b'a', b'b') {
            self.settle(j + 1, b"le");
            return;
        }
        if self.at(j) == b'i' {
            if self.tried(j, b"y") {
                return;
            }
            self.settle(j, b"ily");
        }
        self.settle(j + 1, b"");
    }

    /// `-al`, and what `-ly` left of `-ally`.
    fn al_endings(&mut self) {
        if self.len < 4 || !self.ends_with(b"al") {
            return;
        }
        let j = self.j;
        let found = self.tried(j + 1, b"")
            || self.double_c(j) && self.tried(j, b"")
            || self.tried(j + 1, b"e")
            || self.tried(j + 1, b"um");
        if found {
            return;
        }
        self.settle(j + 1, b"al");
        if j > 0 && (self.at(j - 1), self.at(j)) == (b'i', b'c') {
            // The default: `-ical` to `-ic`.
            let _ = self.tried(j - 1, b"") || self.tried(j - 1, b"y") || self.tried(j - 1, b"ic");
        } else if self.at(j) == b'i' && !self.tried(j, b"") {
            self.tried(j, b"ial");
        }
    }

    /// `-ive`; `-ative` to `-e` or off, `-ive` to `-ion`.
    fn ive_endings(&mut self) {
        if !self.ends_with(b"ive") {
            return;
        }
        let j = self.j;
        if self.tried(j + 1, b"") || self.tried(j + 1, b"e") {
            return;
        }
        self.settle(j + 1, b"ive");
        if j > 0 && (self.at(j - 1), self.at(j)) == (b'a', b't') {
            if self.tried(j - 1, b"e") || self.tried(j - 1, b"") {
                return;
            }
            self.settle(j - 1, b"ative");
        }
        if !self.tried(j + 1, b"ion") {
            self.settle(j + 1, b"ive");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stemmed(word: &str) -> String {
        stem(word).unwrap_or_else(|| word.to_string())
    }

    #[test]
    fn endings_come_off_where_a_word_is_left() {
        assert_eq!(stemmed("treaties"), "treaty");
        assert_eq!(stemmed("walked"), "walk");
        assert_eq!(stemmed("governments"), "government");
        assert_eq!(stemmed("organizational"), "organization");
        // Words of the dictionary keep their endings; a few map to a stem of their own.
        assert_eq!(stemmed("happiness"), "happiness");
        assert_eq!(stemmed("italians"), "italy");
        assert_eq!(stemmed("aging"), "age");
    }

    #[test]
    fn terms_it_does_not_stem_stay() {
        for term in ["is", "Cats", "café", "a1s", &"s".repeat(50)] {
            assert_eq!(stem(term), None, "{term}");
        }
    }

    /// Lucene's KStemFilter's stems, recorded by `tables/kstem_cases.py`.
    #[test]
    fn stems_equal_lucenes() {
        crate::lucene_cases::check("kstem", 30_001, |case| {
            let [word, expected]: [String; 2] = serde_json::from_value(case).expect("a [word, stem] pair");
            let got = stemmed(&word);
            (got != expected).then(|| format!("{word}: {got} (Lucene: {expected})"))
        });
    }
}
