#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to a sequence of
`_update_by_query` and `_delete_by_query` requests on two indexes each
holding the bundled State of the Union corpus (a query in the body or as `q`
in the URL, none, `max_docs` in the URL and in the body, `conflicts`, a
filtered alias, several indexes at once; the counts and searches after; the
errors: a zero or negative `max_docs` or two different ones, an unknown
key, a bad `conflicts`, a missing index; a query in both the URL and the
body, where the URL's is run), for `crates/needle-server/tests/api/opensearch_by_query.rs` to replay
on Needle and compare, step by step, as `reindex.py` shapes the answers (its
`shaped`): the status, then the counts (total, updated, deleted, batches,
version conflicts, failures), the hits, the count, an acknowledgement or the
error's type. Which documents `max_docs` takes is the index's order, which
OpenSearch's merge chooses, so only how many is compared.

    python3 tests/golden/opensearch/by_query.py http://127.0.0.1:9201 > tests/golden/opensearch/by_query.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import sys

from record import call_with_status as call, load_corpus_split, print_golden, record_steps
from reindex import shaped

UPDATED = "needle-ubq"
DELETED = "needle-dbq"
ALIAS = "needle-dbq-rr"
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}}


def search(index, query, size=250):
    """The matches, each scoring 1: an update leaves deleted copies behind,
    which BM25's statistics count until the node's merges drop them."""
    return ("POST", f"/{index}/_search", {"query": {"constant_score": {"filter": query}}, "size": size,
                                          "track_total_hits": True, "_source": False})


def steps():
    railroad = {"match": {"body": "railroad"}}
    u, d = f"/{UPDATED}", f"/{DELETED}"
    return [
        ("POST", f"{u}/_update_by_query?refresh=true", {"query": railroad}),
        search(UPDATED, railroad),
        ("POST", f"{u}/_update_by_query?refresh=true", None),
        ("GET", f"{u}/_count", None),
        ("POST", f"{u}/_update_by_query?refresh=true&max_docs=5", {"query": railroad}),
        ("POST", f"{u}/_update_by_query?refresh=true", {"query": railroad, "max_docs": 7}),
        ("POST", f"{u}/_update_by_query?refresh=true&q=body:pacific", None),
        ("POST", f"{u}/_update_by_query?refresh=true&conflicts=proceed", {"query": {"match_none": {}}}),
        ("POST", f"{u}/_update_by_query?max_docs=0", None),
        ("POST", f"{u}/_update_by_query", {"max_docs": 0}),
        ("POST", f"{u}/_update_by_query?refresh=true&q=body:pacific", {"query": railroad}),
        ("POST", f"{u}/_update_by_query?conflicts=maybe", None),
        ("POST", f"{u}/_update_by_query", {"query": railroad, "colour": "red"}),
        ("POST", f"{u}/_update_by_query?max_docs=3", {"max_docs": 4}),
        ("POST", f"{u}/_update_by_query?refresh=true&max_docs=3", {"max_docs": 3, "conflicts": "proceed"}),
        ("POST", "/needle-missing/_update_by_query", None),
        ("POST", f"{d}/_delete_by_query?refresh=true&q=body:pacific", None),
        search(DELETED, {"match": {"body": "pacific"}}),
        ("POST", "/_aliases", {"actions": [{"add": {"index": DELETED, "alias": ALIAS, "filter": railroad}}]}),
        ("POST", f"/{ALIAS}/_delete_by_query?refresh=true", {"query": {"match": {"body": "iron"}}}),
        search(DELETED, railroad),
        ("POST", f"{u},{DELETED}/_delete_by_query?refresh=true&conflicts=proceed",
         {"query": {"match": {"body": "canal"}}}),
        ("GET", f"{u},{DELETED}/_count", None),
        ("POST", f"{d}/_delete_by_query?refresh=true", {"query": {"match_none": {}}}),
        # Which documents `max_docs` takes is the node's order: only counts follow.
        ("POST", f"{d}/_delete_by_query?refresh=true&max_docs=3", {"query": railroad}),
        ("GET", f"{d}/_count", None),
        ("POST", f"{d}/_delete_by_query?refresh=true", {"query": railroad, "max_docs": 2}),
        ("GET", f"{d}/_count", None),
        ("POST", f"{d}/_delete_by_query", None),
        ("POST", f"{d}/_delete_by_query", {}),
        ("POST", f"{d}/_delete_by_query?max_docs=0", {"query": railroad}),
        ("POST", f"{d}/_delete_by_query", {"query": railroad, "max_docs": 0}),
        ("POST", f"{d}/_delete_by_query?refresh=true&q=body:iron", {"query": {"match_all": {}}}),
        ("POST", f"{d}/_delete_by_query", {"query": railroad, "colour": "red"}),
        ("POST", f"{d}/_delete_by_query?conflicts=maybe", {"query": railroad}),
        ("POST", f"{d}/_delete_by_query", {"query": railroad, "conflicts": "maybe"}),
        ("POST", f"{d}/_delete_by_query", {"query": railroad, "max_docs": -2}),
        ("POST", "/needle-missing/_delete_by_query", {"query": railroad}),
        ("GET", f"{d}/_count", None),
    ]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    for index in [UPDATED, DELETED]:
        load_corpus_split(base, [index], MAPPING)
    name, cases = record_steps(base, steps(), shaped)
    for index in [UPDATED, DELETED]:
        call(base, "DELETE", f"/{index}")
    print_golden([("node", name), ("indexes", [UPDATED, DELETED]), ("mapping", MAPPING)], cases)


if __name__ == "__main__":
    main()
