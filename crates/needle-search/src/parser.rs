//! The query-string syntax (a subset of Lucene's classic query parser):
//!
//! | input        | meaning                                                        |
//! |--------------|----------------------------------------------------------------|
//! | `a b`        | documents with `a` or `b` (more of them rank higher)            |
//! | `+a +b`      | documents with both                                             |
//! | `-a`         | documents without `a`                                           |
//! | `"a b"`      | the phrase; `"a b"~2` allows two moves                          |
//! | `f:a`, `f:"a b"` | the term or phrase in field `f` only                        |
//!
//! A term without a field is searched in the default fields (by default every
//! text field), expanded per term as Lucene's MultiFieldQueryParser does:
//! `a b` over fields `title, body` is `(title:a body:a) (title:b body:b)`.
//! Each term is analyzed with its field's analyzer; a term that analyzes to
//! several tokens becomes their disjunction; one that analyzes to none (a stop
//! word) is dropped. `\` escapes the next character.

use needle_core::{Error, FieldId, Result};

use crate::{BoolQuery, PhraseQuery, Query, TermQuery};

/// What the parser needs to know of an index's schema.
pub trait QueryFields {
    fn field_id(&self, name: &str) -> Option<FieldId>;
    /// The fields a term without a field prefix searches.
    fn default_fields(&self) -> Vec<FieldId>;
    /// `text` analyzed for `field`: (position, term) pairs. Fails for text
    /// the field cannot hold (a word for a numeric field).
    fn analyze(&self, field: FieldId, text: &str) -> Result<Vec<(u32, String)>>;
}

#[derive(Debug, PartialEq)]
enum Occur {
    Should,
    Must,
    MustNot,
}

#[derive(Debug)]
struct Clause {
    occur: Occur,
    field: Option<String>,
    text: String,
    phrase: Option<u32>,
}

pub fn parse_query(input: &str, fields: &dyn QueryFields) -> Result<Query> {
    let clauses = lex(input)?;
    if clauses.is_empty() {
        return Err(Error::query("empty query"));
    }
    let mut b = BoolQuery::default();
    for c in clauses {
        let targets = match &c.field {
            Some(name) => {
                vec![fields.field_id(name).ok_or_else(|| Error::query(format!("unknown field `{name}`")))?]
            }
            None => fields.default_fields(),
        };
        let mut per_field = Vec::new();
        for field in targets {
            let tokens = fields.analyze(field, &c.text)?;
            if let Some(q) = field_query(field, tokens, c.phrase) {
                per_field.push(q);
            }
        }
        let q = match per_field.len() {
            0 => continue,
            1 => per_field.pop().unwrap(),
            _ => Query::or(per_field),
        };
        match c.occur {
            Occur::Should => b.should.push(q),
            Occur::Must => b.must.push(q),
            Occur::MustNot => b.must_not.push(q),
        }
    }
    if b.must.is_empty() && b.should.is_empty() && b.must_not.is_empty() {
        return Ok(Query::MatchNone);
    }
    Ok(Query::Bool(b))
}

fn field_query(field: FieldId, tokens: Vec<(u32, String)>, phrase_slop: Option<u32>) -> Option<Query> {
    let term = |t: String| Query::Term(TermQuery { field, term: t.into_bytes() });
    match (tokens.len(), phrase_slop) {
        (0, _) => None,
        (1, _) => Some(term(tokens.into_iter().next().unwrap().1)),
        (_, Some(slop)) => {
            let first = tokens[0].0;
            let terms = tokens.into_iter().map(|(p, t)| (p - first, t.into_bytes())).collect();
            Some(Query::Phrase(PhraseQuery { field, terms, slop }))
        }
        (_, None) => Some(Query::or(tokens.into_iter().map(|(_, t)| term(t)).collect())),
    }
}

