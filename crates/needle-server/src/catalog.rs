//! The indexes a server holds: one folder each under `DATA/indices/`, each a
//! Needle index with its writer (so writes go through the index's one writer,
//! and searches take its snapshots) and a settings file beside its manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use needle_engine::{flatten_settings, Durability, Index, IndexWriter, Schema, WriterOptions, MANIFEST_FILE};
use needle_storage::Directory;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::alias_options::{self, AliasOptions, Aliases};
use crate::counters::IndexCounters;
use crate::data_streams::{self, DataStreams};
use crate::error::{ApiError, ApiResult};
use crate::request_cache::RequestCache;
use crate::templates::Templates;

const SETTINGS_FILE: &str = "needle-settings.json";

/// The settings of an index that the server keeps (Elasticsearch's names).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    pub uuid: String,
    /// Milliseconds since the epoch.
    pub creation_date: u64,
    pub number_of_shards: u32,
    pub number_of_replicas: u32,
    /// Accepted and shown: every acknowledged document is searchable at once.
    pub refresh_interval: String,
    /// `durable` (Elasticsearch's `index.translog.durability: request`),
    /// `graceful` (`async`), or `volatile`.
    pub durability: String,
    pub max_result_window: usize,
    /// The aliases that name this index, each with its options (absent from
    /// files written before aliases, a list of names in those written before options).
    #[serde(default, deserialize_with = "alias_options::kept")]
    pub aliases: Aliases,
    /// `index.requests.cache.enable`: whether searches asking for no hits are
    /// answered from the request cache (`request_cache.rs`).
    #[serde(default = "enabled")]
    pub requests_cache: bool,
    /// `index.hidden`: wildcards not beginning with `.` pass the index over
    /// (a data stream's backing indexes are hidden; its name reaches them).
    #[serde(default)]
    pub hidden: bool,
}

fn enabled() -> bool {
    true
}

/// A boolean setting's value.
fn flag(text: &str, name: &str) -> ApiResult<bool> {
    text.parse().map_err(|_| {
        ApiError::illegal_argument(format!(
            "failed to parse value [{text}] as only [true] or [false] are allowed for [index.{name}]"
        ))
    })
}

impl Settings {
    pub fn new() -> Self {
        Settings {
            uuid: uuid(),
            creation_date: now_ms(),
            number_of_shards: 1,
            number_of_replicas: 0,
            refresh_interval: "1s".into(),
            durability: "durable".into(),
            max_result_window: 10_000,
            aliases: Aliases::new(),
            requests_cache: true,
            hidden: false,
        }
    }

    /// Applies an Elasticsearch `settings` object (nested or with dotted
    /// keys, with or without the `index.` prefix); an unknown setting is an error.
    pub fn apply(&mut self, settings: &Value) -> ApiResult<()> {
        let mut flat = Vec::new();
        flatten_settings("", settings, &mut flat);
        for (key, value) in flat {
            let name = key.strip_prefix("index.").unwrap_or(&key);
            let text = match &value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let number = || {
                text.parse::<u64>().map_err(|_| {
                    ApiError::illegal_argument(format!(
                        "failed to parse value [{text}] for setting [index.{name}]"
                    ))
                })
            };
            match name {
                // The index sort and analyzers (and the n-gram bound their filters keep to) belong to
                // the mapping (see `Catalog::create_filled`).
                _ if name.starts_with("sort.")
                    || name.starts_with("analysis.")
                    || name == "max_ngram_diff"
                    || name == "max_shingle_diff" => {}
                "number_of_shards" => self.number_of_shards = number()?.clamp(1, 1024) as u32,
                "number_of_replicas" => self.number_of_replicas = number()? as u32,
                "refresh_interval" => self.refresh_interval = text,
                "max_result_window" => self.max_result_window = number()? as usize,
                "requests.cache.enable" => self.requests_cache = flag(&text, name)?,
                "hidden" => self.hidden = flag(&text, name)?,
                "translog.durability" => {
                    self.durability = match text.as_str() {
                        "request" => "durable".into(),
                        "async" => "graceful".into(),
                        _ => {
                            return Err(ApiError::illegal_argument(format!(
                                "unknown value [{text}] for [index.translog.durability]: request or async"
                            )))
                        }
                    }
                }
                "needle.durability" => {
                    Durability::parse(&text).ok_or_else(|| {
                        ApiError::illegal_argument(format!("unknown value [{text}] for [index.needle.durability]: durable, graceful or volatile"))
                    })?;
                    self.durability = text;
                }
                _ => return Err(ApiError::illegal_argument(format!("unknown setting [index.{name}]"))),
            }
        }
        Ok(())
    }

