#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over analyzers and
normalizers with char filters (`mapping`: the longest key replaced, escapes
in rules; `pattern_replace`: Java regular expressions, `$1` groups, flags):
`_analyze` tokens (their offsets point into the original text, which the
filters changed), the settings as shown, searches through such fields and
a keyword field normalized with them, and the errors both refuse (a rule without `=>`, which OpenSearch answers with a
500, a pattern Java cannot read, and a group the pattern lacks, which Java
finds only when text matches, Needle refuses when the filter is made, with
400s: `tests/api/index_analyzers.rs`); for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.

    python3 tests/golden/opensearch/char_filters.py http://127.0.0.1:9201 > tests/golden/opensearch/char_filters.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-cf"
SETTINGS = {"analysis": {
    "char_filter": {
        "digraphs": {"type": "mapping", "mappings": ["ph => f", "qu => k", "x => eks", "& => \\u0020and\\u0020"]},
        "arabic_digits": {"type": "mapping", "mappings": ["٠ => 0", "١ => 1", "٢ => 2", "٣ => 3"]},
        "phone": {"type": "pattern_replace", "pattern": "(\\d{3})-(\\d{4})", "replacement": "$1$2"},
        "no_dash": {"type": "pattern_replace", "pattern": "-"},
        "shout": {"type": "pattern_replace", "pattern": "hello", "replacement": "HI", "flags": "CASE_INSENSITIVE"},
    },
    "analyzer": {
        "spelled": {"tokenizer": "standard", "char_filter": ["digraphs"], "filter": ["lowercase"]},
        "numbers": {"tokenizer": "standard", "char_filter": ["arabic_digits", "phone"]},
        "joined": {"tokenizer": "whitespace", "char_filter": ["no_dash", "shout"], "filter": ["lowercase"]},
    },
    "normalizer": {
        "sku": {"type": "custom", "char_filter": ["no_dash"], "filter": ["lowercase"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "spelled"},
    "phone": {"type": "text", "analyzer": "numbers"},
    "tags": {"type": "text", "analyzer": "joined"},
    "code": {"type": "keyword", "normalizer": "sku"},
}}
DOCS = [
    {"title": "Phone the Queen", "phone": "call 555-1234", "tags": "wi-fi hello-world", "code": "AB-12-x"},
    {"title": "Fone a friend & box", "phone": "٥٥٥ or ١٢٣", "tags": "e-mail Hello", "code": "ab12X"},
    {"title": "quick quiz", "phone": "5551234", "tags": "wifi", "code": "CD-34"},
]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    inline = lambda cf, text, tokenizer="standard": analyze({"tokenizer": tokenizer, "char_filter": cf, "text": text}, None)
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
        analyze({"field": "title", "text": "Phone the Queen & box"}),
        analyze({"field": "phone", "text": "call ١٢٣-٠٠٠٠ or 555-1234"}),
        analyze({"field": "tags", "text": "wi-fi Hello-World hellohello"}),
        analyze({"analyzer": "spelled", "text": ["xx", "a&b"]}),
        analyze({"normalizer": "sku", "text": "AB-12-x"}),
        inline([{"type": "mapping", "mappings": ["a => ", "\\u0020 => _"]}], "banana split"),
        inline([{"type": "mapping", "mappings": ["ab => x", "abc => yz", "b => bbb"]}], "abc ab abd b cab"),
        inline([{"type": "mapping", "mappings": ["é => e", "ß => ss", "😀 => smile"]}], "café straße 😀x"),
        inline([{"type": "mapping", "mappings": ["a => b"]}, {"type": "mapping", "mappings": ["b => cc"]}], "aa ba"),
        inline([{"type": "pattern_replace", "pattern": "(\\w+)@(\\w+)", "replacement": "$2 at $1"}], "me@host you@there"),
        inline([{"type": "pattern_replace", "pattern": "[aeiou]", "replacement": ""}], "education outreach"),
        inline([{"type": "pattern_replace", "pattern": "\\s+", "replacement": " "}], "a    b\t\tc", "whitespace"),
        inline([{"type": "pattern_replace", "pattern": "(?<word>[a-z]+)-(\\d+)", "replacement": "${word}$2"}], "abc-12 x-9"),
        inline([{"type": "pattern_replace", "pattern": "\\d", "replacement": "#"}], "a1 ٣b"),
        inline([{"type": "pattern_replace", "pattern": "o", "replacement": "\\$"}], "foo", "keyword"),
        search({"query": {"match": {"title": "fone"}}}),
        search({"query": {"match": {"title": "kween"}}}),
        search({"query": {"match": {"title": "boeks and"}}}),
        search({"query": {"match_phrase": {"title": "phone the"}}}),
        search({"query": {"match": {"phone": "5551234"}}}),
        search({"query": {"match": {"phone": "555-1234"}}}),
        search({"query": {"match": {"phone": "١٢٣"}}}),
        search({"query": {"match": {"tags": "wifi"}}}),
        search({"query": {"match": {"tags": "hi-world"}}}),
        search({"query": {"term": {"code": "AB12X"}}}),
        search({"query": {"term": {"code": "cd-34"}}}),
        search({"size": 0, "aggs": {"codes": {"terms": {"field": "code"}}}}),
        ("PUT", "/needle-cf-bad", {"settings": {"analysis": {
            "char_filter": {"m": {"type": "mapping", "mappings": ["a => b", "a => c"]}}}}}),
        ("PUT", "/needle-cf-bad", {"settings": {"analysis": {
            "analyzer": {"a": {"tokenizer": "standard", "char_filter": ["nope"]}}}}}),
        ("PUT", "/needle-cf-bad", {"settings": {"analysis": {"char_filter": {"m": {"type": "mapping"}}}}}),
        inline([{"type": "mapping", "mappings": [" => x"]}], "a"),
    ]


def main():
    record_main([INDEX, "needle-cf-bad"], steps)


if __name__ == "__main__":
    main()
