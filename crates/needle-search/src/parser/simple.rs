//! Elasticsearch's `simple_query_string`: Lucene's SimpleQueryParser, a
//! syntax for search boxes that never fails on what a user types.
//!
//! | input        | meaning                                                       |
//! |--------------|---------------------------------------------------------------|
//! | `a b`        | `a` and `b` joined by the default operator (OR unless AND)    |
//! | `a + b`      | both                                                          |
//! | `a \| b`     | either                                                        |
//! | `-a`         | not `a` (a clause matching every document without `a`)        |
//! | `"a b"~2`    | a phrase, with slop                                           |
//! | `te*`        | terms starting with `te`                                      |
//! | `war~1`      | terms within 1 edit (`~` alone: 2)                            |
//! | `(a \| b) c` | grouping                                                      |
//! | `\`          | escapes the next character                                    |
//!
//! Operators apply left to right as Lucene applies them: a change of
//! operator wraps everything so far as one clause of a new boolean. A `-`
//! clause is Lucene's `(-x *:*)`, so it scores 1 where it matches. What
//! does not parse (an unclosed quote or parenthesis) is read as text. Each
//! word is searched in every field, the fields' queries joined in a dis-max
//! with tie breaker 1 (their sum), as Elasticsearch builds them; prefix and
//! fuzzy words are normalized per field, not analyzed.

use needle_core::{Error, FieldId, Result};

use super::QueryFields;
use crate::{BoolQuery, Fuzzy, MultiTermQuery, Query, TermPattern};

/// Which operators the syntax has (Elasticsearch's `flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimpleFlags(pub u32);

impl SimpleFlags {
    pub const AND: u32 = 1;
    pub const NOT: u32 = 1 << 1;
    pub const OR: u32 = 1 << 2;
    pub const PREFIX: u32 = 1 << 3;
    pub const PHRASE: u32 = 1 << 4;
    pub const PRECEDENCE: u32 = 1 << 5;
    pub const ESCAPE: u32 = 1 << 6;
    pub const WHITESPACE: u32 = 1 << 7;
    pub const FUZZY: u32 = 1 << 8;
    pub const NEAR: u32 = 1 << 9;
    pub const ALL: SimpleFlags = SimpleFlags(u32::MAX);

    /// Elasticsearch's `flags` text: `ALL`, `NONE`, or names joined by `|`.
    pub fn parse(text: &str) -> Option<SimpleFlags> {
        let mut bits = 0;
        for name in text.split('|').map(str::trim).filter(|n| !n.is_empty()) {
            bits |= match name.to_ascii_uppercase().as_str() {
                "ALL" => u32::MAX,
                "NONE" => 0,
                "AND" => Self::AND,
                "NOT" => Self::NOT,
                "OR" => Self::OR,
                "PREFIX" => Self::PREFIX,
                "PHRASE" => Self::PHRASE,
                "PRECEDENCE" => Self::PRECEDENCE,
                "ESCAPE" => Self::ESCAPE,
                "WHITESPACE" => Self::WHITESPACE,
                "FUZZY" => Self::FUZZY,
                "NEAR" | "SLOP" => Self::NEAR,
                _ => return None,
            };
        }
        Some(SimpleFlags(bits))
    }

    fn has(self, flag: u32) -> bool {
        self.0 & flag != 0
    }
}

#[derive(Debug, Clone, Copy)]
pub struct SimpleOptions {
    /// Words joined by AND unless an operator says otherwise.
    pub default_and: bool,
    pub flags: SimpleFlags,
    /// `prefix_length`, `max_expansions` and `transpositions` of fuzzy words.
    pub fuzzy_prefix_length: u32,
    pub fuzzy_max_expansions: u32,
    pub fuzzy_transpositions: bool,
    /// Paths of several terms through a graph of terms as phrases (see
    /// [`super::ParseOptions::synonym_phrases`]).
    pub synonym_phrases: bool,
}

impl Default for SimpleOptions {
    fn default() -> Self {
        SimpleOptions {
            default_and: false,
            flags: SimpleFlags::ALL,
            fuzzy_prefix_length: 0,
            fuzzy_max_expansions: 50,
            fuzzy_transpositions: true,
            synonym_phrases: true,
        }
    }
}

/// `text` in `fields`, each with its boost.
pub fn parse_simple_query(
    text: &str,
    schema: &dyn QueryFields,
    fields: &[(FieldId, f32)],
    options: &SimpleOptions,
) -> Result<Query> {
    if text.trim() == "*" {
        return Ok(Query::MatchAll);
    }
    let chars: Vec<char> = text.chars().collect();
    let parser = SimpleParser { schema, fields, options: *options, chars: &chars };
    let top = parser.sub_query(0, chars.len())?;
    Ok(top.unwrap_or(Query::MatchNone))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Should,
    Must,
}

