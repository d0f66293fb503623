//! The `aggs` of a search request, read into the engine's aggregations
//! (`needle_engine::Aggregation`) against an index's mapping.
//!
//! Supported: `min`, `max`, `sum`, `avg`, `stats`, `value_count`,
//! `histogram`, `date_histogram` (with a `time_zone` and an `offset`; both
//! histograms with `extended_bounds` and `hard_bounds`), `range` and
//! `date_range` (date math in the bounds), `terms` (on keyword, numeric,
//! date and boolean fields; `include`/`exclude`), `filter`, `filters`, `cardinality`, `top_hits`
//! (its body read as a search's, see `routes/search.rs`), each bucketing
//! with its own `aggs`; on a date field, `format` shows the dates (else the
//! field's mapping's), on a numeric field the numbers (a `DecimalFormat`
//! pattern, see needle-engine's `decimal_format.rs`); `missing` on every one that reads a field (what a
//! document without a value counts as). Others, and options not listed here, are refused
//! with an error that names them.

use needle_engine::{
    AggField, AggKind, Aggregation, CalendarUnit, DateFormat, DateInterval, DateReading, DecimalFormat,
    FieldKind, FiltersShape, Metric, Missing, RangeSpec, Schema, TermsFilter, TermsOrder, TermsPattern,
    ValueFormat, Zone, DEFAULT_PRECISION_THRESHOLD,
};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::routes::search::TopHitsSpec;

/// The aggregations of an `aggs` object; each `top_hits` is tagged with its
/// place in `tops`, where what shows its hits is kept.
pub fn parse(v: &Value, schema: &Schema, tops: &mut Vec<TopHitsSpec>) -> ApiResult<Vec<Aggregation>> {
    let Value::Object(m) = v else { return Err(ApiError::parsing("[aggs] must be an object")) };
    m.iter().map(|(name, spec)| one(name, spec, schema, tops)).collect()
}

fn one(name: &str, spec: &Value, schema: &Schema, tops: &mut Vec<TopHitsSpec>) -> ApiResult<Aggregation> {
    let Value::Object(spec) = spec else {
        return Err(ApiError::parsing(format!("Expected [START_OBJECT] under aggregation [{name}]")));
    };
    let mut kind = None;
    let (mut format, mut missing) = (None, None);
    let mut subs = Vec::new();
    for (key, body) in spec {
        match key.as_str() {
            "aggs" | "aggregations" => subs = parse(body, schema, tops)?,
            "meta" => {}
            "top_hits" if kind.is_none() => {
                let (request, spec) = crate::routes::search::top_hits(name, body, schema)?;
                tops.push(spec);
                kind = Some(AggKind::TopHits { request: Box::new(request), tag: tops.len() - 1 });
            }
            other if kind.is_none() => {
                let (k, f, m) = agg_kind(name, other, body, schema)?;
                (kind, format, missing) = (Some(k), f, m);
            }
            other => {
                return Err(ApiError::parsing(format!(
                    "Found two aggregation type definitions in [{name}]: [{other}] and another"
                )))
            }
        }
    }
    let kind =
        kind.ok_or_else(|| ApiError::parsing(format!("Missing definition for aggregation [{name}]")))?;
    let leaf = match kind {
        AggKind::Metric(..) => Some("metric"),
        AggKind::Cardinality { .. } => Some("cardinality"),
        AggKind::TopHits { .. } => Some("top_hits"),
        _ => None,
    };
    if let Some(leaf) = leaf.filter(|_| !subs.is_empty()) {
        return Err(ApiError::parsing(format!(
            "Aggregator [{name}] of type [{leaf}] cannot accept sub-aggregations"
        )));
    }
    Ok(Aggregation { name: name.to_string(), kind, subs, format, missing })
}

/// An aggregation's options, each taken once; what is left over is an error.
struct Options<'a> {
    agg: &'a str,
    kind: &'a str,
    m: Map<String, Value>,
}

