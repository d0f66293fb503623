//! The query DSL: Elasticsearch's JSON queries as Needle queries, scored as
//! Elasticsearch scores them (its `match` is Lucene's boolean of the text's
//! terms, `multi_match` a dis-max over the fields, `terms` constant-scoring...).
//!
//! Supported: `match`, `match_phrase`, `match_phrase_prefix`, `match_bool_prefix`,
//! `multi_match` (`best_fields`, `most_fields`, `cross_fields`, `phrase`, `phrase_prefix`, `bool_prefix`), `match_all`, `match_none`, `term`, `terms`,
//! `ids`, `bool`, `constant_score`, `dis_max`, `query_string`, `range`,
//! `exists` (on keyword, numeric, date and boolean fields, through their doc values),
//! `prefix`, `wildcard` and `fuzzy` (and `match` with `fuzziness`), `simple_query_string`,
//! `boosting`, and `boost` on each. Others are refused with an error that names them.

use std::sync::Arc;

use needle_analysis::{Analyzer, QueryTerms};
use needle_core::FieldId;
use needle_engine::{
    range_bounds, DateFormat, DateReading, FieldDef, FieldKind, Query, RangeBounds, RangeQuery, Schema, Zone,
};
use needle_search::analyzed;
use needle_search::regexp::{RegexpFlags, RegexpMatcher};
use needle_search::{
    parse_query_with, parse_simple_query, BoolQuery, Fuzzy, FuzzyDefaults, MultiTermQuery, ParseOptions,
    QueryFields, SimpleFlags, SimpleOptions, TermPattern, TermQuery, TermRange,
};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};

/// `query` as OpenSearch scores it: a term on a keyword field (from `term`,
/// `match`, `multi_match` or the query string) scores 1 for each match, as
/// OpenSearch 3.8's keyword fields answer, where the engine, as a Lucene term
/// query, scores it by BM25. What only filters is unchanged by this.
pub fn scored_as_opensearch(query: Query, schema: &Schema) -> Query {
    let mut constant = |leaf: Query| {
        Ok::<_, std::convert::Infallible>(match leaf {
            Query::Term(t) if schema.field(t.field).kind == FieldKind::Keyword => {
                Query::Constant(Box::new(Query::Term(t)))
            }
            other => other,
        })
    };
    query.try_map_leaves(&mut constant).unwrap_or_else(|never| match never {})
}

/// The query of a JSON query object.
pub fn query(v: &Value, schema: &Schema) -> ApiResult<Query> {
    let (kind, body) = single_key(v, "query")?;
    let mut body = body.clone();
    let q = match kind {
        "match_all" => Ok(Query::MatchAll),
        "match_none" => Ok(Query::MatchNone),
        "match" => field_query(kind, &mut body, schema, |field, text, opts, schema| {
            match_query(field, text, opts, schema)
        }),
        "match_phrase" => field_query(kind, &mut body, schema, phrase_query),
        "match_phrase_prefix" => field_query(kind, &mut body, schema, phrase_prefix_query),
        "match_bool_prefix" => field_query(kind, &mut body, schema, bool_prefix_query),
        "term" => field_query(kind, &mut body, schema, term_query),
        "multi_match" => multi_match(&mut body, schema),
        "terms" => terms_query(&mut body, schema),
        "ids" => ids_query(&mut body),
        "bool" => bool_query(&mut body, schema),
        "constant_score" => {
            let filter = take(&mut body, "filter")
                .ok_or_else(|| malformed("constant_score", "[filter] is missing"))?;
            Ok(Query::Constant(Box::new(query(&filter, schema)?)))
        }
        "dis_max" => {
            let Some(Value::Array(queries)) = take(&mut body, "queries") else {
                return Err(malformed("dis_max", "[queries] must be an array of queries"));
            };
            let clauses = queries.iter().map(|q| query(q, schema)).collect::<ApiResult<_>>()?;
            let tie_breaker = take_f32(&mut body, "dis_max", "tie_breaker")?.unwrap_or(0.0);
            Ok(Query::DisMax { clauses, tie_breaker })
        }
        "query_string" => query_string(&mut body, schema),
        "range" => range_query(&mut body, schema),
        "exists" => exists_query(&mut body, schema),
        "prefix" => field_query(kind, &mut body, schema, prefix_query),
        "wildcard" => field_query(kind, &mut body, schema, wildcard_query),
        "fuzzy" => field_query(kind, &mut body, schema, fuzzy_query),
        "regexp" => field_query(kind, &mut body, schema, regexp_query),
        "simple_query_string" => simple_query_string(&mut body, schema),
        "boosting" => boosting_query(&mut body, schema),
        "function_score" | "nested" | "geo_distance" | "script" => {
            Err(ApiError::parsing(format!("[{kind}] queries are not supported yet by Needle")))
        }
        other => Err(ApiError::parsing(format!("unknown query [{other}]"))),
    }?;
    boosted(q, &mut body, kind)
}

/// The one key of a query object and its value.
fn single_key<'a>(v: &'a Value, what: &str) -> ApiResult<(&'a str, &'a Value)> {
    let Value::Object(m) = v else {
        return Err(ApiError::parsing(format!("[{what}] must be an object, not {}", short(v))));
    };
    let mut keys = m.iter();
    match (keys.next(), keys.next()) {
        (Some((k, v)), None) => Ok((k.as_str(), v)),
        (None, _) => Err(ApiError::parsing(format!("[{what}] is an empty object: expected a query"))),
        (Some((first, _)), Some((second, _))) => Err(ApiError::parsing(format!(
            "[{first}] malformed query, expected [END_OBJECT] but found [FIELD_NAME] [{second}]"
        ))),
    }
}

/// `q` with the `boost` left in `body` (an object) applied, after checking nothing else is left.
fn boosted(q: Query, body: &mut Value, kind: &str) -> ApiResult<Query> {
    let boost = take_f32(body, kind, "boost")?;
    for key in ["_name", "adjust_pure_negative", "auto_generate_synonyms_phrase_query", "lenient"] {
        take(body, key);
    }
    if let Some(key) = body.as_object().and_then(|m| m.keys().next()) {
        return Err(ApiError::parsing(format!("[{kind}] query does not support [{key}]")));
    }
    Ok(match boost {
        Some(b) if b != 1.0 => Query::boosted(q, b),
        _ => q,
    })
}

fn take(body: &mut Value, key: &str) -> Option<Value> {
    body.as_object_mut().and_then(|m| m.remove(key))
}

/// A whole number `>= 0` at `key`, taken out of `body`.
fn take_count(body: &mut Value, kind: &str, key: &str) -> ApiResult<Option<u32>> {
    match take_f32(body, kind, key)? {
        None => Ok(None),
        Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(Some(n as u32)),
        Some(n) => {
            Err(ApiError::illegal_argument(format!("[{kind}] [{key}] must be a whole number >= 0, not {n}")))
        }
    }
}

fn take_f32(body: &mut Value, kind: &str, key: &str) -> ApiResult<Option<f32>> {
    match take(body, key) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().map(|f| f as f32)),
        Some(Value::String(s)) => {
            s.parse().map(Some).map_err(|_| malformed(kind, &format!("[{key}] must be a number")))
        }
        Some(other) => Err(malformed(kind, &format!("[{key}] must be a number, not {}", short(&other)))),
    }
}

fn take_bool(body: &mut Value, kind: &str, key: &str) -> ApiResult<Option<bool>> {
    match take(body, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
        Some(other) => Err(malformed(kind, &format!("[{key}] must be a boolean, not {}", short(&other)))),
    }
}

fn take_string(body: &mut Value, kind: &str, key: &str) -> ApiResult<Option<String>> {
    match take(body, key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => text_of(&v).map(Some).ok_or_else(|| malformed(kind, &format!("[{key}] must be a string"))),
    }
}

fn malformed(kind: &str, what: &str) -> ApiError {
    ApiError::parsing(format!("[{kind}] malformed query: {what}"))
}

fn short(v: &Value) -> String {
    needle_core::printable(&v.to_string(), 60)
}

/// A scalar's text (numbers and booleans as JSON writes them).
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
        _ => None,
    }
}

/// Options of a field query given in its long form (`{"field": {"query": ..., "operator": ...}}`).
struct FieldOptions {
    body: Value,
}

impl FieldOptions {
    fn string(&mut self, kind: &str, key: &str) -> ApiResult<Option<String>> {
        take_string(&mut self.body, kind, key)
    }
}

