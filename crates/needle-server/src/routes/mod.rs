//! The REST API: which handler answers which method and path.

pub(crate) mod aliases;
pub(crate) mod analyze;
pub(crate) mod bulk;
mod by_query;
pub(crate) mod cat;
mod cluster;
pub(crate) mod data_streams;
pub(crate) mod documents;
pub(crate) mod explain;
mod field_caps;
pub(crate) mod indices;
pub(crate) mod msearch;
mod reindex;
pub mod scroll;
pub(crate) mod search;
mod stats;
mod templates;
pub(crate) mod update_by_query;
pub(crate) mod write;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post, put};
use axum::Router;
use serde_json::{json, Value};

use crate::respond;
use crate::server::Shared;

pub fn router(app: Shared) -> Router {
    Router::new()
        .route("/", get(cluster::info).head(cluster::ping))
        .route("/_ui", get(ui))
        .route("/_cluster/health", get(cluster::health))
        .route("/_cluster/health/{index}", get(cluster::health_of))
        .route("/_cat/indices", get(cat::cat_indices))
        .route("/_cat/indices/{index}", get(cat::cat_indices_of))
        .route("/_cat/aliases", get(cat::cat_aliases))
        .route("/_cat/aliases/{name}", get(cat::cat_aliases_of))
        .route("/_cat/shards", get(cat::cat_shards))
        .route("/_cat/shards/{index}", get(cat::cat_shards_of))
        .route("/_cat/nodes", get(cat::cat_nodes))
        .route("/_cat/health", get(cat::cat_health))
        .route("/_cat/count", get(cat::cat_count))
        .route("/_cat/count/{index}", get(cat::cat_count_of))
        .route("/_analyze", get(analyze::analyze).post(analyze::analyze))
        .route("/{index}/_analyze", get(analyze::analyze_in).post(analyze::analyze_in))
        .route("/_field_caps", get(field_caps::field_caps).post(field_caps::field_caps))
        .route("/{index}/_field_caps", get(field_caps::field_caps_of).post(field_caps::field_caps_of))
        .route("/_bulk", post(bulk::bulk).put(bulk::bulk))
        .route("/_reindex", post(reindex::reindex))
        .route("/_data_stream", get(data_streams::get_all))
        .route("/_data_stream/_stats", get(data_streams::stats_all))
        .route(
            "/_data_stream/{name}",
            put(data_streams::put).get(data_streams::get_named).delete(data_streams::delete),
        )
        .route("/_data_stream/{name}/_stats", get(data_streams::stats_named))
        .route("/{index}/_rollover", post(data_streams::rollover))
        .route("/{index}/_rollover/{new_index}", post(data_streams::rollover_named))
        .route("/_index_template", get(templates::get_all_index))
        .route("/_index_template/_simulate_index/{index}", post(templates::simulate_index))
        .route("/_index_template/_simulate", post(templates::simulate_body))
        .route("/_index_template/_simulate/{name}", post(templates::simulate_named))
        .route(
            "/_index_template/{name}",
            put(templates::put_index)
                .post(templates::put_index)
                .get(templates::get_index)
                .head(templates::head_index)
                .delete(templates::delete_index),
        )
        .route("/_template", get(templates::get_all_legacy))
        .route(
            "/_template/{name}",
            put(templates::put_legacy)
                .post(templates::put_legacy)
                .get(templates::get_legacy)
                .head(templates::head_legacy)
                .delete(templates::delete_legacy),
        )
        .route("/_component_template", get(templates::get_all_component))
        .route(
            "/_component_template/{name}",
            put(templates::put_component)
                .post(templates::put_component)
                .get(templates::get_component)
                .head(templates::head_component)
                .delete(templates::delete_component),
        )
        .route("/_search", get(search::search_all).post(search::search_all))
        .route("/_search/scroll", get(scroll::next).post(scroll::next).delete(scroll::clear))
        .route(
            "/_search/scroll/{scroll_id}",
            get(scroll::next_by_path).post(scroll::next_by_path).delete(scroll::clear_by_path),
        )
        .route("/_count", get(search::count_all).post(search::count_all))
        .route("/_validate/query", get(search::validate_all).post(search::validate_all))
        .route("/_msearch", get(msearch::msearch).post(msearch::msearch))
        .route("/_stats", get(stats::stats_all))
        .route("/_stats/{metric}", get(stats::stats_all_of))
        .route("/{index}/_stats", get(stats::stats_of))
        .route("/{index}/_stats/{metric}", get(stats::stats_metric))
        .route("/_mget", get(documents::mget_any).post(documents::mget_any))
        .route("/_refresh", get(indices::refresh_all).post(indices::refresh_all))
        .route("/_cache/clear", post(indices::clear_cache_all))
        .route("/_flush", get(indices::flush_all).post(indices::flush_all))
        .route("/_mapping", get(indices::mapping_all))
        .route(
            "/{index}",
            put(indices::create).delete(indices::delete).get(indices::get).head(indices::exists),
        )
        .route(
            "/{index}/_mapping",
            get(indices::mapping).put(indices::put_mapping).post(indices::put_mapping),
        )
        .route("/{index}/_settings", get(indices::settings).put(indices::put_settings))
        .route("/_settings", put(indices::put_settings_all))
        .route("/_aliases", post(aliases::update).get(aliases::get_all))
        .route("/_alias", get(aliases::get_all))
        .route("/_alias/{name}", get(aliases::get_named))
        .route("/{index}/_alias", get(aliases::get_of))
        .route("/{index}/_aliases", get(aliases::get_of))
        .route(
            "/{index}/_alias/{name}",
            put(aliases::put).post(aliases::put).delete(aliases::delete).get(aliases::get_of_named),
        )
        .route(
            "/{index}/_aliases/{name}",
            put(aliases::put).post(aliases::put).delete(aliases::delete).get(aliases::get_of_named),
        )
        .route("/{index}/_refresh", get(indices::refresh).post(indices::refresh))
        .route("/{index}/_cache/clear", post(indices::clear_cache))
        .route("/{index}/_flush", get(indices::flush).post(indices::flush))
        .route("/{index}/_forcemerge", post(indices::forcemerge))
        .route("/{index}/_doc", post(documents::index_new))
        .route(
            "/{index}/_doc/{id}",
            put(documents::index)
                .post(documents::index)
                .get(documents::get)
                .head(documents::exists)
                .delete(documents::delete),
        )
        .route("/{index}/_create/{id}", put(documents::create).post(documents::create))
        .route("/{index}/_source/{id}", get(documents::source).head(documents::exists))
        .route("/{index}/_update/{id}", post(documents::update))
        .route("/{index}/_mget", get(documents::mget).post(documents::mget))
        .route("/{index}/_bulk", post(bulk::bulk_into).put(bulk::bulk_into))
        .route("/{index}/_search", get(search::search).post(search::search))
        .route("/{index}/_needle/corpus_stats", get(search::corpus_stats).post(search::corpus_stats))
        .route("/{index}/_needle/aggregate", post(search::aggregate_gathered))
        .route("/{index}/_count", get(search::count).post(search::count))
        .route("/{index}/_validate/query", get(search::validate).post(search::validate))
        .route("/{index}/_explain/{id}", get(explain::explain).post(explain::explain))
        .route("/{index}/_msearch", get(msearch::msearch_into).post(msearch::msearch_into))
        .route("/{index}/_delete_by_query", post(search::delete_by_query))
        .route("/{index}/_update_by_query", post(update_by_query::update_by_query))
        .fallback(no_handler)
        .method_not_allowed_fallback(wrong_method)
        // Inside `around`: a coordinated answer is checked, shaped and labelled as any.
        .layer(axum::middleware::from_fn_with_state(app.clone(), crate::coordinator::around))
        .layer(axum::middleware::from_fn_with_state(app.clone(), crate::middleware::around))
        .with_state(app)
}

/// The search page (`ui.html`): plain HTML and JavaScript calling the API above.
async fn ui() -> Response {
    let mut response = Response::new(axum::body::Body::from(include_str!("../ui.html")));
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// Elasticsearch's answer to a path it has no handler for.
async fn no_handler(request: Request) -> Response {
    let reason = format!("no handler found for uri [{}] and method [{}]", request.uri(), request.method());
    respond::json(StatusCode::BAD_REQUEST, &json!({"error": reason, "status": 400}))
}

async fn wrong_method(request: Request) -> Response {
    let reason =
        format!("Incorrect HTTP method for uri [{}] and method [{}]", request.uri(), request.method());
    respond::json(StatusCode::METHOD_NOT_ALLOWED, &json!({"error": reason, "status": 405}))
}

/// `_shards` of an answer: one shard, always there.
pub fn shards() -> Value {
    json!({"total": 1, "successful": 1, "failed": 0})
}
