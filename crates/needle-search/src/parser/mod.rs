//! The query-string syntax: Lucene's classic query parser, with Lucene's
//! precedence rules (as its `QueryParser.jj` and `QueryParserBase.addClause`):
//!
//! | input                 | meaning                                                      |
//! |-----------------------|--------------------------------------------------------------|
//! | `a b`                 | documents with `a` or `b` (more of them rank higher)         |
//! | `+a +b`, `a AND b`    | documents with both (`&&` too)                               |
//! | `-a`, `NOT a`, `!a`   | documents without `a` (alone: every document but those)      |
//! | `a OR b`              | either (`\|\|` too)                                          |
//! | `(a b) c`             | grouping; `f:(a b)` searches the group in field `f`          |
//! | `"a b"`, `"a b"~2`    | the phrase; with up to two moves (`~1.5` is `~1`, as Lucene) |
//! | `a^2`, `(a b)^0.5`    | boosts: the clause's score multiplied                        |
//! | `f:a`, `f:"a b"`      | the term or phrase in field `f` only                         |
//! | `*:*`                 | every document                                               |
//! | `te*`, `te?t`         | terms by a wildcard pattern: `*` any characters, `?` one     |
//! | `war~`, `war~1`       | terms within 1 edit of `war` (`~` alone: 0-2 by its length)  |
//!
//! `AND` makes the clause before it and the one after it required; `OR`
//! leaves both optional; `NOT` and `-` exclude (as Lucene's default `OR`
//! operator has it: `a AND b OR c` is `+a +b c`). A term without a field is
//! searched in the default fields (by default every text field), expanded per
//! term as Lucene's MultiFieldQueryParser does: `a b` over fields `title,
//! body` is `(title:a body:a) (title:b body:b)`. In Elasticsearch's reading
//! (`ParseOptions::field_tie_breaker`), a run of plain terms is one text
//! instead: `a b` is the dis-max of `title:(a b)` and `body:(a b)`, as its
//! query_string (Lucene's parser without splitting on whitespace) makes it.
//! Each term is analyzed with
//! its field's analyzer; a term that analyzes to several tokens becomes their
//! disjunction; one that analyzes to none (a stop word) drops out. `\`
//! escapes the next character. Wildcard and fuzzy terms are not analyzed,
//! only normalized (lowercased in a text field), as Elasticsearch does.
//!
//! `/x/` is a regular expression in Lucene's syntax (see `regexp.rs`),
//! normalized as wildcard terms are. `_exists_:title` finds the documents
//! with a value in `title`. `[a TO b]`, `{a TO b}` (or a mix; `*`
//! an open end) and, after a field, `>a`, `>=a`, `<a`, `<=a` are ranges: the
//! field's terms between the bounds, or its values for numbers and dates
//! (see [`QueryFields::range`]).

mod lexer;
pub mod simple;

use needle_analysis::QueryTerms;
use needle_core::{Error, FieldId, Result};

use self::lexer::Token;
use crate::regexp::{RegexpFlags, RegexpMatcher};
use crate::{BoolQuery, Fuzzy, MultiTermQuery, Query, TermPattern, TermRange};

/// The most leaf clauses (terms, phrase terms) a query may have, as Lucene's
/// `IndexSearcher.maxClauseCount`.
pub const MAX_CLAUSES: usize = 1024;

/// The deepest nesting of parentheses.
const MAX_DEPTH: usize = 64;

/// What the parser needs to know of an index's schema.
pub trait QueryFields {
    fn field_id(&self, name: &str) -> Option<FieldId>;
    /// The fields a term without a field prefix searches.
    fn default_fields(&self) -> Vec<FieldId>;
    /// `text` analyzed for `field`: (position, term) pairs. Fails for text
    /// the field cannot hold (a word for a numeric field).
    fn analyze(&self, field: FieldId, text: &str) -> Result<Vec<(u32, String)>>;
    /// As [`QueryFields::analyze`], the tokens kept whole where some span
    /// several positions (a graph of terms); by default no field makes one.
    fn analyze_graph(&self, field: FieldId, text: &str) -> Result<QueryTerms> {
        self.analyze(field, text).map(QueryTerms::Positioned)
    }
    /// The text of a phrase in quotes analyzed for `field`, which may
    /// analyze it its own way (Elasticsearch's `search_quote_analyzer`);
    /// the tokens kept whole where some span several positions.
    fn analyze_quoted(&self, field: FieldId, text: &str) -> Result<QueryTerms> {
        self.analyze_graph(field, text)
    }
    /// `text` as a wildcard or fuzzy term of `field`: the field's
    /// normalization (a text field lowercases) without tokenizing or
    /// stemming. Fails for a field whose terms are not text (a number).
    fn normalize(&self, field: FieldId, text: &str) -> Result<String>;
    /// The documents with a value of `field` in `range`: by default the
    /// terms between the bounds, normalized (a field of numbers or dates
    /// compares values instead).
    fn range(&self, field: FieldId, range: &TermRange) -> Result<Query> {
        term_range(field, range, |b| self.normalize(field, b))
    }
    /// The documents with a value in `field` (`_exists_:field`).
    fn exists(&self, field: FieldId) -> Result<Query> {
        Ok(Query::Exists(field))
    }
}