impl Options<'_> {
    fn take(&mut self, key: &str) -> Option<Value> {
        self.m.remove(key)
    }

    fn number(&mut self, key: &str) -> ApiResult<Option<f64>> {
        match self.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).map(Some).ok_or_else(|| {
                    ApiError::parsing(format!(
                        "[{}] [{key}] of [{}] must be a number, not {v}",
                        self.kind, self.agg
                    ))
                })
            }
        }
    }

    fn count(&mut self, key: &str) -> ApiResult<Option<u64>> {
        Ok(self.number(key)?.map(|f| f.max(0.0) as u64))
    }

    fn string(&mut self, key: &str) -> ApiResult<Option<String>> {
        match self.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(ApiError::parsing(format!("[{}] [{key}] must be a string, not {v}", self.kind))),
        }
    }

    fn finish(self) -> ApiResult<()> {
        match self.m.keys().next() {
            None => Ok(()),
            Some(key) => Err(ApiError::parsing(format!(
                "[{}] unknown field [{key}] (or an option Needle does not support yet) in aggregation [{}]",
                self.kind, self.agg
            ))),
        }
    }
}

/// The aggregation types Needle answers.
const KINDS: [&str; 12] = [
    "min",
    "max",
    "sum",
    "avg",
    "stats",
    "value_count",
    "cardinality",
    "histogram",
    "date_histogram",
    "range",
    "date_range",
    "terms",
];

