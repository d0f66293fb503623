#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to a sequence of `_reindex`
requests from an index holding the bundled State of the Union corpus (into
new indexes and existing ones, with a query (one matching nothing, which
makes no index), `max_docs`, `op_type: create`
with and without `conflicts: proceed`, part of each source, two sources at
once, a filtered alias as the source, a destination whose mapping refuses the
documents; then counts and searches of what
arrived; the errors), for `crates/needle-server/tests/api/opensearch_reindex.rs`
to replay on Needle and compare, step by step: the status, then the counts
of a reindex (total, created, updated, version conflicts, batches, failures),
the hits (count, ids, scores and any source), the count, an
acknowledgement, or the error's
type. Which documents come first in an index is OpenSearch's merge's choice,
so nothing compared hangs on it: hits are compared as sets, failures sorted,
and what `max_docs` took is counted.

    python3 tests/golden/opensearch/reindex.py http://127.0.0.1:9201 > tests/golden/opensearch/reindex.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import sys

from record import call_with_status as call, load_corpus_split, print_golden, record_steps

SOURCE = "needle-reindex-src"
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}}
DESTS = [f"needle-reindex-{n}" for n in range(1, 9)]
D1, D2, D3, D4, D5, D6, D7, D8 = DESTS


def search(index, query, size=250, source=False):
    return ("POST", f"/{index}/_search", {"query": query, "size": size, "track_total_hits": True,
                                          "_source": source})


def reindex(source, dest, **more):
    return ("POST", "/_reindex?refresh=true", {"source": source, "dest": dest, **more})


def steps():
    railroad = {"match": {"body": "railroad"}}
    return [
        reindex({"index": SOURCE}, {"index": D1}),
        ("GET", f"/{D1}/_count", None),
        search(D1, {"match": {"body": "railroad transcontinental"}}),
        search(D1, {"match_phrase": {"title": "state of the union"}}, size=5),
        reindex({"index": SOURCE}, {"index": D1}),
        reindex({"index": SOURCE}, {"index": D1, "op_type": "create"}, conflicts="proceed"),
        reindex({"index": SOURCE}, {"index": D1, "op_type": "create"}),
        reindex({"index": SOURCE, "query": railroad}, {"index": D2}),
        ("GET", f"/{D2}/_count", None),
        search(D2, {"match": {"body": "railroad"}}),
        reindex({"index": SOURCE}, {"index": D3}, max_docs=10),
        ("GET", f"/{D3}/_count", None),
        reindex({"index": SOURCE, "size": 7}, {"index": D3, "op_type": "create"}, conflicts="proceed",
                max_docs=15),
        ("GET", f"/{D3}/_count", None),
        reindex({"index": SOURCE, "size": 100, "_source": ["title"]}, {"index": D4}),
        search(D4, {"match": {"body": "railroad"}}),
        search(D4, {"match": {"title": "lincoln"}}, source=True),
        reindex({"index": [SOURCE, D3]}, {"index": D5}),
        ("GET", f"/{D5}/_count", None),
        ("POST", "/_aliases", {"actions": [{"add": {"index": SOURCE, "alias": "needle-reindex-rr",
                                                    "filter": railroad}}]}),
        reindex({"index": "needle-reindex-rr", "query": {"match": {"body": "pacific"}}}, {"index": D6}),
        search(D6, {"match_all": {}}),
        reindex({"index": SOURCE, "query": {"match_none": {}}}, {"index": D7}),
        ("GET", f"/{D7}/_count", None),
        reindex({"index": SOURCE}, {"index": SOURCE}),
        reindex({"index": "needle-reindex-rr"}, {"index": SOURCE}),
        reindex({"index": "needle-reindex-none"}, {"index": D6}),
        reindex({"index": SOURCE}, {}),
        reindex({"index": SOURCE}, {"index": "Needle-Upper"}),
        ("PUT", f"/{D8}", {"mappings": {"properties": {"title": {"type": "long"}}}}),
        reindex({"index": SOURCE, "size": 50}, {"index": D8}),
        ("GET", f"/{D8}/_count", None),
        reindex({"index": SOURCE}, {"index": D6}, max_docs=0),
        reindex({"index": SOURCE}, {"index": D6}, conflicts="maybe"),
        reindex({"index": SOURCE}, {"index": D6, "op_type": "upsert"}),
        reindex({"index": SOURCE, "querry": {}}, {"index": D6}),
        reindex({"index": SOURCE}, {"index": D6, "colour": "red"}),
        ("POST", "/_reindex", {"source": {"index": SOURCE}, "dest": {"index": D6}, "speed": 1}),
        ("POST", "/_reindex", {"dest": {"index": D6}}),
        ("POST", "/_reindex", None),
        ("GET", f"/{D6}/_count", None),
    ]


def shaped(answer):
    """What the replay compares (see the module's comment)."""
    if isinstance(answer, dict) and "hits" in answer:
        hits = [[h["_id"], h["_score"]] + ([h["_source"]] if "_source" in h else []) for h in answer["hits"]["hits"]]
        return {"total": answer["hits"]["total"]["value"], "hits": hits}
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        return {"error": answer["error"]["type"]}
    if isinstance(answer, dict) and "count" in answer:
        return {"count": answer["count"]}
    if isinstance(answer, dict) and "acknowledged" in answer:
        return {"acknowledged": answer["acknowledged"]}
    if isinstance(answer, dict) and "batches" in answer:
        keys = ["total", "created", "updated", "deleted", "batches", "version_conflicts", "noops"]
        failures = sorted([f["id"], f["cause"]["type"], f["status"]] for f in answer["failures"])
        return {**{k: answer[k] for k in keys if k in answer}, "failures": failures}
    return answer


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    for index in DESTS:
        call(base, "DELETE", f"/{index}")
    load_corpus_split(base, [SOURCE], MAPPING)
    name, cases = record_steps(base, steps(), shaped)
    for index in [SOURCE] + DESTS:
        call(base, "DELETE", f"/{index}")
    print_golden([("node", name), ("source", SOURCE), ("mapping", MAPPING)], cases)


if __name__ == "__main__":
    main()
