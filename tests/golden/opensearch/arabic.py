#!/usr/bin/env python3
"""Records a real OpenSearch node's answers over Arabic text: the `arabic`
analyzer (Lucene's ArabicAnalyzer: lowercased, digits made ASCII, its stop
words, normalized, Larkey's light stemmer), the `arabic_normalization` and
`arabic_stem` filters and the `stemmer` filter's `arabic` language, by name,
defined in place and in an index's analyzers, the `_arabic_` stop list, a
keyword-marked word the stemmer leaves alone; searches of a field analyzed
as Arabic (a word found by its other forms: with the article, a
conjunction, diacritics, another hamza seat), a phrase and a wildcard query
(normalized as the analyzer normalizes); for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's stemmer and normalization are also checked against Lucene's own
on 2,800 recorded words: `tests/golden/lucene/light_stems.jsonl`.)

    python3 tests/golden/opensearch/arabic.py http://127.0.0.1:9201 > tests/golden/opensearch/arabic.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import json
import os

from multi_fields import analyze_step, bulk_step, record_main, search_step

HERE = os.path.dirname(os.path.abspath(__file__))
INDEX = "needle-arabic"
SETTINGS = {"analysis": {
    "filter": {
        "stem": {"type": "stemmer", "language": "arabic"},
        "kept": {"type": "keyword_marker", "keywords": ["والكتاب"]},
        "stops": {"type": "stop", "stopwords": "_arabic_"},
    },
    "analyzer": {
        "custom_ar": {"tokenizer": "standard", "filter": ["lowercase", "decimal_digit", "stops",
                                                          "arabic_normalization", "kept", "stem"]},
        "light": {"tokenizer": "standard", "filter": ["arabic_normalization", "arabic_stem"]},
        "own_stops": {"type": "arabic", "stopwords": ["كتاب"]},
    },
}}
MAPPING = {"properties": {
    "body": {"type": "text", "analyzer": "arabic"},
    "custom": {"type": "text", "analyzer": "custom_ar"},
}}
DOCS = [
    {"body": "المكتبة الوطنية في القاهرة", "custom": "والكتاب الجديد"},
    {"body": "مكتبات الجامعة والكتب القديمة", "custom": "الكتاب الجديد"},
    {"body": "قرأت كتابا عن تاريخ مصر ٢٠٢٤", "custom": "كتابان"},
    {"body": "الكِتَابُ على الطاولة", "custom": "المعلمون والمعلمات"},
    {"body": "أحمد وإبراهيم في المدرسة", "custom": "مدرسة"},
    {"body": "The library ٣ books", "custom": "Library"},
]


def words():
    """Arabic words Lucene's Snowball stemmer was recorded on (plain text, many forms)."""
    path = os.path.join(HERE, "../lucene/snowball.jsonl")
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    return [w for lang, w, _ in rows if lang == "Arabic"][:60]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    text = " ".join(words())
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
        analyze({"analyzer": "arabic", "text": text}, None),
        analyze({"analyzer": "arabic", "text": "في المكتبة والكتب الكِتَابُ إبراهيم ٢٠٢٤ The Books مدرسة على"}, None),
        analyze({"analyzer": "custom_ar", "text": "والكتاب الجديد على الطاولة ١٢"}),
        analyze({"analyzer": "light", "text": text}),
        analyze({"analyzer": "own_stops", "text": "كتاب في المكتبة"}),
        analyze({"tokenizer": "whitespace", "filter": ["arabic_normalization"], "text": "أحمد إبراهيم آمن مكتبة مصطفى الكِتَابُ بـــيت"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "arabic_normalization"}], "text": "إلى"}, None),
        analyze({"tokenizer": "whitespace", "filter": ["arabic_stem"], "text": text}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "arabic_stem"}], "text": "والكتاب للمدرسة"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "stemmer", "language": "Arabic"}], "text": "والكتاب وو"}, None),
        analyze({"tokenizer": "standard", "filter": [{"type": "stop", "stopwords": "_arabic_"}], "text": "في على من كتاب"}, None),
        search({"query": {"match": {"body": "مكتبة"}}}),
        search({"query": {"match": {"body": "الكتاب"}}}),
        search({"query": {"match": {"body": "كتاب"}}}),
        search({"query": {"match": {"body": "ابراهيم"}}}),
        search({"query": {"match": {"body": "2024"}}}),
        search({"query": {"match": {"body": "٣"}}}),
        search({"query": {"match_phrase": {"body": "المكتبة الوطنية"}}}),
        search({"query": {"match": {"custom": "كتاب"}}}),
        search({"query": {"match": {"custom": "والكتاب"}}}),
        search({"query": {"match": {"custom": "معلم"}}}),
        search({"query": {"wildcard": {"body": {"value": "إبراه*"}}}}),
        search({"query": {"query_string": {"query": "body:إبراه*"}}}),
        search({"query": {"query_string": {"query": "body:ابراه*"}}}),
        search({"query": {"query_string": {"query": "body:الكتب OR custom:مدرسة"}}}),
    ]


def main():
    record_main([INDEX], steps)


if __name__ == "__main__":
    main()
