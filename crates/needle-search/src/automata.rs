//! The term matchers of multi-term queries, each a [`TermMatcher`] walked
//! along the term map (see `needle_codecs::term_matcher`): a prefix, a
//! wildcard pattern (`*` any characters, `?` one, `\` escapes), and terms
//! within an edit distance of a word (Lucene's LevenshteinAutomata: insertions,
//! deletions, substitutions and, when asked, transpositions of adjacent
//! characters, counted in Unicode code points after an exact prefix), and
//! terms between two bounds (Lucene's TermRangeQuery).

use needle_codecs::{MatchState, TermMatcher};

fn same(a: char, b: char, case_insensitive: bool) -> bool {
    a == b || (case_insensitive && a.to_lowercase().eq(b.to_lowercase()))
}

/// Terms starting with a prefix. State: `[characters of the prefix matched]`.
pub struct PrefixMatcher {
    prefix: Vec<char>,
    case_insensitive: bool,
}

impl PrefixMatcher {
    pub fn new(prefix: &str, case_insensitive: bool) -> Self {
        PrefixMatcher { prefix: prefix.chars().collect(), case_insensitive }
    }
}

impl TermMatcher for PrefixMatcher {
    fn start(&self) -> MatchState {
        vec![0]
    }
    fn step(&self, state: &MatchState, c: char) -> Option<MatchState> {
        let n = state[0] as usize;
        match self.prefix.get(n) {
            None => Some(state.clone()),
            Some(&p) if same(p, c, self.case_insensitive) => Some(vec![state[0] + 1]),
            Some(_) => None,
        }
    }
    fn accepts(&self, state: &MatchState) -> bool {
        state[0] as usize == self.prefix.len()
    }
}

/// Terms between two bounds in byte order (code point order, for UTF-8),
/// either bound absent (open) or left out itself. State: for each bound,
/// the characters of it the term equals so far, or `OUTSIDE` once the term
/// has left it behind (past the lower one, before the upper one).
pub struct RangeMatcher {
    lower: Option<Vec<char>>,
    upper: Option<Vec<char>>,
    include_lower: bool,
    include_upper: bool,
}

const OUTSIDE: u32 = u32::MAX;

impl RangeMatcher {
    pub fn new(lower: Option<&str>, upper: Option<&str>, include_lower: bool, include_upper: bool) -> Self {
        let chars = |b: Option<&str>| b.map(|b| b.chars().collect());
        RangeMatcher { lower: chars(lower), upper: chars(upper), include_lower, include_upper }
    }
}

impl TermMatcher for RangeMatcher {
    fn start(&self) -> MatchState {
        let start = |b: &Option<Vec<char>>| if b.is_some() { 0 } else { OUTSIDE };
        vec![start(&self.lower), start(&self.upper)]
    }

    fn step(&self, state: &MatchState, c: char) -> Option<MatchState> {
        let (mut low, mut high) = (state[0], state[1]);
        if let Some(lower) = self.lower.as_ref().filter(|_| low != OUTSIDE) {
            match lower.get(low as usize) {
                // Equal to the bound so far, then longer: past it.
                None => low = OUTSIDE,
                Some(&b) if c > b => low = OUTSIDE,
                Some(&b) if c == b => low += 1,
                Some(_) => return None,
            }
        }
        if let Some(upper) = self.upper.as_ref().filter(|_| high != OUTSIDE) {
            match upper.get(high as usize) {
                None => return None,
                Some(&b) if c < b => high = OUTSIDE,
                Some(&b) if c == b => high += 1,
                Some(_) => return None,
            }
        }
        Some(vec![low, high])
    }

