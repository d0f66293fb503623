//! The schema: Elasticsearch-style mappings. Field 0 is always `_id`.
//!
//! A mapping file looks like Elasticsearch's (an outer `"mappings"` is
//! accepted too):
//!
//! ```json
//! {"dynamic": true,
//!  "properties": {"title": {"type": "text", "analyzer": "english"},
//!                 "tags": {"type": "keyword"}, "year": {"type": "long"},
//!                 "notes": {"type": "text", "index": false}}}
//! ```
//!
//! Types: `text` (analyzed; options `analyzer`: standard | english | snowball,
//! `search_analyzer` and `search_quote_analyzer` for query text and phrases, and
//! `stopwords`: a list replacing the analyzer's), `keyword` (the whole value
//! one term), `long`, `double`, `boolean`, `date` (the last four also kept as
//! doc values, for sorts and ranges: see `values.rs`), `binary` (base64 text,
//! kept only as doc values: one value a document; `"doc_values": true` is
//! accepted on any field but text, as it is what Needle does). `"index": false` keeps a text field
//! in the stored source only, and any other field as doc values only (sorted, filtered by ranges
//! and aggregated, as Elasticsearch's doc-values-only fields; no terms). `dynamic`: `true` (the default) adds unknown fields
//! (strings -> text, integers -> long, floats -> double, booleans -> boolean),
//! `false` keeps them in the source unindexed, `"strict"` rejects them.
//! `"bloom": {"enabled": true, "expected_insertions": 5, "false_positive_rate":
//! 0.0009, "stop_words": [...]}` sets the phrase filters (these are the defaults).
//! An index's whole creation body is read too: `{"settings": {"index":
//! {"sort.field": "year", "sort.order": "desc"}}, "mappings": {...}}` sets
//! the index sort ([`IndexSort`]), and `{"settings": {"analysis": {"analyzer":
//! {"default": {"type": "english"}}}}}` the index's own analyzers, which its
//! text fields name (see `index_analyzers.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use needle_analysis::{Analyzer, AnalyzerKind, ENGLISH_STOP_WORDS};
use needle_codecs::bloom::BloomParams;
use needle_core::{Error, FieldId, Result};
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::date_format::{DateFormat, DEFAULT_DATE_FORMAT};
use crate::index_analyzers::IndexAnalysis;

pub const ID_FIELD: FieldId = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    Text,
    Keyword,
    Long,
    Double,
    Boolean,
    /// Milliseconds since 1970, read from dates (see `values.rs`).
    Date,
    /// Bytes, given as base64 text: kept as doc values only (not searched,
    /// not sorted on), one value a document, updatable in place.
    Binary,
}

impl FieldKind {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "text" => Self::Text,
            "keyword" => Self::Keyword,
            "long" | "integer" | "short" | "byte" => Self::Long,
            "double" | "float" => Self::Double,
            "boolean" => Self::Boolean,
            "date" => Self::Date,
            "binary" => Self::Binary,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Keyword => "keyword",
            Self::Long => "long",
            Self::Double => "double",
            Self::Boolean => "boolean",
            Self::Date => "date",
            Self::Binary => "binary",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dynamic {
    #[default]
    True,
    False,
    Strict,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDef {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FieldKind,
    #[serde(default = "yes")]
    pub index: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analyzer: Option<String>,
    /// A text field's `search_analyzer`: what query text for it goes
    /// through, when it is not its `analyzer` (see [`Schema::search_analyzer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_analyzer: Option<String>,
    /// A text field's `search_quote_analyzer`: what the text of a phrase in
    /// quotes (and of `match_phrase`) goes through, when it is not its
    /// search analyzer (see [`Schema::search_quote_analyzer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_quote_analyzer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopwords: Option<Vec<String>>,
    /// A date field's `format` (see `date_format.rs`); `None`: Elasticsearch's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A multi-field's parent (Elasticsearch's `fields`): the field whose
    /// values it indexes its own way, named `parent.name`; it is not in the
    /// source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_of: Option<String>,
    /// A keyword field's `ignore_above`: values longer than this many
    /// characters are kept in the source only (neither indexed nor in doc values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_above: Option<u32>,
    /// A keyword field's `normalizer`: what its values and the query text
    /// asking for them go through (see `IndexAnalysis::normalizer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalizer: Option<String>,
}

impl FieldDef {
    /// A field of `kind` named `name` with every option at its default.
    pub fn plain(name: &str, kind: FieldKind) -> FieldDef {
        FieldDef {
            name: name.to_string(),
            kind,
            index: true,
            analyzer: None,
            search_analyzer: None,
            search_quote_analyzer: None,
            stopwords: None,
            format: None,
            multi_of: None,
            ignore_above: None,
            normalizer: None,
        }
    }
}

impl FieldDef {
    /// The field's own options as Elasticsearch shows them in a mapping.
    fn to_mapping(&self) -> serde_json::Map<String, Value> {
        let mut def = serde_json::Map::new();
        def.insert("type".into(), Value::String(self.kind.name().into()));
        if !self.index {
            def.insert("index".into(), Value::Bool(false));
        }
        if let Some(a) = &self.analyzer {
            def.insert("analyzer".into(), Value::String(a.clone()));
        }
        // Each search analyzer shown where it is not the one it defaults to, as Elasticsearch shows them.
        let analyzer = self.analyzer.as_deref().unwrap_or("default");
        let search = self.search_analyzer.as_deref().unwrap_or(analyzer);
        let quote = self.search_quote_analyzer.as_deref().unwrap_or(search);
        if search != analyzer || quote != search {
            def.insert("search_analyzer".into(), Value::String(search.to_string()));
        }
        if quote != search {
            def.insert("search_quote_analyzer".into(), Value::String(quote.to_string()));
        }
        if let Some(words) = &self.stopwords {
            def.insert("stopwords".into(), serde_json::json!(words));
        }
        if let Some(format) = &self.format {
            def.insert("format".into(), Value::String(format.clone()));
        }
        if let Some(n) = self.ignore_above {
            def.insert("ignore_above".into(), Value::from(n));
        }
        if let Some(n) = &self.normalizer {
            def.insert("normalizer".into(), Value::String(n.clone()));
        }
        def
    }

    /// How the field's dates are read and shown: its mapping's `format`, or the default.
    pub fn date_format(&self) -> DateFormat {
        let mapped = self.format.as_deref().and_then(|f| DateFormat::new(f).ok());
        mapped.unwrap_or_else(DateFormat::default_format)
    }

    /// The milliseconds of `text` read with [`Self::date_format`], the format
    /// read once per thread and kept (indexing reads every date value so).
    pub fn parse_date(&self, text: &str, zone: crate::zone::Zone, round_up: bool) -> Option<i64> {
        thread_local! {
            static KEPT: std::cell::RefCell<std::collections::HashMap<Option<String>, DateFormat>> =
                std::cell::RefCell::default();
        }
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            if !kept.contains_key(&self.format) {
                if kept.len() >= 64 {
                    kept.clear(); // mappings name few formats; this bounds the memory of many
                }
                kept.insert(self.format.clone(), self.date_format());
            }
            kept[&self.format].parse(text, zone, round_up)
        })
    }
}

