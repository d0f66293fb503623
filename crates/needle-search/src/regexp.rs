//! Lucene's regular expressions (Elasticsearch's `regexp` query, `/.../` in a
//! query string) as a [`TermMatcher`]: the pattern is read in Lucene's syntax
//! and rewritten into the `regex-automata` crate's, which builds a DFA over
//! the term's UTF-8 bytes; a term matches when the whole of it does (Lucene's
//! expressions are always anchored at both ends).
//!
//! Lucene's syntax: `.` any character, `?` `*` `+` `{n}` `{n,}` `{n,m}`,
//! `|`, `( )`, `[a-z]` and `[^a-z]` classes, `"..."` a literal string, `\`
//! escaping the next character, `\d \s \w` (and upper-case negations) as
//! Lucene defines them, and with the optional operators on (`flags` `ALL`,
//! Elasticsearch's default) `@` any string. Every other character stands for
//! itself (`^` and `$` too). The intersection `&`, complement `~`, empty
//! language `#` and numeric interval `<n-m>` operators are refused as not
//! supported yet; with their flag off they are ordinary characters.

use needle_codecs::{MatchState, TermMatcher};
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start::Config as StartConfig;
use regex_automata::{Anchored, MatchKind};

/// The most bytes the DFA may take (Lucene bounds determinization by states:
/// Elasticsearch's `max_determinized_states`, 10,000 by default).
const MAX_DFA_BYTES: usize = 8 << 20;

/// Which of Lucene's optional operators a pattern may use (its `flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegexpFlags {
    pub any_string: bool,
    pub empty: bool,
    pub intersection: bool,
    pub complement: bool,
    pub interval: bool,
}

impl RegexpFlags {
    pub const ALL: RegexpFlags =
        RegexpFlags { any_string: true, empty: true, intersection: true, complement: true, interval: true };
    pub const NONE: RegexpFlags = RegexpFlags {
        any_string: false,
        empty: false,
        intersection: false,
        complement: false,
        interval: false,
    };

    /// Elasticsearch's `flags`: `ALL`, `NONE`, or names joined by `|`
    /// (`ANYSTRING`, `EMPTY`, `INTERSECTION`, `COMPLEMENT`, `INTERVAL`).
    pub fn parse(text: &str) -> Result<RegexpFlags, String> {
        let mut flags = RegexpFlags::NONE;
        for name in text.split('|').map(str::trim).filter(|n| !n.is_empty()) {
            match name.to_ascii_uppercase().as_str() {
                "ALL" => flags = RegexpFlags::ALL,
                "NONE" => {}
                "ANYSTRING" => flags.any_string = true,
                "EMPTY" => flags.empty = true,
                "INTERSECTION" => flags.intersection = true,
                "COMPLEMENT" => flags.complement = true,
                "INTERVAL" => flags.interval = true,
                other => return Err(format!("unknown regexp flag [{other}]")),
            }
        }
        Ok(flags)
    }
}

/// Terms the whole of which a Lucene regular expression matches.
pub struct RegexpMatcher {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

impl RegexpMatcher {
    pub fn new(pattern: &str, flags: RegexpFlags, case_insensitive: bool) -> Result<Self, String> {
        let translated = translate(pattern, flags)?;
        let config = dense::Config::new()
            .start_kind(StartKind::Anchored)
            .match_kind(MatchKind::All)
            .dfa_size_limit(Some(MAX_DFA_BYTES))
            .determinize_size_limit(Some(MAX_DFA_BYTES));
        // The NFA the DFA is made from is bounded too: a counted repetition
        // (`a{88888888}`) is compiled copy by copy.
        let nfa = regex_automata::nfa::thompson::Config::new().nfa_size_limit(Some(MAX_DFA_BYTES));
        let dfa = dense::Builder::new()
            .configure(config)
            .thompson(nfa)
            .syntax(regex_automata::util::syntax::Config::new().case_insensitive(case_insensitive))
            .build(&format!("(?:{translated})$"))
            .map_err(|e| format!("the regular expression [{pattern}] cannot be used: {e}"))?;
        let start = dfa
            .start_state(&StartConfig::new().anchored(Anchored::Yes))
            .map_err(|e| format!("the regular expression [{pattern}] cannot be used: {e}"))?;
        Ok(RegexpMatcher { dfa, start })
    }