/// The terms of `field` in `range`, its bounds normalized as `normalize` says.
pub fn term_range(
    field: FieldId,
    range: &TermRange,
    normalize: impl Fn(&str) -> Result<String>,
) -> Result<Query> {
    let bound = |b: &Option<String>| b.as_deref().map(&normalize).transpose();
    let range = TermRange { lower: bound(&range.lower)?, upper: bound(&range.upper)?, ..range.clone() };
    Ok(Query::MultiTerm(MultiTermQuery { field, pattern: TermPattern::Range(range) }))
}

pub fn parse_query(input: &str, fields: &dyn QueryFields) -> Result<Query> {
    parse_query_with(input, fields, &ParseOptions::default())
}

/// How the parser combines clauses.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// Lucene's default operator AND: clauses without `+`, `-` or `OR` are
    /// required (Elasticsearch's `default_operator: AND`).
    pub default_and: bool,
    /// How a term searched in several default fields is scored: `None` sums
    /// the fields' scores (Lucene's MultiFieldQueryParser), `Some(t)` takes
    /// the best field's plus `t` times the others' (Elasticsearch's
    /// `query_string`, whose `best_fields` type has `t` = 0).
    pub field_tie_breaker: Option<f32>,
    /// How `term~` reads (Elasticsearch's `fuzziness` and `fuzzy_*` of a `query_string`).
    pub fuzzy: FuzzyDefaults,
    /// Where text makes a graph of terms, each path of several terms is a
    /// phrase (Elasticsearch's `auto_generate_synonyms_phrase_query`, on by
    /// default there; off by default in Lucene's QueryParser), else all its terms required.
    pub synonym_phrases: bool,
}

/// The fuzzy terms of a query string: edits when `~` has no number, and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuzzyDefaults {
    /// `None`: Elasticsearch's `AUTO:low,high` (no edit below `low`
    /// characters, one below `high`, else two); `Some(n)`: `n` edits.
    pub edits: Option<u32>,
    pub auto_low: u32,
    pub auto_high: u32,
    pub prefix_length: u32,
    pub max_expansions: u32,
    pub transpositions: bool,
}

impl Default for FuzzyDefaults {
    /// Elasticsearch's: `AUTO` (3, 6), no fixed prefix, 50 terms, transpositions.
    fn default() -> Self {
        FuzzyDefaults {
            edits: None,
            auto_low: 3,
            auto_high: 6,
            prefix_length: 0,
            max_expansions: 50,
            transpositions: true,
        }
    }
}

impl FuzzyDefaults {
    /// The fuzzy query of `word` written `word~` (`given`: the number after `~`, if any).
    fn fuzzy(&self, word: &str, given: Option<f32>) -> Fuzzy {
        let len = word.chars().count() as u32;
        let auto = if len < self.auto_low {
            0
        } else if len < self.auto_high {
            1
        } else {
            2
        };
        // Elasticsearch's reading of `~N`: whole edits, at most 2.
        let max_edits = given.map(|n| n as u32).or(self.edits).unwrap_or(auto).min(Fuzzy::MAX_EDITS);
        Fuzzy {
            term: word.to_string(),
            max_edits,
            prefix_length: self.prefix_length,
            transpositions: self.transpositions,
            max_expansions: self.max_expansions,
        }
    }
}

/// [`parse_query`] with `options`.
pub fn parse_query_with(input: &str, fields: &dyn QueryFields, options: &ParseOptions) -> Result<Query> {
    let tokens = lexer::tokens(input)?;
    if tokens.is_empty() {
        return Err(Error::query("empty query"));
    }
    let mut p = Parser { tokens, at: 0, fields, options: *options };
    let query = p.query(None, 0)?;
    if let Some(t) = p.peek() {
        return Err(Error::query(format!("unexpected {} (a `)` without its `(`?)", describe(t))));
    }
    let query = query.unwrap_or(Query::MatchNone);
    check_size(&query)?;
    Ok(query)
}

