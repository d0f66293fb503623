//! `GET|POST /_analyze` and `/{index}/_analyze`: the tokens an analyzer
//! makes of a text, as Elasticsearch shows them (term, offsets in UTF-16
//! code units as Java counts them, the tokenizer's type, position). The
//! analyzer is the one named (the index's own, or `standard`, `english`,
//! `snowball`, `keyword`), a field's of the index (a text field's own, the
//! whole value for a keyword field, the index's default for a field not
//! mapped), or the index's default (`standard` unless its settings say). Several texts
//! continue one another: positions after the last one's (a text field's
//! gap of 100 between them), offsets one past the last text's length.
//! `explain` shows the analyzer part by part (see `described`), each stage
//! the same analyzer run through its first filters only.

use axum::extract::{Path, State};
use axum::response::Response;
use needle_analysis::{Analyzer, AnalyzerKind};
use needle_engine::index_analyzers::IndexAnalysis;
use needle_engine::{FieldKind, Schema};
use serde_json::{json, Value};

use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::write::validation;
use crate::server::{blocking, Shared};

/// Elasticsearch's position gap between the values of a text field.
const TEXT_FIELD_GAP: u32 = 100;

/// Elasticsearch's built-in analyzers that Needle has not yet: asked for,
/// they are refused as not supported yet, where any other name is not found.
const NOT_YET: [&str; 2] = ["pattern", "fingerprint"];

/// `GET|POST /_analyze`.
pub async fn analyze(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || run(&app, None, &call)).await
}

/// `GET|POST /{index}/_analyze`.
pub async fn analyze_in(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || run(&app, Some(&index), &call)).await
}

pub(crate) fn run(app: &Shared, index: Option<&str>, call: &Call) -> ApiResult<Response> {
    call.params.finish(&call.path)?;
    let Some(body) = call.json()? else {
        return Err(ApiError::bad_request("parse_exception", "request body or source parameter is required"));
    };
    let request = Request::read(body)?;
    let schema = index.map(|i| app.catalog.get_one(i)).transpose()?.map(|h| h.index.schema());
    let (analyzer, gap) = choose(&request, schema.as_deref())?;
    let analyzer = analyzer.get();
    if !request.explain {
        let all = analyzer.stages().1;
        return Ok(respond::ok(&json!({"tokens": tokens(analyzer, all, &request.texts, gap, None)})));
    }
    let detail = match described(&request, schema.as_deref()) {
        Described::BuiltIn(name) => {
            let shown = Shown {
                keyword: analyzer.marks_keywords(analyzer.stages().1),
                only: request.attributes.as_deref(),
            };
            let all = analyzer.stages().1;
            json!({"custom_analyzer": false,
                   "analyzer": {"name": name, "tokens": tokens(analyzer, all, &request.texts, gap, Some(&shown))}})
        }
        Described::Custom { char_filters, tokenizer, filters } => {
            // Explained, a chain made for the request has no gap between its texts (Elasticsearch's quirk).
            let made_here =
                request.tokenizer.is_some() || request.filter.is_some() || request.char_filter.is_some();
            let gap = if made_here { 0 } else { gap };
            let stage = |through: usize| {
                let shown =
                    Shown { keyword: analyzer.marks_keywords(through), only: request.attributes.as_deref() };
                tokens(analyzer, through, &request.texts, gap, Some(&shown))
            };
            let charfilters: Vec<Value> = (char_filters.iter().enumerate())
                .map(|(i, name)| {
                    let texts: Vec<String> =
                        request.texts.iter().map(|t| analyzer.char_filtered(i + 1, t)).collect();
                    json!({"name": name, "filtered_text": texts})
                })
                .collect();
            let tokenfilters: Vec<Value> = (filters.iter().enumerate())
                .map(|(i, name)| json!({"name": name, "tokens": stage(i + 1)}))
                .collect();
            json!({"custom_analyzer": true, "charfilters": charfilters,
                   "tokenizer": {"name": tokenizer, "tokens": stage(0)}, "tokenfilters": tokenfilters})
        }
    };
    Ok(respond::ok(&json!({"detail": detail})))
}

/// How `explain` names what analyzed the text: a built-in analyzer by its
/// name, a custom one (an index's, a normalizer, one made for the request)
/// by the names of its parts, `__anonymous__TYPE` for one defined in place.
enum Described {
    BuiltIn(String),
    Custom { char_filters: Vec<String>, tokenizer: String, filters: Vec<String> },
}

