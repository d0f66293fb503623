//! Index templates (`_index_template`) and the component templates they
//! are composed of (`_component_template`), as Elasticsearch has them since
//! 7.8: an index created by name (`PUT /{index}`, or a first write) starts
//! from the settings, mappings and aliases of the index template of highest
//! `priority` whose `index_patterns` match its name: its component templates'
//! in `composed_of` order, then its own, then the request's, each over the
//! ones before (settings by key, mappings field by field with object fields
//! merged within, aliases by name). Two index templates of one priority whose
//! patterns could both match a name are refused, so at most one applies.
//! When none matches, the legacy templates (`_template`, Elasticsearch's
//! before 7.8) whose patterns match apply instead, all of them, in ascending
//! `order`, each over the ones before.
//!
//! On disk, `templates.json` in the data folder, replaced whole at each change
//! (written aside, synced, renamed):
//!
//! ```text
//! File := Body Footer(kind "TMPL", version 2)      (the footer of needle-codecs: length and CRC-32)
//! Body := {"component_templates": {NAME: TEMPLATE}, "index_templates": {NAME: TEMPLATE},
//!          "legacy_templates": {NAME: TEMPLATE}}   (JSON)
//! ```
//!
//! Version 1 had no `legacy_templates`; it is read as having none.
//!
//! Each TEMPLATE is kept as `GET` shows it: settings nested under `index`
//! with string values, mappings and aliases as given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use axum::http::StatusCode;
use needle_engine::{flatten_settings, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::catalog::Settings;
use crate::data_streams::DataStreams;
use crate::error::{ApiError, ApiResult};
use crate::kept_file;
use crate::pattern;
use crate::routes::indices::{analyzers_of, parse_mapping};

const FILE: &str = "templates.json";
const KIND: &[u8; 4] = b"TMPL";
const VERSION: u32 = 2;

pub struct Templates {
    file: PathBuf,
    kept: RwLock<Kept>,
}

#[derive(Default, Clone, Serialize, Deserialize)]
struct Kept {
    component_templates: BTreeMap<String, Value>,
    index_templates: BTreeMap<String, Value>,
    #[serde(default)]
    legacy_templates: BTreeMap<String, Value>,
}

/// Which kind a request is about.
#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    Index,
    Component,
    /// `_template`.
    Legacy,
}

impl Kind {
    /// The kind's name in answers (`index_templates`) and in each entry (`index_template`).
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Kind::Index | Kind::Legacy => ("index_templates", "index_template"),
            Kind::Component => ("component_templates", "component_template"),
        }
    }
}

impl Kept {
    fn of(&self, kind: Kind) -> &BTreeMap<String, Value> {
        match kind {
            Kind::Index => &self.index_templates,
            Kind::Component => &self.component_templates,
            Kind::Legacy => &self.legacy_templates,
        }
    }

    fn of_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, Value> {
        match kind {
            Kind::Index => &mut self.index_templates,
            Kind::Component => &mut self.component_templates,
            Kind::Legacy => &mut self.legacy_templates,
        }
    }

    /// What the legacy templates matching `index` give it: each in
    /// ascending `order` (then by name) over the ones before.
    fn legacy_for(&self, index: &str) -> ApiResult<Value> {
        let mut matching: Vec<(&String, &Value)> = self
            .legacy_templates
            .iter()
            .filter(|(_, t)| patterns(t).any(|p| pattern::matches(p, index)))
            .collect();
        matching.sort_by_key(|(_, t)| t["order"].as_i64().unwrap_or(0));
        let mut made = json!({});
        for (_, t) in matching {
            let parts: Map<String, Value> = ["settings", "mappings", "aliases"]
                .into_iter()
                .filter_map(|k| {
                    t.get(k)
                        .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                        .map(|v| (k.into(), v.clone()))
                })
                .collect();
            merge_into(&mut made, &Value::Object(parts))?;
        }
        Ok(made)
    }