fn yes() -> bool {
    true
}

/// Two-way Bloom filters for phrases (see `needle_codecs::bloom`): built for
/// every text field's postings when enabled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BloomSettings {
    pub enabled: bool,
    pub expected_insertions: u32,
    pub false_positive_rate: f64,
    /// Words never inserted; Lucene's English stop list when absent.
    pub stop_words: Option<Vec<String>>,
    /// The lowest frequency of a posting of a list longer than a block with
    /// filters on disk: below it a posting's filter outweighs the positions
    /// it spares reading (see `needle_codecs::bloom`).
    pub min_freq: u32,
}

impl Default for BloomSettings {
    fn default() -> Self {
        BloomSettings {
            enabled: true,
            expected_insertions: 5,
            false_positive_rate: 0.0009,
            stop_words: None,
            min_freq: 2,
        }
    }
}

/// The index sort (Elasticsearch's `index.sort.*` settings, set when an
/// index is created): segments written by merges hold their documents in
/// the order of one numeric, date or boolean field's values, and searches
/// sorted the same way stop in them once they have their hits. The field is
/// not updated in place (that would break the order): a change re-indexes
/// the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexSort {
    pub field: String,
    pub descending: bool,
    /// Documents without a value first (Elasticsearch's `_first`); last by default.
    pub missing_first: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Schema {
    pub dynamic: Dynamic,
    pub fields: Vec<FieldDef>,
    #[serde(default)]
    pub bloom: BloomSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<IndexSort>,
    /// The analyzers the index's settings define (see `index_analyzers.rs`).
    #[serde(default, skip_serializing_if = "IndexAnalysis::is_empty")]
    pub analysis: IndexAnalysis,
    #[serde(skip)]
    analyzers: Vec<Option<Arc<Analyzer>>>,
    /// Text fields' search analyzers where they are not their analyzers.
    #[serde(skip)]
    search_analyzers: Vec<Option<Arc<Analyzer>>>,
    /// Text fields' search quote analyzers where their mappings name one.
    #[serde(skip)]
    search_quote_analyzers: Vec<Option<Arc<Analyzer>>>,
    #[serde(skip)]
    by_name: HashMap<String, FieldId>,
    /// Each field's multi-fields (see [`FieldDef::multi_of`]), by the parent's id.
    #[serde(skip)]
    multi: HashMap<FieldId, Vec<FieldId>>,
    /// The analyzers queries have named (see [`Schema::query_analyzer`]), made once.
    #[serde(skip)]
    named: Arc<Mutex<HashMap<String, Arc<Analyzer>>>>,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.dynamic == other.dynamic
            && self.fields == other.fields
            && self.sort == other.sort
            && self.analysis == other.analysis
    }
}

impl Default for Schema {
    fn default() -> Self {
        let id = FieldDef::plain("_id", FieldKind::Keyword);
        Schema::from_fields(Dynamic::True, vec![id], IndexAnalysis::default())
            .expect("the default schema is valid")
    }
}

impl Schema {
    fn from_fields(dynamic: Dynamic, fields: Vec<FieldDef>, analysis: IndexAnalysis) -> Result<Self> {
        let mut s = Schema {
            dynamic,
            fields: Vec::new(),
            bloom: BloomSettings::default(),
            sort: None,
            analysis,
            analyzers: Vec::new(),
            search_analyzers: Vec::new(),
            search_quote_analyzers: Vec::new(),
            by_name: HashMap::new(),
            multi: HashMap::new(),
            named: Arc::default(),
        };
        for f in fields {
            s.push(f)?;
        }
        Ok(s)
    }

    /// Rebuilds the lookup tables after deserializing.
    pub(crate) fn prepared(self) -> Result<Self> {
        let (bloom, sort) = (self.bloom, self.sort);
        Ok(Schema { bloom, sort, ..Schema::from_fields(self.dynamic, self.fields, self.analysis)? })
    }

