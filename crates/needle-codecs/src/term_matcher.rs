//! Walking a field's terms with a matcher over characters (a prefix, a
//! wildcard pattern, an edit distance), as Lucene's automaton queries walk
//! its terms dictionary: a branch of the term map the matcher has given up
//! on is skipped whole, not read key by key.
//!
//! The matcher sees characters; terms are UTF-8 bytes, decoded here. A term
//! that is not UTF-8 (a numeric field's encoded values) never matches.

/// A matcher's state after some characters: its own encoding (positions of
/// a pattern, a row of edit distances), opaque to the walk.
pub type MatchState = Vec<u32>;

/// Decides, a character at a time, whether a term matches.
pub trait TermMatcher: Sync {
    /// The state before any character.
    fn start(&self) -> MatchState;
    /// The state after `c`, or `None` when no term going on this way can match.
    fn step(&self, state: &MatchState, c: char) -> Option<MatchState>;
    /// Whether a term ending in `state` matches.
    fn accepts(&self, state: &MatchState) -> bool;

    /// Whether the whole of `term` matches.
    fn matches(&self, term: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(term) else { return false };
        let mut state = self.start();
        for c in text.chars() {
            match self.step(&state, c) {
                Some(next) => state = next,
                None => return false,
            }
        }
        self.accepts(&state)
    }
}

/// A [`TermMatcher`] run over the term map's keys of one field: the first
/// `skip` bytes (the field's key prefix) are passed over, the rest decoded
/// as UTF-8 and handed to the matcher.
pub(crate) struct KeyAutomaton<'a> {
    pub matcher: &'a dyn TermMatcher,
    pub skip: usize,
}

#[derive(Clone)]
pub(crate) enum KeyState {
    /// Bytes of the field prefix seen so far.
    Prefix(usize),
    /// The matcher's state and the bytes of a character not yet complete.
    Term {
        state: MatchState,
        pending: [u8; 4],
        len: u8,
    },
    Dead,
}

impl fst::Automaton for KeyAutomaton<'_> {
    type State = KeyState;

    fn start(&self) -> KeyState {
        match self.skip {
            0 => KeyState::Term { state: self.matcher.start(), pending: [0; 4], len: 0 },
            _ => KeyState::Prefix(0),
        }
    }

    fn is_match(&self, s: &KeyState) -> bool {
        matches!(s, KeyState::Term { state, len: 0, .. } if self.matcher.accepts(state))
    }

    fn can_match(&self, s: &KeyState) -> bool {
        !matches!(s, KeyState::Dead)
    }

    fn accept(&self, s: &KeyState, byte: u8) -> KeyState {
        match s {
            KeyState::Prefix(n) if n + 1 < self.skip => KeyState::Prefix(n + 1),
            KeyState::Prefix(_) => KeyState::Term { state: self.matcher.start(), pending: [0; 4], len: 0 },
            KeyState::Term { state, pending, len } => {
                let mut pending = *pending;
                pending[usize::from(*len)] = byte;
                let len = len + 1;
                match std::str::from_utf8(&pending[..usize::from(len)]) {
                    Ok(text) => {
                        let c = text.chars().next().expect("one character");
                        match self.matcher.step(state, c) {
                            Some(state) => KeyState::Term { state, pending: [0; 4], len: 0 },
                            None => KeyState::Dead,
                        }
                    }
                    // Incomplete: wait for the rest of the character.
                    Err(e) if e.error_len().is_none() && len < 4 => {
                        KeyState::Term { state: state.clone(), pending, len }
                    }
                    Err(_) => KeyState::Dead,
                }
            }
            KeyState::Dead => KeyState::Dead,
        }
    }
}