/// Refuses a query with more than [`MAX_CLAUSES`] leaf clauses.
pub fn check_size(query: &Query) -> Result<()> {
    let leaves = query.leaf_count();
    if leaves > MAX_CLAUSES {
        return Err(Error::query(format!(
            "too many clauses: {leaves} terms (after expanding over the default fields), at most {MAX_CLAUSES}"
        )));
    }
    Ok(())
}

/// How a clause was introduced: Lucene's `CONJ_*`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Conj {
    None,
    And,
    Or,
}

/// A clause's prefix: Lucene's `MOD_*`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Modifier {
    None,
    Required,
    Prohibited,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Occur {
    Must,
    Should,
    MustNot,
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    fields: &'a dyn QueryFields,
    options: ParseOptions,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn eat(&mut self, token: &Token) -> bool {
        let matches = self.peek() == Some(token);
        self.at += usize::from(matches);
        matches
    }

    /// `Query := Modifiers Clause (Conjunction Modifiers Clause)*`, up to a `)` or the end.
    fn query(&mut self, field: Option<&str>, depth: usize) -> Result<Option<Query>> {
        if depth > MAX_DEPTH {
            return Err(Error::query(format!("parentheses nested deeper than {MAX_DEPTH}")));
        }
        let mut clauses: Vec<(Occur, Query)> = Vec::new();
        let mut first_plain = None;
        let mut count = 0;
        while self.peek().is_some_and(|t| *t != Token::RParen) {
            if let Some(words) = self.plain_run() {
                let q = self.run_query(field, &words)?;
                if count == 0 {
                    first_plain = Some(q.clone());
                }
                count += add_run(&mut clauses, q, self.options.default_and);
                continue;
            }
            let conj = match self.peek() {
                Some(Token::And) if count > 0 => Conj::And,
                Some(Token::Or) if count > 0 => Conj::Or,
                Some(Token::And | Token::Or) => {
                    return Err(Error::query("`AND` or `OR` with nothing before it"))
                }
                _ => Conj::None,
            };
            if conj != Conj::None {
                self.at += 1;
            }
            let modifier = match self.peek() {
                Some(Token::Plus) => Modifier::Required,
                Some(Token::Minus | Token::Not) => Modifier::Prohibited,
                _ => Modifier::None,
            };
            if modifier != Modifier::None {
                self.at += 1;
            }
            let q = self.clause(field, depth)?;
            if count == 0 && modifier == Modifier::None {
                first_plain = Some(q.clone());
            }
            count += 1;
            add_clause(&mut clauses, conj, modifier, q, self.options.default_and);
        }
        if count == 1 {
            if let Some(q) = first_plain {
                return Ok(q);
            }
        }
        if clauses.is_empty() {
            return Ok(None);
        }
        let mut b = BoolQuery::default();
        for (occur, q) in clauses {
            match occur {
                Occur::Must => b.must.push(q),
                Occur::Should => b.should.push(q),
                Occur::MustNot => b.must_not.push(q),
            }
        }
        Ok(Some(Query::Bool(b)))
    }

    /// Elasticsearch's query_string reads with Lucene's `splitOnWhitespace`
    /// off: two or more plain terms in a row, the last not followed by `:`,
    /// `*`, `~`, `^`, `AND` or `OR`, are one text (Lucene's `MultiTerm`).
    /// Only when fields join as Elasticsearch's do (`field_tie_breaker`).
    fn plain_run(&mut self) -> Option<Vec<String>> {
        self.options.field_tie_breaker?;
        let is_term = |i: usize| matches!(self.tokens.get(i), Some(Token::Term(_)));
        let ends_run = |i: usize| {
            matches!(
                self.tokens.get(i),
                Some(Token::Colon | Token::Star | Token::Tilde(_) | Token::Boost(_) | Token::And | Token::Or)
            )
        };
        let joins = |i: usize| is_term(i) && !ends_run(i + 1);
        if !(is_term(self.at) && joins(self.at + 1)) {
            return None;
        }
        let mut end = self.at + 2;
        while joins(end) {
            end += 1;
        }
        let words = self.tokens[self.at..end]
            .iter()
            .filter_map(|t| match t {
                Token::Term(word) => Some(word.clone()),
                _ => None,
            })
            .collect();
        self.at = end;
        Some(words)
    }

    /// A run of plain terms as Elasticsearch's `best_fields` searches it: the
    /// text analyzed as a whole in each field, its terms joined by the default
    /// operator, the fields in a dis-max.
    fn run_query(&self, field: Option<&str>, words: &[String]) -> Result<Option<Query>> {
        let text = words.join(" ");
        let mut per_field = Vec::new();
        for field in self.targets(field)? {
            let mut terms = self.positions_or_graph(field, &text)?;
            per_field.extend(match (terms.len(), self.options.default_and) {
                (0, _) => None,
                (1, _) => terms.pop(),
                (_, false) => Some(Query::or(terms)),
                (_, true) => Some(Query::and(terms)),
            });
        }
        Ok(self.across_fields(per_field))
    }

    /// `Clause := [field ':'] (Term | '(' Query ')' ['^' boost])`.
    fn clause(&mut self, field: Option<&str>, depth: usize) -> Result<Option<Query>> {
        let named = match (self.peek(), self.tokens.get(self.at + 1)) {
            (Some(Token::Term(name)), Some(Token::Colon)) => Some(name.clone()),
            (Some(Token::Star), Some(Token::Colon)) => Some("*".to_string()),
            _ => None,
        };
        let field_name;
        let field = match named {
            Some(name) => {
                self.at += 2;
                field_name = name;
                Some(field_name.as_str())
            }
            None => field,
        };
        if self.eat(&Token::LParen) {
            let q = self.query(field, depth + 1)?;
            if !self.eat(&Token::RParen) {
                return Err(Error::query("missing `)`"));
            }
            return Ok(self.boosted(q));
        }
        self.term(field)
    }

    /// A term or a phrase, with its `~` and `^` suffixes.
    fn term(&mut self, field: Option<&str>) -> Result<Option<Query>> {
        let token = self.next().ok_or_else(|| Error::query("the query ends where a term was expected"))?;
        let q = match token {
            Token::Term(text) => match self.peek() {
                Some(&Token::Tilde(edits)) => {
                    self.at += 1;
                    let defaults = self.options.fuzzy;
                    self.multi_term(field, &text, |word| TermPattern::Fuzzy(defaults.fuzzy(word, edits)))?
                }
                _ => match (field, one_sided(&text)) {
                    // `year:>2000` (after a field only, as Elasticsearch reads it).
                    (Some(_), Some(range)) => self.range(field, &range)?,
                    _ => self.field_query(field, &text, None)?,
                },
            },
            Token::Quoted(text) => {
                let slop = match self.peek() {
                    Some(Token::Tilde(n)) => {
                        let slop = n.map_or(0, |n| n as u32);
                        self.at += 1;
                        slop
                    }
                    _ => 0,
                };
                self.field_query(field, &text, Some(slop))?
            }
            Token::Star if field == Some("*") => Some(Query::MatchAll),
            Token::Wildcard(pattern) => self.multi_term(field, &pattern, glob)?,
            Token::Star => return Err(Error::query("`*` alone is only supported as `*:*` (every document)")),
            Token::Range(range) => self.range(field, &range)?,
            Token::Regex(pattern) => {
                // Checked here, so a bad expression is an error at parse time, not at search time.
                RegexpMatcher::new(&pattern, RegexpFlags::ALL, false).map_err(Error::query)?;
                self.multi_term(field, &pattern, |p| TermPattern::Regexp {
                    pattern: p.to_string(),
                    flags: RegexpFlags::ALL,
                    case_insensitive: false,
                })?
            }
            other => {
                return Err(Error::query(format!(
                    "unexpected {} where a term was expected",
                    describe(&other)
                )))
            }
        };
        Ok(self.boosted(q))
    }

    /// `q` with the `^` boost that follows it, if any.
    fn boosted(&mut self, q: Option<Query>) -> Option<Query> {
        let Some(Token::Boost(boost)) = self.peek() else { return q };
        let boost = *boost;
        self.at += 1;
        q.map(|q| Query::boosted(q, boost))
    }

    /// The fields a clause searches: `field`, or every default field.
    fn targets(&self, field: Option<&str>) -> Result<Vec<FieldId>> {
        Ok(match field {
            Some("*") => return Err(Error::query("`*:` is only supported as `*:*`")),
            Some(name) => {
                let id = self
                    .fields
                    .field_id(name)
                    .ok_or_else(|| Error::query(format!("unknown field `{name}`")))?;
                vec![id]
            }
            None => self.fields.default_fields(),
        })
    }

    /// A wildcard or fuzzy query for `text` in `field` (or in every default
    /// field): `pattern` makes it from the field's normalized text.
    fn multi_term(
        &self,
        field: Option<&str>,
        text: &str,
        pattern: impl Fn(&str) -> TermPattern,
    ) -> Result<Option<Query>> {
        let mut per_field = Vec::new();
        for field in self.targets(field)? {
            let normalized = self.fields.normalize(field, text)?;
            per_field.push(Query::MultiTerm(MultiTermQuery { field, pattern: pattern(&normalized) }));
        }
        Ok(self.across_fields(per_field))
    }

    /// The documents with a value in `range` in `field` (or in any default field).
    fn range(&self, field: Option<&str>, range: &TermRange) -> Result<Option<Query>> {
        let mut per_field = Vec::new();
        for field in self.targets(field)? {
            per_field.push(self.fields.range(field, range)?);
        }
        Ok(self.across_fields(per_field))
    }

    /// The query for `text` in `field` (or in every default field), a phrase when `phrase_slop` is given.
    fn field_query(
        &self,
        field: Option<&str>,
        text: &str,
        phrase_slop: Option<u32>,
    ) -> Result<Option<Query>> {
        if field == Some("_exists_") {
            return Ok(Some(match self.fields.field_id(text) {
                Some(id) => self.fields.exists(id)?,
                None => Query::MatchNone,
            }));
        }
        let mut per_field = Vec::new();
        for field in self.targets(field)? {
            per_field.extend(match phrase_slop {
                Some(slop) => {
                    crate::analyzed::phrase_or_graph(field, self.fields.analyze_quoted(field, text)?, slop)
                        .map_err(Error::query)?
                }
                None => any_of(self.positions_or_graph(field, text)?),
            });
        }
        Ok(self.across_fields(per_field))
    }

    /// `text` analyzed for `field` as one query a position, or a stretch of a graph of terms.
    fn positions_or_graph(&self, field: FieldId, text: &str) -> Result<Vec<Query>> {
        let terms = self.fields.analyze_graph(field, text)?;
        crate::analyzed::by_position_or_graph(field, terms, self.options.synonym_phrases)
            .map_err(Error::query)
    }

    /// One clause's queries in each of its fields, combined as the options say.
    fn across_fields(&self, mut per_field: Vec<Query>) -> Option<Query> {
        match (per_field.len(), self.options.field_tie_breaker) {
            (0, _) => None,
            (1, _) => per_field.pop(),
            (_, None) => Some(Query::or(per_field)),
            (_, Some(tie_breaker)) => Some(Query::DisMax { clauses: per_field, tie_breaker }),
        }
    }
}