    /// Sets the index sort from Elasticsearch's settings (`index.sort.field`,
    /// `index.sort.order`, `index.sort.missing`, nested or with dotted keys,
    /// with or without `index.`); other settings are left alone. One field,
    /// of a numeric, date or boolean type defined in this mapping.
    pub fn set_index_sort(&mut self, settings: &Value) -> Result<()> {
        let mut flat = Vec::new();
        flatten_settings("", settings, &mut flat);
        let setting = |name: &str| -> Result<Option<String>> {
            let Some((_, v)) = flat.iter().find(|(k, _)| k.strip_prefix("index.").unwrap_or(k) == name)
            else {
                return Ok(None);
            };
            let one = match v {
                Value::Array(items) if items.len() == 1 => &items[0],
                Value::Array(_) => {
                    return Err(Error::invalid(format!("[index.{name}]: Needle sorts an index by one field")))
                }
                other => other,
            };
            match one {
                Value::String(s) => Ok(Some(s.clone())),
                other => Err(Error::invalid(format!("[index.{name}] must be a string, not {other}"))),
            }
        };
        let Some(field) = setting("sort.field")? else {
            if let Some((key, _)) =
                flat.iter().find(|(k, _)| k.strip_prefix("index.").unwrap_or(k).starts_with("sort."))
            {
                return Err(Error::invalid(format!("[{key}] needs [index.sort.field]")));
            }
            return Ok(());
        };
        let descending = match setting("sort.order")?.as_deref() {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(other) => return Err(Error::invalid(format!("illegal sort order [{other}]: asc or desc"))),
        };
        let missing_first = match setting("sort.missing")?.as_deref() {
            None | Some("_last") => false,
            Some("_first") => true,
            Some(other) => {
                return Err(Error::invalid(format!("illegal missing value [{other}]: _last or _first")))
            }
        };
        let default_mode = if descending { "max" } else { "min" };
        if let Some(mode) = setting("sort.mode")?.filter(|m| m != default_mode) {
            return Err(Error::invalid(format!(
                "[index.sort.mode] {mode} is not supported yet by Needle (a document sorts by its {default_mode} value)"
            )));
        }
        let id = self
            .field_id(&field)
            .ok_or_else(|| Error::invalid(format!("unknown index sort field:[{field}]")))?;
        let def = self.field(id);
        if !matches!(def.kind, FieldKind::Long | FieldKind::Double | FieldKind::Date | FieldKind::Boolean) {
            return Err(Error::invalid(format!(
                "index sort field [{field}] is of type [{}]: Needle sorts an index by a long, integer, double, float, date or boolean field",
                def.kind.name()
            )));
        }
        self.sort = Some(IndexSort { field, descending, missing_first });
        Ok(())
    }

    /// The order merges write documents in, from the index sort.
    pub fn index_order(&self) -> Option<needle_codecs::IndexOrder> {
        let sort = self.sort.as_ref()?;
        let field = self.field_id(&sort.field)?;
        let missing =
            crate::values::missing_value(self.field(field).kind, sort.descending, sort.missing_first);
        Some(needle_codecs::IndexOrder { field, descending: sort.descending, missing })
    }