    /// Applies a `PUT _settings` body to a served index's settings: the
    /// dynamic ones change (`refresh_interval`, `number_of_replicas`,
    /// `max_result_window`, `requests.cache.enable`); `number_of_shards` is refused as Elasticsearch
    /// refuses it, and a durability change as not supported yet.
    pub fn apply_dynamic(&mut self, settings: &Value, index: &str) -> ApiResult<()> {
        let settings = settings.get("settings").unwrap_or(settings);
        let mut flat = Vec::new();
        flatten_settings("", settings, &mut flat);
        let before = self.durability.clone();
        for (key, _) in &flat {
            let name = key.strip_prefix("index.").unwrap_or(key);
            if name == "number_of_shards" || name.starts_with("analysis.") || name.starts_with("sort.") {
                return Err(ApiError::illegal_argument(format!(
                    "Can't update non dynamic settings [[index.{name}]] for open indices [[{index}/{}]]",
                    self.uuid
                )));
            }
            if name == "max_ngram_diff" || name == "max_shingle_diff" {
                return Err(ApiError::illegal_argument(format!(
                    "updating [index.{name}] is not supported yet by Needle: it is set when the index is created"
                )));
            }
        }
        self.apply(settings)?;
        if self.durability != before {
            return Err(ApiError::illegal_argument(format!(
                "changing the durability of [{index}] is not supported yet by Needle: it is set when the index is created"
            )));
        }
        Ok(())
    }

    /// The settings as Elasticsearch shows them, with the index sort and analyzers of `schema`.
    pub fn to_json(&self, name: &str, schema: &Schema) -> Value {
        let durability = match self.durability.as_str() {
            "durable" => "request",
            _ => "async",
        };
        let mut shown = self.shown(name, durability);
        if self.hidden {
            shown["index"]["hidden"] = json!("true");
        }
        if let Some(sort) = &schema.sort {
            let order = if sort.descending { "desc" } else { "asc" };
            let missing = if sort.missing_first { "_first" } else { "_last" };
            let mode = if sort.descending { "max" } else { "min" };
            shown["index"]["sort"] =
                json!({"field": [sort.field], "order": [order], "missing": [missing], "mode": [mode]});
        }
        let analysis = schema.analysis.shown();
        if analysis.as_object().is_some_and(|a| !a.is_empty()) {
            shown["index"]["analysis"] = analysis;
        }
        if let Some(diff) = schema.analysis.max_ngram_diff {
            shown["index"]["max_ngram_diff"] = json!(diff.to_string());
        }
        if let Some(diff) = schema.analysis.max_shingle_diff {
            shown["index"]["max_shingle_diff"] = json!(diff.to_string());
        }
        shown
    }

    fn shown(&self, name: &str, durability: &str) -> Value {
        json!({"index": {
            "number_of_shards": self.number_of_shards.to_string(),
            "number_of_replicas": self.number_of_replicas.to_string(),
            "refresh_interval": self.refresh_interval,
            "max_result_window": self.max_result_window.to_string(),
            "requests": {"cache": {"enable": self.requests_cache.to_string()}},
            "translog": {"durability": durability},
            "needle": {"durability": self.durability},
            "uuid": self.uuid,
            "creation_date": self.creation_date.to_string(),
            "provided_name": name,
            "version": {"created": "9000000"},
        }})
    }
}

