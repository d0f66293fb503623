//! Aliases: other names for one or more indexes, kept in each index's
//! settings file. `POST /_aliases` (`add` and `remove` actions, checked
//! together, then applied), `PUT|POST /{index}/_alias/{name}`,
//! `DELETE /{index}/_alias/{name}`, `GET|HEAD /_alias[/{name}]` and
//! `/{index}/_alias[/{name}]`. A search through an alias searches every index
//! it names; a read of one document needs it to name exactly one index
//! (`Catalog::get_one`), a write goes to its write index (`Catalog::get`). An alias's options
//! (filter, routing, write index, hidden) are read and shown as
//! Elasticsearch reads and shows them (`alias_options.rs`).

use std::collections::BTreeSet;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::alias_options::{unreadable, AliasOptions, Aliases};
use crate::call::Call;
use crate::catalog::AliasChange;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::indices::ADMIN_PARAMS;
use crate::server::{blocking, Shared};

/// `POST /_aliases`.
pub async fn update(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let mut changes = Vec::new();
        for action in parse_actions(call.json()?)? {
            let targets = local_targets(&app, &action.indexes.join(","))?;
            changes.extend(alias_changes(&targets, &action.aliases.join(","), action.added())?);
        }
        app.catalog.change_aliases(&changes)?;
        Ok(respond::ok(&json!({"acknowledged": true, "errors": false})))
    })
    .await
}

/// One `{"add": {...}}` or `{"remove": {...}}` of a `POST /_aliases`: the
/// index expressions and alias names (or, for a removal, patterns) it
/// names, and the options of the aliases it adds.
pub(crate) struct AliasAction {
    pub add: bool,
    pub indexes: Vec<String>,
    pub aliases: Vec<String>,
    pub options: AliasOptions,
}

impl AliasAction {
    /// The options of the aliases it adds; none for a removal.
    pub fn added(&self) -> Option<&AliasOptions> {
        self.add.then_some(&self.options)
    }
}

/// The actions of a `POST /_aliases` body, every one checked.
pub(crate) fn parse_actions(body: Option<Value>) -> ApiResult<Vec<AliasAction>> {
    let body = body.ok_or_else(|| ApiError::parsing("[aliases] requires an [actions] array"))?;
    let Some(Value::Array(actions)) = body.get("actions") else {
        return Err(ApiError::parsing("[aliases] requires an [actions] array"));
    };
    if let Some(other) = body.as_object().and_then(|b| b.keys().find(|k| *k != "actions")) {
        return Err(ApiError::parsing(format!("[aliases] unknown field [{other}]")));
    }
    actions.iter().map(parse_action).collect()
}

fn parse_action(action: &Value) -> ApiResult<AliasAction> {
    let (kind, params) = match action.as_object().map(|a| a.iter().collect::<Vec<_>>()).as_deref() {
        Some([(kind, Value::Object(params))]) => (kind.as_str(), params),
        _ => return Err(ApiError::parsing("an alias action is an object with one of [add] or [remove]")),
    };
    let add = match kind {
        "add" => true,
        "remove" => false,
        "remove_index" => {
            return Err(ApiError::illegal_argument("[remove_index] is not supported yet by Needle"))
        }
        other => return Err(ApiError::parsing(format!("unknown alias action [{other}]"))),
    };
    let mut indexes = Vec::new();
    let mut aliases = Vec::new();
    let mut options = AliasOptions::default();
    for (key, value) in params {
        let into = match key.as_str() {
            "index" | "indices" => &mut indexes,
            "alias" | "aliases" => &mut aliases,
            "must_exist" if !add => continue,
            option if add && options.read(option, value)? => continue,
            other => return Err(unreadable(format!("[{kind}] unknown field [{other}]"))),
        };
        match value {
            Value::String(s) => into.push(s.clone()),
            Value::Array(items) => into.extend(items.iter().filter_map(|i| i.as_str().map(str::to_string))),
            _ => return Err(ApiError::parsing(format!("[{key}] must be a string or an array of strings"))),
        }
    }
    if indexes.is_empty() || aliases.is_empty() {
        return Err(ApiError::bad_request(
            "action_request_validation_exception",
            format!("Validation Failed: 1: [{kind}] needs an [index] and an [alias];"),
        ));
    }
    Ok(AliasAction { add, indexes, aliases, options })
}

/// The node's own indexes an expression names, with the aliases each has.
fn local_targets(app: &Shared, expression: &str) -> ApiResult<Vec<(String, BTreeSet<String>)>> {
    let names = |h: &crate::catalog::Handle| h.settings().aliases.into_keys().collect();
    Ok(app.catalog.resolve(expression)?.into_iter().map(|h| (h.name.clone(), names(&h))).collect())
}