    /// The filter parameters new segments are built with, when filters are on.
    pub fn bloom_params(&self) -> Option<BloomParams> {
        let b = &self.bloom;
        b.enabled.then(|| {
            let stop = b
                .stop_words
                .clone()
                .unwrap_or_else(|| ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_string()).collect());
            BloomParams::for_rate(b.expected_insertions, b.false_positive_rate, stop)
                .with_min_freq(b.min_freq)
        })
    }

    /// A text field's analyzer: the one it names (the index's own, or a
    /// built-in), else the index's `default`, else `standard`; the field's
    /// `stopwords` replace the analyzer's.
    fn text_analyzer(&self, f: &FieldDef) -> Result<Analyzer> {
        let default = if self.analysis.analyzer.contains_key("default") { "default" } else { "standard" };
        self.named_analyzer(f, f.analyzer.as_deref().unwrap_or(default))
    }

    /// A text field's search analyzer when it is not its analyzer: the one
    /// its `search_analyzer` names, else the index's `default_search`, as
    /// Elasticsearch chooses (`None`: its analyzer).
    fn text_search_analyzer(&self, f: &FieldDef) -> Result<Option<Analyzer>> {
        let default_search =
            self.analysis.analyzer.contains_key("default_search").then_some("default_search");
        match f.search_analyzer.as_deref().or(default_search) {
            Some(name) => self.named_analyzer(f, name).map(Some),
            None => Ok(None),
        }
    }

    /// Analyzer `name` (the index's own, or a built-in) for field `f`, with its `stopwords`.
    fn named_analyzer(&self, f: &FieldDef, name: &str) -> Result<Analyzer> {
        let name =
            if name == "default" && !self.analysis.analyzer.contains_key(name) { "standard" } else { name };
        let stop: Option<Vec<String>> =
            f.stopwords.as_ref().map(|w| w.iter().map(|w| w.to_lowercase()).collect());
        if let Some(made) = self.analysis.analyzer(name, stop.as_deref()) {
            return made.map_err(|e| Error::invalid_field(&f.name, e.to_string()));
        }
        let kind = AnalyzerKind::parse(name).filter(|k| *k != AnalyzerKind::Keyword).ok_or_else(|| {
            Error::invalid_field(&f.name, format!("analyzer [{name}] has not been configured in mappings"))
        })?;
        Ok(Analyzer::built_in(kind, stop.as_deref()))
    }

    fn push(&mut self, f: FieldDef) -> Result<FieldId> {
        if self.by_name.contains_key(&f.name) {
            return Err(Error::invalid_field(&f.name, "defined twice"));
        }
        let id = FieldId::try_from(self.fields.len())
            .map_err(|_| Error::invalid_field(&f.name, "too many fields (65,536)"))?;
        let (search_analyzer, search_quote_analyzer) = match (f.kind, f.index) {
            (FieldKind::Text, true) => {
                let quote = f.search_quote_analyzer.as_deref().map(|name| self.named_analyzer(&f, name));
                (self.text_search_analyzer(&f)?.map(Arc::new), quote.transpose()?.map(Arc::new))
            }
            _ => (None, None),
        };
        let analyzer = match (f.kind, f.index, &f.normalizer) {
            (FieldKind::Text, true, _) => Some(Arc::new(self.text_analyzer(&f)?)),
            (FieldKind::Keyword, _, Some(name)) => {
                let made = self.analysis.normalizer(name).unwrap_or_else(|| {
                    Err(Error::invalid(format!("normalizer [{name}] not found for field [{}]", f.name)))
                });
                Some(Arc::new(made.map_err(|e| Error::invalid_field(&f.name, e.to_string()))?))
            }
            _ => None,
        };
        if let Some(parent) = &f.multi_of {
            let of = self.field_id(parent).ok_or_else(|| {
                Error::invalid_field(&f.name, format!("a multi-field of `{parent}`, which is not mapped"))
            })?;
            self.multi.entry(of).or_default().push(id);
        }
        self.by_name.insert(f.name.clone(), id);
        self.fields.push(f);
        self.analyzers.push(analyzer);
        self.search_analyzers.push(search_analyzer);
        self.search_quote_analyzers.push(search_quote_analyzer);
        Ok(id)
    }

    /// Reads an Elasticsearch-style mapping (see the module docs).
    pub fn from_mapping(json: &str) -> Result<Self> {
        Self::from_mapping_with(json, None)
    }

    /// [`Self::from_mapping`], its text fields naming the analyzers of
    /// `analysis` when given (an index's, read already) instead of those of
    /// the body's settings.
    pub fn from_mapping_with(json: &str, analysis: Option<&IndexAnalysis>) -> Result<Self> {
        let mut v: Value = serde_json::from_str(json)
            .map_err(|e| Error::invalid(format!("mapping is not valid JSON: {e}")))?;
        // An index's whole creation body: its settings may hold the index sort.
        let settings = v.as_object_mut().and_then(|o| o.remove("settings"));
        if let Some(inner) = v.get_mut("mappings") {
            v = inner.take();
        }
        let Value::Object(mut top) = v else {
            return Err(Error::invalid("mapping must be a JSON object"));
        };
        let dynamic = match top.remove("dynamic") {
            None | Some(Value::Bool(true)) => Dynamic::True,
            Some(Value::Bool(false)) => Dynamic::False,
            Some(Value::String(s)) if s == "true" => Dynamic::True,
            Some(Value::String(s)) if s == "false" => Dynamic::False,
            Some(Value::String(s)) if s == "strict" => Dynamic::Strict,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "mapping: `dynamic` must be true, false or \"strict\", not {other}"
                )))
            }
        };
        let bloom = match top.remove("bloom") {
            None => BloomSettings::default(),
            Some(v) => {
                serde_json::from_value(v).map_err(|e| Error::invalid(format!("mapping: bad `bloom`: {e}")))?
            }
        };
        let properties = match top.remove("properties") {
            None => serde_json::Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => return Err(Error::invalid("mapping: `properties` must be an object")),
        };
        if let Some(key) = top.keys().next() {
            return Err(Error::invalid(format!(
                "mapping: unknown key `{key}` (expected dynamic, properties, bloom)"
            )));
        }
        let mut schema = Schema { dynamic, bloom, ..Schema::default() };
        schema.analysis = match (analysis, &settings) {
            (Some(given), _) => given.clone(),
            (None, Some(settings)) => crate::index_analyzers::read(settings)?,
            (None, None) => IndexAnalysis::default(),
        };
        for def in parse_properties("", properties)? {
            schema.push(def)?;
        }
        if let Some(settings) = settings {
            schema.set_index_sort(&settings)?;
        }
        Ok(schema)
    }

    /// The mapping as Elasticsearch shows it: dotted names nested as objects'
    /// `properties`; `dynamic` when it is not the default.
    pub fn to_mapping(&self) -> Value {
        let mut properties = serde_json::Map::new();
        for (id, f) in self.fields.iter().enumerate().filter(|(_, f)| f.name != "_id" && f.multi_of.is_none())
        {
            let mut def = f.to_mapping();
            let subs = self.multi_fields(id as FieldId);
            if !subs.is_empty() {
                let shown = subs.iter().map(|&s| {
                    let sub = self.field(s);
                    (sub.name[f.name.len() + 1..].to_string(), Value::Object(sub.to_mapping()))
                });
                def.insert("fields".into(), Value::Object(shown.collect()));
            }
            let mut parts: Vec<&str> = f.name.split('.').collect();
            let leaf = parts.pop().unwrap_or_default();
            let mut at = &mut properties;
            for part in parts {
                let object = at.entry(part).or_insert_with(|| serde_json::json!({"properties": {}}));
                at = object["properties"].as_object_mut().expect("an object's properties");
            }
            at.insert(leaf.to_string(), Value::Object(def));
        }
        let mut mapping = serde_json::Map::new();
        match self.dynamic {
            Dynamic::True => {}
            Dynamic::False => {
                mapping.insert("dynamic".into(), Value::String("false".into()));
            }
            Dynamic::Strict => {
                mapping.insert("dynamic".into(), Value::String("strict".into()));
            }
        }
        sort_properties(&mut properties);
        // No fields: no `properties`, as Elasticsearch shows an index without mappings.
        if !properties.is_empty() {
            mapping.insert("properties".into(), Value::Object(properties));
        }
        Value::Object(mapping)
    }

    /// The multi-fields of field `id` (see [`FieldDef::multi_of`]).
    pub fn multi_fields(&self, id: FieldId) -> &[FieldId] {
        self.multi.get(&id).map_or(&[], Vec::as_slice)
    }

    pub fn field_id(&self, name: &str) -> Option<FieldId> {
        self.by_name.get(name).copied()
    }

    pub fn field(&self, id: FieldId) -> &FieldDef {
        &self.fields[id as usize]
    }

    pub fn analyzer(&self, id: FieldId) -> Option<&Analyzer> {
        self.analyzers.get(id as usize)?.as_deref().filter(|_| self.field(id).kind == FieldKind::Text)
    }

    /// Whether a mapping update's `def` changes the field of its name, as
    /// Elasticsearch lets an update change one: only its `search_analyzer`,
    /// `search_quote_analyzer` or `ignore_above`, which apply to the searches
    /// and writes after it (`false`: a new field, or no change). Any other
    /// change is an error naming each parameter with its two values; another
    /// type, one naming both types.
    pub fn check_update(&self, def: &FieldDef) -> Result<bool> {
        let Some(id) = self.field_id(&def.name) else { return Ok(false) };
        let have = self.field(id);
        if have.kind != def.kind {
            let reason = format!(
                "mapper [{}] cannot be changed from type [{}] to [{}]",
                def.name,
                have.kind.name(),
                def.kind.name()
            );
            return Err(Error::invalid_field(&def.name, reason));
        }
        let named = |v: &Option<String>, default: &str| v.clone().unwrap_or_else(|| default.to_string());
        let words = |w: &Option<Vec<String>>| w.as_ref().map_or("default".to_string(), |w| w.join(", "));
        let fixed = [
            ("index", have.index.to_string(), def.index.to_string()),
            ("analyzer", named(&have.analyzer, "default"), named(&def.analyzer, "default")),
            ("normalizer", named(&have.normalizer, "default"), named(&def.normalizer, "default")),
            ("format", named(&have.format, DEFAULT_DATE_FORMAT), named(&def.format, DEFAULT_DATE_FORMAT)),
            ("stopwords", words(&have.stopwords), words(&def.stopwords)),
        ];
        let refused: String = fixed
            .iter()
            .filter(|(_, from, to)| from != to)
            .map(|(name, from, to)| format!("\n\tCannot update parameter [{name}] from [{from}] to [{to}]"))
            .collect();
        if !refused.is_empty() {
            let reason = format!("Mapper for [{}] conflicts with existing mapper:{refused}", def.name);
            return Err(Error::invalid_field(&def.name, reason));
        }
        Ok(have != def)
    }

    /// This schema with the fields of `defs` it has replaced by them (each
    /// allowed by [`Self::check_update`]), and those it has not added.
    fn updated(&self, defs: &[FieldDef]) -> Result<Schema> {
        let mut fields = self.fields.clone();
        let mut added = Vec::new();
        for def in defs {
            match self.field_id(&def.name) {
                Some(id) => fields[id as usize] = def.clone(),
                None => added.push(def.clone()),
            }
        }
        fields.extend(added);
        let (bloom, sort) = (self.bloom.clone(), self.sort.clone());
        Ok(Schema { bloom, sort, ..Schema::from_fields(self.dynamic, fields, self.analysis.clone())? })
    }

    /// The analyzer a query names by `name` for its text (a `match` query's
    /// `analyzer`): the index's own of that name, else the built-in one
    /// (`None`: neither); made on first use and kept.
    pub fn query_analyzer(&self, name: &str) -> Option<Result<Arc<Analyzer>>> {
        if let Some(made) = self.named.lock().get(name) {
            return Some(Ok(made.clone()));
        }
        let own =
            if name == "default" && !self.analysis.analyzer.contains_key(name) { "standard" } else { name };
        let made = match self.analysis.analyzer(own, None) {
            Some(made) => made,
            None => Ok(Analyzer::built_in(AnalyzerKind::parse(own)?, None)),
        };
        Some(made.map(|a| self.named.lock().entry(name.to_string()).or_insert_with(|| Arc::new(a)).clone()))
    }

    /// What a text field's query text goes through: its search analyzer, else its analyzer.
    pub fn search_analyzer(&self, id: FieldId) -> Option<&Analyzer> {
        let own = self.search_analyzers.get(id as usize)?.as_deref();
        own.or_else(|| self.analyzer(id))
    }

    /// What the text of a phrase in quotes for a text field goes through:
    /// its search quote analyzer, else its search analyzer.
    pub fn search_quote_analyzer(&self, id: FieldId) -> Option<&Analyzer> {
        let own = self.search_quote_analyzers.get(id as usize)?.as_deref();
        own.or_else(|| self.search_analyzer(id))
    }

    /// A keyword field's normalizer, when its mapping names one.
    pub fn normalizer(&self, id: FieldId) -> Option<&Analyzer> {
        self.analyzers.get(id as usize)?.as_deref().filter(|_| self.field(id).kind == FieldKind::Keyword)
    }

    /// A keyword field's value (or query text) as it is indexed: through its normalizer, if it has one.
    pub fn normalized<'t>(&self, id: FieldId, text: &'t str) -> std::borrow::Cow<'t, str> {
        match self.normalizer(id) {
            Some(n) => std::borrow::Cow::Owned(n.normalize(text)),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    /// Indexed text fields: what a query term without a field searches.
    pub fn text_fields(&self) -> Vec<FieldId> {
        (0..self.fields.len() as FieldId)
            .filter(|&i| self.field(i).kind == FieldKind::Text && self.field(i).index)
            .collect()
    }

    /// The definitions a field found in a document gets, typed from its
    /// value, when the schema is dynamic: the field's and its multi-fields'.
    /// None: the field is to be left unindexed. The schema is not changed (see [`SharedSchema::add_fields`]).
    pub(crate) fn dynamic_defs(&self, name: &str, sample: &Value) -> Result<Vec<FieldDef>> {
        let kind = match sample {
            Value::String(_) => FieldKind::Text,
            Value::Number(n) if n.is_i64() || n.is_u64() => FieldKind::Long,
            Value::Number(_) => FieldKind::Double,
            Value::Bool(_) => FieldKind::Boolean,
            _ => return Ok(Vec::new()),
        };
        match self.dynamic {
            Dynamic::True => {}
            Dynamic::False => return Ok(Vec::new()),
            Dynamic::Strict => {
                return Err(Error::invalid_field(
                    name,
                    format!("field `{name}` is not in the mapping, which is strict"),
                ));
            }
        }
        let mut defs = vec![FieldDef::plain(name, kind)];
        // A string is text with its whole value as a keyword beside it (up to 256
        // characters), as Elasticsearch maps one: what `terms` and sorts read.
        let keyword = format!("{name}.keyword");
        if kind == FieldKind::Text && self.field_id(&keyword).is_none() {
            let sub = FieldDef {
                multi_of: Some(name.to_string()),
                ignore_above: Some(256),
                ..FieldDef::plain(&keyword, FieldKind::Keyword)
            };
            defs.push(sub);
        }
        Ok(defs)
    }
}