    fn state(state: &MatchState) -> StateID {
        StateID::new(state[0] as usize).expect("a state this matcher made")
    }
}

impl TermMatcher for RegexpMatcher {
    fn start(&self) -> MatchState {
        vec![self.start.as_u32()]
    }

    fn step(&self, state: &MatchState, c: char) -> Option<MatchState> {
        let mut id = Self::state(state);
        let mut buf = [0u8; 4];
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            id = self.dfa.next_state(id, b);
            if self.dfa.is_dead_state(id) || self.dfa.is_quit_state(id) {
                return None;
            }
        }
        Some(vec![id.as_u32()])
    }

    fn accepts(&self, state: &MatchState) -> bool {
        let end = self.dfa.next_eoi_state(Self::state(state));
        self.dfa.is_match_state(end)
    }
}

/// `pattern` in Lucene's syntax as an expression of the regex crates'.
fn translate(pattern: &str, flags: RegexpFlags) -> Result<String, String> {
    let unsupported = |what: &str| {
        Err(format!("{what} in the regular expression [{pattern}] is not supported yet by Needle"))
    };
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    return Err(format!("the regular expression [{pattern}] ends in `\\`"));
                };
                out.push_str(&shorthand(next).unwrap_or_else(|| literal(next)));
            }
            '.' => out.push_str("(?s:.)"),
            '"' => {
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '"' {
                        closed = true;
                        break;
                    }
                    out.push_str(&literal(q));
                }
                if !closed {
                    return Err(format!("the regular expression [{pattern}] has a `\"` without its end"));
                }
            }
            '[' => class(&mut chars, &mut out, pattern)?,
            '{' => {
                out.push('{');
                loop {
                    match chars.next() {
                        Some('}') => break out.push('}'),
                        Some(d) if d.is_ascii_digit() || d == ',' => out.push(d),
                        _ => {
                            return Err(format!(
                                "the regular expression [{pattern}] has a bad `{{n,m}}` repeat"
                            ))
                        }
                    }
                }
            }
            '(' | ')' | '|' | '*' | '+' | '?' => out.push(c),
            '@' if flags.any_string => out.push_str("(?s:.*)"),
            '#' if flags.empty => return unsupported("the empty language `#`"),
            '&' if flags.intersection => return unsupported("the intersection `&`"),
            '~' if flags.complement => return unsupported("the complement `~`"),
            '<' if flags.interval => return unsupported("the numeric interval `<n-m>`"),
            other => out.push_str(&literal(other)),
        }
    }
    Ok(out)
}

/// A `[...]` class, its opening bracket read; characters the regex crates
/// read specially inside a class (`[`, `&`, `~`, and `^` after the first)
/// are escaped.
fn class(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
    pattern: &str,
) -> Result<(), String> {
    out.push('[');
    if chars.peek() == Some(&'^') {
        chars.next();
        out.push('^');
    }
    let mut first = true;
    loop {
        match chars.next() {
            None => return Err(format!("the regular expression [{pattern}] has a `[` without its `]`")),
            Some(']') if !first => break,
            Some('\\') => match chars.next() {
                Some(c) => {
                    out.push_str(&shorthand(c).map_or_else(|| literal(c), |s| s[1..s.len() - 1].to_string()))
                }
                None => return Err(format!("the regular expression [{pattern}] ends in `\\`")),
            },
            Some('-') => out.push('-'),
            Some(c) => out.push_str(&literal(c)),
        }
        first = false;
    }
    out.push(']');
    Ok(())
}