/// The names of the parts a `filter` or `char_filter` list (or a `tokenizer`) gives.
fn part_names(v: Option<&Value>) -> Vec<String> {
    let one = |item: &Value| match item {
        Value::Object(p) => {
            format!("__anonymous__{}", p.get("type").and_then(Value::as_str).unwrap_or_default())
        }
        named => named.as_str().unwrap_or_default().to_string(),
    };
    match v {
        Some(Value::Array(items)) => items.iter().map(one).collect(),
        Some(item) => vec![one(item)],
        None => Vec::new(),
    }
}

/// A normalizer's parts: its char filters, the keyword tokenizer, its filters.
fn normalizer_parts(name: &str, schema: Option<&Schema>) -> Described {
    let def = schema.and_then(|s| s.analysis.normalizer.get(name));
    Described::Custom {
        char_filters: part_names(def.and_then(|d| d.get("char_filter"))),
        tokenizer: "keyword".into(),
        filters: match def {
            Some(d) => part_names(d.get("filter")),
            None => vec![name.to_string()],
        },
    }
}

/// The analyzer named `name`: an index's custom one by its parts, any other by its name.
fn analyzer_parts(name: &str, schema: Option<&Schema>) -> Described {
    let def = schema.and_then(|s| s.analysis.analyzer.get(name));
    match def {
        Some(d) if d.get("type").and_then(Value::as_str).unwrap_or("custom") == "custom" => {
            Described::Custom {
                char_filters: part_names(d.get("char_filter")),
                tokenizer: part_names(d.get("tokenizer")).pop().unwrap_or_default(),
                filters: part_names(d.get("filter")),
            }
        }
        _ => Described::BuiltIn(name.to_string()),
    }
}

/// How `explain` names what [`choose`] chose for `r`.
fn described(r: &Request, schema: Option<&Schema>) -> Described {
    if let Some(name) = &r.normalizer {
        return normalizer_parts(name, schema);
    }
    if r.tokenizer.is_some() || r.filter.is_some() || r.char_filter.is_some() {
        return Described::Custom {
            char_filters: part_names(r.char_filter.as_ref()),
            tokenizer: part_names(r.tokenizer.as_ref()).pop().unwrap_or_else(|| "keyword".into()),
            filters: part_names(r.filter.as_ref()),
        };
    }
    if let Some(name) = &r.analyzer {
        return analyzer_parts(name, schema);
    }
    let field = r.field.as_ref().and_then(|f| Some(schema?.field(schema?.field_id(f)?)));
    match field {
        Some(def) if def.kind == FieldKind::Keyword => match &def.normalizer {
            Some(n) => normalizer_parts(n, schema),
            None => Described::BuiltIn("keyword".into()),
        },
        Some(def) => analyzer_parts(def.analyzer.as_deref().unwrap_or("default"), schema),
        None if schema.is_some() => analyzer_parts("default", schema),
        None => Described::BuiltIn("standard".into()),
    }
}

/// The attributes `explain` shows of each token beside the usual ones.
struct Shown<'a> {
    /// Whether the stream carries keyword marks (see `Analyzer::marks_keywords`).
    keyword: bool,
    /// `attributes`: those to show, when given.
    only: Option<&'a [String]>,
}

/// The analyzer a request uses: made for it, or a field's.
enum Chosen<'a> {
    Made(Analyzer),
    Field(&'a Analyzer),
}

impl Chosen<'_> {
    fn get(&self) -> &Analyzer {
        match self {
            Chosen::Made(a) => a,
            Chosen::Field(a) => a,
        }
    }
}