/// The current schema of an index, shared by its writer and its searches:
/// replaced whole (copy on write) when a document brings a new field, so a
/// search keeps the schema it started with, and a document that is refused
/// changes nothing.
pub(crate) struct SharedSchema(RwLock<Arc<Schema>>);

impl SharedSchema {
    pub fn new(schema: Schema) -> Self {
        SharedSchema(RwLock::new(Arc::new(schema)))
    }

    pub fn current(&self) -> Arc<Schema> {
        self.0.read().clone()
    }

    pub fn replace(&self, schema: Schema) {
        *self.0.write() = Arc::new(schema);
    }

    /// A mapping update: adds the fields of `defs` it does not have and
    /// replaces those it has that an update may change (see
    /// [`Schema::check_update`]); when one may not, nothing changes.
    pub fn update_fields(&self, defs: &[FieldDef]) -> Result<Arc<Schema>> {
        let mut current = self.0.write();
        let mut changes = false;
        for def in defs {
            changes |= current.check_update(def)? || current.field_id(&def.name).is_none();
        }
        if changes {
            *current = Arc::new(current.updated(defs)?);
        }
        Ok(current.clone())
    }

    /// Changes the schema with `f` (on a copy, then swapped in).
    pub fn update(&self, f: impl FnOnce(&mut Schema)) -> Arc<Schema> {
        let mut current = self.0.write();
        let mut next = Schema::clone(&current);
        f(&mut next);
        *current = Arc::new(next);
        current.clone()
    }