/// A query on one field: `{"field": value}` or `{"field": {"query"/"value": value, options...}}`.
fn field_query(
    kind: &str,
    body: &mut Value,
    schema: &Schema,
    build: impl Fn(&str, &str, &mut FieldOptions, &Schema) -> ApiResult<Query>,
) -> ApiResult<Query> {
    let (field, spec) = single_key(body, kind)?;
    let (field, spec) = (field.to_string(), spec.clone());
    let value_key =
        if matches!(kind, "term" | "prefix" | "wildcard" | "fuzzy" | "regexp") { "value" } else { "query" };
    let (text, mut options) = match spec {
        Value::Object(mut m) => {
            // `wildcard` may name its pattern `wildcard` instead of `value`.
            let v = m
                .remove(value_key)
                .or_else(|| m.remove("wildcard").filter(|_| kind == "wildcard"))
                .ok_or_else(|| malformed(kind, &format!("[{value_key}] is missing for [{field}]")))?;
            (v, FieldOptions { body: Value::Object(m) })
        }
        v => (v, FieldOptions { body: Value::Object(Map::new()) }),
    };
    let text = text_of(&text)
        .ok_or_else(|| malformed(kind, &format!("[{field}] must be a string, a number or a boolean")))?;
    let q = build(&field, &text, &mut options, schema)?;
    let q = boosted(q, &mut options.body, kind)?;
    *body = Value::Object(Map::new());
    Ok(q)
}

/// `range`: `gte`, `gt`, `lte`, `lt` (or the older `from`/`to` with
/// `include_lower`/`include_upper`) on a numeric, date or boolean field.
fn range_query(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let (field, spec) = single_key(body, "range").map(|(f, v)| (f.to_string(), v.clone()))?;
    let Value::Object(mut spec) = spec else {
        return Err(malformed("range", &format!("[{field}] must be an object of bounds")));
    };
    let mut take_bound = |key: &str| spec.remove(key).filter(|v| !v.is_null());
    let (mut gte, mut gt, mut lte, mut lt) =
        (take_bound("gte"), take_bound("gt"), take_bound("lte"), take_bound("lt"));
    let (from, to) = (take_bound("from"), take_bound("to"));
    let include = |v: Option<Value>| match v {
        None | Some(Value::Bool(true)) => Ok(true),
        Some(Value::Bool(false)) => Ok(false),
        Some(other) => Err(malformed(
            "range",
            &format!("[include_lower/upper] must be a boolean, not {}", short(&other)),
        )),
    };
    let (include_lower, include_upper) =
        (include(spec.remove("include_lower"))?, include(spec.remove("include_upper"))?);
    if from.is_some() {
        if include_lower {
            gte = from
        } else {
            gt = from
        }
    }
    if to.is_some() {
        if include_upper {
            lte = to
        } else {
            lt = to
        }
    }
    let mut rest = Value::Object(spec);
    let boost = take_f32(&mut rest, "range", "boost")?;
    take(&mut rest, "relation");
    let format = take_string(&mut rest, "range", "format")?;
    let time_zone = take_string(&mut rest, "range", "time_zone")?;
    if let Some(key) = rest.as_object().and_then(|m| m.keys().next()) {
        return Err(ApiError::parsing(format!("[range] query does not support [{key}]")));
    }
    *body = Value::Object(Map::new());
    let Some(id) = field_id(schema, &field) else { return Ok(Query::MatchNone) };
    let q = match schema.field(id).kind {
        // The terms between the bounds, each document scoring 1.
        FieldKind::Keyword | FieldKind::Text => {
            let text = |v: Option<&Value>| v.and_then(text_of);
            let range = TermRange {
                lower: text(gte.as_ref().or(gt.as_ref())),
                upper: text(lte.as_ref().or(lt.as_ref())),
                include_lower: gte.is_some(),
                include_upper: lte.is_some(),
            };
            QueryFields::range(schema, id, &range).map_err(|e| ApiError::illegal_argument(e.to_string()))?
        }
        kind => {
            let dates = date_reading(schema.field(id), format.as_deref(), time_zone.as_deref())?;
            let bounds = RangeBounds {
                gte: gte.as_ref(),
                gt: gt.as_ref(),
                lte: lte.as_ref(),
                lt: lt.as_ref(),
                dates: Some(&dates),
            };
            // Named as Elasticsearch names them: a date it cannot parse, a number it cannot create a query of.
            let (lower, upper) = range_bounds(kind, &field, bounds).map_err(|e| match kind {
                FieldKind::Date => ApiError::bad_request("parse_exception", e.to_string()),
                _ => shard_query_error(&e),
            })?;
            Query::Range(RangeQuery { field: id, lower, upper, indexed: None })
        }
    };
    Ok(match boost {
        Some(b) if b != 1.0 => Query::boosted(q, b),
        _ => q,
    })
}

/// How a range reads its date bounds: its `format` (else the field's own),
/// its `time_zone` (else UTC), `now` being this moment. Both are ignored on
/// fields other than dates, as OpenSearch ignores them.
fn date_reading(def: &FieldDef, format: Option<&str>, time_zone: Option<&str>) -> ApiResult<DateReading> {
    let (format, time_zone) = match def.kind {
        FieldKind::Date => (format, time_zone),
        _ => (None, None),
    };
    let format = match format {
        Some(f) => DateFormat::new(f).map_err(|e| ApiError::parsing(e.to_string()))?,
        None => def.date_format(),
    };
    let zone = match time_zone {
        Some(z) => {
            Zone::parse(z).ok_or_else(|| ApiError::parsing(format!("[range] unknown time zone [{z}]")))?
        }
        None => Zone::UTC,
    };
    Ok(DateReading { format, zone, now_ms: needle_engine::now_ms() })
}

/// `exists`: documents with a value in the field (keyword, numeric, date, boolean and binary fields).
fn exists_query(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let field =
        take_string(body, "exists", "field")?.ok_or_else(|| malformed("exists", "[field] is missing"))?;
    let Some(id) = field_id(schema, &field) else { return Ok(Query::MatchNone) };
    // A text field's documents with a token (an empty string counts as none).
    QueryFields::exists(schema, id).map_err(|e| ApiError::illegal_argument(e.to_string()))
}

/// The field's id, or `None` for a field the index does not have (Elasticsearch matches nothing there).
fn field_id(schema: &Schema, name: &str) -> Option<FieldId> {
    QueryFields::field_id(schema, name)
}

/// `text` analyzed for `field`, by `chosen` (the query's own analyzer) if
/// given, else the field's search analyzer: (position, term).
fn tokens(
    schema: &Schema,
    field: FieldId,
    text: &str,
    chosen: Option<&Analyzer>,
) -> ApiResult<Vec<(u32, String)>> {
    query_text(schema.analyze_with(field, text, chosen))
}

/// `text` of a phrase analyzed for `field`, by `chosen` if given, else by
/// its search quote analyzer if it has one (a graph of terms kept whole).
fn phrase_terms(
    schema: &Schema,
    field: FieldId,
    text: &str,
    chosen: Option<&Analyzer>,
) -> ApiResult<QueryTerms> {
    let terms = match chosen {
        Some(_) => schema.query_terms(field, text, chosen),
        None => schema.quoted_terms(field, text),
    };
    terms.map_err(|e| shard_query_error(&e))
}

/// As [`phrase_terms`], for a phrase that takes no graph of terms.
fn phrase_tokens(
    schema: &Schema,
    field: FieldId,
    text: &str,
    chosen: Option<&Analyzer>,
) -> ApiResult<Vec<(u32, String)>> {
    positioned(phrase_terms(schema, field, text, chosen)?)
}

/// The analyzer a query's `analyzer` option names (`kind`: the query's
/// name), if it names one: the index's own, else a built-in one.
fn query_analyzer(o: &mut FieldOptions, kind: &str, schema: &Schema) -> ApiResult<Option<Arc<Analyzer>>> {
    o.string(kind, "analyzer")?.map(|name| named_analyzer(schema, kind, &name)).transpose()
}

fn named_analyzer(schema: &Schema, kind: &str, name: &str) -> ApiResult<Arc<Analyzer>> {
    match schema.query_analyzer(name) {
        Some(made) => made.map_err(|e| ApiError::illegal_argument(e.to_string())),
        None => {
            let mut err = ApiError::bad_request(
                "query_shard_exception",
                format!("[{kind}] analyzer [{name}] not found"),
            );
            err.extra.insert("index_uuid".into(), Value::String("_na_".into()));
            Err(err)
        }
    }
}

/// Analyzed query text, or the error Elasticsearch gives for text a field cannot hold.
fn query_text(analyzed: needle_core::Result<Vec<(u32, String)>>) -> ApiResult<Vec<(u32, String)>> {
    analyzed.map_err(|e| shard_query_error(&e))
}

/// The error Elasticsearch gives for a query an index cannot make of what it was given.
fn shard_query_error(e: &dyn std::fmt::Display) -> ApiError {
    let mut err = ApiError::bad_request("query_shard_exception", format!("failed to create query: {e}"));
    err.extra.insert("index_uuid".into(), Value::String("_na_".into()));
    err
}

fn term(field: FieldId, t: String) -> Query {
    Query::Term(TermQuery { field, term: t.into_bytes() })
}