/// `>a`, `>=a`, `<a`, `<=a` as a range with one open end.
fn one_sided(text: &str) -> Option<TermRange> {
    let (rest, include) = match text.strip_prefix(">=").or_else(|| text.strip_prefix("<=")) {
        Some(rest) => (rest, true),
        None => (text.strip_prefix('>').or_else(|| text.strip_prefix('<'))?, false),
    };
    if rest.is_empty() {
        return None;
    }
    let bound = Some(rest.to_string());
    Some(match text.starts_with('>') {
        true => TermRange { lower: bound, include_lower: include, ..TermRange::default() },
        false => TermRange { upper: bound, include_upper: include, ..TermRange::default() },
    })
}

/// A query-string wildcard term: a prefix when its only wildcard is a
/// trailing `*` (as Lucene's parser makes it), else a wildcard pattern.
fn glob(pattern: &str) -> TermPattern {
    let case_insensitive = false;
    if let Some(head) = pattern.strip_suffix('*') {
        let mut literal = String::new();
        let mut chars = head.chars();
        let mut plain = true;
        while let Some(c) = chars.next() {
            match c {
                '\\' => literal.extend(chars.next()),
                '*' | '?' => plain = false,
                c => literal.push(c),
            }
        }
        // `a\*` ends in an escaped star: a pattern, read as such below.
        if plain && !head.ends_with('\\') {
            return TermPattern::Prefix { prefix: literal, case_insensitive };
        }
    }
    TermPattern::Wildcard { pattern: pattern.to_string(), case_insensitive }
}

