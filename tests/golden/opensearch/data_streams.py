#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to a sequence of data stream
requests (index templates that make streams, streams made by `PUT
_data_stream` and by a first write, `create`-only writes that must hold a
timestamp, searches and counts through a stream, `_bulk`, rollovers with
and without conditions, listings, `_stats`, deletions, the errors) and of
rollovers of aliases (a write index marked or not, a new index named or
numbered, made with the request's settings, mappings and aliases), for
`crates/needle-server/tests/api/opensearch_data_streams.rs` to replay on
Needle and compare, step by step: the status, then the answer as `shaped`
below keeps it (no uuids, generated ids, sizes in bytes or timings).

    python3 tests/golden/opensearch/data_streams.py http://127.0.0.1:9201 > tests/golden/opensearch/data_streams.json

The node: ../shared/opensearch (OpenSearch 3.8). Its templates ask for no
replica, so a stream's status is GREEN on one node, as on Needle.
"""

import sys

from record import call_with_status as call, print_golden, record_steps

LOGS = {"index_patterns": ["needle-ds-*"], "data_stream": {}, "priority": 7,
        "template": {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                     "mappings": {"properties": {"msg": {"type": "text"}, "n": {"type": "long"}}}}}
METRICS = {"index_patterns": ["needle-met-*"], "data_stream": {"timestamp_field": {"name": "ts"}}, "priority": 7,
           "template": {"settings": {"number_of_replicas": 0}}}
STREAMS = ["needle-ds-app", "needle-ds-auto", "needle-ds-auto2", "needle-met-a"]
TEMPLATES = ["needle-ds-logs", "needle-ds-met", "needle-ds-bad"]
APP = "needle-ds-app"
# Indexes rolled over through aliases.
INDEXES = ["needle-ro-000001", "needle-ro-000002", "needle-ro-custom", "needle-pl-1", "needle-pl-000002",
           "needle-plain", "needle-two-a", "needle-two-b", "needle-odd"]
NO_REPLICA = {"number_of_replicas": 0}


def bulk():
    lines = [
        {"create": {"_index": APP}}, {"@timestamp": "2026-01-03T10:00:00Z", "msg": "bulk one", "n": 3},
        {"index": {"_index": APP}}, {"@timestamp": "2026-01-03T11:00:00Z", "msg": "bulk two"},
        {"index": {"_index": APP, "_id": "b3", "op_type": "create"}}, {"@timestamp": "2026-01-04", "msg": "bulk three"},
        {"create": {"_index": APP}}, {"msg": "no time at all"},
        {"delete": {"_index": APP, "_id": "b3"}},
    ]
    import json
    return "".join(json.dumps(line) + "\n" for line in lines)


def steps():
    # By the timestamp: the hits' order is the engines' own where scores tie.
    search = {"query": {"match": {"msg": "hello bulk"}}, "size": 20, "sort": [{"@timestamp": "asc"}]}
    return [
        ("PUT", "/_index_template/needle-ds-logs", LOGS),
        ("GET", "/_index_template/needle-ds-logs", None),
        ("PUT", "/_index_template/needle-ds-met", METRICS),
        ("PUT", f"/_data_stream/{APP}", None),
        ("PUT", f"/_data_stream/{APP}", None),
        ("PUT", "/_data_stream/needle-nomatch", None),
        ("PUT", "/_data_stream/Needle-ds-X", None),
        ("PUT", "/_data_stream/needle-ds-a,b", None),
        ("GET", f"/_data_stream/{APP}", None),
        ("POST", f"/{APP}/_doc?refresh=true", {"@timestamp": "2026-01-01T00:00:00Z", "msg": "hello world", "n": 1}),
        ("PUT", f"/{APP}/_doc/1", {"@timestamp": "2026-01-01T00:00:00Z", "msg": "hello"}),
        ("PUT", f"/{APP}/_doc/1?op_type=create&refresh=true", {"@timestamp": "2026-01-01T01:00:00Z", "msg": "hello again"}),
        ("PUT", f"/{APP}/_create/2", {"msg": "no time"}),
        ("PUT", f"/{APP}/_create/3", {"@timestamp": ["2026-01-01", "2026-01-02"], "msg": "two times"}),
        ("PUT", f"/{APP}/_create/4?refresh=true", {"@timestamp": 1767312000000, "msg": "second day"}),
        ("GET", f"/{APP}/_doc/1", None),
        ("POST", f"/{APP}/_update/1", {"doc": {"msg": "changed"}}),
        ("DELETE", f"/{APP}/_doc/1", None),
        ("GET", f"/{APP}/_mapping", None),
        ("GET", f"/{APP}/_settings", None),
        ("POST", f"/{APP}/_search", search),
        ("GET", f"/{APP}/_count", None),
        ("POST", "/_bulk?refresh=true", bulk()),
        ("POST", f"/{APP}/_search", search),
        ("POST", "/needle-ds-*/_count", {"query": {"match": {"msg": "bulk"}}}),
        ("POST", f"/{APP}/_rollover", {"conditions": {"max_docs": 2}}),
        ("POST", f"/{APP}/_rollover", {"conditions": {"max_docs": 1000, "max_age": "30d"}}),
        ("POST", f"/{APP}/_rollover?dry_run=true", None),
        ("POST", f"/{APP}/_rollover", None),
        ("POST", f"/{APP}/_rollover", {"conditions": {"max_foo": 1}}),
        ("POST", f"/{APP}/_rollover/needle-other", None),
        ("POST", f"/{APP}/_doc?refresh=true", {"@timestamp": "2026-02-01T00:00:00Z", "msg": "hello after rollover"}),
        ("GET", f"/_data_stream/{APP}", None),
        ("GET", "/_data_stream/needle-ds-*", None),
        ("GET", "/_data_stream/needle-none", None),
        ("GET", f"/_data_stream/{APP}/_stats", None),
        ("POST", f"/{APP}/_search", search),
        ("GET", f"/.ds-{APP}-000002", None),
        ("GET", f"/_cat/indices/{APP}?h=index,docs.count&s=index&format=json", None),
        ("PUT", "/needle-ds-new", None),
        ("POST", "/needle-ds-auto/_doc?refresh=true", {"@timestamp": "2026-03-01", "msg": "made by a write"}),
        ("PUT", "/needle-ds-auto2/_doc/1", {"@timestamp": "2026-03-01", "msg": "an index op"}),
        ("GET", "/_data_stream/needle-ds-auto", None),
        ("DELETE", f"/.ds-{APP}-000003", None),
        ("DELETE", f"/.ds-{APP}-000001", None),
        ("GET", f"/_data_stream/{APP}", None),
        ("GET", f"/{APP}/_count", None),
        ("DELETE", f"/{APP}", None),
        ("PUT", "/_data_stream/needle-met-a", None),
        ("GET", "/needle-met-a/_mapping", None),
        ("POST", "/needle-met-a/_doc?refresh=true", {"ts": "2026-02-01", "v": 1}),
        ("POST", "/needle-met-a/_doc", {"@timestamp": "2026-02-01", "v": 2}),
        ("GET", "/_data_stream/needle-met-a/_stats", None),
        ("DELETE", "/_index_template/needle-ds-met", None),
        ("DELETE", "/_data_stream/needle-ds-auto", None),
        ("GET", "/_data_stream/needle-ds-auto", None),
        ("DELETE", "/_data_stream/needle-nothing", None),
        ("DELETE", "/_data_stream/needle-met-*", None),
        ("DELETE", "/_index_template/needle-ds-met", None),
        ("GET", "/_data_stream", None),
        # Rollovers of aliases.
        ("PUT", "/needle-ro-000001", {"aliases": {"needle-ro": {"is_write_index": True}}, "settings": NO_REPLICA}),
        ("POST", "/needle-ro/_doc?refresh=true", {"a": 1}),
        ("POST", "/needle-ro/_rollover", {"conditions": {"max_docs": 1}}),
        ("GET", "/needle-ro/_alias", None),
        ("POST", "/needle-ro/_doc?refresh=true", {"a": 2}),
        ("POST", "/needle-ro/_rollover/needle-ro-custom",
         {"settings": NO_REPLICA, "mappings": {"properties": {"b": {"type": "keyword"}}}, "aliases": {"needle-ro-extra": {}}}),
        ("GET", "/needle-ro/_alias", None),
        ("GET", "/needle-ro-custom/_mapping", None),
        ("POST", "/needle-ro/_rollover/needle-ro-custom", None),
        ("POST", "/needle-ro/_count", None),
        ("PUT", "/needle-pl-1", {"aliases": {"needle-pl": {}}, "settings": NO_REPLICA}),
        ("POST", "/needle-pl/_rollover?dry_run=true", None),
        ("POST", "/needle-pl/_rollover", {"conditions": {"max_docs": 0}}),
        ("GET", "/needle-pl/_alias", None),
        ("PUT", "/needle-plain", {"settings": NO_REPLICA}),
        ("POST", "/needle-plain/_rollover", None),
        ("POST", "/needle-nothing/_rollover", None),
        ("PUT", "/needle-two-a", {"aliases": {"needle-two": {}}, "settings": NO_REPLICA}),
        ("PUT", "/needle-two-b", {"aliases": {"needle-two": {}}, "settings": NO_REPLICA}),
        ("POST", "/needle-two/_rollover", None),
        ("PUT", "/needle-odd", {"aliases": {"needle-odd-alias": {}}, "settings": NO_REPLICA}),
        ("POST", "/needle-odd-alias/_rollover", None),
    ]


def shaped(answer):
    """What the replay compares (see the module's comment)."""
    if not isinstance(answer, (dict, list)):
        return answer
    if isinstance(answer, list):
        return answer
    if isinstance(answer.get("error"), dict):
        return {"error": answer["error"]["type"]}
    if "result" in answer:
        return {"_index": answer["_index"], "result": answer["result"]}
    if "old_index" in answer:
        return answer
    if "acknowledged" in answer:
        return {"acknowledged": answer["acknowledged"]}
    if isinstance(answer.get("data_streams"), list) and "data_stream_count" not in answer:
        return {"data_streams": [
            {**s, "indices": [i["index_name"] for i in s["indices"]]} for s in answer["data_streams"]]}
    if "data_stream_count" in answer:
        kept = {k: v for k, v in answer.items() if k not in ("total_store_size_bytes", "_shards")}
        kept["data_streams"] = [{k: v for k, v in s.items() if k != "store_size_bytes"}
                                for s in answer["data_streams"]]
        return kept
    if "hits" in answer:
        hits = [[h["_index"], h["sort"], h["_source"]] for h in answer["hits"]["hits"]]
        return {"total": answer["hits"]["total"]["value"], "hits": hits}
    if "count" in answer:
        return {"count": answer["count"]}
    if "items" in answer:
        items = []
        for item in answer["items"]:
            (kind, r), = item.items()
            items.append([kind, r["status"], r["error"]["type"] if "error" in r else r["result"]])
        return {"errors": answer["errors"], "items": items}
    if len(answer) >= 1 and all(isinstance(v, dict) for v in answer.values()):
        out = {}
        for name, inner in answer.items():
            if "settings" in inner:
                inner = {**{k: v for k, v in inner.items() if k != "settings"},
                         "hidden": inner["settings"]["index"].get("hidden")}
            out[name] = inner
        return out
    return answer


def clean(base):
    for s in STREAMS:
        call(base, "DELETE", f"/_data_stream/{s}")
    for t in TEMPLATES:
        call(base, "DELETE", f"/_index_template/{t}")
    for index in INDEXES:
        call(base, "DELETE", f"/{index}")


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    clean(base)
    name, cases = record_steps(base, steps(), shaped)
    clean(base)
    print_golden([("node", name)], cases)


if __name__ == "__main__":
    main()
