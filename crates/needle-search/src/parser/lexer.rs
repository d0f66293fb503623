//! The tokens of Lucene's classic query syntax (its `QueryParser.jj`), with
//! the same rules for where a term ends: `-` and `+` may continue a term
//! (`wi-fi`) but not start one, `\` escapes any character, `AND`/`OR`/`NOT`
//! and `&&`/`||`/`!` are operators only as whole words, and `+`, `-` or `!`
//! followed by a space is a term of its own (Lucene's `BAREOPER`).

use needle_core::{Error, Result};

use crate::TermRange;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    And,
    Or,
    Not,
    Plus,
    Minus,
    LParen,
    RParen,
    Colon,
    /// `*` alone: a field or term matching anything (only `*:*` is supported).
    Star,
    /// `^` and its number.
    Boost(f32),
    /// `"..."`, unescaped.
    Quoted(String),
    /// A term, unescaped.
    Term(String),
    /// A term with an unescaped `*` or `?`; escapes of `*`, `?` and `\` kept.
    Wildcard(String),
    /// `~` and the number after it, if any.
    Tilde(Option<f32>),
    /// `[a TO b]`, `{a TO b}` or a mix (`[` includes its bound, `{` leaves it out; `*` is open).
    Range(TermRange),
    /// `/regex/`, its text between the slashes (`\/` kept as written).
    Regex(String),
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{3000}')
}

/// Characters a term cannot start with (nor contain unescaped, but `-` and `+`).
fn is_special(c: char) -> bool {
    is_space(c) || "+-!():^[]\"{}~*?\\/".contains(c)
}

pub(super) fn tokens(input: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next_is_space = chars.get(i + 1).is_none_or(|&n| is_space(n));
        i += 1;
        let token = match c {
            c if is_space(c) => continue,
            '+' | '-' | '!' if chars.get(i).is_some_and(|&n| is_space(n)) => Token::Term(c.to_string()),
            '+' => Token::Plus,
            '-' => Token::Minus,
            '!' => Token::Not,
            '(' => Token::LParen,
            ')' => Token::RParen,
            ':' => Token::Colon,
            '*' if next_is_space || matches!(chars.get(i), Some(':' | ')')) => Token::Star,
            '^' => Token::Boost(
                number(&chars, &mut i).ok_or_else(|| Error::query("`^` must be followed by a number"))?,
            ),
            '~' => Token::Tilde(number(&chars, &mut i)),
            '"' => Token::Quoted(quoted(&chars, &mut i)?),
            '[' | '{' => {
                // A range runs to its closing bracket (whichever: `[a TO b}` is a range too).
                let Some(len) = chars[i..].iter().position(|&c| c == ']' || c == '}') else {
                    return Err(Error::query(format!("unterminated range: `{c}` without `]` or `}}`")));
                };
                let inside: String = chars[i..i + len].iter().collect();
                let close = chars[i + len];
                i += len + 1;
                Token::Range(range(&inside, c == '[', close == ']')?)
            }
            ']' | '}' => return Err(Error::query(format!("unexpected `{c}` without its opening bracket"))),
            '/' => Token::Regex(regex(&chars, &mut i)?),
            _ => {
                i -= 1;
                term(&chars, &mut i)?
            }
        };
        out.push(token);
    }
    Ok(out)
}

/// The bounds of `[lower TO upper]` (Lucene's RANGE_GOOP and RANGE_QUOTED):
/// words or quoted text, `*` for an open end.
fn range(inside: &str, include_lower: bool, include_upper: bool) -> Result<TermRange> {
    // Each part, `None` for a bare `*` (a quoted one is the term `*`).
    let mut parts: Vec<Option<String>> = Vec::new();
    let mut chars = inside.chars().peekable();
    while let Some(&c) = chars.peek() {
        if is_space(c) {
            chars.next();
            continue;
        }
        let mut part = String::new();
        if c == '"' {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => part.extend(chars.next()),
                    Some(other) => part.push(other),
                    None => return Err(Error::query(format!("unterminated phrase in the range `{inside}`"))),
                }
            }
            parts.push(Some(part));
            continue;
        }
        while let Some(&c) = chars.peek().filter(|c| !is_space(**c)) {
            chars.next();
            match c {
                '\\' => part.extend(chars.next()),
                c => part.push(c),
            }
        }
        parts.push((part != "*").then_some(part));
    }
    match <[Option<String>; 3]>::try_from(parts) {
        Ok([lower, Some(to), upper]) if to == "TO" => {
            Ok(TermRange { lower, upper, include_lower, include_upper })
        }
        _ => Err(Error::query(format!("a range is `[lower TO upper]`, not `{inside}`"))),
    }
}

/// A regular expression's text after its opening `/`, up to the next `/`
/// not escaped by `\`, which is consumed (Lucene's REGEXPTERM).
fn regex(chars: &[char], i: &mut usize) -> Result<String> {
    let start = *i;
    while let Some(&c) = chars.get(*i) {
        *i += 1;
        match c {
            '\\' => *i += 1,
            '/' => return Ok(chars[start..*i - 1].iter().collect()),
            _ => {}
        }
    }
    Err(Error::query("unterminated regular expression: `/` without its closing `/`"))
}