/// One index: its handle for searching and its writer.
pub struct Handle {
    pub name: String,
    /// Changed by `PUT _settings` (see [`Handle::settings`]).
    settings: RwLock<Settings>,
    pub index: Index,
    pub writer: IndexWriter,
    /// What the index was asked to do since the server started (`_stats`).
    pub counters: Arc<IndexCounters>,
    /// Answers to searches asking for no hits.
    pub requests: RequestCache,
}

impl Handle {
    fn open(dir: &Path, name: &str, settings: Settings, mapping: Option<Schema>) -> ApiResult<Handle> {
        let index = Index::open_or_create(dir, mapping)?;
        let durability = Durability::parse(&settings.durability).unwrap_or(Durability::Durable);
        let writer = index.writer(WriterOptions { durability, ..WriterOptions::default() })?;
        let settings = RwLock::new(settings);
        let (counters, requests) = Default::default();
        Ok(Handle { name: name.to_string(), settings, index, writer, counters, requests })
    }

    /// The index whose files are in folder `fetched`, moved to `dir`, with
    /// `mapping` (the one it should have now) added to its own.
    fn seeded(
        fetched: &Path,
        dir: &Path,
        name: &str,
        settings: Settings,
        mapping: Option<&Schema>,
    ) -> ApiResult<Handle> {
        std::fs::rename(fetched, dir).map_err(|e| {
            let reason = format!("cannot move the fetched files of [{name}] into place: {e}");
            ApiError::new(axum::http::StatusCode::INTERNAL_SERVER_ERROR, "exception", reason)
        })?;
        let handle = Handle::open(dir, name, settings, None)?;
        if let Some(mapping) = mapping {
            handle.writer.add_mapping(mapping)?;
        }
        Ok(handle)
    }

    /// Whether `index.requests.cache.enable` is on (read without copying the settings).
    pub fn requests_cache_enabled(&self) -> bool {
        self.settings.read().expect("settings lock").requests_cache
    }

    /// The index's settings now.
    pub fn settings(&self) -> Settings {
        self.settings.read().expect("settings lock").clone()
    }
}

/// What fills an index before it is served ([`Catalog::create_filled`]).
pub type Fill<'a> = &'a dyn Fn(&Handle) -> ApiResult<()>;

/// What puts an index's files in a folder before it is opened (a shard's
/// stored commit, fetched from the segment store): whether it put any.
pub type Seed<'a> = &'a dyn Fn(&Path) -> ApiResult<bool>;

pub struct Catalog {
    root: PathBuf,
    indexes: RwLock<BTreeMap<String, Arc<Handle>>>,
    /// The index and component templates an index made by name starts from.
    templates: Templates,
    /// The data streams, each naming the indexes that back it. Never locked
    /// while `indexes` is: a stream is made with it locked, then `indexes`.
    streams: DataStreams,
    /// The data folder's lock: one server per folder (released when dropped or the process dies).
    _lock: std::fs::File,
}

/// The lock a server holds on its data folder.
const LOCK_FILE: &str = "needle-server.lock";