/// An aggregation's kind, how it shows the dates of its field, and what it
/// counts a document without a value as.
fn agg_kind(
    name: &str,
    kind: &str,
    body: &Value,
    schema: &Schema,
) -> ApiResult<(AggKind, Option<ValueFormat>, Option<Missing>)> {
    match kind {
        "filter" => {
            let query = crate::dsl::query(body, schema)?;
            let filters = vec![(name.to_string(), query)];
            return Ok((AggKind::Filters { filters, shape: FiltersShape::One, other: None }, None, None));
        }
        "filters" => return Ok((filters_kind(name, body, schema)?, None, None)),
        _ => {}
    }
    if !KINDS.contains(&kind) {
        return Err(ApiError::parsing(format!(
            "Unknown aggregation type [{kind}] (or not supported yet by Needle)"
        )));
    }
    let Value::Object(m) = body else {
        return Err(ApiError::parsing(format!("[{kind}] of aggregation [{name}] must be an object")));
    };
    let mut o = Options { agg: name, kind, m: m.clone() };
    let field_name = o
        .string("field")?
        .ok_or_else(|| ApiError::parsing(format!("Required [field] for aggregation [{name}]")))?;
    let given_missing = o.take("missing").filter(|v| !v.is_null());
    let mut field = agg_field(&field_name, kind, schema)?;
    let keyword_kinds = matches!(kind, "terms" | "cardinality" | "value_count");
    if field.id == needle_core::FieldId::MAX
        && keyword_kinds
        && given_missing.as_ref().is_some_and(|v| !v.is_number())
    {
        // A field the index does not map, given a missing text: every document gets it, as a keyword.
        field.kind = FieldKind::Keyword;
    }
    let format = shown_format(&mut o, field, schema)?;
    let date_format = match &format {
        Some(ValueFormat::Date(f)) => Some(f.clone()),
        _ => None,
    };
    let missing =
        given_missing.map(|v| missing_value(name, kind, &v, field, date_format.as_ref())).transpose()?;
    let metric = |m| Ok(AggKind::Metric(m, field));
    let out = match kind {
        "min" => metric(Metric::Min),
        "max" => metric(Metric::Max),
        "sum" => metric(Metric::Sum),
        "avg" => metric(Metric::Avg),
        "stats" => metric(Metric::Stats),
        "value_count" => metric(Metric::ValueCount),
        "cardinality" => {
            let precision_threshold =
                o.count("precision_threshold")?.map_or(DEFAULT_PRECISION_THRESHOLD, |n| n as usize);
            o.take("execution_hint");
            Ok(AggKind::Cardinality { field, precision_threshold })
        }
        "histogram" => {
            let interval = o.number("interval")?.filter(|i| *i > 0.0).ok_or_else(|| {
                ApiError::illegal_argument(format!(
                    "[interval] must be >0 for histogram aggregation [{name}]"
                ))
            })?;
            let offset = o.number("offset")?.unwrap_or(0.0);
            let min_doc_count = o.count("min_doc_count")?.unwrap_or(0);
            let number = |v: Option<&Value>| v.and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok()));
            let extended_bounds = o.take("extended_bounds").map(|b| bounds(name, &b, number)).transpose()?;
            let hard_bounds = o.take("hard_bounds").map(|b| hard_bounds(name, &b, number)).transpose()?;
            let hard_bounds =
                hard_bounds.map(|(min, max)| (min.unwrap_or(f64::MIN), max.unwrap_or(f64::MAX)));
            check_inside(extended_bounds, hard_bounds)?;
            Ok(AggKind::Histogram { field, interval, offset, min_doc_count, extended_bounds, hard_bounds })
        }
        "date_histogram" => {
            let zone = match o.string("time_zone")? {
                None => Zone::UTC,
                Some(text) => Zone::parse(&text).ok_or_else(|| {
                    ApiError::illegal_argument(format!("[date_histogram] unknown time zone [{text}]"))
                })?,
            };
            let interval = date_interval(name, &mut o)?;
            let offset = match o.take("offset") {
                None | Some(Value::Null) => 0,
                Some(v) => date_offset(&v).ok_or_else(|| {
                    ApiError::illegal_argument(format!(
                        "[date_histogram] [offset] of [{name}] must be a time value like +6h or -1d, not {v}"
                    ))
                })?,
            };
            let min_doc_count = o.count("min_doc_count")?.unwrap_or(0);
            let read = date_format.clone().unwrap_or_else(DateFormat::default_format);
            let dates = DateReading { format: read, zone, now_ms: needle_engine::now_ms() };
            let date = |v: Option<&Value>| match v? {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => dates.parse(s, false),
                _ => None,
            };
            let extended_bounds = o.take("extended_bounds").map(|b| bounds(name, &b, date)).transpose()?;
            let hard_bounds = o.take("hard_bounds").map(|b| hard_bounds(name, &b, date)).transpose()?;
            let hard_bounds =
                hard_bounds.map(|(min, max)| (min.unwrap_or(i64::MIN), max.unwrap_or(i64::MAX)));
            check_inside(extended_bounds, hard_bounds)?;
            let kind = AggKind::DateHistogram {
                field,
                interval,
                offset,
                min_doc_count,
                zone,
                extended_bounds,
                hard_bounds,
            };
            Ok(kind)
        }
        "range" | "date_range" => {
            let Some(Value::Array(items)) = o.take("ranges") else {
                return Err(ApiError::parsing(format!("[{kind}] [ranges] of [{name}] must be an array")));
            };
            let zone = match o.string("time_zone")? {
                None => Zone::UTC,
                Some(text) => Zone::parse(&text).ok_or_else(|| {
                    ApiError::illegal_argument(format!("[{kind}] unknown time zone [{text}]"))
                })?,
            };
            let read = date_format.clone().unwrap_or_else(DateFormat::default_format);
            let dates = DateReading { format: read, zone, now_ms: needle_engine::now_ms() };
            let ranges =
                items.iter().map(|r| range_spec(kind, r, field, &dates)).collect::<ApiResult<_>>()?;
            Ok(AggKind::Range { field, ranges })
        }
        "terms" => {
            let size = o.count("size")?.unwrap_or(10) as usize;
            let min_doc_count = o.count("min_doc_count")?.unwrap_or(1);
            let order = terms_order(o.take("order"))?;
            o.take("shard_size");
            let include = o.take("include").map(|v| terms_pattern(name, "include", &v, field)).transpose()?;
            let exclude = o.take("exclude").map(|v| terms_pattern(name, "exclude", &v, field)).transpose()?;
            if matches!(include, Some(TermsPattern::Partition { .. })) && exclude.is_some() {
                return Err(ApiError::illegal_argument(format!(
                    "[terms] [{name}] cannot take an [exclude] with an [include] by partition"
                )));
            }
            let filter = TermsFilter { include, exclude };
            Ok(AggKind::Terms { field, size, min_doc_count, order, filter })
        }
        other => Err(ApiError::parsing(format!(
            "Unknown aggregation type [{other}] (or not supported yet by Needle)"
        ))),
    }?;
    o.finish()?;
    Ok((out, format, missing))
}