fn match_query(field: &str, text: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    let operator = o.string("match", "operator")?.unwrap_or_else(|| "or".into()).to_ascii_lowercase();
    let msm = o.string("match", "minimum_should_match")?;
    let zero_terms = o.string("match", "zero_terms_query")?.unwrap_or_else(|| "none".into());
    let chosen = query_analyzer(o, "match", schema)?;
    let fuzzy = FuzzyOptions::take(o, "match", "fuzzy_transpositions")?;
    rewrite_option(o, "match", "fuzzy_rewrite", "top_terms_blended_freqs_N")?;
    // Lenient: text the field cannot hold (a word for a number) matches nothing there.
    let lenient = take_bool(&mut o.body, "match", "lenient")?.unwrap_or(false);
    // Paths of several terms through a graph of terms as phrases (Elasticsearch's default).
    let phrases = take_bool(&mut o.body, "match", "auto_generate_synonyms_phrase_query")?.unwrap_or(true);
    let Some(id) = field_id(schema, field) else { return Ok(Query::MatchNone) };
    if fuzzy.fuzziness.is_some() {
        words_only(schema, id, "fuzzy")?;
    }
    let analyzed = match schema.query_terms(id, text, chosen.as_deref()) {
        Err(_) if lenient => return Ok(Query::MatchNone),
        analyzed => analyzed.map_err(|e| shard_query_error(&e))?,
    };
    let terms: Vec<Query> = match (analyzed, &fuzzy.fuzziness) {
        // A keyword field keeps no positions for phrases, so Elasticsearch requires every term of a path.
        (QueryTerms::Graph(tokens), None) => {
            let phrases = phrases && schema.field(id).kind == FieldKind::Text;
            analyzed::graph(id, &tokens, phrases).map_err(|e| shard_query_error(&e))?
        }
        (analyzed, Some(_)) => fuzzy_words(schema, id, &fuzzy, positioned(analyzed)?)?,
        (analyzed, None) => analyzed::by_position(id, positioned(analyzed)?),
    };
    joined_terms(terms, &operator, msm, &zero_terms)
}

/// Analyzed query text for a query that takes no graph of terms: the error
/// naming a term that spans several positions, if one does.
fn positioned(analyzed: QueryTerms) -> ApiResult<Vec<(u32, String)>> {
    analyzed.positioned().map_err(|e| shard_query_error(&e))
}

/// A fuzzy query of each word; several at one position (synonyms, n-grams) are refused.
fn fuzzy_words(
    schema: &Schema,
    field: FieldId,
    fuzzy: &FuzzyOptions,
    tokens: Vec<(u32, String)>,
) -> ApiResult<Vec<Query>> {
    one_term_a_position(schema, field, &tokens, "fuzzy match")?;
    tokens.into_iter().map(|(_, t)| fuzzy.query(field, t)).collect()
}

/// `match_bool_prefix`: the text's terms joined as `match` joins them
/// (`operator`, `minimum_should_match`, `analyzer`), the last one a prefix
/// query when nothing follows it in the text (Elasticsearch's rule: its
/// token ends where the text does, so `quick br ` searches the word `br`).
fn bool_prefix_query(field: &str, text: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    const KIND: &str = "match_bool_prefix";
    let operator = o.string(KIND, "operator")?.unwrap_or_else(|| "or".into()).to_ascii_lowercase();
    let msm = o.string(KIND, "minimum_should_match")?;
    let chosen = query_analyzer(o, KIND, schema)?;
    // Fuzziness applies to the words, not to the last one's prefix query (as in Elasticsearch).
    let fuzzy = FuzzyOptions::take(o, KIND, "fuzzy_transpositions")?;
    rewrite_option(o, KIND, "fuzzy_rewrite", "top_terms_blended_freqs_N")?;
    let Some(id) = field_id(schema, field) else { return Ok(Query::MatchNone) };
    words_only(schema, id, KIND)?;
    let analyzer = chosen.as_deref().or_else(|| schema.search_analyzer(id));
    let (tokens, prefixed) = match analyzer {
        Some(analyzer) if chosen.is_some() || schema.field(id).kind == FieldKind::Text => {
            let tokens = analyzer.tokens(text);
            if tokens.iter().any(|t| t.position_length > 1) {
                // Refused as every query refuses a graph of terms, with its words.
                analyzer.positioned_terms(text).map_err(needle_core::Error::query)?;
            }
            let prefixed = tokens.last().is_some_and(|t| t.end as usize == text.len());
            (tokens.into_iter().map(|t| (t.position, t.term)).collect(), prefixed)
        }
        _ => (tokens(schema, id, text, None)?, true),
    };
    let last = tokens.last().map(|&(p, _)| p);
    let (prefixes, words): (Vec<_>, Vec<_>) =
        tokens.into_iter().partition(|(p, _)| prefixed && Some(*p) == last);
    let mut terms = match &fuzzy.fuzziness {
        Some(_) => fuzzy_words(schema, id, &fuzzy, words)?,
        None => analyzed::by_position(id, words),
    };
    if !prefixes.is_empty() {
        let prefix = |(_, prefix)| {
            let pattern = TermPattern::Prefix { prefix, case_insensitive: false };
            Query::MultiTerm(MultiTermQuery { field: id, pattern })
        };
        terms.push(Query::or(prefixes.into_iter().map(prefix).collect()));
    }
    joined_terms(terms, &operator, msm, "none")
}

/// Refuses text that `field`'s search analyzer makes several terms at one
/// position of (synonyms, n-grams): `what` does not search them yet.
fn one_term_a_position(
    schema: &Schema,
    field: FieldId,
    tokens: &[(u32, String)],
    what: &str,
) -> ApiResult<()> {
    match tokens.windows(2).find(|w| w[0].0 == w[1].0) {
        None => Ok(()),
        Some(w) => Err(ApiError::illegal_argument(format!(
            "the search analyzer of field [{}] puts [{}] and [{}] at one position: a {what} over several terms \
             at one position is not supported yet by Needle",
            schema.field(field).name,
            w[0].1,
            w[1].1
        ))),
    }
}

/// A `match` query's terms joined as its `operator`, `minimum_should_match`
/// and `zero_terms_query` say.
fn joined_terms(
    mut terms: Vec<Query>,
    operator: &str,
    msm: Option<String>,
    zero_terms: &str,
) -> ApiResult<Query> {
    Ok(match terms.len() {
        0 if zero_terms == "all" => Query::MatchAll,
        0 => Query::MatchNone,
        1 => terms.pop().expect("one term"),
        n => {
            let mut b = BoolQuery::default();
            match operator {
                "and" => b.must = terms,
                "or" => {
                    b.minimum_should_match =
                        msm.map(|spec| min_should_match(&spec, n)).transpose()?.unwrap_or(0);
                    b.should = terms;
                }
                other => {
                    return Err(ApiError::parsing(format!("[match] unknown operator [{other}]: and or or")))
                }
            }
            Query::Bool(b)
        }
    })
}

/// `multi_match` of type `cross_fields`: the fields that analyze text alike
/// (text fields with one analyzer, or keyword fields with one normalizer) form a group whose
/// fields act as one: the text is analyzed once, and each term is searched
/// in all of them as one blended term ([`Query::CrossFields`]), so that
/// `operator` and `minimum_should_match` count terms, not fields. A field
/// alone in its group is a `match` query on it; groups join in a dis-max.
fn cross_fields(
    text: &str,
    fields: &[(String, f32)],
    options: &FieldOptions,
    schema: &Schema,
    tie_breaker: f32,
) -> ApiResult<Query> {
    let mut groups: Vec<Vec<(FieldId, f32)>> = Vec::new();
    for (name, boost) in fields {
        let Some(id) = field_id(schema, name) else { continue };
        let def = schema.field(id);
        let alike = |other: &(FieldId, f32)| {
            let o = schema.field(other.0);
            o.kind == def.kind
                && matches!(def.kind, FieldKind::Text | FieldKind::Keyword)
                && (&o.analyzer, &o.search_analyzer, &o.stopwords, &o.normalizer)
                    == (&def.analyzer, &def.search_analyzer, &def.stopwords, &def.normalizer)
        };
        match groups.iter_mut().find(|g| alike(&g[0])) {
            Some(group) => group.push((id, *boost)),
            None => groups.push(vec![(id, *boost)]),
        }
    }
    let mut per_group = Vec::with_capacity(groups.len());
    for group in groups {
        let mut o = FieldOptions { body: options.body.clone() };
        if let [(id, boost)] = group[..] {
            let q = match_query(&schema.field(id).name, text, &mut o, schema)?;
            per_group.push(if boost == 1.0 { q } else { Query::boosted(q, boost) });
            continue;
        }
        let operator =
            o.string("multi_match", "operator")?.unwrap_or_else(|| "or".into()).to_ascii_lowercase();
        let msm = o.string("multi_match", "minimum_should_match")?;
        let zero_terms = o.string("multi_match", "zero_terms_query")?.unwrap_or_else(|| "none".into());
        let tokens = tokens(schema, group[0].0, text, None)?;
        one_term_a_position(schema, group[0].0, &tokens, "cross_fields query")?;
        let terms = tokens
            .into_iter()
            .map(|(_, t)| Query::CrossFields { fields: group.clone(), term: t.into_bytes(), tie_breaker })
            .collect();
        per_group.push(joined_terms(terms, &operator, msm, &zero_terms)?);
    }
    Ok(match per_group.len() {
        0 => Query::MatchNone,
        1 => per_group.pop().expect("one group"),
        _ => Query::DisMax { clauses: per_group, tie_breaker },
    })
}