/// The analyzer `r` asks for against the index's `schema` (none without an
/// index), and the position gap between its texts.
fn choose<'a>(r: &Request, schema: Option<&'a Schema>) -> ApiResult<(Chosen<'a>, u32)> {
    let made = |kind| Chosen::Made(Analyzer::new(kind, None));
    if let Some(name) = &r.normalizer {
        if r.analyzer.is_some() || r.tokenizer.is_some() {
            return Err(validation("tokenizer/analyze should be null if normalizer is specified"));
        }
        let Some(schema) = schema else {
            return Err(validation("index is required if normalizer is specified"));
        };
        let normalizer = schema
            .analysis
            .normalizer(name)
            .ok_or_else(|| ApiError::illegal_argument(format!("failed to find normalizer under [{name}]")))?;
        return Ok((Chosen::Made(normalizer.map_err(|e| ApiError::illegal_argument(e.to_string()))?), 0));
    }
    if r.tokenizer.is_some() || r.filter.is_some() || r.char_filter.is_some() {
        let named = match (&r.analyzer, &r.field) {
            (Some(_), _) => Some("a named analyzer"),
            (None, Some(_)) => Some("a field-based analyzer"),
            (None, None) => None,
        };
        if let Some(named) = named {
            return Err(validation(&format!("cannot define extra components on {named}")));
        }
        let none = IndexAnalysis::default();
        let analysis = schema.map_or(&none, |s| &s.analysis);
        let chain = analysis.chain(r.tokenizer.as_ref(), r.filter.as_ref(), r.char_filter.as_ref());
        // A custom analyzer's texts are a field's values: 100 positions apart, as Elasticsearch has them.
        return Ok((
            Chosen::Made(chain.map_err(|e| ApiError::illegal_argument(e.to_string()))?),
            TEXT_FIELD_GAP,
        ));
    }
    if let Some(name) = &r.analyzer {
        // The index's own analyzers first, as Elasticsearch looks them up (made with a field's gap).
        if let Some(made) = schema.and_then(|s| s.analysis.analyzer(name, None)) {
            let made = made.map_err(|e| ApiError::illegal_argument(e.to_string()))?;
            return Ok((Chosen::Made(made), TEXT_FIELD_GAP));
        }
        return match AnalyzerKind::parse(name) {
            Some(kind) => Ok((made(kind), 0)),
            None if NOT_YET.contains(&name.as_str()) => {
                Err(ApiError::illegal_argument(format!("analyzer [{name}] is not supported yet by Needle")))
            }
            None => Err(ApiError::illegal_argument(format!("failed to find global analyzer [{name}]"))),
        };
    }
    let Some(field) = &r.field else {
        let (analyzer, gap) = index_default(schema)?;
        return Ok((Chosen::Made(analyzer), gap));
    };
    let Some(schema) = schema else {
        return Err(ApiError::illegal_argument("analysis based on a specific field requires an index"));
    };
    let Some(id) = schema.field_id(field) else {
        return Ok((Chosen::Made(index_default(Some(schema))?.0), TEXT_FIELD_GAP));
    };
    match (schema.field(id).kind, schema.analyzer(id)) {
        (FieldKind::Text, Some(analyzer)) => Ok((Chosen::Field(analyzer), TEXT_FIELD_GAP)),
        (FieldKind::Text, None) => Ok((made(AnalyzerKind::Standard), TEXT_FIELD_GAP)),
        (FieldKind::Keyword, _) => match schema.normalizer(id) {
            Some(normalizer) => Ok((Chosen::Field(normalizer), 0)),
            None => Ok((made(AnalyzerKind::Keyword), 0)),
        },
        _ => Err(ApiError::illegal_argument(format!(
            "Can't process field [{field}], Analysis requests are only supported on tokenized fields"
        ))),
    }
}

/// The analyzer of an index's text fields that name none: its settings'
/// `default` (its texts a field's gap apart, as the index's analyzers'),
/// else `standard` (also without an index).
fn index_default(schema: Option<&Schema>) -> ApiResult<(Analyzer, u32)> {
    match schema.and_then(|s| s.analysis.analyzer("default", None)) {
        Some(made) => Ok((made.map_err(|e| ApiError::illegal_argument(e.to_string()))?, TEXT_FIELD_GAP)),
        None => Ok((Analyzer::standard(), 0)),
    }
}

/// The tokens of `texts`, one after another, as Elasticsearch lists them,
/// through the analyzer's first `through` filters; with `shown`, each with
/// the attributes `explain` shows.
fn tokens(
    analyzer: &Analyzer,
    through: usize,
    texts: &[String],
    gap: u32,
    shown: Option<&Shown>,
) -> Vec<Value> {
    let mut out = Vec::new();
    let (mut position, mut offset) = (0, 0);
    for text in texts {
        let mut units = Utf16Units { text, byte: 0, units: 0 };
        let next = analyzer.analyze_through(through, text, position, |t, word| {
            let (start, end) = (t.start as usize, t.end as usize);
            let kind = match (t.token_type, t.synonym) {
                (Some(kind), _) => kind,
                (_, true) => "SYNONYM",
                _ => analyzer.tokenizer().token_type(word),
            };
            let mut token = json!({
                "token": t.term,
                "start_offset": offset + units.at(start),
                "end_offset": offset + units.at(end),
                "type": kind,
                "position": t.position,
            });
            // Shown when a token spans several positions, as Elasticsearch shows it.
            if t.position_length > 1 && shown.is_none() {
                token["positionLength"] = json!(t.position_length);
            }
            if let Some(shown) = shown {
                let wanted = |name: &str| shown.only.is_none_or(|only| only.iter().any(|o| o == name));
                let bytes: Vec<String> = t.term.bytes().map(|b| format!("{b:02x}")).collect();
                let extra = [
                    ("bytes", Some(json!(format!("[{}]", bytes.join(" "))))),
                    ("keyword", shown.keyword.then(|| json!(t.keyword))),
                    ("positionLength", Some(json!(t.position_length))),
                    ("termFrequency", Some(json!(1))),
                ];
                for (name, value) in extra {
                    if let Some(value) = value.filter(|_| wanted(name)) {
                        token[name] = value;
                    }
                }
            }
            out.push(token);
        });
        position = next + gap;
        offset += text.encode_utf16().count() + 1;
    }
    out
}