fn lex(input: &str) -> Result<Vec<Clause>> {
    let mut out = Vec::new();
    let mut chars = input.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else { return Ok(out) };
        let occur = match c {
            '+' => Occur::Must,
            '-' => Occur::MustNot,
            _ => Occur::Should,
        };
        if occur != Occur::Should {
            chars.next();
        }
        let mut clause = Clause { occur, field: None, text: String::new(), phrase: None };
        let mut word = String::new();
        loop {
            match chars.peek().copied() {
                None => break,
                Some(c) if c.is_whitespace() => break,
                Some('\\') => {
                    chars.next();
                    word.extend(chars.next());
                }
                Some(':') if clause.field.is_none() && !word.is_empty() => {
                    chars.next();
                    clause.field = Some(std::mem::take(&mut word));
                }
                Some('"') if word.is_empty() => {
                    chars.next();
                    clause.text = read_phrase(&mut chars)?;
                    clause.phrase = Some(read_slop(&mut chars)?);
                    break;
                }
                Some(c) => {
                    chars.next();
                    word.push(c);
                }
            }
        }
        if clause.phrase.is_none() {
            if word.is_empty() {
                return Err(Error::query(match clause.field {
                    Some(f) => format!("nothing after `{f}:`"),
                    None => "a `+` or `-` must be followed by a term".into(),
                }));
            }
            clause.text = word;
        }
        out.push(clause);
    }
}

fn read_phrase(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<String> {
    let mut text = String::new();
    loop {
        match chars.next() {
            None => return Err(Error::query("unterminated phrase: missing closing `\"`")),
            Some('"') => return Ok(text),
            Some('\\') => text.extend(chars.next()),
            Some(c) => text.push(c),
        }
    }
}

fn read_slop(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<u32> {
    if chars.next_if_eq(&'~').is_none() {
        return Ok(0);
    }
    let mut digits = String::new();
    while let Some(d) = chars.next_if(char::is_ascii_digit) {
        digits.push(d);
    }
    digits.parse().map_err(|_| Error::query("`~` after a phrase must be followed by a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TwoFields;

    impl QueryFields for TwoFields {
        fn field_id(&self, name: &str) -> Option<FieldId> {
            ["title", "body"].iter().position(|f| *f == name).map(|i| i as FieldId)
        }
        fn default_fields(&self) -> Vec<FieldId> {
            vec![0, 1]
        }
        fn analyze(&self, _field: FieldId, text: &str) -> Result<Vec<(u32, String)>> {
            let a = needle_analysis::Analyzer::standard();
            Ok(a.tokens(text).into_iter().map(|t| (t.position, t.term)).collect())
        }
    }

    fn parse(s: &str) -> Query {
        parse_query(s, &TwoFields).unwrap()
    }

    #[test]
    fn terms_expand_over_default_fields() {
        let Query::Bool(b) = parse("A b") else { panic!() };
        assert_eq!(b.should.len(), 2);
        assert_eq!(b.should[0], Query::or(vec![Query::term(0, "a"), Query::term(1, "a")]));
    }

    #[test]
    fn prefixes_fields_and_phrases() {
        let Query::Bool(b) = parse("+title:x -y \"New  York\"~2") else { panic!() };
        assert_eq!(b.must, vec![Query::term(0, "x")]);
        assert_eq!(b.must_not.len(), 1);
        let Query::Bool(per_field) = &b.should[0] else { panic!() };
        let Query::Phrase(p) = &per_field.should[1] else { panic!() };
        assert_eq!((p.field, p.slop, p.terms.len()), (1, 2, 2));
    }

    #[test]
    fn errors_name_the_problem() {
        for (q, want) in [
            ("\"open", "unterminated"),
            ("nope:x", "unknown field `nope`"),
            ("+", "must be followed"),
            ("", "empty"),
        ] {
            let err = parse_query(q, &TwoFields).unwrap_err().to_string();
            assert!(err.contains(want), "{q}: {err}");
        }
    }

    #[test]
    fn punctuation_only_matches_nothing() {
        assert_eq!(parse("..."), Query::MatchNone);
    }
}