    /// The index template an index named `index` is made from: of those
    /// whose patterns match the name, the one of the highest priority.
    fn chosen_for(&self, index: &str) -> Option<(&String, &Value)> {
        self.index_templates
            .iter()
            .filter(|(_, t)| patterns(t).any(|p| pattern::matches(p, index)))
            .max_by_key(|(_, t)| priority(t))
    }
}

impl Templates {
    /// The templates kept in folder `data` (none when it has no file yet).
    pub fn open(data: &Path) -> std::io::Result<Templates> {
        let file = data.join(FILE);
        let kept = kept_file::read(&file, KIND, VERSION)?.unwrap_or_default();
        Ok(Templates { file, kept: RwLock::new(kept) })
    }

    /// Adds or replaces template `name` of `kind` from a `PUT` body; with
    /// `create`, one that exists is an error. Checked whole before it is kept.
    pub fn put(&self, kind: Kind, name: &str, body: &Value, create: bool) -> ApiResult<()> {
        let mut kept = self.kept.write().expect("templates lock");
        if create && kept.of(kind).contains_key(name) {
            let what = match kind {
                Kind::Index => "index template",
                Kind::Component => "component template",
                Kind::Legacy => "index_template",
            };
            return Err(ApiError::illegal_argument(format!("{what} [{name}] already exists")));
        }
        let template = match kind {
            Kind::Index => read_index_template(name, body, &kept)?,
            Kind::Component => read_component_template(body)?,
            Kind::Legacy => read_legacy_template(body)?,
        };
        if kind == Kind::Component {
            // The index templates composed of it must still make valid indexes.
            let mut after = kept.clone();
            after.component_templates.insert(name.to_string(), template.clone());
            for (user, t) in kept.index_templates.iter().filter(|(_, t)| composes(t, name)) {
                composed(user, t, &after)?;
            }
        }
        let mut after = kept.clone();
        after.of_mut(kind).insert(name.to_string(), template);
        self.write(&after)?;
        *kept = after;
        Ok(())
    }