/// A number at `*i` (`12`, `1.5`), consumed; `None` (nothing consumed) when there is none.
fn number(chars: &[char], i: &mut usize) -> Option<f32> {
    let start = *i;
    let mut end = start;
    while chars.get(end).is_some_and(char::is_ascii_digit) {
        end += 1;
    }
    if end > start && chars.get(end) == Some(&'.') && chars.get(end + 1).is_some_and(char::is_ascii_digit) {
        end += 1;
        while chars.get(end).is_some_and(char::is_ascii_digit) {
            end += 1;
        }
    }
    let text: String = chars[start..end].iter().collect();
    let n = text.parse().ok()?;
    *i = end;
    Some(n)
}

fn quoted(chars: &[char], i: &mut usize) -> Result<String> {
    let mut text = String::new();
    loop {
        match chars.get(*i) {
            None => return Err(Error::query("unterminated phrase: missing closing `\"`")),
            Some('"') => {
                *i += 1;
                return Ok(text);
            }
            Some('\\') => {
                text.extend(chars.get(*i + 1));
                *i += 2;
            }
            Some(&c) => {
                text.push(c);
                *i += 1;
            }
        }
    }
}

/// A term (or an operator word, or a wildcard term) starting at `*i`.
fn term(chars: &[char], i: &mut usize) -> Result<Token> {
    let mut text = String::new();
    // The same, with the escapes a wildcard pattern needs to tell `\*` from `*`.
    let mut pattern = String::new();
    let mut wildcard = false;
    while let Some(&c) = chars.get(*i) {
        match c {
            '\\' => {
                let Some(&escaped) = chars.get(*i + 1) else {
                    return Err(Error::query("`\\` at the end of the query escapes nothing"));
                };
                text.push(escaped);
                if matches!(escaped, '*' | '?' | '\\') {
                    pattern.push('\\');
                }
                pattern.push(escaped);
                *i += 2;
                continue;
            }
            '*' | '?' => wildcard = true,
            '-' | '+' if !text.is_empty() || wildcard => {}
            c if is_special(c) => break,
            _ => {}
        }
        text.push(c);
        pattern.push(c);
        *i += 1;
    }
    Ok(match text.as_str() {
        "" => return Err(Error::query(format!("unexpected `{}`", chars[*i]))),
        _ if wildcard => Token::Wildcard(pattern),
        "AND" | "&&" => Token::And,
        "OR" | "||" => Token::Or,
        "NOT" => Token::Not,
        _ => Token::Term(text),
    })
}

#[cfg(test)]
mod tests {
    use super::Token::*;
    use super::*;

    fn t(s: &str) -> Token {
        Term(s.to_string())
    }

    #[test]
    fn lucene_term_boundaries() {
        assert_eq!(tokens("wi-fi +a -b !c").unwrap(), [t("wi-fi"), Plus, t("a"), Minus, t("b"), Not, t("c")]);
        assert_eq!(tokens("a - b").unwrap(), [t("a"), t("-"), t("b")]);
        assert_eq!(
            tokens("a AND b && c OR d || e NOT f ANDROID").unwrap(),
            [t("a"), And, t("b"), And, t("c"), Or, t("d"), Or, t("e"), Not, t("f"), t("ANDROID")]
        );
        assert_eq!(
            tokens("title:(x y)^2").unwrap(),
            [t("title"), Colon, LParen, t("x"), t("y"), RParen, Boost(2.0)]
        );
        assert_eq!(
            tokens(r#""war peace"~1.5 war~2 war~"#).unwrap(),
            [Quoted("war peace".into()), Tilde(Some(1.5)), t("war"), Tilde(Some(2.0)), t("war"), Tilde(None)]
        );
        assert_eq!(
            tokens(r"a\:b \(c\) te?t te* *:*").unwrap(),
            [t("a:b"), t("(c)"), Wildcard("te?t".into()), Wildcard("te*".into()), Star, Colon, Star]
        );
        assert_eq!(tokens(r"a\*b* a\*b").unwrap(), [Wildcard(r"a\*b*".into()), t("a*b")]);
        let range = |lower: Option<&str>, upper: Option<&str>, include_lower, include_upper| {
            let own = |b: Option<&str>| b.map(str::to_string);
            Range(TermRange { lower: own(lower), upper: own(upper), include_lower, include_upper })
        };
        assert_eq!(tokens("[a TO b] c").unwrap(), [range(Some("a"), Some("b"), true, true), t("c")]);
        assert_eq!(tokens("{* TO \"x y\"]").unwrap(), [range(None, Some("x y"), false, true)]);
        assert_eq!(tokens("[\"*\" TO *}").unwrap(), [range(Some("*"), None, true, false)]);
        for bad in ["[a b]", "[a TO]", "[a to b]", "[a TO b c]"] {
            assert!(tokens(bad).is_err(), "{bad}");
        }
        assert!(tokens("]").is_err() && tokens("[a TO").is_err());
        assert!(tokens("\"open").is_err() && tokens("a^").is_err() && tokens("a\\").is_err());
    }
}