/// Prefix, wildcard and fuzzy queries search the terms of text and keyword fields only.
fn words_only(schema: &Schema, field: FieldId, kind: &str) -> ApiResult<()> {
    let def = schema.field(field);
    match def.kind {
        FieldKind::Text | FieldKind::Keyword => Ok(()),
        other => {
            let mut err = ApiError::bad_request(
                "query_shard_exception",
                format!(
                    "Can only use {kind} queries on keyword and text fields - not on [{}] which is of type [{}]",
                    def.name,
                    other.name()
                ),
            );
            err.extra.insert("index_uuid".into(), Value::String("_na_".into()));
            Err(err)
        }
    }
}

/// `rewrite` options: only those that score as Needle does are accepted.
fn rewrite_option(o: &mut FieldOptions, kind: &str, key: &str, default: &str) -> ApiResult<()> {
    let Some(method) = o.string(kind, key)? else { return Ok(()) };
    let constant = ["constant_score", "constant_score_blended", "constant_score_boolean"];
    let fine = match default {
        "constant_score" => constant.contains(&method.as_str()),
        _ => method.starts_with("top_terms_blended_freqs_"),
    };
    match fine {
        true => Ok(()),
        false => {
            Err(ApiError::parsing(format!("[{kind}] [{key}] [{method}] is not supported yet by Needle")))
        }
    }
}

/// `prefix`: terms starting with the value (not analyzed), each document scoring 1.
fn prefix_query(field: &str, value: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    let case_insensitive = take_bool(&mut o.body, "prefix", "case_insensitive")?.unwrap_or(false);
    rewrite_option(o, "prefix", "rewrite", "constant_score")?;
    let pattern = TermPattern::Prefix { prefix: value.to_string(), case_insensitive };
    multi_term(schema, field, "prefix", pattern)
}

/// `wildcard`: terms matching the pattern (`*`, `?`; not analyzed), each document scoring 1.
fn wildcard_query(field: &str, value: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    let case_insensitive = take_bool(&mut o.body, "wildcard", "case_insensitive")?.unwrap_or(false);
    rewrite_option(o, "wildcard", "rewrite", "constant_score")?;
    let pattern = TermPattern::Wildcard { pattern: value.to_string(), case_insensitive };
    multi_term(schema, field, "wildcard", pattern)
}

/// `regexp`: terms the whole of which a Lucene regular expression matches
/// (not analyzed), each document scoring 1; a bad expression is a parse error.
fn regexp_query(field: &str, value: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    let case_insensitive = take_bool(&mut o.body, "regexp", "case_insensitive")?.unwrap_or(false);
    let flags = match take_string(&mut o.body, "regexp", "flags")? {
        Some(text) => RegexpFlags::parse(&text).map_err(|e| ApiError::parsing(format!("[regexp] {e}")))?,
        None => RegexpFlags::ALL,
    };
    // Needle bounds the automaton by its size, not by states: the option is taken, not applied.
    let _ = take(&mut o.body, "max_determinized_states");
    let _ = take(&mut o.body, "flags_value");
    rewrite_option(o, "regexp", "rewrite", "constant_score")?;
    RegexpMatcher::new(value, flags, case_insensitive).map_err(|e| shard_query_error(&e))?;
    let pattern = TermPattern::Regexp { pattern: value.to_string(), flags, case_insensitive };
    multi_term(schema, field, "regexp", pattern)
}

/// `fuzzy`: terms within an edit distance of the value (not analyzed).
fn fuzzy_query(field: &str, value: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    let mut fuzzy = FuzzyOptions::take(o, "fuzzy", "transpositions")?;
    rewrite_option(o, "fuzzy", "rewrite", "top_terms_blended_freqs_N")?;
    let Some(id) = field_id(schema, field) else { return Ok(Query::MatchNone) };
    words_only(schema, id, "fuzzy")?;
    fuzzy.fuzziness.get_or_insert_with(|| Value::String("AUTO".into()));
    fuzzy.query(id, schema.normalized(id, value).into_owned())
}

fn multi_term(schema: &Schema, field: &str, kind: &str, pattern: TermPattern) -> ApiResult<Query> {
    let Some(id) = field_id(schema, field) else { return Ok(Query::MatchNone) };
    words_only(schema, id, kind)?;
    let pattern = match (schema.normalizer(id), pattern) {
        (Some(n), TermPattern::Prefix { prefix, case_insensitive }) => {
            TermPattern::Prefix { prefix: n.normalize(&prefix), case_insensitive }
        }
        (Some(n), TermPattern::Wildcard { pattern, case_insensitive }) => TermPattern::Wildcard {
            pattern: normalized_wildcard(&pattern, |t| n.normalize(t)),
            case_insensitive,
        },
        (_, pattern) => pattern,
    };
    Ok(Query::MultiTerm(MultiTermQuery { field: id, pattern }))
}

/// A wildcard pattern with its literal runs through `normalize` and its
/// `*`, `?` and escaped characters as written, as Elasticsearch normalizes a
/// pattern for a keyword field with a normalizer.
fn normalized_wildcard(pattern: &str, normalize: impl Fn(&str) -> String) -> String {
    let (mut out, mut run) = (String::new(), String::new());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if !matches!(c, '*' | '?' | '\\') {
            run.push(c);
            continue;
        }
        out.push_str(&normalize(&std::mem::take(&mut run)));
        out.push(c);
        if c == '\\' {
            out.extend(chars.next());
        }
    }
    out + &normalize(&run)
}

/// The fuzzy options of `fuzzy` and `match`, Elasticsearch's defaults where absent.
struct FuzzyOptions {
    fuzziness: Option<Value>,
    prefix_length: u32,
    max_expansions: u32,
    transpositions: bool,
}

impl FuzzyOptions {
    fn take(o: &mut FieldOptions, kind: &str, transpositions_key: &str) -> ApiResult<Self> {
        let count = |o: &mut FieldOptions, key: &str, default: u32| -> ApiResult<u32> {
            match take_f32(&mut o.body, kind, key)? {
                None => Ok(default),
                Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(n as u32),
                Some(n) => Err(ApiError::illegal_argument(format!(
                    "[{kind}] [{key}] must be a whole number >= 0, not {n}"
                ))),
            }
        };
        let prefix_length = count(o, "prefix_length", 0)?;
        let max_expansions = count(o, "max_expansions", 50)?;
        if max_expansions == 0 {
            return Err(ApiError::illegal_argument(format!("[{kind}] [max_expansions] must be positive")));
        }
        Ok(FuzzyOptions {
            fuzziness: take(&mut o.body, "fuzziness").filter(|v| !v.is_null()),
            prefix_length,
            max_expansions,
            transpositions: take_bool(&mut o.body, kind, transpositions_key)?.unwrap_or(true),
        })
    }

    /// The fuzzy query of one word.
    fn query(&self, field: FieldId, word: String) -> ApiResult<Query> {
        let max_edits = match &self.fuzziness {
            Some(spec) => edits(spec, &word)?,
            None => 0,
        };
        let fuzzy = Fuzzy {
            term: word,
            max_edits,
            prefix_length: self.prefix_length,
            transpositions: self.transpositions,
            max_expansions: self.max_expansions,
        };
        Ok(Query::MultiTerm(MultiTermQuery { field, pattern: TermPattern::Fuzzy(fuzzy) }))
    }
}

/// Elasticsearch's `fuzziness` for a word: `0`, `1`, `2` (whole edits; a
/// fraction is cut, more than 2 is 2), `AUTO` (0 edits up to 2 characters,
/// 1 up to 5, else 2) or `AUTO:low,high` (0 below `low`, 1 below `high`).
fn edits(spec: &Value, word: &str) -> ApiResult<u32> {
    let FuzzyDefaults { edits, auto_low, auto_high, .. } = fuzziness(spec)?;
    let len = word.chars().count() as u32;
    let auto = if len < auto_low {
        0
    } else if len < auto_high {
        1
    } else {
        2
    };
    Ok(edits.unwrap_or(auto))
}

/// A `fuzziness` read into the edits of [`FuzzyDefaults`] (its other settings the defaults).
fn fuzziness(spec: &Value) -> ApiResult<FuzzyDefaults> {
    let bad = || ApiError::parsing(format!("failed to parse [fuzziness]: {}", short(spec)));
    let text = text_of(spec).ok_or_else(bad)?;
    let upper = text.to_ascii_uppercase();
    if let Some(rest) = upper.strip_prefix("AUTO") {
        let (auto_low, auto_high) = match rest.strip_prefix(':') {
            None if rest.is_empty() => (3, 6),
            Some(bounds) => {
                let (low, high) = bounds.split_once(',').ok_or_else(bad)?;
                (
                    low.trim().parse::<u32>().map_err(|_| bad())?,
                    high.trim().parse::<u32>().map_err(|_| bad())?,
                )
            }
            None => return Err(bad()),
        };
        return Ok(FuzzyDefaults { edits: None, auto_low, auto_high, ..FuzzyDefaults::default() });
    }
    match text.parse::<f64>() {
        Ok(n) if n >= 0.0 => {
            Ok(FuzzyDefaults { edits: Some((n as u32).min(Fuzzy::MAX_EDITS)), ..FuzzyDefaults::default() })
        }
        _ => Err(bad()),
    }
}

