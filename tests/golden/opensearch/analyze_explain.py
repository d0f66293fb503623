#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to `_analyze` with `explain`:
the text after each char filter, the tokens after the tokenizer and after
each filter of a custom analyzer (an index's, a field's, a normalizer, one
made for the request, parts defined in place named `__anonymous__TYPE`),
a built-in analyzer's tokens under its name, each token with its bytes,
keyword mark (where a stemmer or marker puts one in the stream), position
length and term frequency, and `attributes` choosing among those; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare whole.

    python3 tests/golden/opensearch/analyze_explain.py http://127.0.0.1:9201 > tests/golden/opensearch/analyze_explain.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, record_main

INDEX = "needle-explain"
SETTINGS = {"analysis": {
    "filter": {"my_stem": {"type": "stemmer", "language": "english"},
               "keep": {"type": "keyword_marker", "keywords": ["running"]}},
    "char_filter": {"amp": {"type": "mapping", "mappings": ["& => and"]}},
    "analyzer": {
        "mine": {"tokenizer": "whitespace", "char_filter": ["amp", "html_strip"], "filter": ["lowercase", "keep", "my_stem"]},
        "english_stops": {"type": "standard", "stopwords": "_english_"},
    },
    "normalizer": {"n": {"type": "custom", "filter": ["lowercase", "asciifolding"]}},
}}
MAPPING = {"properties": {
    "t": {"type": "text", "analyzer": "mine"},
    "s": {"type": "text"},
    "e": {"type": "text", "analyzer": "english"},
    "k": {"type": "keyword", "normalizer": "n"},
}}


def analyze(body, index=INDEX):
    return analyze_step({**body, "explain": True}, index)


def steps():
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        analyze({"analyzer": "mine", "text": "Cats &amp; <b>Running</b> Dogs & mice"}),
        analyze({"analyzer": "mine", "text": ["Jumping cats", "running"]}),
        analyze({"field": "t", "text": "Cats"}),
        analyze({"field": "s", "text": "The Cats"}),
        analyze({"field": "e", "text": "The running Cats"}),
        analyze({"field": "k", "text": "Crème"}),
        analyze({"normalizer": "n", "text": "Crème"}),
        analyze({"analyzer": "english_stops", "text": "The Cats"}),
        analyze({"analyzer": "standard", "text": "Hi there"}, None),
        analyze({"analyzer": "english", "text": "The running dogs"}, None),
        analyze({"analyzer": "english", "text": "The running dogs", "attributes": ["keyword"]}, None),
        analyze({"analyzer": "standard", "text": "Hi", "attributes": ["bytes", "keyword", "nope"]}, None),
        analyze({"tokenizer": "keyword", "filter": [{"type": "stop", "stopwords": ["a"]}, "porter_stem"],
                 "text": ["a b", "running"]}, None),
        analyze({"tokenizer": {"type": "ngram", "min_gram": 2, "max_gram": 2}, "text": "abc"}, None),
        analyze({"tokenizer": "standard", "char_filter": [{"type": "mapping", "mappings": ["x => y"]}],
                 "filter": ["lowercase", {"type": "synonym", "synonyms": ["hi, hello"]}], "text": "X Hi"}, None),
        analyze({"tokenizer": "standard", "filter": ["unique"], "text": "a b a"}, None),
        analyze({"filter": ["uppercase"], "text": "é ü"}, None),
    ]


def main():
    record_main([INDEX], steps)


if __name__ == "__main__":
    main()
