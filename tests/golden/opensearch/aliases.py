#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to a sequence of alias requests
(filters, routing, a write index, a hidden alias; searches, counts, writes
and a delete-by-query through them, the listings, the errors) over two
indexes that split the bundled State of the Union corpus between them (the
document on line i goes to index i % 2), for
`crates/needle-server/tests/api/opensearch_aliases.rs` to replay on Needle
and compare, step by step: the status, then the hit count and every hit
with its score, the count, the error's type, or the whole answer.

    python3 tests/golden/opensearch/aliases.py http://127.0.0.1:9201 > tests/golden/opensearch/aliases.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import sys

from record import call_with_status as call, load_corpus_split, print_golden, record_steps

PARTS = ["needle-alias-0", "needle-alias-1"]
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}}
A, B = PARTS


def search(query, size=250):
    return {"query": query, "size": size, "track_total_hits": True, "_source": False}


def steps():
    war = {"match_phrase": {"body": "civil war"}}
    peace = {"match": {"body": "railroad"}}
    return [
        ("POST", "/_aliases", {"actions": [
            {"add": {"indices": PARTS, "alias": "war", "filter": war}},
            {"add": {"index": A, "alias": "peace-0", "filter": peace, "routing": "1"}},
            {"add": {"index": A, "alias": "plain-0"}},
            {"add": {"index": A, "alias": "logs", "is_write_index": False}},
            {"add": {"index": B, "alias": "logs", "is_write_index": True, "search_routing": "2"}},
            {"add": {"index": A, "alias": "secret", "filter": {"match": {"title": "lincoln"}}, "is_hidden": True}},
        ]}),
        ("GET", "/needle-alias-*/_alias", None),
        ("GET", "/_alias/war,logs", None),
        ("GET", "/_cat/aliases/war,peace-0,plain-0,logs,secret?format=json&s=alias,index", None),
        ("POST", "/war/_search", search({"match": {"body": "peace treaty"}})),
        ("POST", "/war/_search", search({"match_all": {}}, size=5)),
        ("POST", "/peace-0/_search", search({"match": {"body": "treaty"}})),
        ("POST", "/peace-0,plain-0/_search", search({"match": {"body": "treaty"}})),
        ("POST", f"/war,{A}/_search", search({"match": {"body": "treaty"}})),
        ("POST", "/war,peace-0/_search", search({"match": {"body": "treaty nation"}})),
        ("POST", "/wa*/_search", search({"match": {"body": "treaty"}})),
        ("POST", "/needle-alias-*/_search", search({"match": {"body": "treaty"}})),
        ("POST", "/secret/_search", search({"match": {"body": "slavery"}})),
        ("POST", "/secre*/_search", search({"match": {"body": "slavery"}})),
        ("POST", "/war/_search", {"size": 0, "query": {"match": {"body": "treaty"}}}),
        ("GET", "/war/_count", None),
        ("POST", "/peace-0/_count", {"query": {"match": {"body": "treaty"}}}),
        ("POST", "/war,peace-0/_count?q=body:treaty", None),
        ("POST", "/plain-0/_count?q=body:treaty", {}),
        ("POST", "/war/_search?q=body:treaty&size=0", {"query": {"match": {"body": "railroad"}}}),
        ("PUT", "/logs/_doc/new-1?refresh=true", {"title": "new", "body": "war and peace"}),
        ("PUT", "/plain-0/_doc/new-2?refresh=true", {"title": "new", "body": "war and treaty"}),
        ("PUT", "/war/_doc/new-3", {"title": "new", "body": "war"}),
        ("GET", "/logs/_doc/new-1", None),
        ("GET", "/plain-0/_doc/new-2", None),
        ("GET", "/war/_count", None),
        ("POST", "/_aliases", {"actions": [{"add": {"index": A, "alias": "logs", "is_write_index": True}}]}),
        ("POST", "/_aliases", {"actions": [{"add": {"index": A, "alias": "bad", "filter": {"nope": {}}}}]}),
        ("PUT", f"/{A}/_alias/odd", {"filtre": {}}),
        ("POST", "/_aliases", {"actions": [{"add": {"index": A, "alias": "odd", "filtre": {}}}]}),
        ("POST", "/_aliases", {"actions": [{"add": {"index": A, "alias": "odd", "is_write_index": "yes"}}]}),
        ("PUT", f"/{A}/_alias/again", {"filter": {"match": {"body": "treaty"}}, "index_routing": "3"}),
        ("GET", f"/{A}/_alias/again", None),
        ("PUT", f"/{A}/_alias/again", {"filter": {"match": {"body": "union"}}}),
        ("GET", f"/{A}/_alias/again", None),
        ("POST", "/again/_count", None),
        ("POST", "/peace-0/_delete_by_query?refresh=true", {"query": {"match": {"body": "treaty"}}}),
        ("GET", f"/{A}/_count", None),
        ("POST", "/peace-0/_count", None),
        ("POST", "/_aliases", {"actions": [{"remove": {"index": "*", "alias": "war"}}]}),
        ("POST", "/war/_search", search({"match_all": {}})),
    ]


def shaped(answer):
    """What the replay compares: the hits (count, ids and scores), the
    count, a document's index and whether it was found, a write's
    index and result, a delete-by-query's numbers, an
    error's type, or the whole answer."""
    if isinstance(answer, dict) and "hits" in answer:
        hits = [[h["_id"], h["_score"]] for h in answer["hits"]["hits"]]
        return {"total": answer["hits"]["total"]["value"], "hits": hits}
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        return {"error": answer["error"]["type"]}
    if isinstance(answer, dict) and "count" in answer:
        return {"count": answer["count"]}
    if isinstance(answer, dict) and "found" in answer:
        return {"_index": answer["_index"], "found": answer["found"]}
    if isinstance(answer, dict) and "result" in answer:
        return {"_index": answer["_index"], "result": answer["result"]}
    if isinstance(answer, dict) and "deleted" in answer:
        return {"total": answer["total"], "deleted": answer["deleted"]}
    return answer


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    load_corpus_split(base, PARTS, MAPPING)
    name, cases = record_steps(base, steps(), shaped)
    for part in PARTS:
        call(base, "DELETE", f"/{part}")
    print_golden([("node", name), ("indexes", PARTS), ("mapping", MAPPING)], cases)


if __name__ == "__main__":
    main()