/// A `query_string`'s `fuzziness` (for `term~` without a number) and `fuzzy_*` settings.
fn fuzzy_defaults(body: &mut Value) -> ApiResult<FuzzyDefaults> {
    const KIND: &str = "query_string";
    let mut out = match take(body, "fuzziness").filter(|v| !v.is_null()) {
        Some(spec) => fuzziness(&spec)?,
        None => FuzzyDefaults::default(),
    };
    if let Some(n) = take_count(body, KIND, "fuzzy_prefix_length")? {
        out.prefix_length = n;
    }
    if let Some(n) = take_count(body, KIND, "fuzzy_max_expansions")? {
        if n == 0 {
            return Err(ApiError::illegal_argument(format!(
                "[{KIND}] [fuzzy_max_expansions] must be positive"
            )));
        }
        out.max_expansions = n;
    }
    if let Some(t) = take_bool(body, KIND, "fuzzy_transpositions")? {
        out.transpositions = t;
    }
    let mut o = FieldOptions { body: std::mem::take(body) };
    let rewrite = rewrite_option(&mut o, KIND, "fuzzy_rewrite", "top_terms_blended_freqs_N");
    *body = o.body;
    rewrite?;
    Ok(out)
}

fn phrase_query(field: &str, text: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    let slop = take_f32(&mut o.body, "match_phrase", "slop")?.unwrap_or(0.0).max(0.0) as u32;
    let chosen = query_analyzer(o, "match_phrase", schema)?;
    let Some(id) = field_id(schema, field) else { return Ok(Query::MatchNone) };
    phrase(schema, id, text, slop, chosen.as_deref())
}

/// `match_phrase_prefix`: the text as a phrase whose last word is the prefix
/// of the terms that may fill its place (`slop`, `max_expansions`,
/// `analyzer`, `zero_terms_query`).
fn phrase_prefix_query(field: &str, text: &str, o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    const KIND: &str = "match_phrase_prefix";
    let slop = take_f32(&mut o.body, KIND, "slop")?.unwrap_or(0.0).max(0.0) as u32;
    let max_expansions = take_count(&mut o.body, KIND, "max_expansions")?.unwrap_or(50);
    let zero_terms = o.string(KIND, "zero_terms_query")?.unwrap_or_else(|| "none".into());
    let chosen = query_analyzer(o, KIND, schema)?;
    let Some(id) = field_id(schema, field) else { return Ok(Query::MatchNone) };
    let q = phrase_prefix(schema, id, text, slop, max_expansions, chosen.as_deref())?;
    Ok(match q {
        Query::MatchNone if zero_terms == "all" => Query::MatchAll,
        q => q,
    })
}

/// `text` analyzed for `field` as a phrase ending in a prefix (by `chosen` if given).
fn phrase_prefix(
    schema: &Schema,
    field: FieldId,
    text: &str,
    slop: u32,
    max_expansions: u32,
    chosen: Option<&Analyzer>,
) -> ApiResult<Query> {
    let def = schema.field(field);
    if def.kind != FieldKind::Text {
        return Err(ApiError::illegal_argument(format!(
            "Can only use phrase prefix queries on text fields - not on [{}] which is of type [{}]",
            def.name,
            def.kind.name()
        )));
    }
    let tokens = phrase_tokens(schema, field, text, chosen)?;
    Ok(analyzed::phrase_prefix(field, tokens, slop, max_expansions).unwrap_or(Query::MatchNone))
}

/// `text` analyzed for `field` as a phrase (by `chosen`, the query's own analyzer, if given).
fn phrase(
    schema: &Schema,
    field: FieldId,
    text: &str,
    slop: u32,
    chosen: Option<&Analyzer>,
) -> ApiResult<Query> {
    let terms = phrase_terms(schema, field, text, chosen)?;
    let phrase = analyzed::phrase_or_graph(field, terms, slop).map_err(|e| shard_query_error(&e))?;
    Ok(phrase.unwrap_or(Query::MatchNone))
}

/// A term as the field holds it: text fields take the value as is (not
/// analyzed), the others their canonical form (`5.0` in a long field is `5`).
fn exact_term(schema: &Schema, field: FieldId, value: &str) -> ApiResult<Query> {
    if schema.field(field).kind == FieldKind::Text {
        return Ok(term(field, value.to_string()));
    }
    let t = tokens(schema, field, value, None)?;
    Ok(t.into_iter().next().map_or(Query::MatchNone, |(_, t)| term(field, t)))
}

fn term_query(field: &str, value: &str, _o: &mut FieldOptions, schema: &Schema) -> ApiResult<Query> {
    match field_id(schema, field) {
        Some(id) => exact_term(schema, id, value),
        None => Ok(Query::MatchNone),
    }
}

fn terms_query(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let boost = take_f32(body, "terms", "boost")?;
    let (field, values) = single_key(body, "terms").map(|(f, v)| (f.to_string(), v.clone()))?;
    // The field and its values are all the body holds: nothing is left for `boosted` to refuse.
    *body = Value::Object(Map::new());
    let Value::Array(values) = values else {
        return Err(ApiError::parsing(format!(
            "[terms] query does not support [{field}]: its value must be an array"
        )));
    };
    let Some(id) = field_id(schema, &field) else { return Ok(Query::MatchNone) };
    let mut should = Vec::with_capacity(values.len());
    for v in values {
        let text =
            text_of(&v).ok_or_else(|| malformed("terms", "values must be strings, numbers or booleans"))?;
        should.push(exact_term(schema, id, &text)?);
    }
    let q = Query::Constant(Box::new(Query::or(should)));
    Ok(match boost {
        Some(b) => Query::boosted(q, b),
        None => q,
    })
}

