#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to searches an index cannot run
(a term a field of another type cannot hold, an analyzer or sort field it
lacks, an aggregation of a text field, a bad `search_after`): over one
index, `search_phase_execution_exception` (all shards failed) with the
index's failure as its root cause; over two indexes of which one fails, the
other's hits with the failure counted in `_shards`; the same for `_count`
and `_delete_by_query`. A query the request itself gets wrong stays a
`parsing_exception`. And `query_string` (body and the URL's `q`) and
`simple_query_string` searching every field are lenient by default (a word
a field cannot hold matches nothing there), but not over the fields named,
unless `lenient` says so; `match` and `multi_match` take `lenient` too.
`_validate/query` answers whether each index can make its query (an index
that cannot is invalid, not an error; a request that cannot be read is
invalid without `_shards`). For
`crates/needle-server/tests/api/opensearch_shard_failures.rs` to replay on
Needle and compare step by step, shaped by `shaped_failures` below.

    python3 tests/golden/opensearch/shard_failures.py http://127.0.0.1:9201 > tests/golden/opensearch/shard_failures.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import json

from multi_fields import record_main, search_step, shaped

LONGS = "needle-sf-longs"
WORDS = "needle-sf-words"
MAPPINGS = {
    LONGS: {"properties": {"t": {"type": "text"}, "n": {"type": "long"}, "k": {"type": "keyword"}}},
    WORDS: {"properties": {"t": {"type": "text"}, "n": {"type": "keyword"}}},
}
DOCS = [
    (LONGS, {"t": "red fox", "n": 3, "k": "x"}),
    (LONGS, {"t": "red hen", "n": 7, "k": "y"}),
    (WORDS, {"t": "red abc", "n": "abc"}),
    (WORDS, {"t": "blue sky", "n": "sky"}),
]
BOTH = f"{LONGS},{WORDS}"


def failures_of(listed):
    """Each failure of a `_shards.failures` or `failed_shards` as its index and reason's type."""
    return [[f["index"], f["reason"]["type"]] for f in listed or []]


def shaped_failures(answer):
    """`shaped`, with an error's root causes and failed shards, and the
    shards a search or count counted as failed."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        error = answer["error"]
        return {"error": error["type"], "root_causes": [c["type"] for c in error.get("root_cause", [])],
                "failed_shards": failures_of(error.get("failed_shards"))}
    shards = answer.get("_shards") if isinstance(answer, dict) else None
    if "count" in answer if isinstance(answer, dict) else False:
        return {"count": answer["count"], "failed": failures_of(shards.get("failures"))}
    out = shaped(answer)
    if shards is not None and isinstance(out, dict):
        out["failed"] = failures_of(shards.get("failures"))
    return out


def steps():
    bulk = "".join(json.dumps({"index": {"_index": index, "_id": str(i)}}) + "\n" + json.dumps(doc) + "\n"
                   for i, (index, doc) in enumerate(DOCS))
    out = [("PUT", f"/{index}", {"mappings": mapping}) for index, mapping in MAPPINGS.items()]
    out.append(("POST", "/_bulk?refresh=true", bulk))
    term_abc = {"query": {"term": {"n": "abc"}}}
    for index in [LONGS, BOTH]:
        out += [
            search_step(term_abc, index),
            search_step({"query": {"match": {"t": {"query": "red", "analyzer": "nope"}}}}, index),
            search_step({"query": {"match": {"n": "abc"}}}, index),
            search_step({"query": {"range": {"n": {"gte": "abc"}}}}, index),
            ("POST", f"/{index}/_count", term_abc),
        ]
    out += [
        search_step({"sort": [{"zz": "asc"}]}, LONGS),
        search_step({"sort": [{"t": "asc"}]}, LONGS),
        search_step({"size": 0, "aggs": {"a": {"terms": {"field": "t"}}}}, LONGS),
        search_step({"sort": [{"n": "asc"}], "search_after": ["x"]}, LONGS),
        search_step({"query": {"bogus": {}}}, LONGS),
        search_step({"query": {"term": {"t": "red"}}}, BOTH),
        ("POST", f"/{LONGS}/_delete_by_query", term_abc),
        # Every field searched: lenient unless told otherwise.
        ("GET", f"/{LONGS}/_search?q=n:abc", None),
        ("GET", f"/{LONGS}/_search?q=abc", None),
        ("GET", f"/{LONGS}/_search?q=n:abc&lenient=false", None),
        ("GET", f"/{BOTH}/_search?q=n:abc", None),
        search_step({"query": {"query_string": {"query": "n:abc"}}}, LONGS),
        search_step({"query": {"query_string": {"query": "n:abc OR t:fox"}}}, LONGS),
        search_step({"query": {"query_string": {"query": "n:[a TO b] OR k:x"}}}, LONGS),
        search_step({"query": {"query_string": {"query": "n:abc", "lenient": False}}}, LONGS),
        search_step({"query": {"query_string": {"query": "abc", "default_field": "*"}}}, LONGS),
        # Fields named: strict unless told otherwise.
        search_step({"query": {"query_string": {"query": "abc", "default_field": "n"}}}, LONGS),
        search_step({"query": {"query_string": {"query": "abc OR fox", "fields": ["n", "t"]}}}, LONGS),
        search_step({"query": {"query_string": {"query": "abc OR fox", "fields": ["n", "t"], "lenient": True}}},
                    LONGS),
        ("GET", f"/{LONGS}/_search?q=abc&df=n", None),
        ("GET", f"/{LONGS}/_search?q=abc&df=n&lenient=true", None),
        search_step({"query": {"match": {"n": {"query": "abc", "lenient": True}}}}, LONGS),
        search_step({"query": {"match": {"n": {"query": "abc", "lenient": False}}}}, LONGS),
        search_step({"query": {"multi_match": {"query": "abc red", "fields": ["n", "t"]}}}, LONGS),
        search_step({"query": {"multi_match": {"query": "abc red", "fields": ["n", "t"], "lenient": True}}}, LONGS),
        search_step({"query": {"multi_match": {"query": "red", "fields": ["n", "t"], "type": "most_fields",
                                               "lenient": True}}}, LONGS),
        search_step({"query": {"multi_match": {"query": "abc"}}}, LONGS),
        ("POST", f"/{LONGS}/_validate/query", term_abc),
        ("POST", f"/{BOTH}/_validate/query", term_abc),
        ("POST", f"/{WORDS}/_validate/query", term_abc),
        ("POST", f"/{LONGS}/_validate/query", {"query": {"bogus": {}}}),
        ("POST", f"/{LONGS}/_validate/query", {"query": {"match_all": {}}, "size": 1}),
        ("GET", f"/{LONGS}/_validate/query?q=n:abc", None),
        ("GET", f"/{LONGS}/_validate/query?q=abc&df=n", None),
        ("POST", f"/{LONGS}/_validate/query", None),
        ("POST", "/needle-sf-none/_validate/query", term_abc),
        search_step({"query": {"simple_query_string": {"query": "abc"}}}, LONGS),
        search_step({"query": {"simple_query_string": {"query": "abc fox", "fields": ["n", "t"]}}}, LONGS),
        search_step({"query": {"simple_query_string": {"query": "abc fox", "fields": ["n", "t"],
                                                        "lenient": True}}}, LONGS),
    ]
    return out


def main():
    record_main(list(MAPPINGS), steps, shaped_failures)


if __name__ == "__main__":
    main()