    /// Adds the fields of `defs` not yet in the schema; one added meanwhile
    /// with another type is an error naming it. Returns the schema holding them all.
    pub fn add_fields(&self, defs: &[FieldDef]) -> Result<Arc<Schema>> {
        let mut current = self.0.write();
        let mut next: Option<Schema> = None;
        for def in defs {
            let schema = next.as_ref().unwrap_or(&current);
            match schema.field_id(&def.name) {
                Some(id) if schema.field(id).kind == def.kind => {}
                Some(id) => {
                    let other = schema.field(id).kind.name();
                    return Err(Error::invalid_field(
                        &def.name,
                        format!("field `{}` became a {other} meanwhile", def.name),
                    ));
                }
                None => {
                    next.get_or_insert_with(|| Schema::clone(&current)).push(def.clone())?;
                }
            }
        }
        if let Some(next) = next {
            *current = Arc::new(next);
        }
        Ok(current.clone())
    }
}

/// The fields of `properties`, an object's (`prefix` its dotted name and a dot)
/// or the mapping's: an entry with its own `properties` and no type (or type
/// `object`) is an object whose fields are named `object.field`.
/// Properties by name at every level, as Elasticsearch shows a mapping
/// (the fields are kept in the order they were first mapped).
fn sort_properties(properties: &mut serde_json::Map<String, Value>) {
    properties.sort_keys();
    for def in properties.values_mut() {
        if let Some(inner) = def.get_mut("properties").and_then(Value::as_object_mut) {
            sort_properties(inner);
        }
    }
}

fn parse_properties(prefix: &str, properties: serde_json::Map<String, Value>) -> Result<Vec<FieldDef>> {
    let mut out = Vec::new();
    for (name, def) in properties {
        let full = format!("{prefix}{name}");
        let is_object =
            def.get("properties").is_some() && def.get("type").is_none_or(|t| t.as_str() == Some("object"));
        match def {
            Value::Object(mut m) if is_object => {
                m.remove("type");
                let Some(Value::Object(inner)) = m.remove("properties") else {
                    return Err(Error::invalid_field(&full, "mapping: `properties` must be an object"));
                };
                if let Some(key) = m.keys().next() {
                    return Err(Error::invalid_field(
                        &full,
                        format!("mapping: unknown option `{key}` on an object"),
                    ));
                }
                out.extend(parse_properties(&format!("{full}."), inner)?);
            }
            def => out.extend(parse_field(&full, def)?),
        }
    }
    Ok(out)
}