fn ids_query(body: &mut Value) -> ApiResult<Query> {
    let Some(Value::Array(values)) = take(body, "values") else {
        return Err(malformed("ids", "[values] must be an array"));
    };
    let should = values
        .iter()
        .map(|v| text_of(v).map(|id| term(needle_engine::ID_FIELD, id)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| malformed("ids", "ids must be strings"))?;
    Ok(Query::Constant(Box::new(Query::or(should))))
}

fn bool_query(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let mut b = BoolQuery::default();
    for (key, into) in [
        ("must", &mut b.must),
        ("should", &mut b.should),
        ("must_not", &mut b.must_not),
        ("filter", &mut b.filter),
    ] {
        match take(body, key) {
            None => {}
            Some(Value::Array(clauses)) => {
                for c in &clauses {
                    into.push(query(c, schema)?);
                }
            }
            Some(one) => into.push(query(&one, schema)?),
        }
    }
    if let Some(spec) = take(body, "minimum_should_match") {
        let spec = text_of(&spec)
            .ok_or_else(|| malformed("bool", "[minimum_should_match] must be a number or a string"))?;
        b.minimum_should_match = min_should_match(&spec, b.should.len())?;
    }
    // Elasticsearch: a bool query without clauses matches every document.
    if b == BoolQuery::default() {
        return Ok(Query::MatchAll);
    }
    Ok(Query::Bool(b))
}

fn multi_match(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let text = take(body, "query")
        .and_then(|v| text_of(&v))
        .ok_or_else(|| malformed("multi_match", "[query] is missing"))?;
    let kind = take_string(body, "multi_match", "type")?.unwrap_or_else(|| "best_fields".into());
    let tie_breaker = take_f32(body, "multi_match", "tie_breaker")?.unwrap_or(0.0);
    let slop = take_f32(body, "multi_match", "slop")?.unwrap_or(0.0).max(0.0) as u32;
    let mut options = FieldOptions { body: Value::Object(Map::new()) };
    let passed_on = [
        "operator",
        "minimum_should_match",
        "zero_terms_query",
        "fuzziness",
        "prefix_length",
        "max_expansions",
        "fuzzy_transpositions",
        "fuzzy_rewrite",
        "analyzer",
        "lenient",
        "auto_generate_synonyms_phrase_query",
    ];
    for key in passed_on {
        if let Some(v) = take(body, key) {
            options.body[key] = v;
        }
    }
    let fields = match take(body, "fields") {
        None => vec![("*".to_string(), 1.0)],
        Some(Value::Array(f)) => f
            .iter()
            .map(|f| text_of(f).map(|f| field_boost(&f)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| malformed("multi_match", "[fields] must be strings"))?,
        Some(Value::String(f)) => vec![field_boost(&f)],
        Some(_) => return Err(malformed("multi_match", "[fields] must be an array of strings")),
    };
    // Over every field, lenient unless told otherwise, as Elasticsearch decides.
    if options.body.get("lenient").is_none() && fields.iter().all(|(f, _)| f == "*") {
        options.body["lenient"] = Value::Bool(true);
    }
    if kind == "cross_fields" {
        if options.body.get("fuzziness").is_some() {
            return Err(ApiError::parsing("Fuzziness not allowed for type [cross_fields]"));
        }
        if options.body.get("analyzer").is_some() {
            return Err(ApiError::parsing(
                "[multi_match] [analyzer] of type [cross_fields] is not supported yet by Needle",
            ));
        }
        let named: Vec<(String, f32)> = (fields.iter())
            .flat_map(|(pattern, boost)| field_names(schema, pattern).into_iter().map(|n| (n, *boost)))
            .collect();
        return cross_fields(&text, &named, &options, schema, tie_breaker);
    }
    let chosen = match kind.as_str() {
        "phrase" | "phrase_prefix" => query_analyzer(&mut options, "multi_match", schema)?,
        _ => None,
    };
    let max_expansions = match kind.as_str() {
        "phrase_prefix" => take_count(&mut options.body, "multi_match", "max_expansions")?.unwrap_or(50),
        _ => 50,
    };
    let mut per_field = Vec::new();
    for (pattern, boost) in fields {
        for name in field_names(schema, &pattern) {
            let mut o = FieldOptions { body: options.body.clone() };
            let q = match kind.as_str() {
                "best_fields" | "most_fields" => match_query(&name, &text, &mut o, schema)?,
                "phrase" => {
                    let id = field_id(schema, &name).expect("resolved from the schema");
                    phrase(schema, id, &text, slop, chosen.as_deref())?
                }
                "bool_prefix" => bool_prefix_query(&name, &text, &mut o, schema)?,
                "phrase_prefix" => {
                    let id = field_id(schema, &name).expect("resolved from the schema");
                    if schema.field(id).kind != FieldKind::Text {
                        continue; // as Elasticsearch leaves out the fields it cannot search so
                    }
                    phrase_prefix(schema, id, &text, slop, max_expansions, chosen.as_deref())?
                }
                other => {
                    return Err(ApiError::parsing(format!(
                        "[multi_match] type [{other}] is not supported yet by Needle"
                    )))
                }
            };
            per_field.push(if boost == 1.0 { q } else { Query::boosted(q, boost) });
        }
    }
    Ok(match kind.as_str() {
        "most_fields" | "bool_prefix" => Query::or(per_field),
        _ => Query::DisMax { clauses: per_field, tie_breaker },
    })
}

/// `title^2` as ("title", 2.0).
fn field_boost(spec: &str) -> (String, f32) {
    match spec.rsplit_once('^') {
        Some((name, boost)) => (name.to_string(), boost.parse().unwrap_or(1.0)),
        None => (spec.to_string(), 1.0),
    }
}

/// The indexed fields a name or `*` pattern names (`*` alone: every text field).
fn field_names(schema: &Schema, pattern: &str) -> Vec<String> {
    if pattern == "*" {
        return schema.text_fields().into_iter().map(|f| schema.field(f).name.clone()).collect();
    }
    schema
        .fields
        .iter()
        .filter(|f| f.index && f.name != "_id" && crate::pattern::matches(pattern, &f.name))
        .map(|f| f.name.clone())
        .collect()
}

/// The query string's fields as the parser's default fields, and the
/// analyzers its options name (`analyzer`, for all its text; `quote_analyzer`,
/// for phrases in quotes).
struct DefaultFields<'a> {
    schema: &'a Schema,
    fields: Vec<FieldId>,
    analyzer: Option<Arc<Analyzer>>,
    quote_analyzer: Option<Arc<Analyzer>>,
    /// `lenient`: a word or range a field cannot hold (text for a number)
    /// matches nothing there instead of failing the query.
    lenient: bool,
}

impl DefaultFields<'_> {
    /// `found`, or nothing found where the query is lenient.
    fn leniently<T: Default>(&self, found: needle_core::Result<T>) -> needle_core::Result<T> {
        match found {
            Err(_) if self.lenient => Ok(T::default()),
            found => found,
        }
    }
}

/// Whether a query string is lenient: as its `lenient` says, else when it
/// searches every field (no fields named, or `*`), as Elasticsearch decides.
fn lenient_of(body: &mut Value, kind: &str, patterns: &[String]) -> ApiResult<bool> {
    let every_field = patterns.is_empty() || patterns.iter().all(|p| p == "*");
    Ok(take_bool(body, kind, "lenient")?.unwrap_or(every_field))
}

impl QueryFields for DefaultFields<'_> {
    fn field_id(&self, name: &str) -> Option<FieldId> {
        QueryFields::field_id(self.schema, name)
    }
    fn default_fields(&self) -> Vec<FieldId> {
        self.fields.clone()
    }
    fn analyze(&self, field: FieldId, text: &str) -> needle_core::Result<Vec<(u32, String)>> {
        self.leniently(self.schema.analyze_with(field, text, self.analyzer.as_deref()))
    }
    fn analyze_graph(&self, field: FieldId, text: &str) -> needle_core::Result<QueryTerms> {
        self.leniently(self.schema.query_terms(field, text, self.analyzer.as_deref()))
    }
    fn analyze_quoted(&self, field: FieldId, text: &str) -> needle_core::Result<QueryTerms> {
        self.leniently(match self.quote_analyzer.as_ref().or(self.analyzer.as_ref()) {
            Some(chosen) => self.schema.query_terms(field, text, Some(chosen)),
            None => self.schema.quoted_terms(field, text),
        })
    }
    fn normalize(&self, field: FieldId, text: &str) -> needle_core::Result<String> {
        QueryFields::normalize(self.schema, field, text)
    }
    fn range(&self, field: FieldId, range: &needle_search::TermRange) -> needle_core::Result<Query> {
        match QueryFields::range(self.schema, field, range) {
            Err(_) if self.lenient => Ok(Query::MatchNone),
            found => found,
        }
    }
    fn exists(&self, field: FieldId) -> needle_core::Result<Query> {
        QueryFields::exists(self.schema, field)
    }
}

fn query_string(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let text = take_string(body, "query_string", "query")?
        .ok_or_else(|| malformed("query_string", "[query] is missing"))?;
    let operator = take_string(body, "query_string", "default_operator")?.unwrap_or_else(|| "or".into());
    let mut patterns: Vec<String> = Vec::new();
    if let Some(f) = take_string(body, "query_string", "default_field")? {
        patterns.push(f);
    }
    match take(body, "fields") {
        None => {}
        Some(Value::Array(f)) => patterns.extend(f.iter().filter_map(text_of)),
        Some(_) => return Err(malformed("query_string", "[fields] must be an array of strings")),
    }
    if patterns.iter().any(|p| p.contains('^')) {
        return Err(ApiError::parsing(
            "[query_string] per-field boosts in [fields] are not supported yet by Needle",
        ));
    }
    let fields = match patterns.is_empty() {
        true => schema.text_fields(),
        false => patterns
            .iter()
            .flat_map(|p| field_names(schema, p))
            .filter_map(|n| field_id(schema, &n))
            .collect(),
    };
    let default_and = match operator.to_ascii_lowercase().as_str() {
        "or" => false,
        "and" => true,
        other => return Err(ApiError::parsing(format!("[query_string] unknown default_operator [{other}]"))),
    };
    // A term in several fields: the best field's score (`best_fields`), or their sum (`most_fields`).
    let kind = take_string(body, "query_string", "type")?.unwrap_or_else(|| "best_fields".into());
    let type_tie_breaker = match kind.as_str() {
        "best_fields" => 0.0,
        "most_fields" => 1.0,
        other => {
            return Err(ApiError::parsing(format!(
                "[query_string] [type] [{other}] is not supported yet by Needle"
            )))
        }
    };
    let tie_breaker = take_f32(body, "query_string", "tie_breaker")?.unwrap_or(type_tie_breaker);
    let synonym_phrases =
        take_bool(body, "query_string", "auto_generate_synonyms_phrase_query")?.unwrap_or(true);
    let options = ParseOptions {
        default_and,
        field_tie_breaker: Some(tie_breaker),
        fuzzy: fuzzy_defaults(body)?,
        synonym_phrases,
    };
    let mut named = |key: &str| -> ApiResult<Option<Arc<Analyzer>>> {
        let name = take_string(body, "query_string", key)?;
        name.map(|name| named_analyzer(schema, "query_string", &name)).transpose()
    };
    let (analyzer, quote_analyzer) = (named("analyzer")?, named("quote_analyzer")?);
    let lenient = lenient_of(body, "query_string", &patterns)?;
    let fields = DefaultFields { schema, fields, analyzer, quote_analyzer, lenient };
    parse_query_with(&text, &fields, &options).map_err(|e| {
        let mut err = ApiError::bad_request(
            "query_shard_exception",
            format!("Failed to parse query [{}]: {e}", needle_core::printable(&text, 200)),
        );
        err.extra.insert("index_uuid".into(), Value::String("_na_".into()));
        err
    })
}

/// `boosting`: what `positive` matches, scored lower by `negative_boost`
/// (a factor, 0 or more) where `negative` matches too.
fn boosting_query(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    let mut clause = |key: &str| match take(body, key) {
        Some(q) => query(&q, schema),
        None => Err(ApiError::parsing(format!("[boosting] query requires '{key}' query to be set"))),
    };
    let (positive, negative) = (clause("positive")?, clause("negative")?);
    match take_f32(body, "boosting", "negative_boost")? {
        Some(factor) if factor >= 0.0 => {
            Ok(Query::Boosting { positive: Box::new(positive), negative: Box::new(negative), factor })
        }
        _ => Err(ApiError::parsing(
            "[boosting] query requires 'negative_boost' to be set to be a positive value",
        )),
    }
}

