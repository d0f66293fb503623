#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over multi-fields
(a mapping's `fields`, `ignore_above`, and the keyword beside every string a
dynamic mapping makes): the mappings shown, term queries, `exists`, sorts
and `terms` aggregations on the sub-fields, an update of a field that has
one, the errors, and a field named `id` beside the `_id`; for `crates/needle-server/tests/api/opensearch_multi_fields.rs`
to replay on Needle and compare step by step: the status, then the hits
(count, ids and scores), their sort values and the aggregations' buckets,
a mapping whole, or the error's type.

    python3 tests/golden/opensearch/multi_fields.py http://127.0.0.1:9201 > tests/golden/opensearch/multi_fields.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import json
import sys

from record import call_with_status as call, print_golden, record_steps

INDEX = "needle-mf"
MAPPING = {"properties": {
    "title": {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 10}}},
    "n": {"type": "long", "fields": {"s": {"type": "keyword"}}},
}}
DOCS = [
    {"title": "short one", "n": 5, "city": "Paris"},
    {"title": "a title much longer than ten", "n": 7, "city": "New York"},
    {"title": "tiny", "n": 5, "city": "Paris"},
    {"title": "another long title here", "n": 12, "city": "Lyon"},
    {"title": "short one", "n": 3, "city": ["Paris", "Rome"]},
]


def search(body):
    return ("POST", f"/{INDEX}/_search", {"track_total_hits": True, "_source": False, **body})


def steps():
    bulk = "".join(json.dumps({"index": {"_index": INDEX, "_id": str(i)}}) + "\n" + json.dumps(d) + "\n"
                   for i, d in enumerate(DOCS))
    aggs = {k: {"terms": {"field": f, "size": 10}} for k, f in
            [("city", "city.keyword"), ("raw", "title.raw"), ("n", "n.s")]}
    return [
        ("PUT", f"/{INDEX}", {"mappings": MAPPING}),
        ("GET", f"/{INDEX}/_mapping", None),
        ("POST", "/_bulk?refresh=true", bulk),
        ("GET", f"/{INDEX}/_mapping", None),
        search({"size": 0, "aggs": aggs}),
        search({"query": {"term": {"title.raw": "short one"}}}),
        search({"query": {"term": {"city.keyword": "New York"}}}),
        search({"query": {"match": {"city": "york"}}}),
        search({"query": {"exists": {"field": "title.raw"}}}),
        search({"query": {"term": {"n.s": "5"}}}),
        search({"sort": [{"city.keyword": "asc"}, {"n": "desc"}]}),
        ("POST", f"/{INDEX}/_update/1?refresh=true", {"doc": {"n": 9}}),
        search({"query": {"term": {"n.s": "9"}}}),
        ("PUT", "/needle-mf-bad", {"mappings": {"properties": {"a": {"type": "text", "fields": {"k": {"type": "nope"}}}}}}),
        ("PUT", "/needle-mf-bad", {"mappings": {"properties": {"a": {"type": "long", "ignore_above": 3}}}}),
        ("PUT", "/needle-mf-bad", {"mappings": {"properties": {"a": {"type": "text", "fields": "k"}}}}),
        ("PUT", "/needle-mf-id", {"mappings": {"properties": {"id": {"type": "keyword"}}}}),
        ("PUT", "/needle-mf-id/_doc/x?refresh=true", {"id": "abc", "n": 1}),
        ("PUT", "/needle-mf-id/_doc/y?refresh=true", {"id": "def", "n": 2}),
        ("POST", "/needle-mf-id/_search", {"query": {"term": {"id": "abc"}}}),
        ("POST", "/needle-mf-id/_search", {"query": {"ids": {"values": ["y"]}}}),
        ("GET", "/needle-mf-id/_mapping", None),
    ]


def shaped(answer):
    """What the replay compares (see the module's comment)."""
    if isinstance(answer, dict) and "hits" in answer:
        hits = [[h["_id"], h["_score"]] for h in answer["hits"]["hits"]]
        sorts = [h.get("sort") for h in answer["hits"]["hits"]]
        aggs = {k: [[b["key"], b["doc_count"]] for b in v["buckets"]]
                for k, v in answer.get("aggregations", {}).items()}
        return {"total": answer["hits"]["total"]["value"], "hits": hits, "sorts": sorts, "aggs": aggs}
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        return {"error": answer["error"]["type"]}
    if isinstance(answer, dict) and "items" in answer:
        return {"errors": answer["errors"]}
    if isinstance(answer, dict) and "result" in answer:
        return {"result": answer["result"]}
    if isinstance(answer, dict) and "acknowledged" in answer:
        return {"acknowledged": answer["acknowledged"]}
    return answer


def search_step(body, index):
    """A search of `index` counting every hit, without sources (what `shaped` compares)."""
    return ("POST", f"/{index}/_search", {"track_total_hits": True, "_source": False, **body})


def analyze_step(body, index):
    """An `_analyze` request of `index`, or without one when `index` is None."""
    return ("POST", f"/{index}/_analyze" if index else "/_analyze", body)


def bulk_step(index, docs):
    """`docs` indexed into `index` with ids 0, 1, ..., refreshed."""
    lines = "".join(json.dumps({"index": {"_index": index, "_id": str(i)}}) + "\n" + json.dumps(d) + "\n"
                    for i, d in enumerate(docs))
    return ("POST", "/_bulk?refresh=true", lines)


def record_main(indexes, steps, shape=shaped):
    """A recorder's main: `indexes` deleted, `steps()` recorded on the node named
    by the first argument and shaped by `shape`, `indexes` deleted again, the golden printed."""
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    for index in indexes:
        call(base, "DELETE", f"/{index}")
    name, cases = record_steps(base, steps(), shape)
    for index in indexes:
        call(base, "DELETE", f"/{index}")
    print_golden([("node", name)], cases)


def main():
    record_main([INDEX, "needle-mf-bad", "needle-mf-id"], steps)


if __name__ == "__main__":
    main()