/// An aggregation's `missing`, read as a value of its field: a keyword's
/// text (a number or boolean given is read as its text), or a column value
/// (a date in the aggregation's format, else the default one).
fn missing_value(
    name: &str,
    kind: &str,
    v: &Value,
    field: AggField,
    format: Option<&DateFormat>,
) -> ApiResult<Missing> {
    let bad = || {
        ApiError::illegal_argument(format!(
            "[{kind}] [missing] of [{name}] is not a value of a {} field: {v}",
            field.kind.name()
        ))
    };
    match (field.kind, v) {
        (FieldKind::Keyword, Value::String(s)) => Ok(Missing::Term(s.as_bytes().into())),
        (FieldKind::Keyword, Value::Number(_) | Value::Bool(_)) => {
            Ok(Missing::Term(v.to_string().as_bytes().into()))
        }
        (FieldKind::Keyword, _) => Err(bad()),
        (FieldKind::Date, Value::String(s)) => {
            let format = format.cloned().unwrap_or_else(DateFormat::default_format);
            let dates = DateReading { format, zone: Zone::UTC, now_ms: needle_engine::now_ms() };
            dates.parse(s, false).map(Missing::Value).ok_or_else(bad)
        }
        (FieldKind::Date, Value::Number(n)) => n.as_i64().map(Missing::Value).ok_or_else(bad),
        (k, _) => needle_engine::query_value(k, name, v).map(Missing::Value).map_err(|_| bad()),
    }
}

/// A histogram's `extended_bounds`: `min` and `max`, each read by `read`.
fn bounds<T: PartialOrd + Copy>(
    name: &str,
    v: &Value,
    read: impl Fn(Option<&Value>) -> Option<T>,
) -> ApiResult<(T, T)> {
    let bad = || ApiError::parsing(format!("[extended_bounds] of [{name}] takes a [min] and a [max]: {v}"));
    let Value::Object(m) = v else { return Err(bad()) };
    if m.keys().any(|k| k != "min" && k != "max") {
        return Err(bad());
    }
    let (min, max) = (read(m.get("min")).ok_or_else(bad)?, read(m.get("max")).ok_or_else(bad)?);
    match min <= max {
        true => Ok((min, max)),
        false => Err(ApiError::illegal_argument(format!(
            "[extended_bounds.min][{}] cannot be greater than [extended_bounds.max][{}] for histogram aggregation [{name}]",
            v["min"], v["max"]
        ))),
    }
}

/// A `terms` aggregation's `include` or `exclude`: a regular expression
/// (keyword fields), a list of exact values, or (`include` alone) a partition.
fn terms_pattern(name: &str, key: &str, v: &Value, field: AggField) -> ApiResult<TermsPattern> {
    let keyword = field.kind == FieldKind::Keyword;
    let bad = |what: String| ApiError::illegal_argument(format!("[terms] [{key}] of [{name}] {what}"));
    match v {
        Value::String(regexp) if keyword => Ok(TermsPattern::Regexp(regexp.clone())),
        Value::String(_) => Err(bad(format!(
            "cannot be a regular expression: they only apply to keyword fields, and [{}] is a {} field",
            field.id,
            field.kind.name()
        ))),
        Value::Array(items) if keyword => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(|| bad(format!("must list strings, not {i}"))))
            .collect::<ApiResult<_>>()
            .map(TermsPattern::Keywords),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Number(n) => n.as_f64().ok_or_else(|| bad(format!("cannot read {i}"))),
                Value::Bool(b) => Ok(f64::from(u8::from(*b))),
                Value::String(s) => s.parse().map_err(|_| bad(format!("must list numbers, not {i}"))),
                _ => Err(bad(format!("must list numbers, not {i}"))),
            })
            .collect::<ApiResult<_>>()
            .map(TermsPattern::Numbers),
        Value::Object(m) if key == "include" => partition(m).ok_or_else(|| {
            bad(format!(
                "by partition takes an integer [num_partitions] of at least 1 and a [partition] below it, \
                 and nothing else: {v}"
            ))
        }),
        _ => Err(bad(format!("must be a regular expression or a list of values, not {v}"))),
    }
}