impl Catalog {
    /// Opens every index under `data/indices`. One that cannot be opened is
    /// reported on stderr and left out (the others are served).
    /// A second server on the same folder is refused, naming the first.
    pub fn open(data: &Path) -> std::io::Result<Catalog> {
        let locked = Directory::open(data, true).and_then(|d| d.lock(LOCK_FILE));
        let lock = locked.map_err(|e| std::io::Error::other(e.to_string()))?;
        let root = data.join("indices");
        std::fs::create_dir_all(&root)?;
        let mut indexes = BTreeMap::new();
        for entry in std::fs::read_dir(&root)? {
            let dir = entry?.path();
            let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_string) else { continue };
            let settings = match std::fs::read(dir.join(SETTINGS_FILE))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
            {
                Some(s) => s,
                None => continue, // not an index the server made (or being deleted)
            };
            match Handle::open(&dir, &name, settings, None) {
                Ok(handle) => {
                    indexes.insert(name, Arc::new(handle));
                }
                Err(e) => eprintln!("needle serve: index [{name}] not opened: {}", e.reason),
            }
        }
        let templates = Templates::open(data)?;
        let streams = DataStreams::open(data, |name| indexes.contains_key(name))?;
        Ok(Catalog { root, indexes: RwLock::new(indexes), templates, streams, _lock: lock })
    }

    pub fn templates(&self) -> &Templates {
        &self.templates
    }

    pub fn data_streams(&self) -> &DataStreams {
        &self.streams
    }

    /// Index `name` itself (not an alias or a data stream of that name).
    pub fn index(&self, name: &str) -> Option<Arc<Handle>> {
        self.indexes.read().expect("catalog lock").get(name).cloned()
    }

    /// The index a `create` of a document in `name` goes to: a data
    /// stream's write index, else the one [`Catalog::get`] finds.
    pub fn get_for_create(&self, name: &str) -> ApiResult<Arc<Handle>> {
        let write_index = self.streams.read().get(name).map(|s| s.write_index().to_string());
        self.get(write_index.as_deref().unwrap_or(name))
    }

    /// The index `name` names for a write or a single-document request: an
    /// index, or an alias's write index (the one of its indexes it marks
    /// `is_write_index`, or its only index unless marked `false`).
    /// A data stream takes `create`s alone ([`Catalog::get_for_create`]).
    pub fn get(&self, name: &str) -> ApiResult<Arc<Handle>> {
        if self.streams.read().get(name).is_some() {
            return Err(data_streams::create_only());
        }
        let all = self.indexes.read().expect("catalog lock");
        if let Some(h) = all.get(name) {
            return Ok(h.clone());
        }
        let targets = alias_targets(&all, name);
        if targets.is_empty() {
            return Err(ApiError::index_not_found(name));
        }
        let marked: Vec<&(Arc<Handle>, AliasOptions)> =
            targets.iter().filter(|(_, o)| o.is_write_index == Some(true)).collect();
        match (marked.as_slice(), targets.as_slice()) {
            ([(h, _)], _) => Ok(h.clone()),
            ([], [(h, o)]) if o.is_write_index != Some(false) => Ok(h.clone()),
            _ => Err(ApiError::illegal_argument(format!(
                "no write index is defined for alias [{name}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index"
            ))),
        }
    }

    /// Alias `name`'s write index with the alias's options there (see
    /// [`Catalog::get`]); `None` when no index has the alias.
    pub fn alias_write_index(&self, name: &str) -> ApiResult<Option<(Arc<Handle>, AliasOptions)>> {
        let all = self.indexes.read().expect("catalog lock");
        let targets = alias_targets(&all, name);
        let marked: Vec<&(Arc<Handle>, AliasOptions)> =
            targets.iter().filter(|(_, o)| o.is_write_index == Some(true)).collect();
        match (marked.as_slice(), targets.as_slice()) {
            (_, []) => Ok(None),
            ([one], _) => Ok(Some((*one).clone())),
            ([], [one]) if one.1.is_write_index != Some(false) => Ok(Some(one.clone())),
            _ => Err(ApiError::illegal_argument(format!(
                "rollover target [{name}] does not point to a write index"
            ))),
        }
    }

    /// The index `name` names for a read of one document: an index, or an
    /// alias of exactly one index (whatever its write index).
    pub fn get_one(&self, name: &str) -> ApiResult<Arc<Handle>> {
        if self.streams.read().get(name).is_some() {
            return Err(data_streams::not_one_index(name));
        }
        let all = self.indexes.read().expect("catalog lock");
        if let Some(h) = all.get(name) {
            return Ok(h.clone());
        }
        let mut targets = alias_targets(&all, name);
        match targets.len() {
            0 => Err(ApiError::index_not_found(name)),
            1 => Ok(targets.remove(0).0),
            _ => {
                let names: Vec<&str> = targets.iter().map(|(h, _)| h.name.as_str()).collect();
                Err(ApiError::illegal_argument(format!(
                    "alias [{name}] has more than one index associated with it [{}], can't execute a single index op",
                    names.join(", ")
                )))
            }
        }
    }

    /// Adds and removes aliases: every change checked first (an alias may
    /// not be named as an index is; a removed alias must be there; a filter
    /// must read against the index's mapping; an alias has one write index
    /// at most), then each index changed is written to its settings file
    /// before it takes effect.
    pub fn change_aliases(&self, changes: &[AliasChange]) -> ApiResult<()> {
        let all = self.indexes.read().expect("catalog lock");
        let mut changed: BTreeMap<String, Settings> = BTreeMap::new();
        for c in changes {
            if all.contains_key(&c.alias) {
                return Err(ApiError::bad_request(
                    "invalid_alias_name_exception",
                    format!("Invalid alias name [{}]: an index or data stream exists with the same name as the alias", c.alias),
                ));
            }
            check_name(&c.alias)?;
            let h = all.get(&c.index).ok_or_else(|| ApiError::index_not_found(&c.index))?;
            let s = changed.entry(c.index.clone()).or_insert_with(|| h.settings());
            match &c.options {
                Some(options) => {
                    check_filter(&c.alias, options, &h.index.schema())?;
                    s.aliases.insert(c.alias.clone(), options.clone());
                }
                None if s.aliases.remove(&c.alias).is_none() => {
                    let mut e = ApiError::new(
                        axum::http::StatusCode::NOT_FOUND,
                        "aliases_not_found_exception",
                        format!("aliases [{}] missing", c.alias),
                    );
                    e.extra.insert("resource.type".into(), json!("aliases"));
                    e.extra.insert("resource.id".into(), json!(c.alias));
                    return Err(e);
                }
                None => {}
            }
        }
        let settings_of =
            |name: &String, h: &Arc<Handle>| changed.get(name).cloned().unwrap_or_else(|| h.settings());
        let after: Vec<(String, Settings)> =
            all.iter().map(|(n, h)| (n.clone(), settings_of(n, h))).collect();
        for alias in changes.iter().map(|c| &c.alias).collect::<BTreeSet<_>>() {
            one_write_index(alias, &after)?;
        }
        for (name, s) in changed {
            let h = &all[&name];
            write_settings(&self.root.join(&name), &s).map_err(|e| {
                ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "exception",
                    format!("cannot write the settings of [{name}]: {e}"),
                )
            })?;
            *h.settings.write().expect("settings lock") = s;
        }
        Ok(())
    }

    pub fn exists(&self, name: &str) -> bool {
        self.indexes.read().expect("catalog lock").contains_key(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.indexes.read().expect("catalog lock").keys().cloned().collect()
    }

    /// The indexes an expression names: comma-separated names of indexes or
    /// aliases, `*` wildcards (over both, hidden aliases left out), `_all`.
    /// A plain name that names nothing is an error.
    pub fn resolve(&self, expression: &str) -> ApiResult<Vec<Arc<Handle>>> {
        Ok(self.resolve_filtered(expression)?.into_iter().map(|r| r.handle).collect())
    }

    /// [`Catalog::resolve`], each index with the filter a search of it
    /// through `expression` takes, as Elasticsearch filters: none when the
    /// expression names the index itself or an alias of it without a
    /// filter, otherwise any of the filters of the aliases that reached it.
    pub fn resolve_filtered(&self, expression: &str) -> ApiResult<Vec<Reached>> {
        // Locked before the indexes, as a stream is made: the streams, then the indexes.
        let streams = self.streams.read();
        let all = self.indexes.read().expect("catalog lock");
        // Each index reached, with the filters reaching it (`None`: unfiltered).
        let mut out: Vec<(Arc<Handle>, Option<Vec<Value>>)> = Vec::new();
        let mut add =
            |h: &Arc<Handle>, filter: Option<&Value>| match out.iter_mut().find(|(o, _)| o.name == h.name) {
                None => out.push((h.clone(), filter.map(|f| vec![f.clone()]))),
                Some((_, filters)) => match (filters.as_mut(), filter) {
                    (Some(kept), Some(f)) => kept.push(f.clone()),
                    (Some(_), None) => *filters = None,
                    (None, _) => {}
                },
            };
        for part in expression.split(',').filter(|p| !p.is_empty()) {
            if part == "_all" || part.contains('*') {
                let named = |name: &str| part == "_all" || crate::pattern::matches(part, name);
                for (name, h) in all.iter() {
                    if named(name) && (part.starts_with('.') || !h.settings().hidden) {
                        add(h, None);
                    }
                    for (alias, options) in h.settings().aliases {
                        if named(&alias) && options.is_hidden != Some(true) {
                            add(h, options.filter.as_ref());
                        }
                    }
                }
                for (_, stream) in streams.iter().filter(|(name, _)| named(name)) {
                    stream.indices.iter().filter_map(|i| all.get(i)).for_each(|h| add(h, None));
                }
            } else if let Some(h) = all.get(part) {
                add(h, None);
            } else if let Some(stream) = streams.get(part) {
                stream.indices.iter().filter_map(|i| all.get(i)).for_each(|h| add(h, None));
            } else {
                let targets = alias_targets(&all, part);
                if targets.is_empty() {
                    return Err(ApiError::index_not_found(part));
                }
                for (h, options) in &targets {
                    add(h, options.filter.as_ref());
                }
            }
        }
        let reached = |(handle, filters): (Arc<Handle>, Option<Vec<Value>>)| Reached {
            handle,
            filter: filters.map(alias_options::any_of),
        };
        Ok(out.into_iter().map(reached).collect())
    }

    /// Creates index `name` with `mapping` and `settings`.
    pub fn create(&self, name: &str, mapping: Option<Schema>, settings: &Value) -> ApiResult<Arc<Handle>> {
        self.create_with_aliases(name, mapping, settings, Aliases::new())
    }

    /// [`Catalog::create`], the index named by `aliases` too.
    pub fn create_with_aliases(
        &self,
        name: &str,
        mapping: Option<Schema>,
        settings: &Value,
        aliases: Aliases,
    ) -> ApiResult<Arc<Handle>> {
        self.create_filled(name, mapping, settings, aliases, None, None)
    }

    /// [`Catalog::create_with_aliases`], with `fill` run on the new index
    /// before it is served (a shard filled from its ingest log: no search or
    /// write reaches it half made). The catalog is not locked meanwhile, and
    /// an error from `fill` undoes the creation. With `seed`, the index is
    /// made from the files it puts in a folder of its own (fetched without
    /// the catalog's lock), `mapping` added to theirs.
    pub fn create_filled(
        &self,
        name: &str,
        mapping: Option<Schema>,
        settings: &Value,
        aliases: Aliases,
        seed: Option<Seed<'_>>,
        fill: Option<Fill<'_>>,
    ) -> ApiResult<Arc<Handle>> {
        check_name(name)?;
        let fetching = self.root.with_file_name("fetching").join(name);
        let _ = std::fs::remove_dir_all(&fetching); // what a failed fetch left
        let seeded = match seed {
            Some(seed) => seed(&fetching).inspect_err(|_| drop(std::fs::remove_dir_all(&fetching)))?,
            None => false,
        };
        let mut s = Settings::new();
        s.apply(settings)?;
        s.aliases = aliases;
        let mut mapping = mapping;
        let mut sorted = mapping.clone().unwrap_or_default();
        sorted.set_index_sort(settings).map_err(|e| ApiError::illegal_argument(e.to_string()))?;
        if sorted.sort.is_some() {
            mapping = Some(sorted);
        }
        let mut all = self.indexes.write().expect("catalog lock");
        if !alias_targets(&all, name).is_empty() {
            return Err(ApiError::bad_request(
                "invalid_index_name_exception",
                format!("Invalid index name [{name}], already exists as alias"),
            ));
        }
        let schema = mapping.clone().unwrap_or_default();
        for (alias, options) in &s.aliases {
            check_filter(alias, options, &schema)?;
            if all.contains_key(alias) || alias == name {
                return Err(ApiError::bad_request(
                    "invalid_alias_name_exception",
                    format!("Invalid alias name [{alias}]: an index or data stream exists with the same name as the alias"),
                ));
            }
            check_name(alias)?;
        }
        if all.contains_key(name) {
            let mut e = ApiError::bad_request(
                "resource_already_exists_exception",
                format!("index [{name}/{}] already exists", all[name].settings().uuid),
            );
            e.extra.insert("index".into(), json!(name));
            return Err(e);
        }
        let dir = self.root.join(name);
        if dir.join(MANIFEST_FILE).exists() {
            // An index this server did not open (it failed to at start): never overwritten.
            let reason = format!("the folder of [{name}] holds an index that is not served (see the server's log); move it away first");
            return Err(ApiError::bad_request("resource_already_exists_exception", reason));
        }
        let _ = std::fs::remove_dir_all(&dir); // what a failed create left
        let handle = match seeded {
            true => Handle::seeded(&fetching, &dir, name, s, mapping.as_ref()),
            false => Handle::open(&dir, name, s, mapping.or_else(|| Some(Schema::default()))),
        };
        let handle = handle.inspect_err(|_| drop(std::fs::remove_dir_all(&dir)))?;
        let written = write_settings(&dir, &handle.settings());
        if let Err(e) = written {
            drop(handle);
            let _ = std::fs::remove_dir_all(&dir);
            return Err(ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "exception",
                format!("cannot write the settings of [{name}]: {e}"),
            ));
        }
        if let Some(fill) = fill {
            drop(all);
            if let Err(e) = fill(&handle) {
                drop(handle);
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
            // Nothing else made it meanwhile: its folder held this one's manifest.
            all = self.indexes.write().expect("catalog lock");
        }
        let handle = Arc::new(handle);
        all.insert(name.to_string(), handle.clone());
        Ok(handle)
    }

    /// Deletes index `name`: it stops being served at once; its folder goes.
    /// A data stream's write index is not deleted; another of its backing
    /// indexes leaves the stream first.
    pub fn delete(&self, name: &str) -> ApiResult<()> {
        let mut streams = self.streams.change();
        if let Some((stream, mut s)) = streams.backed_by(name) {
            if s.write_index() == name {
                return Err(ApiError::illegal_argument(format!(
                    "index [{name}] is the write index for data stream [{stream}] and cannot be deleted"
                )));
            }
            s.indices.retain(|i| i != name);
            streams.keep(&stream, Some(s))?;
        }
        drop(streams);
        self.delete_unchecked(name)
    }

    /// [`Catalog::delete`] of an index no data stream names (a deleted stream's).
    pub fn delete_unchecked(&self, name: &str) -> ApiResult<()> {
        let handle = self
            .indexes
            .write()
            .expect("catalog lock")
            .remove(name)
            .ok_or_else(|| ApiError::index_not_found(name))?;
        let dir = self.root.join(name);
        // The settings file first: a crash from here on leaves a folder the next start skips.
        let _ = std::fs::remove_file(dir.join(SETTINGS_FILE));
        drop(handle);
        std::fs::remove_dir_all(&dir).map_err(|e| {
            ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "exception",
                format!("cannot delete [{name}]: {e}"),
            )
        })
    }

    /// `PUT _settings`: `body` applied to every index `expression` names,
    /// each checked before any is changed; each written to its settings file
    /// before it takes effect.
    pub fn update_settings(&self, expression: &str, body: &Value) -> ApiResult<()> {
        let handles = self.resolve(expression)?;
        let mut changed = Vec::with_capacity(handles.len());
        for h in &handles {
            let mut s = h.settings();
            s.apply_dynamic(body, &h.name)?;
            changed.push(s);
        }
        for (h, s) in handles.iter().zip(changed) {
            write_settings(&self.root.join(&h.name), &s).map_err(|e| {
                ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "exception",
                    format!("cannot write the settings of [{}]: {e}", h.name),
                )
            })?;
            *h.settings.write().expect("settings lock") = s;
        }
        Ok(())
    }

    /// Commits every index whose durability asks for it (a clean shutdown).
    pub fn close(&self) {
        for (name, h) in self.indexes.read().expect("catalog lock").iter() {
            if h.settings().durability != "volatile" {
                if let Err(e) = h.writer.commit() {
                    eprintln!("needle serve: index [{name}] not committed at shutdown: {e}");
                }
            }
        }
    }
}

