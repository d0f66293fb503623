//! `/_index_template`, `/_component_template` and the legacy `/_template`:
//! put (`create=true`: only a new one), get (all, names, `*` patterns), head
//! and delete; what an
//! index of a name, or an index template, would give (`_simulate_index`,
//! `_simulate`); kept and applied by `templates.rs`. Not on a cluster yet: its nodes would each
//! need every template.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::routes::indices::ADMIN_PARAMS;
use crate::server::{blocking, Shared};
use crate::templates::Kind;

pub async fn put_index(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    put(state, name, call, Kind::Index).await
}

pub async fn put_component(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    put(state, name, call, Kind::Component).await
}

pub async fn get_index(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    get(state, Some(name.0), call, Kind::Index).await
}

pub async fn get_component(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    get(state, Some(name.0), call, Kind::Component).await
}

pub async fn get_all_index(state: State<Shared>, call: Call) -> Response {
    get(state, None, call, Kind::Index).await
}

pub async fn get_all_component(state: State<Shared>, call: Call) -> Response {
    get(state, None, call, Kind::Component).await
}

pub async fn delete_index(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    delete(state, name, call, Kind::Index).await
}

pub async fn delete_component(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    delete(state, name, call, Kind::Component).await
}

pub async fn put_legacy(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    put(state, name, call, Kind::Legacy).await
}

pub async fn get_legacy(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    get(state, Some(name.0), call, Kind::Legacy).await
}

pub async fn get_all_legacy(state: State<Shared>, call: Call) -> Response {
    get(state, None, call, Kind::Legacy).await
}

pub async fn delete_legacy(state: State<Shared>, name: Path<String>, call: Call) -> Response {
    delete(state, name, call, Kind::Legacy).await
}

pub async fn head_legacy(State(app): State<Shared>, Path(name): Path<String>) -> Response {
    exists(&app, &name, Kind::Legacy)
}

pub async fn head_index(State(app): State<Shared>, Path(name): Path<String>) -> Response {
    exists(&app, &name, Kind::Index)
}

pub async fn head_component(State(app): State<Shared>, Path(name): Path<String>) -> Response {
    exists(&app, &name, Kind::Component)
}

/// `POST /_index_template/_simulate_index/{index}`.
pub async fn simulate_index(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || {
        single_node(&app)?;
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        Ok(respond::ok(&app.catalog.templates().simulate_index(&index)?))
    })
    .await
}

/// `POST /_index_template/_simulate/{name}`: a kept template.
pub async fn simulate_named(state: State<Shared>, Path(name): Path<String>, call: Call) -> Response {
    simulate(state, Some(name), call).await
}

/// `POST /_index_template/_simulate`: the template in the body.
pub async fn simulate_body(state: State<Shared>, call: Call) -> Response {
    simulate(state, None, call).await
}

async fn simulate(State(app): State<Shared>, name: Option<String>, call: Call) -> Response {
    blocking(move || {
        single_node(&app)?;
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        let body = call.json()?;
        Ok(respond::ok(&app.catalog.templates().simulate_template(name.as_deref(), body.as_ref())?))
    })
    .await
}

async fn put(State(app): State<Shared>, Path(name): Path<String>, call: Call, kind: Kind) -> Response {
    blocking(move || {
        single_node(&app)?;
        let p = &call.params;
        p.ignore(&ADMIN_PARAMS);
        p.ignore(&["cause"]);
        let create = p.flag("create", false)?;
        p.finish(&call.path)?;
        crate::catalog::check_name(&name).map_err(|e| ApiError::illegal_argument(e.reason))?;
        let body = call
            .json()?
            .ok_or_else(|| ApiError::bad_request("parse_exception", "request body is required"))?;
        app.catalog.templates().put(kind, &name, &body, create)?;
        Ok(acknowledged())
    })
    .await
}

async fn get(State(app): State<Shared>, names: Option<String>, call: Call, kind: Kind) -> Response {
    blocking(move || {
        single_node(&app)?;
        call.params.ignore(&ADMIN_PARAMS);
        call.params.ignore(&["local", "flat_settings", "include_defaults"]);
        call.params.finish(&call.path)?;
        let (status, answer) = app.catalog.templates().get(kind, names.as_deref())?;
        Ok(respond::json(status, &answer))
    })
    .await
}

async fn delete(State(app): State<Shared>, Path(names): Path<String>, call: Call, kind: Kind) -> Response {
    blocking(move || {
        single_node(&app)?;
        call.params.ignore(&ADMIN_PARAMS);
        call.params.finish(&call.path)?;
        app.catalog.templates().delete(kind, &names, app.catalog.data_streams())?;
        Ok(acknowledged())
    })
    .await
}

fn exists(app: &Shared, names: &str, kind: Kind) -> Response {
    let found = app.member.is_none() && app.catalog.templates().exists(kind, names);
    respond::status(if found { StatusCode::OK } else { StatusCode::NOT_FOUND })
}

fn acknowledged() -> Response {
    respond::ok(&json!({"acknowledged": true}))
}

fn single_node(app: &Shared) -> ApiResult<()> {
    match app.member {
        Some(_) => Err(ApiError::illegal_argument(
            "index and component templates are not supported yet by Needle on a cluster",
        )),
        None => Ok(()),
    }
}
