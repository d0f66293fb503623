#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over the `cjk`
analyzer (Lucene's CJKAnalyzer: widths folded, lowercased, runs of Han,
Hiragana, Katakana and Hangul as overlapping pairs of characters, its stop
words) and the `cjk_width` and `cjk_bigram` filters (`ignored_scripts`,
`output_unigrams`): `_analyze` tokens with their positions, position
lengths, offsets and types, the settings as shown, searches through fields
analyzed so (words, phrases, pairs kept beside characters read by position);
for `crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's filters are also checked against Lucene's own on 3,048 texts:
`tests/golden/lucene/cjk.jsonl`.)

    python3 tests/golden/opensearch/cjk.py http://127.0.0.1:9201 > tests/golden/opensearch/cjk.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-cjk"
SETTINGS = {"analysis": {
    "filter": {
        "no_han": {"type": "cjk_bigram", "ignored_scripts": ["han", "klingon"]},
        "both": {"type": "cjk_bigram", "output_unigrams": True},
    },
    "analyzer": {
        "no_han": {"tokenizer": "standard", "filter": ["cjk_width", "lowercase", "no_han"]},
        "both": {"tokenizer": "standard", "filter": ["cjk_width", "lowercase", "both"]},
        "cjk_none": {"type": "cjk", "stopwords": "_none_"},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "cjk"},
    "body": {"type": "text", "analyzer": "both"},
}}
DOCS = [
    {"title": "東京タワーの夜景", "body": "東京タワーの夜景はきれい"},
    {"title": "日本語のテキスト解析", "body": "日本語のテキストを解析する"},
    {"title": "한국어 텍스트 분석", "body": "한국어 텍스트를 분석합니다"},
    {"title": "The ｶﾞｲﾄﾞ to ＴＯＫＹＯ", "body": "ガイド to Tokyo"},
    {"title": "中文分词 and the search", "body": "中文分词和搜索"},
]
TEXTS = ["東京タワーの夜景", "日本語のテキスト解析 and the ＴＯＫＹＯ ｶﾞｲﾄﾞ", "한국어 텍스트 분석", "中 文 x中y 𠀀𠀁",
         "ラーメン屋さん 2024年"]


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
    for analyzer in ["cjk", "no_han", "both", "cjk_none"]:
        out += [analyze({"analyzer": analyzer, "text": t}) for t in TEXTS]
    out += [
        analyze({"tokenizer": "standard", "filter": ["cjk_bigram"], "text": TEXTS[1]}, None),
        analyze({"tokenizer": "standard", "filter": ["cjk_width"], "text": "ＡＢＣ ｶﾞｷﾞ ﾊﾟ ｳﾞ"}, None),
        analyze({"tokenizer": "standard", "filter": ["cjk_width", "cjk_bigram"], "text": ["東京", "タワー"]}, None),
        search({"query": {"match": {"title": "東京"}}}),
        search({"query": {"match": {"title": "日本語 テキスト"}}}),
        search({"query": {"match": {"title": "ガイド tokyo"}}}),
        search({"query": {"match_phrase": {"title": "テキスト解析"}}}),
        search({"query": {"match": {"title": "한국어"}}}),
        search({"query": {"match": {"body": "日本語"}}}),
        search({"query": {"match": {"body": {"query": "夜景 分析", "operator": "and"}}}}),
        search({"query": {"match_phrase": {"body": "東京タワー"}}}),
        search({"query": {"query_string": {"query": "中文 OR 텍스트", "default_field": "title"}}}),
        search({"query": {"match": {"title": {"query": "中文分词", "analyzer": "both"}}}}),
    ]
    return out


def main():
    record_main([INDEX], steps)


if __name__ == "__main__":
    main()