/// An alias added to an index with its options (or removed: no options).
#[derive(Debug, Clone)]
pub struct AliasChange {
    pub index: String,
    pub alias: String,
    pub options: Option<AliasOptions>,
}

/// An index an expression names, and the filter of the aliases that reached it.
pub struct Reached {
    pub handle: Arc<Handle>,
    pub filter: Option<Value>,
}

/// The indexes alias `name` names, each with the options it has there.
fn alias_targets(all: &BTreeMap<String, Arc<Handle>>, name: &str) -> Vec<(Arc<Handle>, AliasOptions)> {
    let options = |h: &Arc<Handle>| h.settings().aliases.get(name).cloned();
    all.values().filter_map(|h| options(h).map(|o| (h.clone(), o))).collect()
}

/// An alias's filter must be a query the index reads.
fn check_filter(alias: &str, options: &AliasOptions, schema: &Schema) -> ApiResult<()> {
    match &options.filter {
        Some(filter) => crate::dsl::query(filter, schema).map(drop).map_err(|e| {
            ApiError::illegal_argument(format!("failed to parse filter for alias [{alias}]: {}", e.reason))
        }),
        None => Ok(()),
    }
}

/// An alias marks one of its indexes as its write index at most.
fn one_write_index(alias: &str, indexes: &[(String, Settings)]) -> ApiResult<()> {
    let marked = |s: &Settings| s.aliases.get(alias).is_some_and(|o| o.is_write_index == Some(true));
    let writers: Vec<&str> = indexes.iter().filter(|(_, s)| marked(s)).map(|(n, _)| n.as_str()).collect();
    match writers.len() {
        0 | 1 => Ok(()),
        _ => Err(ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "illegal_state_exception",
            format!("alias [{alias}] has more than one write index [{}]", writers.join(",")),
        )),
    }
}