/// `simple_query_string`: the search-box syntax (see `needle_search::parse_simple_query`),
/// which never fails on its text; options: `fields` (`name^boost`, `*`
/// patterns), `default_operator`, `flags`, `minimum_should_match`, the `fuzzy_*` settings.
fn simple_query_string(body: &mut Value, schema: &Schema) -> ApiResult<Query> {
    const KIND: &str = "simple_query_string";
    let text = take_string(body, KIND, "query")?.ok_or_else(|| malformed(KIND, "[query] is missing"))?;
    let default_and = match take_string(body, KIND, "default_operator")?.map(|o| o.to_ascii_lowercase()) {
        None => false,
        Some(op) if op == "or" => false,
        Some(op) if op == "and" => true,
        Some(other) => return Err(ApiError::parsing(format!("[{KIND}] unknown default_operator [{other}]"))),
    };
    let mut options = SimpleOptions { default_and, ..SimpleOptions::default() };
    if let Some(flags) = take(body, "flags") {
        options.flags = match &flags {
            Value::Number(n) => n.as_i64().map(|n| SimpleFlags(n as u32)),
            Value::String(text) => SimpleFlags::parse(text),
            _ => None,
        }
        .ok_or_else(|| ApiError::illegal_argument(format!("[{KIND}] unknown flags {}", short(&flags))))?;
    }
    if let Some(n) = take_count(body, KIND, "fuzzy_prefix_length")? {
        options.fuzzy_prefix_length = n;
    }
    if let Some(n) = take_count(body, KIND, "fuzzy_max_expansions")? {
        options.fuzzy_max_expansions = n.max(1);
    }
    if let Some(t) = take_bool(body, KIND, "fuzzy_transpositions")? {
        options.fuzzy_transpositions = t;
    }
    let msm = take(body, "minimum_should_match").map(|v| text_of(&v).unwrap_or_default());
    if take_bool(body, KIND, "analyze_wildcard")? == Some(true) {
        return Err(ApiError::parsing(format!(
            "[{KIND}] [analyze_wildcard] true is not supported yet by Needle"
        )));
    }
    if let Some(phrases) = take_bool(body, KIND, "auto_generate_synonyms_phrase_query")? {
        options.synonym_phrases = phrases;
    }
    let analyzer =
        take_string(body, KIND, "analyzer")?.map(|name| named_analyzer(schema, KIND, &name)).transpose()?;
    let patterns: Vec<(String, f32)> = match take(body, "fields") {
        None => vec![("*".to_string(), 1.0)],
        Some(Value::Array(f)) => f
            .iter()
            .map(|f| text_of(f).map(|f| field_boost(&f)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| malformed(KIND, "[fields] must be strings"))?,
        Some(_) => return Err(malformed(KIND, "[fields] must be an array of strings")),
    };
    let names: Vec<String> = patterns.iter().map(|(p, _)| p.clone()).collect();
    let lenient = lenient_of(body, KIND, &names)?;
    let mut fields: Vec<(FieldId, f32)> = Vec::new();
    for (pattern, boost) in patterns {
        for name in field_names(schema, &pattern) {
            if let Some(id) = field_id(schema, &name).filter(|id| !fields.iter().any(|(f, _)| f == id)) {
                fields.push((id, boost));
            }
        }
    }
    let analyzed = DefaultFields { schema, fields: Vec::new(), analyzer, quote_analyzer: None, lenient };
    let query = parse_simple_query(&text, &analyzed, &fields, &options).map_err(|e| shard_query_error(&e))?;
    Ok(match (query, msm) {
        (Query::Bool(mut b), Some(spec)) if !b.should.is_empty() => {
            b.minimum_should_match = min_should_match(&spec, b.should.len())?;
            Query::Bool(b)
        }
        (query, _) => query,
    })
}

/// Elasticsearch's `minimum_should_match` of `count` optional clauses:
/// `3`, `-1`, `75%`, `-25%`, or `2<75%` (all of them up to 2, else 75%).
pub fn min_should_match(spec: &str, count: usize) -> ApiResult<u32> {
    let bad = || ApiError::illegal_argument(format!("bad minimum_should_match [{spec}]"));
    let spec = spec.trim();
    if let Some((limit, rest)) = spec.split_once('<') {
        let limit: usize = limit.trim().parse().map_err(|_| bad())?;
        return if count <= limit { Ok(count as u32) } else { min_should_match(rest, count) };
    }
    let n = count as i64;
    let value = match spec.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.parse().map_err(|_| bad())?;
            let part = (n as f64 * p.abs() / 100.0).floor() as i64;
            if p < 0.0 {
                n - part
            } else {
                part
            }
        }
        None => {
            let v: i64 = spec.parse().map_err(|_| bad())?;
            if v < 0 {
                n + v
            } else {
                v
            }
        }
    };
    Ok(value.clamp(0, n) as u32)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Schema {
        Schema::from_mapping(r#"{"properties":{"title":{"type":"text"},"body":{"type":"text","analyzer":"english"},"tag":{"type":"keyword"},"year":{"type":"long"}}}"#).unwrap()
    }

    fn q(v: Value) -> ApiResult<Query> {
        query(&v, &schema())
    }

    #[test]
    fn cross_fields_blends_the_fields_that_analyze_alike_and_joins_the_groups_in_a_dis_max() {
        let s = Schema::from_mapping(
            r#"{"properties":{"a":{"type":"text"},"b":{"type":"text"},"c":{"type":"text","analyzer":"english"},"k":{"type":"keyword"}}}"#,
        )
        .unwrap();
        let id = |n: &str| s.field_id(n).unwrap();
        let body = json!({"multi_match": {"query": "Running", "fields": ["a", "b^2", "c", "k"],
                                          "type": "cross_fields", "tie_breaker": 0.5}});
        let blended = Query::CrossFields {
            fields: vec![(id("a"), 1.0), (id("b"), 2.0)],
            term: b"running".to_vec(),
            tie_breaker: 0.5,
        };
        let groups = vec![blended, Query::term(id("c"), "run"), Query::term(id("k"), "Running")];
        assert_eq!(query(&body, &s).unwrap(), Query::DisMax { clauses: groups, tie_breaker: 0.5 });
        // Two terms, `and`: each term must be in one of the group's fields.
        let body = json!({"multi_match": {"query": "x y", "fields": ["a", "b"], "type": "cross_fields", "operator": "and"}});
        let Query::Bool(b) = query(&body, &s).unwrap() else { panic!() };
        assert_eq!(b.must.len(), 2);
        assert!(matches!(&b.must[0], Query::CrossFields { term, .. } if term == b"x"));
        let fuzzy = json!({"multi_match": {"query": "x", "fields": ["a", "b"], "type": "cross_fields", "fuzziness": 1}});
        assert!(query(&fuzzy, &s)
            .unwrap_err()
            .to_string()
            .contains("Fuzziness not allowed for type [cross_fields]"));
    }

    #[test]
    fn match_is_a_boolean_of_the_analyzed_terms() {
        let s = schema();
        let title = s.field_id("title").unwrap();
        assert_eq!(q(json!({"match": {"title": "Quick"}})).unwrap(), Query::term(title, "quick"));
        let Query::Bool(b) =
            q(json!({"match": {"title": {"query": "quick brown fox", "minimum_should_match": "75%"}}}))
                .unwrap()
        else {
            panic!()
        };
        assert_eq!((b.should.len(), b.minimum_should_match), (3, 2));
        let Query::Bool(b) =
            q(json!({"match": {"title": {"query": "quick brown", "operator": "and"}}})).unwrap()
        else {
            panic!()
        };
        assert_eq!(b.must.len(), 2);
        assert_eq!(q(json!({"match": {"nope": "x"}})).unwrap(), Query::MatchNone, "unmapped field");
        assert_eq!(
            q(json!({"match": {"year": 1999}})).unwrap(),
            Query::term(s.field_id("year").unwrap(), "1999")
        );
    }

    #[test]
    fn keyword_terms_score_one_as_opensearch_scores_them() {
        let s = schema();
        let tag = s.field_id("tag").unwrap();
        let parsed =
            q(json!({"bool": {"should": [{"term": {"tag": "a"}}, {"match": {"title": "fox"}}]}})).unwrap();
        let Query::Bool(b) = scored_as_opensearch(parsed, &s) else { panic!() };
        assert_eq!(b.should[0], Query::Constant(Box::new(Query::term(tag, "a"))));
        assert!(matches!(b.should[1], Query::Term(_)), "a text field's term keeps BM25");
    }

    #[test]
    fn the_other_queries() {
        let s = schema();
        let (title, tag) = (s.field_id("title").unwrap(), s.field_id("tag").unwrap());
        let Query::Phrase(p) =
            q(json!({"match_phrase": {"title": {"query": "quick brown", "slop": 2}}})).unwrap()
        else {
            panic!()
        };
        assert_eq!((p.slop, p.terms.len()), (2, 2));
        assert_eq!(
            q(json!({"term": {"tag": {"value": "A B", "boost": 2}}})).unwrap(),
            Query::boosted(Query::term(tag, "A B"), 2.0)
        );
        assert!(matches!(q(json!({"terms": {"tag": ["a", "b"]}})).unwrap(), Query::Constant(_)));
        let Query::DisMax { clauses, tie_breaker } =
            q(json!({"multi_match": {"query": "fox", "fields": ["title^2", "body"], "tie_breaker": 0.3}}))
                .unwrap()
        else {
            panic!()
        };
        assert_eq!((clauses.len(), tie_breaker), (2, 0.3));
        assert_eq!(clauses[0], Query::boosted(Query::term(title, "fox"), 2.0));
        let Query::Bool(b) = q(json!({"bool": {"must": {"match": {"title": "fox"}}, "filter": [{"term": {"tag": "a"}}], "must_not": [{"match_all": {}}]}})).unwrap() else { panic!() };
        assert_eq!((b.must.len(), b.filter.len(), b.must_not.len()), (1, 1, 1));
        let Query::Bool(b) =
            q(json!({"query_string": {"query": "fox AND dog", "default_field": "title"}})).unwrap()
        else {
            panic!()
        };
        assert_eq!(b.must, vec![Query::term(title, "fox"), Query::term(title, "dog")]);
    }

    #[test]
    fn a_wildcard_pattern_is_normalized_run_by_run() {
        let upper = |t: &str| t.to_uppercase();
        assert_eq!(normalized_wildcard("ab*c?d\\*e\\", upper), "AB*C?D\\*E\\");
        assert_eq!(normalized_wildcard("", upper), "");
    }

    #[test]
    fn multi_term_queries_take_the_value_as_written() {
        let s = schema();
        let [title, tag] = ["title", "tag"].map(|f| s.field_id(f).unwrap());
        let multi = |field, pattern| Query::MultiTerm(MultiTermQuery { field, pattern });
        let prefix = TermPattern::Prefix { prefix: "Qu".into(), case_insensitive: true };
        assert_eq!(
            q(json!({"prefix": {"title": {"value": "Qu", "case_insensitive": true}}})).unwrap(),
            multi(title, prefix)
        );
        let wildcard = TermPattern::Wildcard { pattern: "A?c*".into(), case_insensitive: false };
        assert_eq!(q(json!({"wildcard": {"tag": {"wildcard": "A?c*"}}})).unwrap(), multi(tag, wildcard));
        let fuzzy = |max_edits, prefix_length| {
            TermPattern::Fuzzy(Fuzzy { max_edits, prefix_length, ..Fuzzy::auto("Quikc") })
        };
        assert_eq!(q(json!({"fuzzy": {"title": "Quikc"}})).unwrap(), multi(title, fuzzy(1, 0)));
        let long_form =
            json!({"fuzzy": {"title": {"value": "Quikc", "fuzziness": "AUTO:2,4", "prefix_length": 1}}});
        assert_eq!(q(long_form).unwrap(), multi(title, fuzzy(2, 1)));
        // `match` analyzes first, then each word is fuzzy by its own length.
        let Query::Bool(b) =
            q(json!({"match": {"title": {"query": "Quikc ox", "fuzziness": "AUTO"}}})).unwrap()
        else {
            panic!()
        };
        let words = |w: &str, max_edits| TermPattern::Fuzzy(Fuzzy { max_edits, ..Fuzzy::auto(w) });
        assert_eq!(b.should, vec![multi(title, words("quikc", 1)), multi(title, words("ox", 0))]);
    }

    #[test]
    fn errors_name_the_query_and_the_key() {
        for (v, want) in [
            (json!({"matchh": {}}), "unknown query [matchh]"),
            (json!({"match": {"title": "x"}, "term": {}}), "expected [END_OBJECT]"),
            (json!({"function_score": {"query": {}}}), "[function_score] queries are not supported yet"),
            (json!({"regexp": {"title": "a{2"}}), "bad `{n,m}` repeat"),
            (json!({"regexp": {"title": "a{3,1}"}}), "cannot be used"),
            (json!({"boosting": {"positive": {"match_all": {}}}}), "requires 'negative' query"),
            (
                json!({"boosting": {"positive": {"match_all": {}}, "negative": {"match_all": {}}, "negative_boost": -1}}),
                "'negative_boost' to be set to be a positive value",
            ),
            (json!({"prefix": {"year": "19"}}), "Can only use prefix queries on keyword and text fields"),
            (json!({"fuzzy": {"title": {"value": "x", "fuzziness": "lots"}}}), "failed to parse [fuzziness]"),
            (
                json!({"fuzzy": {"title": {"value": "x", "max_expansions": 0}}}),
                "[max_expansions] must be positive",
            ),
            (
                json!({"wildcard": {"title": {"value": "x*", "rewrite": "scoring_boolean"}}}),
                "[rewrite] [scoring_boolean] is not supported yet",
            ),
            (json!({"match": {"title": {"query": "x", "bogus": 1}}}), "does not support [bogus]"),
            (json!({"bool": {"must": [{"nope": {}}]}}), "unknown query [nope]"),
            (json!("text"), "must be an object"),
        ] {
            let err = q(v.clone()).unwrap_err();
            assert!(err.reason.contains(want), "{v}: {}", err.reason);
            assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST);
        }
    }

    #[test]
    fn minimum_should_match_forms() {
        for (spec, count, want) in [
            ("2", 3, 2),
            ("-1", 3, 2),
            ("75%", 3, 2),
            ("-25%", 4, 3),
            ("2<75%", 2, 2),
            ("2<75%", 8, 6),
            ("9", 3, 3),
        ] {
            assert_eq!(min_should_match(spec, count).unwrap(), want, "{spec} of {count}");
        }
        assert!(min_should_match("lots", 3).is_err());
    }

    mod properties {
        use proptest::prelude::*;
        use serde_json::{json, Value};

        use super::*;

        const KEYS: [&str; 16] = [
            "match",
            "term",
            "terms",
            "bool",
            "must",
            "should",
            "filter",
            "must_not",
            "query",
            "boost",
            "title",
            "tag",
            "year",
            "dis_max",
            "queries",
            "match_phrase",
        ];

        /// Any JSON, with keys mostly drawn from the DSL's own words so that it gets deep.
        fn any_json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i32>().prop_map(|n| json!(n)),
                any::<f32>().prop_map(|f| json!(f)),
                "[a-z %*~\"()^:+-]{0,12}".prop_map(Value::String),
            ];
            leaf.prop_recursive(5, 48, 4, |inner| {
                let key = prop_oneof![
                    proptest::sample::select(KEYS.to_vec()).prop_map(String::from),
                    "[a-z_]{1,8}"
                ];
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    proptest::collection::vec((key, inner), 0..3)
                        .prop_map(|kv| Value::Object(kv.into_iter().collect())),
                ]
            })
        }

        /// Well-formed queries over the test schema's fields.
        fn valid_query() -> impl Strategy<Value = Value> {
            let word = "[a-z]{1,6}";
            let field = proptest::sample::select(vec!["title", "body", "tag", "missing"]);
            let leaf = prop_oneof![
                (field.clone(), word).prop_map(|(f, w)| json!({"match": {f: w}})),
                (field.clone(), word, word, 0u32..3).prop_map(|(f, a, b, slop)| json!({"match_phrase": {f: {"query": format!("{a} {b}"), "slop": slop}}})),
                (field.clone(), word).prop_map(|(f, w)| json!({"term": {f: {"value": w, "boost": 2.0}}})),
                (field.clone(), proptest::collection::vec(word, 1..4)).prop_map(|(f, ws)| json!({"terms": {f: ws}})),
                (word, word).prop_map(|(a, b)| json!({"query_string": {"query": format!("{a} AND title:{b}")}})),
                Just(json!({"match_all": {}})),
            ];
            leaf.prop_recursive(3, 24, 3, |inner| {
                prop_oneof![
                    (proptest::collection::vec(inner.clone(), 0..3), proptest::collection::vec(inner.clone(), 0..3))
                        .prop_map(|(must, should)| json!({"bool": {"must": must, "should": should, "minimum_should_match": 0}})),
                    proptest::collection::vec(inner.clone(), 1..3).prop_map(|qs| json!({"dis_max": {"queries": qs, "tie_breaker": 0.5}})),
                    inner.prop_map(|q| json!({"constant_score": {"filter": q, "boost": 1.5}})),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            #[test]
            fn any_json_is_a_query_or_a_400_never_a_panic(v in any_json()) {
                if let Err(e) = query(&v, &schema()) {
                    prop_assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST, "{}", e.reason);
                    prop_assert!(!e.reason.is_empty());
                }
            }

            #[test]
            fn well_formed_queries_parse(v in valid_query()) {
                let parsed = query(&v, &schema());
                prop_assert!(parsed.is_ok(), "{v}: {:?}", parsed.err().map(|e| e.reason));
            }
        }
    }
}