/// An `include` by partition: `{"partition": p, "num_partitions": n}`, `0 <= p < n`.
fn partition(m: &serde_json::Map<String, Value>) -> Option<TermsPattern> {
    let read = |key: &str| m.get(key)?.as_u64().and_then(|n| u32::try_from(n).ok());
    let (partition, of) = (read("partition")?, read("num_partitions")?);
    (m.len() == 2 && partition < of && i32::try_from(of).is_ok())
        .then_some(TermsPattern::Partition { partition, of })
}

/// A histogram's `hard_bounds`: `min`, `max` or both, each read by `read`.
fn hard_bounds<T: PartialOrd + Copy>(
    name: &str,
    v: &Value,
    read: impl Fn(Option<&Value>) -> Option<T>,
) -> ApiResult<(Option<T>, Option<T>)> {
    let bad = || ApiError::parsing(format!("[hard_bounds] of [{name}] takes a [min], a [max] or both: {v}"));
    let Value::Object(m) = v else { return Err(bad()) };
    if m.keys().any(|k| k != "min" && k != "max") {
        return Err(bad());
    }
    let side = |key: &str| match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        given => read(given).map(Some).ok_or_else(bad),
    };
    Ok((side("min")?, side("max")?))
}

/// Extended bounds must lie inside hard bounds, as Elasticsearch requires.
fn check_inside<T: PartialOrd + std::fmt::Debug>(
    extended: Option<(T, T)>,
    hard: Option<(T, T)>,
) -> ApiResult<()> {
    match (extended, hard) {
        (Some((lo, hi)), Some((min, max))) if lo < min || hi > max => Err(ApiError::illegal_argument(format!(
            "Extended bounds have to be inside hard bounds, hard bounds: [{min:?}--{max:?}], extended bounds: [{lo:?}--{hi:?}]"
        ))),
        _ => Ok(()),
    }
}

/// A date histogram's `offset`: a time value with an optional sign (`+6h`,
/// `-1d`, `90m`), or milliseconds as a number.
fn date_offset(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => match s.strip_prefix('-') {
            Some(rest) => fixed_ms(rest).map(|ms| -ms),
            None => fixed_ms(s.strip_prefix('+').unwrap_or(s)),
        },
        _ => None,
    }
}

/// How an aggregation shows its field's values: on a date field its
/// `format`, else the field's mapping's (`None`: the default); on a numeric
/// field a `DecimalFormat` pattern; on others no `format`.
fn shown_format(o: &mut Options<'_>, field: AggField, schema: &Schema) -> ApiResult<Option<ValueFormat>> {
    let given = o.string("format")?;
    let mapped =
        || schema.fields.get(usize::from(field.id)).filter(|d| d.format.is_some()).map(|d| d.date_format());
    let bad = |e: needle_core::Error| ApiError::illegal_argument(e.to_string());
    match (field.kind, given) {
        (FieldKind::Date, Some(f)) => DateFormat::new(&f).map(|f| Some(ValueFormat::Date(f))).map_err(bad),
        (FieldKind::Date, None) => Ok(mapped().map(ValueFormat::Date)),
        (FieldKind::Long | FieldKind::Double, Some(f)) if o.kind != "cardinality" => {
            DecimalFormat::new(&f).map(|f| Some(ValueFormat::Decimal(f))).map_err(bad)
        }
        (kind, Some(f)) => Err(ApiError::illegal_argument(format!(
            "[{}] [format] [{f}] on a {} field is not supported by [{}]",
            o.agg,
            kind.name(),
            o.kind
        ))),
        (_, None) => Ok(None),
    }
}

