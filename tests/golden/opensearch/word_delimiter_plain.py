#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over analyzers with
the older `word_delimiter` filter (Lucene's WordDelimiterFilter: the same
subwords as `word_delimiter_graph`, but every token one position long, joined
runs stacked on their first part, the original first, and a term of
delimiters alone leaving no hole past the first token): `_analyze` tokens
with their positions and offsets over texts of several terms, the filter
built in and defined with its options, searches through fields indexed with
it (phrases over stacked parts), and an option it does not take; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's filter is also checked against Lucene's own on 3,062 generated
terms under random options: `tests/golden/lucene/word_delimiter_plain.jsonl`.)

    python3 tests/golden/opensearch/word_delimiter_plain.py http://127.0.0.1:9201 > tests/golden/opensearch/word_delimiter_plain.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-wd"
SETTINGS = {"analysis": {
    "filter": {
        "joined": {"type": "word_delimiter", "catenate_words": True, "catenate_numbers": "true",
                   "preserve_original": True},
        "all": {"type": "word_delimiter", "catenate_all": True, "generate_word_parts": False},
        "whole_case": {"type": "word_delimiter", "split_on_case_change": False, "split_on_numerics": False,
                       "stem_english_possessive": False, "protected_words": ["wi-fi", "C++"]},
    },
    "analyzer": {
        "parts": {"tokenizer": "whitespace", "filter": ["word_delimiter", "lowercase"]},
        "joined": {"tokenizer": "whitespace", "filter": ["joined", "lowercase"]},
        "all": {"tokenizer": "whitespace", "filter": ["all", "lowercase"]},
        "whole_case": {"tokenizer": "whitespace", "filter": ["whole_case"]},
        "stopped": {"tokenizer": "whitespace", "filter": ["lowercase", "stop", "joined"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "parts"},
    "code": {"type": "text", "analyzer": "joined"},
}}
DOCS = [
    {"title": "The PowerShot SD500 camera", "code": "wi-fi-4000 PowerShot"},
    {"title": "Wi-Fi routers and O'Neil's shop", "code": "SD500 j2se"},
    {"title": "power shot wifi", "code": "e-mail 500-42 -- wi fi"},
]
TEXTS = ["Wi-Fi PowerShot SD500 O'Neil's j2se 500-42", "wi-fi-4000 -- x...y _under_score ABCdef iPod",
         "-- a -- b --", "--- Hello-World the e-mail's", "école-ÉTÉ 日本-語 a😀b C++ wi-fi"]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    out = [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
    ]
    for analyzer in ["parts", "joined", "all", "whole_case", "stopped"]:
        out += [analyze({"analyzer": analyzer, "text": t}) for t in TEXTS]
    out += [
        analyze({"tokenizer": "whitespace", "filter": ["word_delimiter"], "text": TEXTS[0]}, None),
        analyze({"tokenizer": "whitespace", "filter": ["word_delimiter"], "text": ["a-b c", "-- d-e"]}, None),
        search({"query": {"match": {"title": "shot"}}}),
        search({"query": {"match": {"title": "Power-Shot"}}}),
        search({"query": {"match_phrase": {"title": "power shot"}}}),
        search({"query": {"match": {"code": "wifi"}}}),
        search({"query": {"match": {"code": "wi-fi-4000"}}}),
        search({"query": {"match_phrase": {"code": "wi fi 4000"}}}),
        search({"query": {"match_phrase": {"code": "wifi 4000"}}}),
        search({"query": {"match": {"code": {"query": "500-42 j2se", "operator": "and"}}}}),
        search({"query": {"query_string": {"query": "sd500", "default_field": "title"}}}),
        ("PUT", "/needle-wd-bad", {"settings": {"analysis": {
            "filter": {"f": {"type": "word_delimiter", "catenate_words": "yes"}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["f"]}}}}}),
    ]
    return out


def main():
    record_main([INDEX, "needle-wd-bad"], steps)


if __name__ == "__main__":
    main()