struct SimpleParser<'a> {
    schema: &'a dyn QueryFields,
    fields: &'a [(FieldId, f32)],
    options: SimpleOptions,
    chars: &'a [char],
}

/// Where a (sub)query's parse is: Lucene's SimpleQueryParser.State.
struct State {
    at: usize,
    end: usize,
    current: Option<Op>,
    previous: Option<Op>,
    not: u32,
    top: Option<Query>,
}

impl SimpleParser<'_> {
    fn flag(&self, flag: u32) -> bool {
        self.options.flags.has(flag)
    }

    fn is_space(c: char) -> bool {
        matches!(c, ' ' | '\t' | '\n' | '\r')
    }

    fn sub_query(&self, start: usize, end: usize) -> Result<Option<Query>> {
        let mut s = State { at: start, end, current: None, previous: None, not: 0, top: None };
        while s.at < s.end {
            let c = self.chars[s.at];
            match c {
                '(' if self.flag(SimpleFlags::PRECEDENCE) => self.group(&mut s)?,
                ')' if self.flag(SimpleFlags::PRECEDENCE) => s.at += 1,
                '"' if self.flag(SimpleFlags::PHRASE) => self.phrase(&mut s)?,
                '+' if self.flag(SimpleFlags::AND) => {
                    if s.current.is_none() && s.top.is_some() {
                        s.current = Some(Op::Must);
                    }
                    s.at += 1;
                }
                '|' if self.flag(SimpleFlags::OR) => {
                    if s.current.is_none() && s.top.is_some() {
                        s.current = Some(Op::Should);
                    }
                    s.at += 1;
                }
                '-' if self.flag(SimpleFlags::NOT) => {
                    s.not += 1;
                    s.at += 1;
                    continue;
                }
                c if Self::is_space(c) && self.flag(SimpleFlags::WHITESPACE) => s.at += 1,
                _ => self.token(&mut s)?,
            }
            s.not = 0;
        }
        Ok(s.top)
    }

    /// `( ... )`: parsed on its own; unclosed, the `(` is read as text.
    fn group(&self, s: &mut State) -> Result<()> {
        s.at += 1;
        let start = s.at;
        let mut depth = 1;
        let mut escaped = false;
        while s.at < s.end {
            let c = self.chars[s.at];
            if !escaped {
                if c == '\\' && self.flag(SimpleFlags::ESCAPE) {
                    escaped = true;
                    s.at += 1;
                    continue;
                } else if c == '(' {
                    depth += 1;
                } else if c == ')' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            escaped = false;
            s.at += 1;
        }
        if closed(s, start) {
            let inner = self.sub_query(start, s.at)?;
            self.build(s, inner);
            s.at += 1;
        }
        Ok(())
    }

    /// `"..."` with an optional `~slop`; unclosed, the `"` is read as text.
    fn phrase(&self, s: &mut State) -> Result<()> {
        s.at += 1;
        let start = s.at;
        let mut text = String::new();
        let mut escaped = false;
        let mut has_slop = false;
        while s.at < s.end {
            let c = self.chars[s.at];
            if !escaped {
                if c == '\\' && self.flag(SimpleFlags::ESCAPE) {
                    escaped = true;
                    s.at += 1;
                    continue;
                } else if c == '"' {
                    if s.at + 1 < s.end && self.chars[s.at + 1] == '~' && self.flag(SimpleFlags::NEAR) {
                        s.at += 1;
                        has_slop = s.at + 1 < s.end;
                    }
                    break;
                }
            }
            escaped = false;
            text.push(c);
            s.at += 1;
        }
        if closed(s, start) {
            let slop = if has_slop { self.fuzziness(s) } else { 0 };
            // Elasticsearch reads a phrase over several fields as a multi_match of type
            // phrase: the best field's score alone (its tie breaker 0), not their sum.
            let branch = self.per_field_with(0.0, |field| {
                let terms = self.schema.analyze_quoted(field, &text)?;
                crate::analyzed::phrase_or_graph(field, terms, slop).map_err(Error::query)
            })?;
            self.build(s, branch);
            s.at += 1;
        }
        Ok(())
    }

    /// A word, maybe ending in `*` (a prefix) or followed by `~N` (fuzzy).
    fn token(&self, s: &mut State) -> Result<()> {
        let mut text = String::new();
        let mut escaped = false;
        let mut prefix = false;
        let mut fuzzy = false;
        while s.at < s.end {
            let c = self.chars[s.at];
            if !escaped {
                if c == '\\' && self.flag(SimpleFlags::ESCAPE) {
                    escaped = true;
                    prefix = false;
                    s.at += 1;
                    continue;
                } else if self.token_finished(c) {
                    break;
                } else if !text.is_empty() && c == '~' && self.flag(SimpleFlags::FUZZY) {
                    fuzzy = true;
                    break;
                }
                prefix = !text.is_empty() && c == '*' && self.flag(SimpleFlags::PREFIX);
            }
            escaped = false;
            text.push(c);
            s.at += 1;
        }
        if text.is_empty() {
            return Ok(());
        }
        let branch = if fuzzy {
            match self.fuzziness(s).min(Fuzzy::MAX_EDITS) {
                0 => self.words(&text)?,
                edits => self.per_field(|field| {
                    let term = self.schema.normalize(field, &text)?;
                    let fuzzy = Fuzzy {
                        term,
                        max_edits: edits,
                        prefix_length: self.options.fuzzy_prefix_length,
                        transpositions: self.options.fuzzy_transpositions,
                        max_expansions: self.options.fuzzy_max_expansions,
                    };
                    Ok(Some(Query::MultiTerm(MultiTermQuery { field, pattern: TermPattern::Fuzzy(fuzzy) })))
                })?,
            }
        } else if prefix {
            let head = &text[..text.len() - 1];
            self.per_field(|field| {
                let prefix = self.schema.normalize(field, head)?;
                let pattern = TermPattern::Prefix { prefix, case_insensitive: false };
                Ok(Some(Query::MultiTerm(MultiTermQuery { field, pattern })))
            })?
        } else {
            self.words(&text)?
        };
        self.build(s, branch);
        Ok(())
    }

    /// A plain word, analyzed in each field: several tokens are joined by the default operator.
    fn words(&self, text: &str) -> Result<Option<Query>> {
        self.per_field(|field| {
            let terms = self.schema.analyze_graph(field, text)?;
            let mut queries =
                crate::analyzed::by_position_or_graph(field, terms, self.options.synonym_phrases)
                    .map_err(Error::query)?;
            Ok(match (queries.len(), self.options.default_and) {
                (0, _) => None,
                (1, _) => queries.pop(),
                (_, true) => Some(Query::and(queries)),
                (_, false) => Some(Query::or(queries)),
            })
        })
    }

    fn token_finished(&self, c: char) -> bool {
        (c == '"' && self.flag(SimpleFlags::PHRASE))
            || (c == '|' && self.flag(SimpleFlags::OR))
            || (c == '+' && self.flag(SimpleFlags::AND))
            || ((c == '(' || c == ')') && self.flag(SimpleFlags::PRECEDENCE))
            || (Self::is_space(c) && self.flag(SimpleFlags::WHITESPACE))
    }

    /// The number after a `~` at the cursor (none: 2; not a number: 0).
    fn fuzziness(&self, s: &mut State) -> u32 {
        if self.chars.get(s.at) != Some(&'~') {
            return 0;
        }
        let mut digits = String::new();
        loop {
            s.at += 1;
            if s.at >= s.end || self.token_finished(self.chars[s.at]) {
                break;
            }
            digits.push(self.chars[s.at]);
        }
        match digits.is_empty() {
            true => 2,
            false => digits.parse::<i64>().map_or(0, |n| n.clamp(0, i64::from(u32::MAX)) as u32),
        }
    }

    /// One query per field (boosted), joined in a dis-max with tie breaker 1.
    fn per_field(&self, query: impl Fn(FieldId) -> Result<Option<Query>>) -> Result<Option<Query>> {
        self.per_field_with(1.0, query)
    }

    /// As [`Self::per_field`], the fields' queries joined with `tie_breaker`.
    fn per_field_with(
        &self,
        tie_breaker: f32,
        query: impl Fn(FieldId) -> Result<Option<Query>>,
    ) -> Result<Option<Query>> {
        let mut each = Vec::new();
        for &(field, boost) in self.fields {
            if let Some(q) = query(field)? {
                each.push(if boost == 1.0 { q } else { Query::boosted(q, boost) });
            }
        }
        Ok(match each.len() {
            0 => None,
            1 => each.pop(),
            _ => Some(Query::DisMax { clauses: each, tie_breaker }),
        })
    }

    /// Lucene's `buildQueryTree`: adds a clause to the query so far.
    fn build(&self, s: &mut State, branch: Option<Query>) {
        let Some(mut branch) = branch else { return };
        if s.not % 2 == 1 {
            branch = Query::Bool(BoolQuery {
                must_not: vec![branch],
                should: vec![Query::MatchAll],
                ..BoolQuery::default()
            });
        }
        s.top = Some(match s.top.take() {
            None => branch,
            Some(top) => {
                let default = if self.options.default_and { Op::Must } else { Op::Should };
                let op = s.current.unwrap_or(default);
                let mut joined = match (s.previous == Some(op), top) {
                    (true, Query::Bool(b)) => b,
                    (_, top) => {
                        let mut b = BoolQuery::default();
                        push(&mut b, top, op);
                        b
                    }
                };
                push(&mut joined, branch, op);
                s.previous = Some(op);
                Query::Bool(joined)
            }
        });
        s.current = None;
    }
}