    /// Removes the templates of `kind` that `names` names (comma-separated, `*` patterns); a
    /// name matching none is a 404, a component template an index template uses a 400.
    pub fn delete(&self, kind: Kind, names: &str, streams: &DataStreams) -> ApiResult<()> {
        let mut kept = self.kept.write().expect("templates lock");
        let gone = named(kept.of(kind), names, kind).map_err(|e| match kind {
            Kind::Index | Kind::Legacy => ApiError::new(
                StatusCode::NOT_FOUND,
                "index_template_missing_exception",
                format!("index_template [{names}] missing"),
            ),
            Kind::Component => e,
        })?;
        if kind == Kind::Component {
            for name in &gone {
                let users: Vec<&String> =
                    kept.index_templates.iter().filter(|(_, t)| composes(t, name)).map(|(n, _)| n).collect();
                if !users.is_empty() {
                    return Err(ApiError::illegal_argument(format!(
                        "component templates [{name}] cannot be removed as they are still in use by index templates [{}]",
                        users.iter().map(|u| u.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                }
            }
        }
        let all_streams = streams.all();
        for name in gone.iter().filter(|_| kind == Kind::Index) {
            let users: Vec<&str> =
                all_streams.iter().filter(|(_, s)| s.template == *name).map(|(n, _)| n.as_str()).collect();
            if !users.is_empty() {
                return Err(ApiError::illegal_argument(format!(
                    "unable to remove composable templates [{name}] as they are in use by a data streams [{}]",
                    users.join(", ")
                )));
            }
        }
        let mut after = kept.clone();
        for name in &gone {
            after.of_mut(kind).remove(name);
        }
        self.write(&after)?;
        *kept = after;
        Ok(())
    }

    /// `GET`'s status and answer: every template of `kind`, or those `names`
    /// names (a 404 with an empty list when only patterns named none, as
    /// Elasticsearch answers).
    pub fn get(&self, kind: Kind, names: Option<&str>) -> ApiResult<(StatusCode, Value)> {
        let kept = self.kept.read().expect("templates lock");
        let all = kept.of(kind);
        if kind == Kind::Legacy {
            // By name, `{}` and a 404 when a name or pattern names none.
            let shown = names.map_or_else(|| Ok(all.keys().cloned().collect()), |n| named(all, n, kind));
            let shown: Map<String, Value> =
                shown.unwrap_or_default().into_iter().map(|n| (n.clone(), all[&n].clone())).collect();
            let status =
                if shown.is_empty() && names.is_some() { StatusCode::NOT_FOUND } else { StatusCode::OK };
            return Ok((status, Value::Object(shown)));
        }
        let shown = match names {
            None => all.keys().cloned().collect(),
            Some(names) => named(all, names, kind)?,
        };
        let (list, entry) = kind.names();
        let entries: Vec<Value> = shown.iter().map(|n| json!({"name": n, entry: all[n]})).collect();
        let status =
            if entries.is_empty() && names.is_some() { StatusCode::NOT_FOUND } else { StatusCode::OK };
        Ok((status, json!({ list: entries })))
    }

    /// Whether `names` names a template of `kind`.
    pub fn exists(&self, kind: Kind, names: &str) -> bool {
        named(self.kept.read().expect("templates lock").of(kind), names, kind).is_ok()
    }

    /// The body of an index's creation with what the matching index template
    /// gives under it (`body` as it is when none matches).
    pub fn applied(&self, index: &str, body: &Value) -> ApiResult<Value> {
        if !body.is_object() {
            return Ok(body.clone()); // refused by the creation, as it is
        }
        let kept = self.kept.read().expect("templates lock");
        let mut made = match kept.chosen_for(index) {
            Some((name, template)) => composed(name, template, &kept)?,
            None => kept.legacy_for(index)?,
        };
        merge_into(&mut made, body)?;
        Ok(made)
    }

    /// The index template that makes `name` a data stream, with the
    /// stream's timestamp field: the template an index of that name would
    /// be made from, when it has a `data_stream`.
    pub fn data_stream_for(&self, name: &str) -> Option<(String, String)> {
        let kept = self.kept.read().expect("templates lock");
        let (template, t) = kept.chosen_for(name)?;
        let field = t.get("data_stream")?.pointer("/timestamp_field/name")?.as_str()?;
        Some((template.clone(), field.to_string()))
    }

    /// `POST /_index_template/_simulate_index/{index}`: what an index of that
    /// name would be made with (see [`simulated`]); `{}` when no template matches it.
    pub fn simulate_index(&self, index: &str) -> ApiResult<Value> {
        let kept = self.kept.read().expect("templates lock");
        match kept.chosen_for(index) {
            Some((name, template)) => simulated(name, template, &kept),
            None => Ok(json!({})),
        }
    }

    /// `POST /_index_template/_simulate[/{name}]`: what index template
    /// `name`, or the one `body` describes (checked as a `PUT` would check
    /// it, and not kept), gives an index (see [`simulated`]).
    pub fn simulate_template(&self, name: Option<&str>, body: Option<&Value>) -> ApiResult<Value> {
        let kept = self.kept.read().expect("templates lock");
        match (name, body) {
            (Some(name), _) => {
                let template = kept.index_templates.get(name).ok_or_else(|| {
                    ApiError::illegal_argument(format!(
                        "unable to simulate template [{name}] that does not exist"
                    ))
                })?;
                simulated(name, template, &kept)
            }
            (None, Some(body)) => simulated("", &read_index_template("simulated", body, &kept)?, &kept),
            (None, None) => Err(crate::routes::write::validation(
                "either index name or index template body must be specified for simulation",
            )),
        }
    }

    fn write(&self, kept: &Kept) -> ApiResult<()> {
        kept_file::write(&self.file, kept, KIND, VERSION, "templates")
    }
}

/// A simulation's answer: what template `name` (`t`) gives an index, its
/// settings shown as a `GET` shows an index's, and the other index
/// templates whose patterns overlap its own (the ones it wins or loses
/// against), by name.
fn simulated(name: &str, t: &Value, kept: &Kept) -> ApiResult<Value> {
    let made = composed(name, t, kept)?;
    let mut shown = Map::new();
    shown.insert("settings".into(), shown_settings(made.get("settings").unwrap_or(&json!({}))));
    if let Some(mappings) = made.get("mappings") {
        shown.insert("mappings".into(), mappings.clone());
    }
    shown.insert("aliases".into(), made.get("aliases").cloned().unwrap_or_else(|| json!({})));
    let overlapping: Vec<Value> = kept
        .index_templates
        .iter()
        .filter(|(other, o)| *other != name && patterns(o).any(|p| patterns(t).any(|q| overlap(p, q))))
        .map(|(other, o)| json!({"name": other, "index_patterns": o["index_patterns"]}))
        .collect();
    Ok(json!({"template": shown, "overlapping": overlapping}))
}

/// The names of `all` that `names` names; a plain name that is not there is a 404.
fn named(all: &BTreeMap<String, Value>, names: &str, kind: Kind) -> ApiResult<Vec<String>> {
    let out = pattern::named(all, names, |name| missing(kind, name))?;
    if out.is_empty() && !names.contains('*') {
        return Err(missing(kind, names));
    }
    Ok(out)
}

fn missing(kind: Kind, name: &str) -> ApiError {
    let what = if kind == Kind::Component { "component template" } else { "index template" };
    ApiError::new(
        StatusCode::NOT_FOUND,
        "resource_not_found_exception",
        format!("{what} matching [{name}] not found"),
    )
}

fn patterns(t: &Value) -> impl Iterator<Item = &str> {
    t["index_patterns"].as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn priority(t: &Value) -> u64 {
    t["priority"].as_u64().unwrap_or(0)
}

fn composes(t: &Value, component: &str) -> bool {
    t["composed_of"].as_array().is_some_and(|c| c.iter().any(|n| n == component))
}

/// An index template from its `PUT` body, checked against the others kept.
fn read_index_template(name: &str, body: &Value, kept: &Kept) -> ApiResult<Value> {
    let Value::Object(body) = body else { return Err(parse("index_template", "the body must be an object")) };
    let mut t = Map::new();
    t.insert("composed_of".into(), json!([]));
    for (key, value) in body {
        match key.as_str() {
            "index_patterns" => {
                let list = match value {
                    Value::String(p) => vec![p.clone()],
                    Value::Array(a) => a
                        .iter()
                        .map(|p| p.as_str().map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or_else(|| parse("index_template", "[index_patterns] must be strings"))?,
                    _ => return Err(parse("index_template", "[index_patterns] must be a string or a list")),
                };
                t.insert(key.clone(), json!(list));
            }
            "template" => {
                t.insert(key.clone(), read_template(value)?);
            }
            "composed_of" => {
                let list = value
                    .as_array()
                    .and_then(|a| {
                        a.iter().map(|n| n.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()
                    })
                    .ok_or_else(|| parse("index_template", "[composed_of] must be a list of names"))?;
                t.insert(key.clone(), json!(list));
            }
            "priority" | "version" => {
                let n = value
                    .as_u64()
                    .ok_or_else(|| parse("index_template", &format!("[{key}] must be a number")))?;
                t.insert(key.clone(), json!(n));
            }
            "_meta" if value.is_object() => {
                t.insert(key.clone(), value.clone());
            }
            "data_stream" => {
                t.insert(key.clone(), read_data_stream(value)?);
            }
            other => return Err(unknown("index_template", other)),
        }
    }
    let t = Value::Object(t);
    if patterns(&t).next().is_none() {
        return Err(ApiError::illegal_argument("index patterns are missing"));
    }
    let absent: Vec<&str> = t["composed_of"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|c| !kept.component_templates.contains_key(*c))
        .collect();
    if !absent.is_empty() {
        return Err(invalid(
            name,
            &format!("index template [{name}] specifies component templates {absent:?} that do not exist"),
        ));
    }
    for (other, o) in kept.index_templates.iter().filter(|(n, o)| *n != name && priority(o) == priority(&t)) {
        let clash: Vec<&str> = patterns(o).filter(|p| patterns(&t).any(|q| overlap(p, q))).collect();
        if !clash.is_empty() {
            let mine: Vec<&str> = patterns(&t).collect();
            return Err(ApiError::illegal_argument(format!(
                "index template [{name}] has index patterns {mine:?} matching patterns from existing templates [{other}] with patterns ({other} => {clash:?}) that have the same priority [{}], multiple index templates may not match during index creation, please use a different priority",
                priority(&t)
            )));
        }
    }
    composed(name, &t, kept)?;
    Ok(t)
}

/// An index template's `data_stream`: the indexes it makes back data
/// streams, whose documents hold their date in `timestamp_field.name`
/// (`@timestamp` unless given). Kept as `GET` shows it.
fn read_data_stream(value: &Value) -> ApiResult<Value> {
    let Value::Object(parts) = value else {
        return Err(parse("data_stream", "[data_stream] must be an object"));
    };
    let mut field = "@timestamp";
    for (key, value) in parts {
        match (key.as_str(), value.pointer("/name")) {
            ("timestamp_field", Some(Value::String(name)))
                if value.as_object().is_some_and(|o| o.len() == 1) =>
            {
                field = name
            }
            ("timestamp_field", _) => {
                return Err(parse("data_stream", "[timestamp_field] must be an object with a [name]"))
            }
            (other, _) => return Err(unknown("data_stream", other)),
        }
    }
    Ok(json!({"timestamp_field": {"name": field}}))
}

/// A component template from its `PUT` body.
fn read_component_template(body: &Value) -> ApiResult<Value> {
    let Value::Object(body) = body else {
        return Err(parse("component_template", "the body must be an object"));
    };
    let mut t = Map::new();
    for (key, value) in body {
        match key.as_str() {
            "template" => {
                t.insert(key.clone(), read_template(value)?);
            }
            "version" => {
                let n = value
                    .as_u64()
                    .ok_or_else(|| parse("component_template", "[version] must be a number"))?;
                t.insert(key.clone(), json!(n));
            }
            "_meta" if value.is_object() => {
                t.insert(key.clone(), value.clone());
            }
            other => return Err(unknown("component_template", other)),
        }
    }
    if !t.contains_key("template") {
        return Err(ApiError::illegal_argument("template is missing"));
    }
    Ok(Value::Object(t))
}

/// A template's `template` object: settings (checked, kept nested under
/// `index` as strings), mappings and aliases (checked, kept as given).
fn read_template(value: &Value) -> ApiResult<Value> {
    let Value::Object(parts) = value else { return Err(parse("template", "[template] must be an object")) };
    let mut t = Map::new();
    for (key, value) in parts {
        match key.as_str() {
            "settings" => {
                Settings::new().apply(value)?;
                analyzers_of(value)?;
                t.insert(key.clone(), shown_settings(value));
            }
            "mappings" => {
                mapping_of(value, parts.get("settings"))?;
                t.insert(key.clone(), value.clone());
            }
            "aliases" => {
                crate::routes::aliases::at_creation(value)?;
                t.insert(key.clone(), value.clone());
            }
            other => return Err(unknown("template", other)),
        }
    }
    Ok(Value::Object(t))
}

/// A legacy template from its `PUT` body, kept as `GET /_template` shows it:
/// `order` (0 unless given), `version` if given, `index_patterns` (one or a
/// list), `settings` shown as an index's, `mappings` and `aliases`.
fn read_legacy_template(body: &Value) -> ApiResult<Value> {
    let Value::Object(body) = body else { return Err(legacy_parse("the body must be an object")) };
    let mut t = Map::new();
    t.insert("order".into(), json!(0));
    let mut parts = Map::new();
    for (key, value) in body {
        match key.as_str() {
            "index_patterns" => {
                let list: Vec<Value> = match value {
                    Value::String(p) => vec![json!(p)],
                    Value::Array(a) if a.iter().all(Value::is_string) => a.clone(),
                    _ => return Err(legacy_parse("[index_patterns] must be a string or a list of strings")),
                };
                t.insert(key.clone(), Value::Array(list));
            }
            "order" | "version" => {
                let n = value.as_i64().or_else(|| value.as_str().and_then(|s| s.parse().ok()));
                let n = n.ok_or_else(|| {
                    ApiError::bad_request("number_format_exception", format!("For input string: {value}"))
                })?;
                t.insert(key.clone(), json!(n));
            }
            "settings" | "mappings" | "aliases" => {
                parts.insert(key.clone(), value.clone());
            }
            other => return Err(legacy_parse(&format!("unknown key [{other}] in the template "))),
        }
    }
    if patterns(&Value::Object(t.clone())).next().is_none() {
        return Err(crate::routes::write::validation("index patterns are missing"));
    }
    let read = read_template(&Value::Object(parts))?;
    for key in ["settings", "mappings", "aliases"] {
        t.insert(key.into(), read.get(key).cloned().unwrap_or_else(|| json!({})));
    }
    Ok(Value::Object(t))
}

fn legacy_parse(reason: &str) -> ApiError {
    ApiError::bad_request("parse_exception", reason)
}

/// Settings as Elasticsearch shows them: nested, under `index`, values as strings.
pub fn shown_settings(settings: &Value) -> Value {
    let mut flat = Vec::new();
    flatten_settings("", settings, &mut flat);
    let mut shown = Map::new();
    for (key, value) in flat {
        let key = if key.starts_with("index.") { key } else { format!("index.{key}") };
        let text = match value {
            Value::String(s) => Value::String(s),
            Value::Array(a) => Value::Array(
                a.into_iter().map(|v| json!(v.as_str().map_or(v.to_string(), str::to_string))).collect(),
            ),
            other => Value::String(other.to_string()),
        };
        insert_path(&mut shown, &key, text);
    }
    Value::Object(shown)
}

fn insert_path(map: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            map.insert(path.to_string(), value);
        }
        Some((head, rest)) => {
            let inner = map.entry(head.to_string()).or_insert_with(|| json!({}));
            if !inner.is_object() {
                *inner = json!({});
            }
            insert_path(inner.as_object_mut().expect("an object"), rest, value);
        }
    }
}

/// The schema of `mappings` beside `settings` (whose analyzers its fields may name), checked.
fn mapping_of(mappings: &Value, settings: Option<&Value>) -> ApiResult<Schema> {
    let analysis = analyzers_of(settings.unwrap_or(&json!({})))?;
    parse_mapping(mappings, &analysis)
}

/// What index template `name` gives an index: its component templates'
/// parts, then its own, each over the ones before, as a creation body;
/// checked as an index would be made from it.
fn composed(name: &str, t: &Value, kept: &Kept) -> ApiResult<Value> {
    let mut made = json!({});
    let components = t["composed_of"].as_array().into_iter().flatten().filter_map(Value::as_str);
    for c in components {
        let part = kept.component_templates.get(c).ok_or_else(|| {
            invalid(
                name,
                &format!("index template [{name}] specifies component templates [\"{c}\"] that do not exist"),
            )
        })?;
        merge_into(&mut made, &part["template"])?;
    }
    merge_into(&mut made, &t["template"])?;
    if let Some(m) = made.get("mappings") {
        mapping_of(m, made.get("settings")).map_err(|e| invalid(name, &e.reason))?;
    }
    Ok(made)
}

/// Lays the parts of creation body `over` over those of `base`.
fn merge_into(base: &mut Value, over: &Value) -> ApiResult<()> {
    let Value::Object(over) = over else { return Ok(()) };
    for (key, value) in over {
        let slot = &mut base[key.as_str()];
        match key.as_str() {
            "settings" => {
                let mut flat = Vec::new();
                if slot.is_object() {
                    flatten_settings("", slot, &mut flat);
                }
                flatten_settings("", value, &mut flat);
                let mut merged = Map::new();
                for (k, v) in flat {
                    let k = if k.starts_with("index.") { k } else { format!("index.{k}") };
                    merged.insert(k, v);
                }
                *slot = shown_settings(&Value::Object(merged));
            }
            "mappings" => merge_mapping(slot, value),
            "aliases" if slot.is_object() && value.is_object() => {
                let s = slot.as_object_mut().expect("an object");
                s.extend(value.as_object().expect("an object").clone());
            }
            _ => *slot = value.clone(),
        }
    }
    Ok(())
}

/// Mappings laid over mappings: `properties` field by field (an object
/// field, with `properties` on both sides, merged within; any other
/// replaced whole), every other key replaced.
fn merge_mapping(base: &mut Value, over: &Value) {
    let (Value::Object(b), Value::Object(o)) = (&mut *base, over) else {
        *base = over.clone();
        return;
    };
    for (key, value) in o {
        match (key.as_str(), b.get_mut(key)) {
            ("properties", Some(Value::Object(fields))) if value.is_object() => {
                for (field, def) in value.as_object().expect("an object") {
                    match fields.get_mut(field) {
                        Some(old) if old.get("properties").is_some() && def.get("properties").is_some() => {
                            merge_mapping(old, def)
                        }
                        _ => {
                            fields.insert(field.clone(), def.clone());
                        }
                    }
                }
            }
            _ => {
                b.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Whether some name matches both `*` patterns.
fn overlap(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // reach[i][j]: the first i bytes of a and j of b can end at one point of a common name.
    let mut reach = vec![vec![false; b.len() + 1]; a.len() + 1];
    reach[0][0] = true;
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            if !reach[i][j] {
                continue;
            }
            let (x, y) = (a.get(i), b.get(j));
            if x == Some(&b'*') {
                reach[i + 1][j] = true; // the star ends
                if y.is_some() {
                    reach[i][j + 1] = true; // the star takes what b's next byte stands for
                }
            }
            if y == Some(&b'*') {
                reach[i][j + 1] = true;
                if x.is_some() {
                    reach[i + 1][j] = true;
                }
            }
            if x.is_some() && x == y {
                reach[i + 1][j + 1] = true;
            }
        }
    }
    reach[a.len()][b.len()]
}

fn parse(object: &str, reason: &str) -> ApiError {
    ApiError::bad_request("x_content_parse_exception", format!("[{object}] {reason}"))
}

fn unknown(object: &str, key: &str) -> ApiError {
    parse(object, &format!("unknown field [{key}]"))
}

fn invalid(name: &str, cause: &str) -> ApiError {
    ApiError::bad_request(
        "invalid_index_template_exception",
        format!("index_template [{name}] invalid, cause [{cause}]"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_overlap_when_some_name_matches_both() {
        for (a, b, both) in [
            ("logs-*", "logs-app-*", true),
            ("logs-*", "metrics-*", false),
            ("*-prod", "logs-*", true),
            ("a*c", "ab", false),
            ("a*c", "a*b*c", true),
            ("abc", "abc", true),
            ("abc", "abd", false),
            ("*", "x", true),
        ] {
            assert_eq!(overlap(a, b), both, "{a} {b}");
            assert_eq!(overlap(b, a), both, "{b} {a}");
        }
    }

    #[test]
    fn settings_are_shown_nested_under_index_as_strings() {
        let shown = shown_settings(&json!({"number_of_shards": 2, "index": {"refresh_interval": "5s"}}));
        assert_eq!(shown, json!({"index": {"number_of_shards": "2", "refresh_interval": "5s"}}));
    }

    #[test]
    fn mappings_merge_field_by_field_and_object_fields_within() {
        let mut base =
            json!({"properties": {"a": {"type": "text"}, "o": {"properties": {"x": {"type": "long"}}}}});
        let over = json!({"dynamic": false, "properties": {"a": {"type": "keyword"}, "o": {"properties": {"y": {"type": "date"}}}}});
        merge_mapping(&mut base, &over);
        assert_eq!(
            base,
            json!({"dynamic": false, "properties": {"a": {"type": "keyword"},
                   "o": {"properties": {"x": {"type": "long"}, "y": {"type": "date"}}}}})
        );
    }
}