/// The changes that add the aliases `names` with `added` options (or,
/// with none, remove them) on `targets` (indexes with the aliases each has);
/// removal patterns match each index's aliases, and must match one somewhere.
pub(crate) fn alias_changes(
    targets: &[(String, BTreeSet<String>)],
    names: &str,
    added: Option<&AliasOptions>,
) -> ApiResult<Vec<AliasChange>> {
    let mut out = Vec::new();
    let change = |index: &String, alias: &str| AliasChange {
        index: index.clone(),
        alias: alias.to_string(),
        options: added.cloned(),
    };
    for (index, has) in targets {
        for name in names.split(',').filter(|n| !n.is_empty()) {
            if added.is_some() {
                out.push(change(index, name));
                continue;
            }
            let matched = has.iter().filter(|a| name == "_all" || crate::pattern::matches(name, a));
            out.extend(matched.map(|a| change(index, a)));
            if !name.contains('*') && name != "_all" && !has.contains(name) {
                out.push(change(index, name));
            }
        }
    }
    if added.is_none() && out.is_empty() {
        return Err(missing(names));
    }
    Ok(out)
}

/// `PUT|POST /{index}/_alias/{name}`.
pub async fn put(
    State(app): State<Shared>,
    Path((index, names)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let options = match call.json()? {
            Some(Value::Object(options)) => AliasOptions::from_object(&options)?,
            Some(_) => return Err(ApiError::parsing("an alias body must be an object")),
            None => AliasOptions::default(),
        };
        app.catalog.change_aliases(&alias_changes(&local_targets(&app, &index)?, &names, Some(&options))?)?;
        Ok(respond::ok(&json!({"acknowledged": true})))
    })
    .await
}

/// `DELETE /{index}/_alias/{name}` (`name` may be a pattern or `_all`).
pub async fn delete(
    State(app): State<Shared>,
    Path((index, names)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || {
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        app.catalog.change_aliases(&alias_changes(&local_targets(&app, &index)?, &names, None)?)?;
        Ok(respond::ok(&json!({"acknowledged": true})))
    })
    .await
}

/// `GET /_alias`.
pub async fn get_all(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || own_listing(&app, None, None, &call)).await
}

/// `GET /_alias/{name}`.
pub async fn get_named(State(app): State<Shared>, Path(names): Path<String>, call: Call) -> Response {
    blocking(move || own_listing(&app, None, Some(&names), &call)).await
}

/// `GET /{index}/_alias`.
pub async fn get_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || own_listing(&app, Some(&index), None, &call)).await
}

/// `GET /{index}/_alias/{name}`.
pub async fn get_of_named(
    State(app): State<Shared>,
    Path((index, names)): Path<(String, String)>,
    call: Call,
) -> Response {
    blocking(move || own_listing(&app, Some(&index), Some(&names), &call)).await
}

/// `{index: {"aliases": {alias: options}}}` for the indexes of `index`
/// (every one when absent) and the aliases matching `names`; with `names`,
/// only indexes that have one, and 404 when none does.
fn own_listing(app: &Shared, index: Option<&str>, names: Option<&str>, call: &Call) -> ApiResult<Response> {
    call.params.ignore(&ADMIN_PARAMS);
    call.params.ignore(&["local"]);
    call.params.finish(&call.path)?;
    let indexes = app.catalog.resolve(index.unwrap_or("_all"))?;
    let out = listing(indexes.iter().map(|h| (h.name.clone(), h.settings().aliases)), names);
    Ok(listed(out, names))
}

/// `{index: {"aliases": {alias: options}}}` for `indexes` (each with its
/// aliases), the aliases matching `names` (every one when absent); with
/// `names`, only the indexes that have one.
pub(crate) fn listing(
    indexes: impl IntoIterator<Item = (String, Aliases)>,
    names: Option<&str>,
) -> Map<String, Value> {
    let wanted = |alias: &str| {
        names.is_none_or(|n| n.split(',').any(|p| p == "_all" || crate::pattern::matches(p, alias)))
    };
    let mut out = Map::new();
    for (name, aliases) in indexes {
        let aliases: Map<String, Value> =
            aliases.into_iter().filter(|(a, _)| wanted(a)).map(|(a, o)| (a, o.shown())).collect();
        if names.is_none() || !aliases.is_empty() {
            out.insert(name, json!({"aliases": aliases}));
        }
    }
    out
}

/// The answer to a listing: with `names`, a 404 in Elasticsearch's own
/// shape when no index has one.
pub(crate) fn listed(out: Map<String, Value>, names: Option<&str>) -> Response {
    match (names, out.is_empty()) {
        (Some(n), true) => respond::json(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("alias [{n}] missing"), "status": 404}),
        ),
        _ => respond::ok(&Value::Object(out)),
    }
}

/// Aliases named at index creation (`PUT /{index}` with `aliases`), each with its options.
pub fn at_creation(value: &Value) -> ApiResult<Aliases> {
    let Value::Object(aliases) = value else {
        return Err(ApiError::parsing("[aliases] must be an object"));
    };
    let options_of = |options: &Value| match options {
        Value::Object(o) => AliasOptions::from_object(o),
        _ => Err(ApiError::parsing("an alias's options must be an object")),
    };
    aliases.iter().map(|(name, options)| Ok((name.clone(), options_of(options)?))).collect()
}

pub(crate) fn missing(names: &str) -> ApiError {
    let mut e = ApiError::new(
        StatusCode::NOT_FOUND,
        "aliases_not_found_exception",
        format!("aliases [{names}] missing"),
    );
    e.extra.insert("resource.type".into(), json!("aliases"));
    e.extra.insert("resource.id".into(), json!(names));
    e
}