fn write_settings(dir: &Path, settings: &Settings) -> std::io::Result<()> {
    let tmp = dir.join(format!("{SETTINGS_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(settings).expect("settings serialize"))?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, dir.join(SETTINGS_FILE))?;
    std::fs::File::open(dir)?.sync_all()
}

/// Elasticsearch's rules for index names.
pub(crate) fn check_name(name: &str) -> ApiResult<()> {
    let bad = |why: &str| {
        let mut e = ApiError::bad_request(
            "invalid_index_name_exception",
            format!("Invalid index name [{}], {why}", needle_core::printable(name, 100)),
        );
        e.extra.insert("index".into(), json!(name));
        Err(e)
    };
    if name.is_empty() || name == "." || name == ".." {
        return bad("must not be empty, '.' or '..'");
    }
    if name.len() > 255 {
        return bad("index name is too long, (> 255)");
    }
    if name.to_lowercase() != name {
        return bad("must be lowercase");
    }
    if name.starts_with(['-', '_', '+']) {
        return bad("must not start with '_', '-', or '+'");
    }
    if name.chars().any(|c| "\\/*?\"<>| ,#:".contains(c) || c.is_control()) {
        return bad("must not contain the following characters [ , \", *, \\, <, |, ,, >, /, ?, #, :]");
    }
    Ok(())
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// A random identifier in Elasticsearch's style (22 URL-safe characters).
pub fn uuid() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32);
    (0..22)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ALPHABET[(seed % 64) as usize] as char
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names() {
        assert!(check_name("logs-2026").is_ok());
        for bad in ["", "Logs", "_x", "a b", "a/b", "a*", ".."] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn settings_nested_or_dotted_and_unknown_ones_refused() {
        let mut s = Settings::new();
        s.apply(&json!({"index": {"number_of_shards": 3, "translog": {"durability": "async"}}, "refresh_interval": "5s"})).unwrap();
        assert_eq!(
            (s.number_of_shards, s.durability.as_str(), s.refresh_interval.as_str()),
            (3, "graceful", "5s")
        );
        let err = s.apply(&json!({"index.similarity": {"x": 1}})).unwrap_err();
        assert!(err.reason.contains("unknown setting [index.similarity.x]"), "{}", err.reason);
        // The analyzers are the schema's (see `index_analyzers.rs`), as is the sort.
        s.apply(&json!({"index.analysis": {"analyzer": {"x": {"type": "english"}}}})).unwrap();
    }
}
