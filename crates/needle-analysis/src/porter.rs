//! The Porter stemmer, as Lucene's `PorterStemFilter` applies it in its
//! `EnglishAnalyzer` (which Elasticsearch's `english` analyzer is): Martin
//! Porter's algorithm in the form of his own C implementation, with its two
//! departures from the 1980 paper (`bli` -> `ble` for `abli` -> `able`, and
//! `logi` -> `log`), and words of one or two letters left as they are.
//! Snowball's English stemmer ("Porter2", the `snowball` analyzer's) is a
//! later, different algorithm. `analyzer.rs` checks the whole `english`
//! analyzer against a real OpenSearch node's, word for word.

/// The stem of `word` (lowercase). Letters other than a-z count as consonants.
pub fn stem(word: &str) -> String {
    let b: Vec<char> = word.chars().collect();
    if b.len() <= 2 {
        return word.to_string();
    }
    let mut w = Word { k: b.len() - 1, b, stem: 0 };
    w.step1ab();
    w.step1c();
    w.step2();
    w.step3();
    w.step4();
    w.step5();
    w.b[..=w.k].iter().collect()
}

/// The word being stemmed: `b[..=k]`; `stem`: the length of what precedes
/// the ending last matched (the part whose measure the rules ask for).
struct Word {
    b: Vec<char>,
    k: usize,
    stem: usize,
}

impl Word {
    /// Whether `b[i]` is a consonant: not a vowel, and `y` only after a vowel or first.
    fn cons(&self, i: usize) -> bool {
        match self.b[i] {
            'a' | 'e' | 'i' | 'o' | 'u' => false,
            'y' => i == 0 || !self.cons(i - 1),
            _ => true,
        }
    }

    /// The number of vowel-consonant sequences in the stem (the paper's m).
    fn m(&self) -> usize {
        let mut n = 0;
        let mut i = (0..self.stem).find(|&i| !self.cons(i)).unwrap_or(self.stem);
        while i < self.stem {
            // In a vowel run: to its end, then through the consonants after it.
            while i < self.stem && !self.cons(i) {
                i += 1;
            }
            if i == self.stem {
                break;
            }
            n += 1;
            while i < self.stem && self.cons(i) {
                i += 1;
            }
        }
        n
    }

    /// Whether the stem holds a vowel.
    fn vowel_in_stem(&self) -> bool {
        (0..self.stem).any(|i| !self.cons(i))
    }

    /// Whether `b[j-1..=j]` is a double consonant.
    fn double_c(&self, j: usize) -> bool {
        j >= 1 && self.b[j] == self.b[j - 1] && self.cons(j)
    }

    /// Whether `b[i-2..=i]` is consonant-vowel-consonant, the last not w, x or y
    /// (where a short word's stem takes back an `e`: cav(e), lov(e), hop(e)).
    fn cvc(&self, i: usize) -> bool {
        i >= 2
            && self.cons(i)
            && !self.cons(i - 1)
            && self.cons(i - 2)
            && !matches!(self.b[i], 'w' | 'x' | 'y')
    }

    /// Whether `b[..=k]` ends with `s`, the stem then being what precedes it.
    fn ends(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if n > self.k + 1 || !self.b[self.k + 1 - n..=self.k].iter().copied().eq(s.chars()) {
            return false;
        }
        self.stem = self.k + 1 - n;
        true
    }

    /// Replaces what follows the stem with `s`.
    fn set_to(&mut self, s: &str) {
        self.b.truncate(self.stem);
        self.b.extend(s.chars());
        self.k = self.b.len() - 1;
    }

    /// `set_to(s)` when m > 0.
    fn r(&mut self, s: &str) {
        if self.m() > 0 {
            self.set_to(s);
        }
    }

