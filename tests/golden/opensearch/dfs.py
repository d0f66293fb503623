#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to searches over three indexes
that split the bundled State of the Union corpus between them (the document
on line i goes to index i % 3), with each index's own statistics
(`query_then_fetch`, the default) and with their statistics summed
(`search_type=dfs_query_then_fetch`), for
`crates/needle-server/tests/api/opensearch_dfs.rs` to compare Needle's
answers with: hit counts and every hit with its score. The summed answers
are also those of one index holding every document.

    python3 tests/golden/opensearch/dfs.py http://127.0.0.1:9201 > tests/golden/opensearch/dfs.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index, each
force-merged to one segment).
"""

import sys

from record import call, load_corpus_split, print_golden

PARTS = ["needle-dfs-0", "needle-dfs-1", "needle-dfs-2"]
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "text"}}}


def queries():
    return [
        {"match": {"body": "war"}},
        {"match": {"body": "peace treaty"}},
        {"match": {"body": {"query": "economy jobs taxes", "operator": "and"}}},
        {"match": {"title": "union"}},
        {"match_phrase": {"body": "civil war"}},
        {"match_phrase": {"body": {"query": "free people", "slop": 2}}},
        {"multi_match": {"query": "lincoln slavery", "fields": ["title^2", "body"]}},
        {"multi_match": {"query": "washington congress", "fields": ["title", "body"], "type": "most_fields"}},
        {"multi_match": {"query": "freedom liberty", "fields": ["body", "title", "source"], "type": "cross_fields"}},
        {"bool": {"must": [{"match": {"body": "war"}}], "should": [{"match_phrase": {"body": "civil war"}}],
                  "must_not": [{"match": {"body": "treaty"}}]}},
        {"dis_max": {"queries": [{"match": {"body": "peace"}}, {"match": {"title": "roosevelt"}}],
                     "tie_breaker": 0.3}},
        {"query_string": {"query": "railroad OR \"manifest destiny\"", "fields": ["title", "body"]}},
    ]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    load_corpus_split(base, PARTS, MAPPING)
    node = call(base, "GET", "/")
    cases = []
    for query in queries():
        for search_type in ["query_then_fetch", "dfs_query_then_fetch"]:
            body = {"query": query, "size": 250, "track_total_hits": True, "_source": False}
            path = f"/{','.join(PARTS)}/_search?search_type={search_type}"
            answer = call(base, "POST", path, body)
            assert answer["_shards"]["successful"] == len(PARTS), answer
            hits = [[h["_id"], h["_score"]] for h in answer["hits"]["hits"]]
            answer = {"total": answer["hits"]["total"]["value"], "hits": hits}
            cases.append({"search_type": search_type, "body": body, "answer": answer})
    name = node["version"]["distribution"] + " " + node["version"]["number"]
    print_golden([("node", name), ("indexes", PARTS), ("mapping", MAPPING)], cases)


if __name__ == "__main__":
    main()