/// UTF-16 code units before a byte offset of a text, counted from the
/// offset asked before (offsets mostly grow; the terms a filter makes of one
/// token go back to its start).
struct Utf16Units<'a> {
    text: &'a str,
    byte: usize,
    units: usize,
}

impl Utf16Units<'_> {
    fn at(&mut self, byte: usize) -> usize {
        if byte >= self.byte {
            self.units += self.text[self.byte..byte].encode_utf16().count();
        } else {
            self.units -= self.text[byte..self.byte].encode_utf16().count();
        }
        self.byte = byte;
        self.units
    }
}

/// What a request asks for.
struct Request {
    texts: Vec<String>,
    analyzer: Option<String>,
    field: Option<String>,
    /// An analyzer made for the request: its tokenizer and filters, by name.
    tokenizer: Option<Value>,
    filter: Option<Value>,
    char_filter: Option<Value>,
    /// A normalizer of the index, or the built-in `lowercase`: each text one token.
    normalizer: Option<String>,
    /// `explain`: the tokens after each part of the analyzer, with more of their attributes.
    explain: bool,
    /// `attributes`: which of those attributes `explain` shows.
    attributes: Option<Vec<String>>,
}

impl Request {
    fn read(body: Value) -> ApiResult<Request> {
        let Value::Object(body) = body else {
            return Err(ApiError::parsing("the analyze body must be an object"));
        };
        let mut r = Request {
            texts: Vec::new(),
            analyzer: None,
            field: None,
            tokenizer: None,
            filter: None,
            char_filter: None,
            normalizer: None,
            explain: false,
            attributes: None,
        };
        for (key, value) in body {
            match key.as_str() {
                "text" => r.texts = texts(&value)?,
                "analyzer" => r.analyzer = Some(string(&key, &value)?),
                "field" => r.field = Some(string(&key, &value)?),
                "tokenizer" => r.tokenizer = Some(value),
                "filter" if value.is_array() => r.filter = Some(value),
                "char_filter" if value.is_array() => r.char_filter = Some(value),
                "filter" | "char_filter" => {
                    return Err(ApiError::bad_request(
                        "x_content_parse_exception",
                        format!("[analyze_request] {key} doesn't support values of type: VALUE_STRING"),
                    ))
                }
                "normalizer" => r.normalizer = Some(string(&key, &value)?),
                "explain" => {
                    r.explain = value.as_bool().ok_or_else(|| {
                        ApiError::bad_request("x_content_parse_exception", "[explain] must be a boolean")
                    })?
                }
                "attributes" => r.attributes = Some(texts(&value)?),
                other => {
                    return Err(ApiError::bad_request(
                        "x_content_parse_exception",
                        format!("[analyze_request] unknown field [{other}]"),
                    ))
                }
            }
        }
        if r.texts.is_empty() {
            return Err(ApiError::bad_request(
                "action_request_validation_exception",
                "Validation Failed: 1: text is missing;",
            ));
        }
        Ok(r)
    }
}

fn texts(value: &Value) -> ApiResult<Vec<String>> {
    match value {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(items) => items.iter().map(|i| string("text", i)).collect(),
        _ => Err(ApiError::bad_request(
            "x_content_parse_exception",
            "[text] must be a string or an array of strings",
        )),
    }
}

fn string(key: &str, value: &Value) -> ApiResult<String> {
    value.as_str().map(str::to_string).ok_or_else(|| {
        ApiError::bad_request("x_content_parse_exception", format!("[{key}] must be a string"))
    })
}