/// Lucene's `QueryParserBase.addClause`: `AND` makes the clause before it
/// required (unless prohibited) and the new one too; `+` requires, `-`/`NOT`
/// prohibits; with the default operator AND (`default_and`) a clause is
/// required unless `OR` introduces it, and `OR` makes the one before it
/// optional. A clause that analyzed to nothing still changes the one before it.
fn add_clause(
    clauses: &mut Vec<(Occur, Query)>,
    conj: Conj,
    modifier: Modifier,
    q: Option<Query>,
    default_and: bool,
) {
    if let Some(last) = clauses.last_mut() {
        if last.0 != Occur::MustNot {
            match conj {
                Conj::And => last.0 = Occur::Must,
                Conj::Or if default_and => last.0 = Occur::Should,
                _ => {}
            }
        }
    }
    let Some(q) = q else { return };
    let prohibited = modifier == Modifier::Prohibited;
    let required = match default_and {
        false => modifier == Modifier::Required || (conj == Conj::And && !prohibited),
        true => !prohibited && conj != Conj::Or,
    };
    let occur = match (required, prohibited) {
        (_, true) => Occur::MustNot,
        (true, false) => Occur::Must,
        (false, false) => Occur::Should,
    };
    clauses.push((occur, q));
}

/// Lucene's `addMultiTermClauses`: a run's query joins the clauses term by
/// term when it is a boolean of terms alone, else as one clause of the
/// default operator. Returns the clauses added.
fn add_run(clauses: &mut Vec<(Occur, Query)>, q: Option<Query>, default_and: bool) -> usize {
    let occur = if default_and { Occur::Must } else { Occur::Should };
    match q {
        None => 0,
        Some(Query::Bool(b))
            if b.must_not.is_empty()
                && b.filter.is_empty()
                && b.must.iter().chain(&b.should).all(|q| matches!(q, Query::Term(_))) =>
        {
            let n = b.must.len() + b.should.len();
            clauses.extend(b.must.into_iter().map(|q| (Occur::Must, q)));
            clauses.extend(b.should.into_iter().map(|q| (Occur::Should, q)));
            n
        }
        Some(q) => {
            clauses.push((occur, q));
            1
        }
    }
}