/// A field's definition, then its multi-fields' (its `fields`).
fn parse_field(name: &str, def: Value) -> Result<Vec<FieldDef>> {
    let Value::Object(mut m) = def else {
        return Err(Error::invalid_field(name, "its mapping must be an object"));
    };
    let subs = match m.remove("fields") {
        None => serde_json::Map::new(),
        Some(Value::Object(subs)) => subs,
        Some(_) => return Err(Error::invalid_field(name, "mapping: `fields` must be an object")),
    };
    let mut defs = vec![parse_one_field(name, m)?];
    for (sub, def) in subs {
        let full = format!("{name}.{sub}");
        if def.get("fields").is_some() || def.get("properties").is_some() {
            return Err(Error::invalid_field(
                &full,
                "mapping: a multi-field has no `fields` or `properties` of its own",
            ));
        }
        let Value::Object(m) = def else {
            return Err(Error::invalid_field(&full, "its mapping must be an object"));
        };
        defs.push(FieldDef { multi_of: Some(name.to_string()), ..parse_one_field(&full, m)? });
    }
    Ok(defs)
}

fn parse_one_field(name: &str, mut m: serde_json::Map<String, Value>) -> Result<FieldDef> {
    let bad = |what: &str| Error::invalid_field(name, format!("mapping: {what}"));
    let kind = match m.remove("type") {
        Some(Value::String(t)) => FieldKind::parse(&t).ok_or_else(|| {
            bad(&format!("unknown type `{t}` (text, keyword, long, double, boolean, date, binary)"))
        })?,
        Some(_) => return Err(bad("`type` must be a string")),
        None => return Err(bad("`type` is missing")),
    };
    let index = match m.remove("index") {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(bad("`index` must be true or false")),
    };
    let mut analyzer = match m.remove("analyzer") {
        None => None,
        Some(Value::String(a)) if kind == FieldKind::Text => Some(a),
        Some(_) => return Err(bad("`analyzer` must be a string, on a text field")),
    };
    let search_analyzer = match m.remove("search_analyzer") {
        None => None,
        Some(Value::String(a)) if kind == FieldKind::Text => Some(a),
        Some(_) => return Err(bad("`search_analyzer` must be a string, on a text field")),
    };
    let search_quote_analyzer = match m.remove("search_quote_analyzer") {
        None => None,
        Some(Value::String(a)) if kind == FieldKind::Text => Some(a),
        Some(_) => return Err(bad("`search_quote_analyzer` must be a string, on a text field")),
    };
    if search_analyzer.is_some() || search_quote_analyzer.is_some() {
        // As Elasticsearch shows it: the index's default analyzer, by that name.
        analyzer.get_or_insert_with(|| "default".to_string());
    }
    // Every field but text keeps doc values (a binary field too, which
    // Elasticsearch keeps only when asked): `true` is what it is anyway.
    match m.remove("doc_values") {
        None => {}
        Some(Value::Bool(true)) if kind != FieldKind::Text => {}
        Some(Value::Bool(false)) if kind != FieldKind::Text => {
            return Err(bad(
                "`doc_values: false` is not supported yet: Needle keeps doc values for every field but text",
            ))
        }
        Some(_) => return Err(bad("`doc_values` must be true, on a field that is not text")),
    }
    let stopwords = match m.remove("stopwords") {
        None => None,
        Some(Value::Array(words)) if kind == FieldKind::Text => Some(
            words
                .into_iter()
                .map(|w| w.as_str().map(str::to_string).ok_or_else(|| bad("`stopwords` must be strings")))
                .collect::<Result<_>>()?,
        ),
        Some(_) => return Err(bad("`stopwords` must be a list of strings, on a text field")),
    };
    let format = match m.remove("format") {
        None => None,
        Some(Value::String(f)) if kind == FieldKind::Date => {
            DateFormat::new(&f).map_err(|e| bad(&e.to_string()))?;
            Some(f)
        }
        Some(_) => return Err(bad("`format` must be a string, on a date field")),
    };
    let ignore_above = match m.remove("ignore_above") {
        None => None,
        Some(n) if kind == FieldKind::Keyword => Some(
            n.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad("`ignore_above` must be a count of characters"))?,
        ),
        Some(_) => return Err(bad("`ignore_above` is an option of keyword fields")),
    };
    let normalizer = match m.remove("normalizer") {
        None | Some(Value::Null) => None,
        Some(Value::String(n)) if kind == FieldKind::Keyword => Some(n),
        Some(_) => return Err(bad("`normalizer` must be a string, on a keyword field")),
    };
    if let Some(key) = m.keys().next() {
        return Err(bad(&format!("unknown option `{key}`")));
    }
    if name == "_id" || name.is_empty() {
        return Err(bad("`_id` is reserved for the document id"));
    }
    Ok(FieldDef {
        name: name.to_string(),
        kind,
        index,
        analyzer,
        search_analyzer,
        search_quote_analyzer,
        stopwords,
        format,
        multi_of: None,
        ignore_above,
        normalizer,
    })
}

