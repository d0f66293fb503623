//! `_update_by_query` and `_delete_by_query`, answered as a real OpenSearch
//! node answers them: `tests/golden/opensearch/by_query.json` holds
//! OpenSearch 3.8's answers (recorded by `by_query.py` beside it) to a
//! sequence of them on two indexes holding the bundled corpus: a query in the
//! body or the URL, none, `max_docs` in the URL and the body, `conflicts`, a
//! filtered alias, two indexes at once; the counts and searches after; the
//! errors. Needle gets the same documents and requests in the same order, and
//! each answer must be OpenSearch's, as `reindex.py` shapes it (the status,
//! the counts and failures, the hits, the count or the error type).

use crate::harness::TestServer;
use crate::opensearch_queries::replay_steps;
use crate::opensearch_reindex::{hit_diffs, shaped};

#[test]
fn update_and_delete_by_query_answer_as_opensearch() {
    let golden = crate::opensearch_queries::recorded("by_query");
    let s = TestServer::start();
    for index in golden["indexes"].as_array().unwrap() {
        s.load_sotu_share(index.as_str().unwrap(), golden["mapping"].clone(), (0, 1));
    }
    let failures = replay_steps(&s, &golden["cases"], shaped, hit_diffs);
    assert!(failures.is_empty(), "{} steps differ:\n{}", failures.len(), failures.join("\n"));
}