    fn accepts(&self, state: &MatchState) -> bool {
        let low_ok = match &self.lower {
            Some(lower) if state[0] != OUTSIDE => state[0] as usize == lower.len() && self.include_lower,
            _ => true,
        };
        let high_ok = match &self.upper {
            Some(upper) if state[1] != OUTSIDE => state[1] as usize != upper.len() || self.include_upper,
            _ => true,
        };
        low_ok && high_ok
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Glob {
    Char(char),
    /// `?`: any one character.
    One,
    /// `*`: any characters, none included.
    Any,
}

/// Terms matching a wildcard pattern. State: the pattern positions reached,
/// ascending (a position after a `*` is reached with the one before it).
pub struct WildcardMatcher {
    pattern: Vec<Glob>,
    case_insensitive: bool,
}

impl WildcardMatcher {
    pub fn new(pattern: &str, case_insensitive: bool) -> Self {
        let mut globs = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            globs.push(match c {
                '*' => Glob::Any,
                '?' => Glob::One,
                // A trailing `\` stands for itself, as in Lucene.
                '\\' => Glob::Char(chars.next().unwrap_or('\\')),
                c => Glob::Char(c),
            });
        }
        WildcardMatcher { pattern: globs, case_insensitive }
    }

    /// Adds `at` and every position a run of `*` from it reaches.
    fn reach(&self, mut at: usize, out: &mut MatchState) {
        loop {
            if !out.contains(&(at as u32)) {
                out.push(at as u32);
            }
            match self.pattern.get(at) {
                Some(Glob::Any) => at += 1,
                _ => return,
            }
        }
    }
}

impl TermMatcher for WildcardMatcher {
    fn start(&self) -> MatchState {
        let mut state = Vec::new();
        self.reach(0, &mut state);
        state
    }
    fn step(&self, state: &MatchState, c: char) -> Option<MatchState> {
        let mut next = Vec::with_capacity(state.len() + 1);
        for &at in state {
            let at = at as usize;
            match self.pattern.get(at) {
                Some(Glob::Any) => self.reach(at, &mut next),
                Some(Glob::One) => self.reach(at + 1, &mut next),
                Some(Glob::Char(p)) if same(*p, c, self.case_insensitive) => self.reach(at + 1, &mut next),
                _ => {}
            }
        }
        next.sort_unstable();
        (!next.is_empty()).then_some(next)
    }
    fn accepts(&self, state: &MatchState) -> bool {
        state.contains(&(self.pattern.len() as u32))
    }
}

/// Terms within `max_edits` of a word, its first `prefix` characters
/// unchanged. State: `[prefix characters matched, previous character + 1
/// (0 before any), row..., previous row...]`, where the rows are the edit
/// distances from the characters read (after the prefix) to each prefix of
/// the word's rest, capped at `max_edits + 1`.
pub struct EditDistanceMatcher {
    prefix: Vec<char>,
    rest: Vec<char>,
    max_edits: u32,
    transpositions: bool,
}

impl EditDistanceMatcher {
    pub fn new(word: &str, max_edits: u32, prefix_length: usize, transpositions: bool) -> Self {
        let chars: Vec<char> = word.chars().collect();
        let split = prefix_length.min(chars.len());
        EditDistanceMatcher {
            prefix: chars[..split].to_vec(),
            rest: chars[split..].to_vec(),
            max_edits,
            transpositions,
        }
    }

    /// The edit distance of `term` from the word, when within the bound.
    pub fn distance(&self, term: &[u8]) -> Option<u32> {
        let text = std::str::from_utf8(term).ok()?;
        let mut state = self.start();
        for c in text.chars() {
            state = self.step(&state, c)?;
        }
        self.accepts(&state).then(|| self.row(&state)[self.rest.len()])
    }

    fn width(&self) -> usize {
        self.rest.len() + 1
    }

    fn row<'s>(&self, state: &'s MatchState) -> &'s [u32] {
        &state[2..2 + self.width()]
    }
}

impl TermMatcher for EditDistanceMatcher {
    fn start(&self) -> MatchState {
        let cap = self.max_edits + 1;
        let mut state = vec![0, 0];
        state.extend((0..self.width() as u32).map(|j| j.min(cap)));
        state.extend(std::iter::repeat_n(cap, self.width()));
        state
    }

    fn step(&self, state: &MatchState, c: char) -> Option<MatchState> {
        let matched = state[0] as usize;
        if matched < self.prefix.len() {
            return (self.prefix[matched] == c).then(|| {
                let mut next = state.clone();
                next[0] += 1;
                next
            });
        }
        let (w, cap) = (self.width(), self.max_edits + 1);
        let prev_char = state[1].checked_sub(1).and_then(char::from_u32);
        let row = self.row(state);
        let before = &state[2 + w..];
        let mut next = vec![state[0], c as u32 + 1];
        next.push((row[0] + 1).min(cap));
        for j in 1..w {
            let substitute = row[j - 1] + u32::from(self.rest[j - 1] != c);
            let mut d = substitute.min(row[j] + 1).min(next[2 + j - 1] + 1);
            if self.transpositions && j >= 2 && prev_char == Some(self.rest[j - 1]) && c == self.rest[j - 2] {
                d = d.min(before[j - 2] + 1);
            }
            next.push(d.min(cap));
        }
        if next[2..].iter().all(|&d| d >= cap) {
            return None;
        }
        next.extend_from_slice(row);
        Some(next)
    }

    fn accepts(&self, state: &MatchState) -> bool {
        state[0] as usize == self.prefix.len() && self.row(state)[self.rest.len()] <= self.max_edits
    }
}

#[cfg(test)]
mod tests {
    // Proptests against reference implementations: needle-testkit's tests/automata.rs.
    use super::*;

    #[test]
    fn escapes_and_case() {
        let m = WildcardMatcher::new(r"a\*b*", false);
        assert!(m.matches(b"a*bcd") && !m.matches(b"axbcd"));
        assert!(WildcardMatcher::new("TAX*", true).matches(b"taxes"));
        assert!(!WildcardMatcher::new("TAX*", false).matches(b"taxes"));
        assert!(PrefixMatcher::new("Amer", true).matches(b"america"));
        assert!(!PrefixMatcher::new("Amer", false).matches(b"america"));
    }

    #[test]
    fn a_swap_is_one_edit_only_with_transpositions() {
        assert_eq!(EditDistanceMatcher::new("slepes", 2, 0, true).distance(b"sleeps"), Some(1));
        assert_eq!(EditDistanceMatcher::new("slepes", 2, 0, false).distance(b"sleeps"), Some(2));
        assert_eq!(EditDistanceMatcher::new("slepes", 1, 4, true).distance(b"sleeps"), None);
    }

    #[test]
    fn a_term_that_is_not_text_never_matches() {
        assert!(!PrefixMatcher::new("", false).matches(&[0xff, 0x00]));
    }
}