/// Queries joined by `or`; one alone as it is, none: `None`.
fn any_of(mut queries: Vec<Query>) -> Option<Query> {
    match queries.len() {
        0 => None,
        1 => queries.pop(),
        _ => Some(Query::or(queries)),
    }
}

fn describe(t: &Token) -> String {
    match t {
        Token::Term(s) | Token::Wildcard(s) => format!("`{s}`"),
        Token::RParen => "`)`".into(),
        Token::Colon => "`:`".into(),
        Token::Boost(_) => "`^`".into(),
        Token::Tilde(_) => "`~`".into(),
        other => format!("{other:?}"),
    }
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
            let a = needle_analysis::Analyzer::new(needle_analysis::AnalyzerKind::English, None);
            Ok(a.tokens(text).into_iter().map(|t| (t.position, t.term)).collect())
        }
        fn normalize(&self, _field: FieldId, text: &str) -> Result<String> {
            Ok(text.to_lowercase())
        }
    }

    fn parse(s: &str) -> Query {
        parse_query(s, &TwoFields).unwrap()
    }

    fn title(t: &str) -> Query {
        Query::term(0, t)
    }

    fn boolean(must: Vec<Query>, should: Vec<Query>, must_not: Vec<Query>) -> Query {
        Query::Bool(BoolQuery { must, should, must_not, ..BoolQuery::default() })
    }

    fn parse_es(s: &str, default_and: bool) -> Query {
        let options = ParseOptions { default_and, field_tie_breaker: Some(0.0), ..ParseOptions::default() };
        parse_query_with(s, &TwoFields, &options).unwrap()
    }

    fn dis_max(clauses: Vec<Query>) -> Query {
        Query::DisMax { clauses, tie_breaker: 0.0 }
    }

    #[test]
    fn elasticsearch_reads_a_run_of_plain_terms_as_one_text_per_field() {
        let (a, b) = (|f| Query::term(f, "red"), |f| Query::term(f, "fox"));
        let run = dis_max(vec![Query::or(vec![a(0), b(0)]), Query::or(vec![a(1), b(1)])]);
        assert_eq!(parse_es("red fox", false), run);
        let all = dis_max(vec![Query::and(vec![a(0), b(0)]), Query::and(vec![a(1), b(1)])]);
        assert_eq!(parse_es("red fox", true), all, "the run alone is the query");
        // `+sun` is a clause of its own; `sky^2` joins no run, so `red fox` is one and `sky` another.
        let c = dis_max(vec![Query::term(0, "sun"), Query::term(1, "sun")]);
        let d = Query::boosted(dis_max(vec![Query::term(0, "sky"), Query::term(1, "sky")]), 2.0);
        assert_eq!(
            parse_es("+sun red fox sky^2", false),
            boolean(vec![c.clone()], vec![run.clone(), d], vec![])
        );
        // A field prefix after the run ends it; `AND` takes the term before it out of it.
        let f = title("moon");
        assert_eq!(parse_es("red fox title:moon", false), boolean(vec![], vec![run, f], vec![]));
        let Query::Bool(q) = parse_es("red fox AND sun", false) else { panic!() };
        assert_eq!((q.should.len(), q.must.len()), (1, 2), "red, then +fox +sun: {q:?}");
        // In one field the run's terms join the clauses one by one, as Lucene's addMultiTermClauses.
        assert_eq!(
            parse_es("title:(red fox)", false),
            boolean(vec![], vec![title("red"), title("fox")], vec![])
        );
        // Lucene's own reading (no tie breaker) keeps splitting on whitespace.
        assert_eq!(
            parse("red fox"),
            boolean(vec![], vec![Query::or(vec![a(0), a(1)]), Query::or(vec![b(0), b(1)])], vec![])
        );
    }

    #[test]
    fn terms_expand_over_default_fields() {
        let Query::Bool(b) = parse("X y") else { panic!() };
        assert_eq!(b.should.len(), 2);
        assert_eq!(b.should[0], Query::or(vec![Query::term(0, "x"), Query::term(1, "x")]));
        assert_eq!(parse("title:x"), title("x"), "one plain clause is the clause itself");
    }

    #[test]
    fn prefixes_fields_and_phrases() {
        let Query::Bool(b) = parse("+title:x -y \"New  York\"~2") else { panic!() };
        assert_eq!(b.must, vec![title("x")]);
        assert_eq!(b.must_not.len(), 1);
        let Query::Bool(per_field) = &b.should[0] else { panic!() };
        let Query::Phrase(p) = &per_field.should[1] else { panic!() };
        assert_eq!((p.field, p.slop, p.terms.len()), (1, 2, 2));
    }

    #[test]
    fn ranges_bracketed_and_one_sided() {
        let range = |field, lower: Option<&str>, upper: Option<&str>, include_lower, include_upper| {
            let own = |b: Option<&str>| b.map(str::to_string);
            let r = TermRange { lower: own(lower), upper: own(upper), include_lower, include_upper };
            Query::MultiTerm(MultiTermQuery { field, pattern: TermPattern::Range(r) })
        };
        assert_eq!(parse("title:[Apple TO pear}"), range(0, Some("apple"), Some("pear"), true, false));
        assert_eq!(parse("body:{* TO \"Mid Way\"]"), range(1, None, Some("mid way"), false, true));
        assert_eq!(parse("title:>=m"), range(0, Some("m"), None, true, false));
        assert_eq!(parse("title:<m"), range(0, None, Some("m"), false, false));
        assert_eq!(
            parse("title:[a TO b]^2"),
            Query::boosted(range(0, Some("a"), Some("b"), true, true), 2.0)
        );
        // In the default fields, each field's range; `>x` without a field is a word.
        assert_eq!(
            parse("[a TO b]"),
            Query::or(vec![
                range(0, Some("a"), Some("b"), true, true),
                range(1, Some("a"), Some("b"), true, true)
            ])
        );
        assert!(!matches!(parse(">x"), Query::MultiTerm(_)));
        assert_eq!(parse("_exists_:body"), Query::Exists(1));
        assert_eq!(parse("_exists_:nope"), Query::MatchNone);
    }

    #[test]
    fn boolean_operators_follow_lucene_precedence() {
        let (a, b, c) = (title("x"), title("y"), title("z"));
        assert_eq!(parse("title:x AND title:y"), boolean(vec![a.clone(), b.clone()], vec![], vec![]));
        assert_eq!(
            parse("title:x && title:y OR title:z"),
            boolean(vec![a.clone(), b.clone()], vec![c.clone()], vec![])
        );
        assert_eq!(parse("title:x OR title:y"), boolean(vec![], vec![a.clone(), b.clone()], vec![]));
        assert_eq!(parse("title:x NOT title:y"), boolean(vec![], vec![a.clone()], vec![b.clone()]));
        assert_eq!(parse("title:x AND NOT title:y"), boolean(vec![a.clone()], vec![], vec![b.clone()]));
        assert_eq!(parse("NOT title:x"), boolean(vec![], vec![], vec![a.clone()]));
        assert_eq!(parse("!title:x || title:y"), boolean(vec![], vec![b.clone()], vec![a.clone()]));
        // A stop word drops out, but its AND still makes the clause before it required.
        assert_eq!(parse("title:x AND title:the"), boolean(vec![a], vec![], vec![]));
    }

    #[test]
    fn the_default_operator_and_requires_what_or_does_not_join() {
        let (a, b, c) = (title("x"), title("y"), title("z"));
        let options = ParseOptions { default_and: true, ..ParseOptions::default() };
        let and = |s: &str| parse_query_with(s, &TwoFields, &options).unwrap();
        assert_eq!(and("title:x title:y"), boolean(vec![a.clone(), b.clone()], vec![], vec![]));
        assert_eq!(
            and("title:x OR title:y title:z"),
            boolean(vec![c.clone()], vec![a.clone(), b.clone()], vec![])
        );
        assert_eq!(and("title:x -title:y"), boolean(vec![a], vec![], vec![b]));
    }

    #[test]
    fn grouping_field_groups_and_boosts() {
        let (a, b, c) = (title("x"), title("y"), title("z"));
        let group = boolean(vec![], vec![a.clone(), b.clone()], vec![]);
        assert_eq!(
            parse("(title:x title:y) AND title:z"),
            boolean(vec![group.clone(), c.clone()], vec![], vec![])
        );
        assert_eq!(parse("title:(x y)"), group);
        assert_eq!(parse("title:(x y)^2"), Query::boosted(group, 2.0));
        assert_eq!(parse("title:x^0.5 title:y"), boolean(vec![], vec![Query::boosted(a, 0.5), b], vec![]));
        assert_eq!(parse("((title:z))"), c);
        assert_eq!(parse("*:*"), Query::MatchAll);
    }

    #[test]
    fn phrase_slop_is_its_whole_part_as_in_lucene() {
        let Query::Phrase(p) = parse("title:\"war peace\"~1.5") else { panic!() };
        assert_eq!((p.slop, p.terms.len()), (1, 2));
    }

    #[test]
    fn wildcard_and_fuzzy_terms_are_normalized_not_analyzed() {
        let multi = |field, pattern| Query::MultiTerm(MultiTermQuery { field, pattern });
        let prefix = |p: &str| TermPattern::Prefix { prefix: p.into(), case_insensitive: false };
        let wildcard = |p: &str| TermPattern::Wildcard { pattern: p.into(), case_insensitive: false };
        assert_eq!(parse("title:Running*"), multi(0, prefix("running")));
        assert_eq!(parse("title:ru?n*"), multi(0, wildcard("ru?n*")));
        assert_eq!(parse(r"title:a\*b*"), multi(0, prefix("a*b")));
        assert_eq!(parse(r"title:ab\*c?"), multi(0, wildcard(r"ab\*c?")));
        assert_eq!(parse(r"title:ab\*"), title("ab"));
        assert_eq!(parse("te*"), Query::or(vec![multi(0, prefix("te")), multi(1, prefix("te"))]));
        let fuzzy = |term: &str, max_edits| TermPattern::Fuzzy(Fuzzy { max_edits, ..Fuzzy::auto(term) });
        assert_eq!(parse("title:Runing~"), multi(0, fuzzy("runing", 2)));
        assert_eq!(parse("title:war~"), multi(0, fuzzy("war", 1)));
        assert_eq!(parse("title:war~1.7"), multi(0, fuzzy("war", 1)));
        assert_eq!(parse("title:war~5"), multi(0, fuzzy("war", 2)));
        assert_eq!(parse("title:ab~"), multi(0, fuzzy("ab", 0)));
    }

    #[test]
    fn errors_name_the_problem() {
        for (q, want) in [
            ("\"open", "unterminated"),
            ("nope:x", "unknown field `nope`"),
            ("+", "ends where a term was expected"),
            ("", "empty"),
            ("te* *", "`*` alone"),
            ("title:[a b]", "a range is `[lower TO upper]`"),
            ("/ab+c", "unterminated regular expression"),
            ("/a&b/", "`&`"),
            ("(a b", "missing `)`"),
            ("a b)", "unexpected `)`"),
            ("AND a", "nothing before it"),
            ("a^", "followed by a number"),
        ] {
            let err = parse_query(q, &TwoFields).unwrap_err().to_string();
            assert!(err.contains(want), "{q}: {err}");
        }
    }

    #[test]
    fn clause_and_nesting_limits_hold() {
        let many = (0..600).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let err = parse_query(&many, &TwoFields).unwrap_err().to_string();
        assert!(err.contains("too many clauses: 1200"), "{err}");
        let phrase =
            format!("title:\"{}\"", (0..1100).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" "));
        assert!(parse_query(&phrase, &TwoFields).unwrap_err().to_string().contains("too many clauses"));
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(parse_query(&deep, &TwoFields).unwrap_err().to_string().contains("nested deeper"));
        assert!(
            parse_query(&(0..500).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" "), &TwoFields).is_ok()
        );
    }

    #[test]
    fn punctuation_only_matches_nothing() {
        assert_eq!(parse("..."), Query::MatchNone);
        assert_eq!(parse("x - y").leaf_count(), 4, "a bare `-` is a term that analyzes to nothing");
    }
}