/// `filters`: `{"filters": {"name": query, ...}}` (buckets by name) or `{"filters": [query, ...]}`.
fn filters_kind(name: &str, body: &Value, schema: &Schema) -> ApiResult<AggKind> {
    let Value::Object(m) = body else {
        return Err(ApiError::parsing(format!("[filters] of aggregation [{name}] must be an object")));
    };
    let mut o = Options { agg: name, kind: "filters", m: m.clone() };
    let (filters, shape) = match o.take("filters") {
        Some(Value::Object(named)) => {
            let filters = named
                .iter()
                .map(|(key, q)| Ok((key.clone(), crate::dsl::query(q, schema)?)))
                .collect::<ApiResult<_>>()?;
            (filters, FiltersShape::Keyed)
        }
        Some(Value::Array(list)) => {
            let filters = list
                .iter()
                .enumerate()
                .map(|(i, q)| Ok((i.to_string(), crate::dsl::query(q, schema)?)))
                .collect::<ApiResult<_>>()?;
            (filters, FiltersShape::Listed)
        }
        _ => {
            return Err(ApiError::parsing(format!(
                "[filters] of aggregation [{name}] needs [filters]: an object or a list of queries"
            )))
        }
    };
    // A key asks for the bucket; `other_bucket: false` with one still shows it, as in Elasticsearch.
    let key = o.string("other_bucket_key")?;
    let other = match o.take("other_bucket") {
        None | Some(Value::Null) => key.is_some(),
        Some(Value::Bool(b)) => b || key.is_some(),
        Some(v) => {
            return Err(ApiError::parsing(format!("[filters] [other_bucket] must be true or false, not {v}")))
        }
    };
    o.finish()?;
    let other = other.then(|| key.unwrap_or_else(|| "_other_".to_string()));
    Ok(AggKind::Filters { filters, shape, other })
}

/// The field of an aggregation: numeric, date or boolean. A field the index
/// does not map has no values (as in Elasticsearch: empty results).
fn agg_field(name: &str, kind: &str, schema: &Schema) -> ApiResult<AggField> {
    let Some(id) = schema.field_id(name) else {
        return Ok(AggField { id: needle_core::FieldId::MAX, kind: FieldKind::Long });
    };
    match schema.field(id).kind {
        FieldKind::Text => Err(ApiError::illegal_argument(crate::sort::text_fielddata(name))),
        FieldKind::Keyword if matches!(kind, "terms" | "cardinality" | "value_count") => {
            Ok(AggField { id, kind: FieldKind::Keyword })
        }
        FieldKind::Keyword => Err(ApiError::illegal_argument(format!(
            "Field [{name}] of type [keyword] is not supported for aggregation [{kind}]"
        ))),
        FieldKind::Binary if kind == "terms" || kind == "value_count" => Err(ApiError::illegal_argument(
            format!("[{kind}] on binary field [{name}] is not supported yet by Needle"),
        )),
        FieldKind::Binary => Err(ApiError::illegal_argument(format!(
            "Field [{name}] of type [binary] is not supported for aggregation [{kind}]"
        ))),
        k => Ok(AggField { id, kind: k }),
    }
}