/// Settings as (dotted key, value) pairs, nested objects flattened.
pub fn flatten_settings(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten_settings(&key, v, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_fields_take_the_index_analyzers_they_name_and_its_default() {
        let body = r#"{"settings": {"analysis": {"analyzer": {
                "default": {"type": "english"},
                "short": {"type": "standard", "stopwords": ["quick"]}}}},
            "mappings": {"properties": {"a": {"type": "text"}, "b": {"type": "text", "analyzer": "short"},
                                        "c": {"type": "text", "analyzer": "standard"}}}}"#;
        let s = Schema::from_mapping(body).unwrap();
        let terms =
            |s: &Schema, f: &str| s.analyzer(s.field_id(f).unwrap()).unwrap().terms("The quick foxes");
        assert_eq!(terms(&s, "a"), ["quick", "fox"]);
        assert_eq!(terms(&s, "b"), ["the", "foxes"]);
        assert_eq!(terms(&s, "c"), ["the", "quick", "foxes"]);
        // A field a document brings is analyzed by the default too; its keyword beside it is not.
        let shared = SharedSchema::new(s.clone());
        let s = shared.add_fields(&s.dynamic_defs("d", &serde_json::json!("x")).unwrap()).unwrap();
        assert_eq!(terms(&s, "d"), ["quick", "fox"]);
        assert!(s.analyzer(s.field_id("d.keyword").unwrap()).is_none());
        // Kept with the schema (in the manifest): read back, the same analyzers.
        let again: Schema = serde_json::from_str(&serde_json::to_string(&*s).unwrap()).unwrap();
        let again = again.prepared().unwrap();
        assert_eq!((terms(&again, "a"), terms(&again, "b")), (terms(&s, "a"), terms(&s, "b")));
        let unknown = r#"{"settings": {"analysis": {"analyzer": {"x": {"type": "english"}}}},
            "mappings": {"properties": {"a": {"type": "text", "analyzer": "y"}}}}"#;
        let e = Schema::from_mapping(unknown).unwrap_err().to_string();
        assert!(e.contains("analyzer [y] has not been configured"), "{e}");
    }

    #[test]
    fn reads_an_elasticsearch_mapping() {
        let s = Schema::from_mapping(
            r#"{"mappings":{"dynamic":"strict","properties":{"title":{"type":"text","analyzer":"english"},"n":{"type":"long"}}}}"#,
        )
        .unwrap();
        assert_eq!(s.dynamic, Dynamic::Strict);
        let title = s.field_id("title").unwrap();
        assert_eq!(s.text_fields(), vec![title]);
        assert_eq!(s.analyzer(title).unwrap().kind(), AnalyzerKind::English);
        assert_eq!(s.field(s.field_id("n").unwrap()).kind, FieldKind::Long);
    }

    #[test]
    fn object_properties_flatten_and_show_nested() {
        let m = r#"{"properties":{"user":{"properties":{"name":{"type":"keyword"},"age":{"type":"long"}}},"t":{"type":"text","index":false}}}"#;
        let s = Schema::from_mapping(m).unwrap();
        assert_eq!(s.field(s.field_id("user.name").unwrap()).kind, FieldKind::Keyword);
        let shown = s.to_mapping();
        assert_eq!(shown["properties"]["user"]["properties"]["age"]["type"], "long");
        assert_eq!(shown["properties"]["t"], serde_json::json!({"type": "text", "index": false}));
        let again = Schema::from_mapping(&shown.to_string()).unwrap();
        assert_eq!(again.to_mapping(), shown, "what is shown reads back");
        // Fields are numbered in the order given; shown by name, as Elasticsearch does.
        assert!(s.field_id("user.name").unwrap() < s.field_id("user.age").unwrap());
        let names: Vec<&String> =
            shown["properties"]["user"]["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["age", "name"]);
        let top: Vec<&String> = shown["properties"].as_object().unwrap().keys().collect();
        assert_eq!(top, ["t", "user"]);
    }

    #[test]
    fn bad_mappings_name_what_is_wrong() {
        for (m, want) in [
            (r#"{"properties":{"t":{"type":"txt"}}}"#, "unknown type `txt`"),
            (r#"{"properties":{"t":{"type":"text","boost":2}}}"#, "unknown option `boost`"),
            (r#"{"propertes":{}}"#, "unknown key `propertes`"),
            (
                r#"{"properties":{"t":{"type":"text","analyzer":"klingon"}}}"#,
                "analyzer [klingon] has not been configured in mappings",
            ),
            (
                r#"{"properties":{"t":{"type":"long","ignore_above":3}}}"#,
                "`ignore_above` is an option of keyword",
            ),
            (
                r#"{"properties":{"t":{"type":"text","fields":{"k":{"type":"keyword","fields":{}}}}}}"#,
                "no `fields`",
            ),
            (r#"{"properties":{"t":{"type":"text","fields":"k"}}}"#, "`fields` must be an object"),
            ("{", "not valid JSON"),
        ] {
            let err = Schema::from_mapping(m).unwrap_err().to_string();
            assert!(err.contains(want), "{m}: {err}");
        }
    }

    #[test]
    fn multi_fields_read_back_as_shown_and_strings_get_a_keyword_beside_them() {
        let mapping = r#"{"properties":{"t":{"type":"text","fields":{"raw":{"type":"keyword","ignore_above":10}}},"n":{"type":"long"}}}"#;
        let s = Schema::from_mapping(mapping).unwrap();
        let (t, raw) = (s.field_id("t").unwrap(), s.field_id("t.raw").unwrap());
        assert_eq!(s.multi_fields(t), [raw]);
        assert_eq!((s.field(raw).multi_of.as_deref(), s.field(raw).ignore_above), (Some("t"), Some(10)));
        assert!(s.multi_fields(s.field_id("n").unwrap()).is_empty());
        let shown = s.to_mapping();
        assert_eq!(
            shown["properties"]["t"]["fields"]["raw"],
            serde_json::json!({"type": "keyword", "ignore_above": 10})
        );
        assert!(shown["properties"].get("t.raw").is_none(), "shown under its parent only");
        assert_eq!(
            Schema::from_mapping(&shown.to_string()).unwrap().to_mapping(),
            shown,
            "what is shown reads back"
        );
        let defs = s.dynamic_defs("city", &serde_json::json!("Paris")).unwrap();
        let named: Vec<(&str, FieldKind, Option<u32>)> =
            defs.iter().map(|d| (d.name.as_str(), d.kind, d.ignore_above)).collect();
        assert_eq!(named, [("city", FieldKind::Text, None), ("city.keyword", FieldKind::Keyword, Some(256))]);
        assert_eq!(
            s.dynamic_defs("m", &serde_json::json!(3)).unwrap().len(),
            1,
            "a number has no keyword beside it"
        );
    }
}