    /// Plurals and -ed or -ing: caresses -> caress, ponies -> poni, feed -> feed,
    /// agreed -> agree, plastered -> plaster, motoring -> motor, hopping -> hop, filing -> file.
    fn step1ab(&mut self) {
        if self.b[self.k] == 's' {
            if self.ends("sses") {
                self.k -= 2;
            } else if self.ends("ies") {
                self.set_to("i");
            } else if self.b[self.k - 1] != 's' {
                self.k -= 1;
            }
        }
        if self.ends("eed") {
            if self.m() > 0 {
                self.k -= 1;
            }
        } else if (self.ends("ed") || self.ends("ing")) && self.vowel_in_stem() {
            self.k = self.stem - 1;
            if self.ends("at") {
                self.set_to("ate");
            } else if self.ends("bl") {
                self.set_to("ble");
            } else if self.ends("iz") {
                self.set_to("ize");
            } else if self.double_c(self.k) {
                if !matches!(self.b[self.k], 'l' | 's' | 'z') {
                    self.k -= 1;
                }
            } else {
                self.stem = self.k + 1;
                if self.m() == 1 && self.cvc(self.k) {
                    self.set_to("e");
                }
            }
        }
    }

    /// A final y after a vowel in the stem becomes i: happy -> happi, sky -> sky.
    fn step1c(&mut self) {
        if self.ends("y") && self.vowel_in_stem() {
            self.b[self.k] = 'i';
        }
    }

    /// Double suffixes to single ones, where m > 0: -ization -> -ize, -ational -> -ate...
    fn step2(&mut self) {
        if self.k == 0 {
            return;
        }
        let rules: &[(&str, &str)] = match self.b[self.k - 1] {
            'a' => &[("ational", "ate"), ("tional", "tion")],
            'c' => &[("enci", "ence"), ("anci", "ance")],
            'e' => &[("izer", "ize")],
            'l' => &[("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")],
            'o' => &[("ization", "ize"), ("ation", "ate"), ("ator", "ate")],
            's' => &[("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")],
            't' => &[("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")],
            'g' => &[("logi", "log")],
            _ => &[],
        };
        self.first_rule(rules);
    }

    /// -ic-, -full, -ness and the like, where m > 0.
    fn step3(&mut self) {
        let rules: &[(&str, &str)] = match self.b[self.k] {
            'e' => &[("icate", "ic"), ("ative", ""), ("alize", "al")],
            'i' => &[("iciti", "ic")],
            'l' => &[("ical", "ic"), ("ful", "")],
            's' => &[("ness", "")],
            _ => &[],
        };
        self.first_rule(rules);
    }

    /// Applies the first rule whose ending the word has (and no other).
    fn first_rule(&mut self, rules: &[(&str, &str)]) {
        if let Some(&(_, to)) = rules.iter().find(|(ending, _)| self.ends(ending)) {
            self.r(to);
        }
    }

    /// Takes off -ant, -ence and the like, where m > 1.
    fn step4(&mut self) {
        if self.k == 0 {
            return;
        }
        let endings: &[&str] = match self.b[self.k - 1] {
            'a' => &["al"],
            'c' => &["ance", "ence"],
            'e' => &["er"],
            'i' => &["ic"],
            'l' => &["able", "ible"],
            'n' => &["ant", "ement", "ment", "ent"],
            'o' => &["ion", "ou"],
            's' => &["ism"],
            't' => &["ate", "iti"],
            'u' => &["ous"],
            'v' => &["ive"],
            'z' => &["ize"],
            _ => return,
        };
        let Some(&ending) = endings.iter().find(|&&e| self.ends(e)) else { return };
        // -ion only after s or t.
        if ending == "ion" && (self.stem == 0 || !matches!(self.b[self.stem - 1], 's' | 't')) {
            return;
        }
        if self.m() > 1 {
            self.k = self.stem - 1;
        }
    }

    /// A final -e where m > 1 (or m = 1 and not after cvc), and -ll to -l where m > 1
    /// (m of the word as step 5 found it).
    fn step5(&mut self) {
        self.stem = self.k + 1;
        if self.b[self.k] == 'e' {
            let a = self.m();
            if a > 1 || (a == 1 && !(self.k >= 1 && self.cvc(self.k - 1))) {
                self.k -= 1;
            }
        }
        if self.b[self.k] == 'l' && self.double_c(self.k) && self.m() > 1 {
            self.k -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn the_papers_examples() {
        for (word, want) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("sky", "sky"),
            ("relational", "relat"),
            ("generalization", "gener"),
            ("hopeful", "hope"),
            ("goodness", "good"),
            ("revival", "reviv"),
            ("adjustable", "adjust"),
            ("controlling", "control"),
            ("rate", "rate"),
            ("is", "is"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }
}
