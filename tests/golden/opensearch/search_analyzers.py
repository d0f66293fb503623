#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over text fields
whose index analyzer expands a term into several at one position (an
`edge_ngram` filter for search-as-you-type, `asciifolding` keeping the
original) and whose `search_analyzer` makes one term a position, and over an
index whose `default_search` analyzer outranks its fields' own, and over
fields with a `search_quote_analyzer` (phrases in quotes, `match_phrase`,
phrase `multi_match`) and queries naming their own `analyzer` (and
`quote_analyzer`), the fields' analyzers changed by mapping updates with the other updates
Elasticsearch allows or refuses: the mapping shown, match, match_phrase (the phrase filters must see every term beside a
position), term and query-string queries, their scores, and the errors; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.

    python3 tests/golden/opensearch/search_analyzers.py http://127.0.0.1:9201 > tests/golden/opensearch/search_analyzers.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import bulk_step, record_main, search_step

INDEX = "needle-sa"
SETTINGS = {"analysis": {
    "filter": {"prefixes": {"type": "edge_ngram", "min_gram": 1, "max_gram": 10},
               "keep_folded": {"type": "asciifolding", "preserve_original": True}},
    "analyzer": {
        "autocomplete": {"tokenizer": "standard", "filter": ["lowercase", "prefixes"]},
        "folding": {"tokenizer": "standard", "filter": ["lowercase", "asciifolding"]},
        "folding_keep": {"tokenizer": "standard", "filter": ["lowercase", "keep_folded"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "autocomplete", "search_analyzer": "standard"},
    "body": {"type": "text", "analyzer": "folding_keep", "search_analyzer": "folding"},
}}
DOCS = [
    {"title": "Quick brown fox", "body": "The café is open"},
    {"title": "Quicksilver messenger service", "body": "Cafe au lait"},
    {"title": "The quiet brown café", "body": "Crème brûlée and cafe"},
    {"title": "Brownies are quick to make", "body": "nothing here"},
    {"title": "A fox, a brown one", "body": "CAFÉ CAFÉ café"},
]
OTHER = "needle-sa-default"


def search(body, index=INDEX):
    return search_step(body, index)


QUOTE = "needle-sa-quote"
QUOTE_MAPPING = {"properties": {
    "t": {"type": "text", "analyzer": "english", "search_quote_analyzer": "standard"},
    "k": {"type": "text", "search_quote_analyzer": "english"},
    "s": {"type": "text", "analyzer": "standard", "search_analyzer": "english", "search_quote_analyzer": "simple"},
    "tag": {"type": "keyword", "ignore_above": 5},
    "day": {"type": "date"},
    "low": {"type": "keyword", "normalizer": "lowercase"},
}}
QUOTE_DOCS = [
    {"t": "the running dogs", "k": "the running dogs", "s": "Running dogs", "tag": "abcdefgh"},
    {"t": "a run with a dog", "k": "runs of dogs", "s": "run dog", "tag": "abc"},
]


def quoted_steps():
    q = lambda body: search({"query": body}, QUOTE)
    put_mapping = lambda props: ("PUT", f"/{QUOTE}/_mapping", {"properties": props})
    return [
        ("PUT", f"/{QUOTE}", {"mappings": QUOTE_MAPPING, "settings": {"analysis": {"analyzer": {
            "shout": {"tokenizer": "whitespace", "filter": ["uppercase"]}}}}}),
        ("GET", f"/{QUOTE}/_mapping", None),
        bulk_step(QUOTE, QUOTE_DOCS),
        q({"match_phrase": {"t": "running dogs"}}),
        q({"match_phrase": {"t": "run dog"}}),
        q({"match": {"t": "running dogs"}}),
        q({"query_string": {"query": "\"running dogs\"", "default_field": "t"}}),
        q({"query_string": {"query": "\"run dog\"", "default_field": "t"}}),
        q({"query_string": {"query": "running dogs", "default_field": "t"}}),
        q({"query_string": {"query": "t:\"run dog\" OR k:\"running dogs\""}}),
        q({"simple_query_string": {"query": "\"run dog\"", "fields": ["t"]}}),
        q({"simple_query_string": {"query": "\"running dogs\" dogs", "fields": ["t", "k"]}}),
        q({"multi_match": {"query": "running dogs", "fields": ["t", "k"], "type": "phrase"}}),
        q({"multi_match": {"query": "run dog", "fields": ["t", "k"], "type": "phrase"}}),
        q({"match_phrase": {"k": "running dogs"}}),
        q({"match_phrase": {"k": "runs of dogs"}}),
        q({"match": {"k": "running dogs"}}),
        q({"match_phrase": {"s": "Run DOG"}}),
        q({"match_phrase": {"s": "running dogs"}}),
        q({"match": {"s": "running dogs"}}),
        q({"term": {"tag": "abcdefgh"}}),
        q({"match": {"t": {"query": "running dogs", "analyzer": "standard"}}}),
        q({"match": {"t": {"query": "running dogs", "analyzer": "english"}}}),
        q({"match": {"k": {"query": "running dogs", "analyzer": "english"}}}),
        q({"match": {"tag": {"query": "ABC", "analyzer": "standard"}}}),
        q({"match": {"tag": {"query": "abc", "analyzer": "shout"}}}),
        q({"match": {"tag": {"query": "abc", "analyzer": "keyword"}}}),
        q({"match": {"s": {"query": "RUN dog", "analyzer": "shout", "operator": "and"}}}),
        q({"match_phrase": {"s": {"query": "Running dogs", "analyzer": "whitespace"}}}),
        q({"match_phrase": {"s": {"query": "Running dogs", "analyzer": "standard"}}}),
        q({"multi_match": {"query": "running dogs", "fields": ["t", "k"], "analyzer": "english"}}),
        q({"multi_match": {"query": "running dogs", "fields": ["t", "k"], "type": "phrase", "analyzer": "standard"}}),
        q({"multi_match": {"query": "running dogs", "fields": ["t", "k"], "type": "most_fields", "analyzer": "standard"}}),
        q({"query_string": {"query": "running \"running dogs\"", "default_field": "t", "analyzer": "standard"}}),
        q({"query_string": {"query": "dogs \"running dogs\"", "default_field": "t", "analyzer": "standard", "quote_analyzer": "english"}}),
        q({"query_string": {"query": "\"run dog\"", "default_field": "t", "quote_analyzer": "whitespace"}}),
        q({"query_string": {"query": "running", "default_field": "t", "quote_analyzer": "standard"}}),
        q({"simple_query_string": {"query": "\"running dogs\" runs", "fields": ["t", "k"], "analyzer": "standard"}}),
        q({"simple_query_string": {"query": "\"running dogs\"", "fields": ["t", "k"], "analyzer": "english"}}),
        ("POST", f"/{QUOTE}/_search?q=running&df=k&analyzer=english", {"track_total_hits": True, "_source": False}),
        ("POST", f"/{QUOTE}/_search?q=running&df=t&analyzer=english", {"track_total_hits": True, "_source": False}),
        put_mapping({"t": {"type": "text", "analyzer": "english", "search_analyzer": "english", "search_quote_analyzer": "english"},
                     "tag": {"type": "keyword", "ignore_above": 20}}),
        ("GET", f"/{QUOTE}/_mapping", None),
        q({"match_phrase": {"t": "running dogs"}}),
        q({"query_string": {"query": "\"running dogs\"", "default_field": "t"}}),
        ("PUT", f"/{QUOTE}/_doc/2?refresh=true", {"tag": "abcdefgh", "t": "running"}),
        q({"term": {"tag": "abcdefgh"}}),
        put_mapping({"t": {"type": "text", "analyzer": "english"}}),
        ("GET", f"/{QUOTE}/_mapping", None),
        put_mapping({"k": {"type": "text", "search_analyzer": "english"}}),
        q({"match": {"k": "runs"}}),
        q({"match_phrase": {"k": "running dogs"}}),
        put_mapping({"t": {"type": "text", "analyzer": "standard"}}),
        put_mapping({"t": {"type": "keyword"}}),
        put_mapping({"t": {"type": "text", "analyzer": "english", "index": False}}),
        put_mapping({"day": {"type": "date", "format": "yyyy"}}),
        put_mapping({"low": {"type": "keyword"}}),
        put_mapping({"t": {"type": "text", "analyzer": "english", "search_quote_analyzer": "nope"}}),
        put_mapping({"new": {"type": "text"}, "t": {"type": "text", "analyzer": "standard"}}),
        ("GET", f"/{QUOTE}/_mapping", None),
        ("PUT", "/needle-sa-bad", {"mappings": {"properties": {"k": {"type": "keyword", "search_quote_analyzer": "standard"}}}}),
    ]


def steps():
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_mapping", None),
        bulk_step(INDEX, DOCS),
        search({"query": {"match": {"title": "qui"}}}),
        search({"query": {"match": {"title": "Qui BRO"}}}),
        search({"query": {"match": {"title": {"query": "quick br", "operator": "and"}}}}),
        search({"query": {"match_phrase": {"title": "quick brown"}}}),
        search({"query": {"match_phrase": {"title": "brown fox"}}}),
        search({"query": {"match_phrase": {"title": "qu br"}}}),
        search({"query": {"match_phrase": {"title": {"query": "quick fox", "slop": 1}}}}),
        search({"query": {"term": {"title": "quicks"}}}),
        search({"query": {"query_string": {"query": "title:(bro AND fo)"}}}),
        search({"query": {"match": {"body": "cafe"}}}),
        search({"query": {"match": {"body": "CAFÉ"}}}),
        search({"query": {"term": {"body": "café"}}}),
        search({"query": {"match_phrase": {"body": "creme brulee"}}}),
        search({"query": {"multi_match": {"query": "cafe brown", "fields": ["title", "body"]}}}),
        ("POST", f"/{INDEX}/_analyze", {"field": "title", "text": "Quick fox"}),
        ("POST", f"/{INDEX}/_analyze", {"field": "body", "text": "Café crème"}),
        ("PUT", f"/{OTHER}", {"settings": {"analysis": {"analyzer": {"default_search": {"type": "english"}}}},
                        "mappings": {"properties": {"t": {"type": "text", "analyzer": "standard"}}}}),
        bulk_step(OTHER, [{"t": "running dogs"}, {"t": "the dog runs"}, {"t": "Running"}]),
        search({"query": {"match": {"t": "running"}}}, OTHER),
        search({"query": {"match": {"t": "dogs"}}}, OTHER),
        search({"query": {"term": {"t": "running"}}}, OTHER),
        ("PUT", "/needle-sa-tok", {"settings": {"analysis": {
            "tokenizer": {"prefix_tok": {"type": "edge_ngram", "min_gram": 2, "max_gram": 10, "token_chars": ["letter", "digit"]}},
            "analyzer": {"prefix_an": {"tokenizer": "prefix_tok", "filter": ["lowercase"]}}}},
            "mappings": {"properties": {"name": {"type": "text", "analyzer": "prefix_an"},
                                        "name2": {"type": "text", "analyzer": "prefix_an", "search_analyzer": "standard"}}}}),
        bulk_step("needle-sa-tok", [{"name": t, "name2": t}
                                    for t in ["Quick Brown Fox", "Quicksilver 2000", "quiet brownies", "Fox-trot 42"]]),
        search({"query": {"match": {"name": "qui bro"}}}, "needle-sa-tok"),
        search({"query": {"match": {"name": "Quick"}}}, "needle-sa-tok"),
        search({"query": {"match": {"name2": "qui bro"}}}, "needle-sa-tok"),
        search({"query": {"match_phrase": {"name2": "quick brown"}}}, "needle-sa-tok"),
        search({"query": {"match": {"name2": "20"}}}, "needle-sa-tok"),
        ("PUT", "/needle-sa-alone", {"mappings": {"properties": {"t": {"type": "text", "search_analyzer": "english"}}}}),
        ("PUT", "/needle-sa-alone/_doc/1?refresh=true", {"t": "running dogs"}),
        search({"query": {"match": {"t": "dogs"}}}, "needle-sa-alone"),
        search({"query": {"match": {"t": "running"}}}, "needle-sa-alone"),
        ("GET", "/needle-sa-alone/_mapping", None),
        ("PUT", "/needle-sa-bad", {"mappings": {"properties": {"t": {"type": "text", "analyzer": "standard", "search_analyzer": "nope"}}}}),
        ("PUT", "/needle-sa-bad", {"mappings": {"properties": {"k": {"type": "keyword", "search_analyzer": "standard"}}}}),
    ] + quoted_steps()


def main():
    record_main([INDEX, OTHER, "needle-sa-tok", "needle-sa-alone", "needle-sa-bad", QUOTE], steps)


if __name__ == "__main__":
    main()