fn date_interval(name: &str, o: &mut Options<'_>) -> ApiResult<DateInterval> {
    let calendar = o.string("calendar_interval")?;
    let fixed = o.string("fixed_interval")?;
    let legacy = o.string("interval")?;
    match (calendar, fixed, legacy) {
        (Some(c), None, None) => calendar_unit(&c).map(DateInterval::Calendar).ok_or_else(|| {
            ApiError::illegal_argument(format!(
                "The supplied interval [{c}] could not be parsed as a calendar interval."
            ))
        }),
        (None, Some(f), None) => fixed_ms(&f).map(DateInterval::Fixed).ok_or_else(|| {
            ApiError::illegal_argument(format!(
                "failed to parse setting [date_histogram.fixedInterval] with value [{f}] as a time value"
            ))
        }),
        (None, None, Some(i)) => calendar_unit(&i)
            .map(DateInterval::Calendar)
            .or_else(|| fixed_ms(&i).map(DateInterval::Fixed))
            .ok_or_else(|| ApiError::illegal_argument(format!("[interval] [{i}] is not an interval"))),
        (None, None, None) => Err(ApiError::illegal_argument(format!(
            "Invalid interval specified, must be non-null and non-empty in date_histogram [{name}]"
        ))),
        _ => Err(ApiError::illegal_argument(
            "Cannot use more than one of [calendar_interval], [fixed_interval], [interval]",
        )),
    }
}

fn calendar_unit(s: &str) -> Option<CalendarUnit> {
    Some(match s {
        "1m" | "minute" => CalendarUnit::Minute,
        "1h" | "hour" => CalendarUnit::Hour,
        "1d" | "day" => CalendarUnit::Day,
        "1w" | "week" => CalendarUnit::Week,
        "1M" | "month" => CalendarUnit::Month,
        "1q" | "quarter" => CalendarUnit::Quarter,
        "1y" | "year" => CalendarUnit::Year,
        _ => return None,
    })
}

/// `90m`, `12h`, `30d`, `10s`, `500ms` in milliseconds.
fn fixed_ms(s: &str) -> Option<i64> {
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = s.split_at(split);
    let n: i64 = n.parse().ok().filter(|&n| n > 0)?;
    let ms = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(ms)
}

fn range_spec(kind: &str, v: &Value, field: AggField, dates: &DateReading) -> ApiResult<RangeSpec> {
    let Value::Object(m) = v else {
        return Err(ApiError::parsing(format!("[{kind}] each range must be an object")));
    };
    let bound = |key: &str| -> ApiResult<Option<f64>> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) if field.kind == FieldKind::Date => dates
                .parse(s, false)
                .map(|ms| Some(ms as f64))
                .ok_or_else(|| ApiError::illegal_argument(format!("failed to parse date [{s}] in [{kind}]"))),
            Some(Value::String(s)) => s
                .parse()
                .map(Some)
                .map_err(|_| ApiError::parsing(format!("[{kind}] [{key}] must be a number, not \"{s}\""))),
            Some(other) => Err(ApiError::parsing(format!("[{kind}] [{key}] must be a number, not {other}"))),
        }
    };
    if let Some(key) = m.keys().find(|k| !["from", "to", "key"].contains(&k.as_str())) {
        return Err(ApiError::parsing(format!("[{kind}] unknown field [{key}] in a range")));
    }
    let key = m.get("key").and_then(Value::as_str).map(str::to_string);
    Ok(RangeSpec { key, from: bound("from")?, to: bound("to")? })
}

fn terms_order(v: Option<Value>) -> ApiResult<TermsOrder> {
    let Some(v) = v else { return Ok(TermsOrder::CountDesc) };
    let Value::Object(m) = &v else {
        return Err(ApiError::parsing(format!("[terms] [order] must be an object, not {v}")));
    };
    match m.iter().next().map(|(k, o)| (k.as_str(), o.as_str())) {
        Some(("_count", Some("desc"))) if m.len() == 1 => Ok(TermsOrder::CountDesc),
        Some(("_count", Some("asc"))) if m.len() == 1 => Ok(TermsOrder::CountAsc),
        Some(("_key", Some("asc"))) if m.len() == 1 => Ok(TermsOrder::KeyAsc),
        Some(("_key", Some("desc"))) if m.len() == 1 => Ok(TermsOrder::KeyDesc),
        _ => Err(ApiError::illegal_argument(format!(
            "[terms] order {v} is not supported yet by Needle (one of _count or _key, asc or desc)"
        ))),
    }
}