/// Lucene's `\d \s \w` and their negations, as classes.
fn shorthand(c: char) -> Option<String> {
    Some(
        match c {
            'd' => "[0-9]",
            'D' => "[^0-9]",
            's' => "[ \t\n\r]",
            'S' => "[^ \t\n\r]",
            'w' => "[a-zA-Z_0-9]",
            'W' => "[^a-zA-Z_0-9]",
            _ => return None,
        }
        .to_string(),
    )
}

/// `c` standing for itself.
fn literal(c: char) -> String {
    if c.is_ascii_punctuation() || c.is_whitespace() {
        // Any ASCII punctuation may be escaped in the regex crates' syntax.
        match c {
            ' ' => " ".into(),
            '\t' => "\\t".into(),
            '\n' => "\\n".into(),
            '\r' => "\\r".into(),
            c if c.is_ascii_punctuation() => format!("\\{c}"),
            c => format!("\\x{{{:x}}}", c as u32),
        }
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, term: &str) -> bool {
        RegexpMatcher::new(pattern, RegexpFlags::ALL, false).unwrap().matches(term.as_bytes())
    }

    #[test]
    fn whole_terms_match_lucene_syntax() {
        for (pattern, yes, no) in [
            ("gov.*", "government", "misgoverned"),
            ("wom[ae]n", "women", "womyn"),
            ("te(s|x)t+", "texttt", "tet"),
            ("colou?r", "color", "colouur"),
            ("a{2,3}b", "aaab", "aaaab"),
            ("[^a-c]x", "dx", "bx"),
            ("\"a.b\"c", "a.bc", "axbc"),
            ("\\d+\\w", "123z", "12 z"),
            ("x@", "xylophone", "ax"),
            ("^a$", "^a$", "a"),
            ("caf.", "café", "caf"),
            ("", "", "a"),
        ] {
            assert!(matches(pattern, yes), "{pattern} should match {yes}");
            assert!(!matches(pattern, no), "{pattern} should not match {no}");
        }
    }

    #[test]
    fn optional_operators_follow_the_flags() {
        assert!(
            RegexpMatcher::new("a&b", RegexpFlags::ALL, false).is_err(),
            "intersection refused, not ignored"
        );
        assert!(RegexpMatcher::new("~a", RegexpFlags::ALL, false).is_err());
        assert!(RegexpMatcher::new("<1-5>", RegexpFlags::ALL, false).is_err());
        let literal = RegexpMatcher::new("a&b@", RegexpFlags::NONE, false).unwrap();
        assert!(literal.matches(b"a&b@"), "with the flags off the operators are characters");
        assert!(RegexpFlags::parse("INTERSECTION|ANYSTRING").unwrap().any_string);
        assert!(RegexpFlags::parse("BOGUS").is_err());
    }

    #[test]
    fn bad_patterns_are_errors_not_panics() {
        for bad in ["(ab", "[ab", "a{2", "\"ab", "ab\\", "a**{"] {
            assert!(RegexpMatcher::new(bad, RegexpFlags::ALL, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pattern_too_large_to_compile_is_an_error_within_the_bound() {
        // The fuzzer's input: an unbounded NFA took every byte of memory for it.
        for huge in ["tt{88888888}", "(ab|cd){100000}"] {
            let err = RegexpMatcher::new(huge, RegexpFlags::ALL, false).err().expect("too large");
            assert!(err.contains("cannot be used"), "{huge}: {err}");
        }
    }

    #[test]
    fn case_insensitive_matches_any_case() {
        let m = RegexpMatcher::new("Gov.*", RegexpFlags::ALL, true).unwrap();
        assert!(m.matches(b"government") && m.matches(b"GOVERN"));
        assert!(!RegexpMatcher::new("Gov.*", RegexpFlags::ALL, false).unwrap().matches(b"government"));
    }
}