/// After a scan from `start` for the closing `)` or `"`: whether it found
/// one with something between. Unclosed, the cursor goes back to read what
/// follows the opening character as text; empty, the pair is passed over.
fn closed(s: &mut State, start: usize) -> bool {
    if s.at == s.end {
        s.at = start;
        false
    } else if s.at == start {
        s.current = None;
        s.at += 1;
        false
    } else {
        true
    }
}

fn push(b: &mut BoolQuery, q: Query, op: Op) {
    match op {
        Op::Should => b.should.push(q),
        Op::Must => b.must.push(q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TermQuery;

    /// One text field, `0`, lowercased words.
    struct OneField;

    impl QueryFields for OneField {
        fn field_id(&self, _name: &str) -> Option<FieldId> {
            Some(0)
        }
        fn default_fields(&self) -> Vec<FieldId> {
            vec![0]
        }
        fn analyze(&self, _field: FieldId, text: &str) -> Result<Vec<(u32, String)>> {
            Ok(needle_analysis::Analyzer::standard()
                .tokens(text)
                .into_iter()
                .map(|t| (t.position, t.term))
                .collect())
        }
        fn normalize(&self, _field: FieldId, text: &str) -> Result<String> {
            Ok(text.to_lowercase())
        }
    }

    fn parse(text: &str, default_and: bool) -> Query {
        let options = SimpleOptions { default_and, ..SimpleOptions::default() };
        parse_simple_query(text, &OneField, &[(0, 1.0)], &options).unwrap()
    }

    fn t(word: &str) -> Query {
        Query::Term(TermQuery { field: 0, term: word.as_bytes().to_vec() })
    }

    fn bool_of(must: Vec<Query>, should: Vec<Query>, must_not: Vec<Query>) -> Query {
        Query::Bool(BoolQuery { must, should, must_not, ..BoolQuery::default() })
    }

    #[test]
    fn operators_apply_left_to_right() {
        // A change of operator wraps what came before as one clause.
        let and_then_or =
            bool_of(vec![], vec![bool_of(vec![t("a"), t("b")], vec![], vec![]), t("c")], vec![]);
        assert_eq!(parse("a + b | c", false), and_then_or);
        assert_eq!(parse("a b", true), bool_of(vec![t("a"), t("b")], vec![], vec![]));
        // `-b` matches everything without b, scoring 1 there.
        let not_b = bool_of(vec![], vec![Query::MatchAll], vec![t("b")]);
        assert_eq!(parse("a -b", false), bool_of(vec![], vec![t("a"), not_b], vec![]));
        assert_eq!(
            parse("(a | b) c", true),
            bool_of(vec![Query::or(vec![t("a"), t("b")]), t("c")], vec![], vec![])
        );
    }

    #[test]
    fn what_does_not_parse_is_text() {
        assert_eq!(parse("\"a b", false), Query::or(vec![t("a"), t("b")]));
        assert_eq!(parse("(a", false), t("a"));
        assert_eq!(parse("", false), Query::MatchNone);
        assert_eq!(parse("- + |", false), Query::MatchNone);
        assert_eq!(parse(" * ", false), Query::MatchAll);
    }

    #[test]
    fn phrases_prefixes_and_fuzzy_words() {
        let Query::Phrase(p) = parse("\"A b\"~3", false) else { panic!() };
        assert_eq!((p.slop, p.terms.len()), (3, 2));
        let multi = |pattern| Query::MultiTerm(MultiTermQuery { field: 0, pattern });
        assert_eq!(
            parse("Ab*", false),
            multi(TermPattern::Prefix { prefix: "ab".into(), case_insensitive: false })
        );
        let fuzzy = |max_edits| TermPattern::Fuzzy(Fuzzy { max_edits, ..Fuzzy::auto("warr") });
        assert_eq!(parse("Warr~", false), multi(fuzzy(2)));
        assert_eq!(parse("warr~1", false), multi(fuzzy(1)));
        assert_eq!(parse("warr~0", false), t("warr"));
        assert_eq!(parse(r"a\*", false), t("a"));
    }
}
