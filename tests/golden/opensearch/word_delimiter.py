#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over analyzers with
the `word_delimiter_graph` filter (Lucene's WordDelimiterGraphFilter: a term
cut at delimiters, case changes and digits, a trailing `'s` dropped, runs of
parts joined and the original kept when asked, each part at a position of its
own, a joined one spanning several): `_analyze` tokens with their positions,
position lengths and offsets, the filter built in and defined with its
options, the settings as shown, searches through fields indexed with it
(queries analyzed without joined parts: Needle refuses a query whose terms
span several positions), and a normalizer naming it, which both refuse; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's filter is also checked against Lucene's own on 3,062 generated
terms under random options: `tests/golden/lucene/word_delimiter.jsonl`.)

    python3 tests/golden/opensearch/word_delimiter.py http://127.0.0.1:9201 > tests/golden/opensearch/word_delimiter.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-wdg"
SETTINGS = {"analysis": {
    "filter": {
        "joined": {"type": "word_delimiter_graph", "catenate_words": True, "catenate_numbers": "true",
                   "preserve_original": True},
        "all": {"type": "word_delimiter_graph", "catenate_all": True, "generate_number_parts": False},
        "whole_case": {"type": "word_delimiter_graph", "split_on_case_change": False, "split_on_numerics": False,
                       "stem_english_possessive": False, "protected_words": ["wi-fi", "C++"]},
        "unadjusted": {"type": "word_delimiter_graph", "adjust_offsets": False},
        "skip_keywords": {"type": "word_delimiter_graph", "ignore_keywords": True},
        "mark": {"type": "keyword_marker", "keywords": ["e-mail"]},
    },
    "analyzer": {
        "parts": {"tokenizer": "whitespace", "filter": ["word_delimiter_graph", "lowercase"]},
        "joined": {"tokenizer": "whitespace", "filter": ["joined", "lowercase"]},
        "plain": {"tokenizer": "whitespace", "filter": ["lowercase"]},
        "all": {"tokenizer": "whitespace", "filter": ["all", "lowercase"]},
        "whole_case": {"tokenizer": "whitespace", "filter": ["whole_case"]},
        "unadjusted": {"tokenizer": "standard", "filter": ["unadjusted"]},
        "kept": {"tokenizer": "whitespace", "filter": ["mark", "skip_keywords"]},
        "then_unique": {"tokenizer": "whitespace", "filter": ["joined", "lowercase", "unique"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "parts"},
    "code": {"type": "text", "analyzer": "joined", "search_analyzer": "parts"},
}}
DOCS = [
    {"title": "The PowerShot SD500 camera", "code": "wi-fi-4000 PowerShot"},
    {"title": "Wi-Fi routers and O'Neil's shop", "code": "SD500 j2se"},
    {"title": "power shot wifi", "code": "e-mail 500-42"},
]
TEXTS = ["Wi-Fi PowerShot SD500 O'Neil's j2se 500-42", "wi-fi-4000 -- x...y _under_score ABCdef iPod",
         "e-mail's HTTPServer école-ÉTÉ 日本-語 a😀b"]


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
    for analyzer in ["parts", "joined", "all", "whole_case", "unadjusted", "kept", "then_unique"]:
        out += [analyze({"analyzer": analyzer, "text": t}) for t in TEXTS]
    out += [
        analyze({"tokenizer": "whitespace", "filter": ["word_delimiter_graph"], "text": TEXTS[0]}, None),
        analyze({"tokenizer": "keyword", "filter": [{"type": "word_delimiter_graph", "catenate_all": True}],
                 "text": "Wi-Fi-4000"}, None),
        analyze({"tokenizer": "whitespace", "filter": ["word_delimiter_graph"], "text": ["a-b c", "d-e"]}, None),
        analyze({"analyzer": "joined", "text": "Wi-Fi 500-42", "explain": True}),
        search({"query": {"match": {"title": "shot"}}}),
        search({"query": {"match": {"title": "Power-Shot"}}}),
        search({"query": {"match_phrase": {"title": "power shot"}}}),
        search({"query": {"match_phrase": {"title": "wi fi routers"}}}),
        search({"query": {"match": {"title": "oneil"}}}),
        search({"query": {"match": {"title": "neil"}}}),
        search({"query": {"match": {"code": "wifi"}}}),
        search({"query": {"match": {"code": "wi-fi-4000"}}}),
        search({"query": {"match": {"code": "50042"}}}),
        search({"query": {"match_phrase": {"code": "power shot"}}}),
        search({"query": {"match_phrase": {"code": "wi fi 4000"}}}),
        search({"query": {"query_string": {"query": "sd500", "default_field": "title"}}}),
        search({"query": {"match": {"title": {"query": "e-mail", "analyzer": "plain"}}}}),
        ("PUT", "/needle-wdg-bad", {"settings": {"analysis": {
            "normalizer": {"n": {"type": "custom", "filter": ["word_delimiter_graph"]}}}}}),
        ("PUT", "/needle-wdg-bad", {"settings": {"analysis": {
            "filter": {"f": {"type": "word_delimiter_graph", "catenate_words": "yes"}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["f"]}}}}}),
    ]
    return out


def main():
    record_main([INDEX, "needle-wdg-bad"], steps)


if __name__ == "__main__":
    main()
