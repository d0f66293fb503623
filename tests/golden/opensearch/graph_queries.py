#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to `match`, `multi_match`,
`query_string` and `simple_query_string` queries whose text the search
analyzer makes into a graph of terms (Lucene's
QueryBuilder reading a token graph: `word_delimiter_graph` joining parts or
keeping the original beside them, so that some terms span several
positions): each stretch between the places every path passes through is one
clause, a stretch with paths of different lengths a disjunction of its paths
(phrases, or with `auto_generate_synonyms_phrase_query: false` conjunctions),
joined by `operator` and `minimum_should_match`; phrases with a slop (a
disjunction of the phrases of every path) and without (Lucene's span
queries); holes left by stop words;
a keyword field (no positions: conjunctions); for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step (hits, scores and totals), shaped as
`multi_fields.py` shapes them.

    python3 tests/golden/opensearch/graph_queries.py http://127.0.0.1:9201 > tests/golden/opensearch/graph_queries.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import bulk_step, record_main, search_step

INDEX = "needle-graph"
SETTINGS = {"analysis": {
    "filter": {
        "joined": {"type": "word_delimiter_graph", "catenate_words": True, "catenate_numbers": True},
        "kept": {"type": "word_delimiter_graph", "preserve_original": True, "catenate_all": True},
    },
    "analyzer": {
        "parts": {"tokenizer": "whitespace", "filter": ["word_delimiter_graph", "lowercase"]},
        "joined": {"tokenizer": "whitespace", "filter": ["joined", "lowercase"]},
        "kept": {"tokenizer": "whitespace", "filter": ["kept", "lowercase"]},
        "joined_stop": {"tokenizer": "whitespace", "filter": ["joined", "lowercase", "stop"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "joined"},
    "body": {"type": "text", "analyzer": "parts", "search_analyzer": "kept"},
    "note": {"type": "text", "analyzer": "joined_stop"},
    "tag": {"type": "keyword"},
}}
DOCS = [
    {"title": "Wi-Fi router for the home", "body": "wifi routers and wi fi hotspots", "note": "the wi-fi of the hotel",
     "tag": "wifi"},
    {"title": "WiFi extender", "body": "Wi-Fi extender with PowerShot camera", "note": "wi fi and x", "tag": "wi"},
    {"title": "The PowerShot SD500 camera", "body": "power shot sd 500 review", "note": "power-shot in the dark",
     "tag": "fi"},
    {"title": "wi and fi are two words", "body": "fi wi reversed", "note": "wi of fi", "tag": "PowerShot"},
    {"title": "e-mail router setup", "body": "email and e-mail setup for Wi-Fi-4000", "note": "e-mail of wifi",
     "tag": "power"},
    {"title": "SD-500 memory card", "body": "sd500 and sd 500 and SD-500", "note": "the sd-500 of note",
     "tag": "sd500"},
    {"title": "router router router wifi", "body": "wi-fi wi-fi wi fi", "note": "wifi wifi", "tag": "router"},
    {"title": "nothing about it", "body": "plain text here", "note": "nothing", "tag": "other"},
]


def search(body, index=INDEX):
    return search_step(body, index)


def steps():
    out = [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        bulk_step(INDEX, DOCS),
    ]
    for text in ["wi-fi", "Wi-Fi router", "wi-fi PowerShot sd-500", "e-mail wi-fi-4000", "router wi-fi"]:
        out.append(search({"query": {"match": {"title": text}}}))
        out.append(search({"query": {"match": {"body": text}}}))
    out += [
        search({"query": {"match": {"title": {"query": "Wi-Fi router", "operator": "and"}}}}),
        search({"query": {"match": {"title": {"query": "wi-fi PowerShot sd-500 camera",
                                              "minimum_should_match": "2"}}}}),
        search({"query": {"match": {"title": {"query": "wi-fi PowerShot", "minimum_should_match": "100%"}}}}),
        search({"query": {"match": {"title": {"query": "wi-fi router",
                                              "auto_generate_synonyms_phrase_query": False}}}}),
        search({"query": {"match": {"body": {"query": "wi-fi power-shot",
                                             "auto_generate_synonyms_phrase_query": False, "operator": "and"}}}}),
        search({"query": {"match": {"note": "the wi-fi of x"}}}),
        search({"query": {"match": {"note": "power-shot of sd-500"}}}),
        search({"query": {"match": {"title": {"query": "wi-fi router", "analyzer": "kept"}}}}),
        search({"query": {"match": {"tag": {"query": "wi-fi", "analyzer": "joined"}}}}),
        search({"query": {"match": {"tag": {"query": "Power-Shot", "analyzer": "kept"}}}}),
        search({"query": {"match": {"title": {"query": "wi-fi", "boost": 2.5}}}}),
        search({"query": {"multi_match": {"query": "wi-fi router", "fields": ["title", "body"]}}}),
        search({"query": {"multi_match": {"query": "wi-fi power-shot", "fields": ["title", "body^2"],
                                          "type": "most_fields"}}}),
        search({"query": {"multi_match": {"query": "sd-500 e-mail", "fields": ["title", "body", "note"],
                                          "tie_breaker": 0.3}}}),
        search({"query": {"bool": {"must": {"match": {"body": "wi-fi"}},
                                   "filter": {"match": {"title": "router"}}}}}),
        search({"query": {"bool": {"should": [{"match": {"title": "wi-fi"}}, {"match": {"body": "power-shot"}}],
                                   "must_not": {"term": {"tag": "wi"}}}}}),
        search({"query": {"query_string": {"query": "wi-fi router", "default_field": "title"}}}),
        search({"query": {"query_string": {"query": "title:wi-fi AND body:power-shot"}}}),
        search({"query": {"query_string": {"query": "wi-fi", "fields": ["title", "body"]}}}),
        search({"query": {"query_string": {"query": "wi-fi router", "default_field": "title",
                                           "default_operator": "and"}}}),
        search({"query": {"query_string": {"query": "wi-fi sd-500", "default_field": "title",
                                           "auto_generate_synonyms_phrase_query": False}}}),
        search({"query": {"query_string": {"query": "(wi-fi OR e-mail) -router", "default_field": "body"}}}),
        search({"query": {"simple_query_string": {"query": "wi-fi router", "fields": ["title"]}}}),
        search({"query": {"simple_query_string": {"query": "wi-fi +router", "fields": ["title", "body"],
                                                  "default_operator": "and"}}}),
        search({"query": {"simple_query_string": {"query": "power-shot | e-mail", "fields": ["body"],
                                                  "auto_generate_synonyms_phrase_query": False}}}),
        search({"query": {"match_phrase": {"title": {"query": "wi-fi router", "slop": 1}}}}),
        search({"query": {"match_phrase": {"title": "wi-fi router"}}}),
        search({"query": {"match_phrase": {"title": "the powershot sd-500 camera"}}}),
        search({"query": {"match_phrase": {"body": "wi-fi extender"}}}),
        search({"query": {"match_phrase": {"body": "wi-fi wi-fi wi fi"}}}),
        search({"query": {"match_phrase": {"body": "power-shot sd-500"}}}),
        search({"query": {"multi_match": {"query": "wi-fi router", "fields": ["title", "body"], "type": "phrase"}}}),
        search({"query": {"match_phrase": {"body": {"query": "wi-fi extender", "slop": 2}}}}),
        search({"query": {"match_phrase": {"note": {"query": "wi-fi x", "slop": 3}}}}),
        search({"query": {"multi_match": {"query": "sd-500 review", "fields": ["title", "body"], "type": "phrase",
                                          "slop": 1}}}),
    ]
    return out


def main():
    record_main([INDEX], steps)


if __name__ == "__main__":
    main()
