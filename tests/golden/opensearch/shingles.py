#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over analyzers with
the `shingle` filter (Lucene's ShingleFilter: each token joined with the ones
after it, holes left by removed words filled with `_`): `_analyze` tokens
with their positions, position lengths, offsets and types, the filter built
in and defined with its options, the settings as shown (`index.max_shingle_diff`
among them), searches through fields indexed with it (a query's shingles of
several sizes read by position, as Elasticsearch disables graph queries for
them), and the sizes it refuses; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's filter is also checked against Lucene's own on 3,028 texts under
random options: `tests/golden/lucene/shingle.jsonl`.)

    python3 tests/golden/opensearch/shingles.py http://127.0.0.1:9201 > tests/golden/opensearch/shingles.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-shingles"
SETTINGS = {"index": {"max_shingle_diff": 4}, "analysis": {
    "filter": {
        "pairs": {"type": "shingle", "output_unigrams": False},
        "wide": {"type": "shingle", "min_shingle_size": 2, "max_shingle_size": 4, "token_separator": "+",
                 "filler_token": "-"},
        "lone": {"type": "shingle", "min_shingle_size": 3, "max_shingle_size": 3, "output_unigrams": "false",
                 "output_unigrams_if_no_shingles": True, "token_separator": ""},
    },
    "analyzer": {
        "shingled": {"tokenizer": "standard", "filter": ["lowercase", "shingle"]},
        "pairs": {"tokenizer": "standard", "filter": ["lowercase", "stop", "pairs"]},
        "wide": {"tokenizer": "whitespace", "filter": ["stop", "wide", "uppercase"]},
        "lone": {"tokenizer": "standard", "filter": ["lowercase", "lone"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "shingled"},
    "body": {"type": "text", "analyzer": "pairs"},
    "note": {"type": "text", "analyzer": "standard", "fields": {"pairs": {"type": "text", "analyzer": "pairs"}}},
}}
DOCS = [
    {"title": "The quick brown fox", "body": "the quick brown fox jumps", "note": "quick brown fox"},
    {"title": "quick fox brown", "body": "a brown fox and a quick dog", "note": "brown quick fox"},
    {"title": "Brown fox quick", "body": "quick brown dogs in the fox den", "note": "the fox is quick and brown"},
    {"title": "nothing here at all", "body": "fox", "note": "a quick note"},
    {"title": "quick quick brown brown", "body": "quick brown quick brown", "note": "brown fox"},
]
TEXTS = ["The quick brown fox", "a quick fox of the woods", "fox", "the", "to be or not to be"]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    out = [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis,*.settings.index.max_shingle_diff", None),
        bulk_step(INDEX, DOCS),
    ]
    for analyzer in ["shingled", "pairs", "wide", "lone"]:
        out += [analyze({"analyzer": analyzer, "text": t}) for t in TEXTS]
    out += [
        analyze({"tokenizer": "whitespace", "filter": ["shingle"], "text": "one two three"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "shingle", "max_shingle_size": 3}],
                 "text": "one two three"}, None),
        analyze({"tokenizer": "whitespace", "filter": ["shingle"], "text": ["a b", "c d"]}, None),
        analyze({"analyzer": "pairs", "text": "the quick fox", "explain": True}),
        search({"query": {"match": {"title": "quick brown"}}}),
        search({"query": {"match": {"title": "brown fox quick"}}}),
        search({"query": {"match": {"title": {"query": "quick brown", "operator": "and"}}}}),
        search({"query": {"match_phrase": {"title": "quick brown"}}}),
        search({"query": {"match": {"body": "quick brown fox"}}}),
        search({"query": {"match": {"body": "brown fox"}}}),
        search({"query": {"match": {"body": "the fox"}}}),
        search({"query": {"match_phrase": {"body": "quick brown"}}}),
        search({"query": {"multi_match": {"query": "quick brown fox", "fields": ["note", "note.pairs"],
                                          "type": "most_fields"}}}),
        search({"query": {"term": {"title": "quick brown"}}}),
        search({"query": {"match": {"title": {"query": "brown fox", "analyzer": "pairs"}}}}),
        ("PUT", "/needle-shingles-bad", {"settings": {"analysis": {
            "filter": {"f": {"type": "shingle", "min_shingle_size": 2, "max_shingle_size": 5}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["f"]}}}}}),
        ("PUT", "/needle-shingles-bad", {"settings": {"analysis": {
            "filter": {"f": {"type": "shingle", "min_shingle_size": 1, "output_unigrams": False}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["f"]}}}}}),
        ("PUT", "/needle-shingles-bad", {"settings": {"analysis": {
            "filter": {"f": {"type": "shingle", "min_shingle_size": 3, "max_shingle_size": 2}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["f"]}}}}}),
        ("PUT", "/needle-shingles-bad", {"settings": {"analysis": {
            "normalizer": {"n": {"type": "custom", "filter": ["shingle"]}}}}}),
    ]
    return out


def main():
    record_main([INDEX, "needle-shingles-bad"], steps)


if __name__ == "__main__":
    main()
