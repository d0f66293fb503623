#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over keyword fields
with a `normalizer` (the index's own, of the settings' `analysis.normalizer`,
and the built-in `lowercase`): the mapping shown, term, terms, match, prefix,
wildcard, range and query-string queries, `terms` aggregations and sorts on
those fields and on a multi-field with one, `_analyze` with a normalizer or
such a field, and the errors; for `crates/needle-server/tests/api/opensearch_multi_fields.rs`
to replay on Needle and compare step by step, shaped as `multi_fields.py` shapes them.

    python3 tests/golden/opensearch/normalizers.py http://127.0.0.1:9201 > tests/golden/opensearch/normalizers.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import json
import sys

from multi_fields import bulk_step, shaped
from record import call_with_status as call, print_golden, record_steps

INDEX = "needle-norm"
SETTINGS = {"analysis": {
    "normalizer": {"folded": {"type": "custom", "filter": ["lowercase", "asciifolding"]},
                   "loud": {"filter": ["uppercase", "tidy"]}},
    "filter": {"tidy": {"type": "trim"}},
}}
MAPPING = {"properties": {
    "tag": {"type": "keyword", "normalizer": "folded"},
    "code": {"type": "keyword", "normalizer": "lowercase"},
    "shout": {"type": "keyword", "normalizer": "loud"},
    "plain": {"type": "keyword"},
    "title": {"type": "text", "fields": {"raw": {"type": "keyword", "normalizer": "folded"}}},
}}
DOCS = [
    {"tag": "Café", "code": "AB-1", "shout": " hi ", "plain": "Café", "title": "Crème Brûlée"},
    {"tag": "CAFE", "code": "ab-1", "shout": "Hi", "plain": "CAFE", "title": "creme brulee"},
    {"tag": "cafe", "code": "Ab-2", "shout": "hello", "plain": "cafe", "title": "Other"},
    {"tag": "Crème", "code": "ZZ", "shout": "HELLO ", "plain": "Crème", "title": "Ëlan"},
    {"tag": ["Bar", "BAR"], "code": ["x", "X"], "shout": "x", "plain": "Bar", "title": "bar"},
]


LANGS = "needle-norm-langs"
LANGS_SETTINGS = {"analysis": {
    "normalizer": {"langs": {"filter": ["lowercase", "german_normalization", "decimal_digit", "arabic_normalization",
                                        "cjk_width", "elision"]}},
    "analyzer": {"german_text": {"tokenizer": "standard", "filter": ["lowercase", "german_normalization"]}},
}}
LANGS_MAPPING = {"properties": {"word": {"type": "keyword", "normalizer": "langs"},
                                "text": {"type": "text", "analyzer": "german_text"}}}
LANGS_DOCS = [{"word": "Straße", "text": "Straße"}, {"word": "l'Été", "text": "strasse"},
              {"word": "أحمد ٣", "text": "other"}, {"word": "ＡＢＣ", "text": "Strauß"}]


def search(body):
    return ("POST", f"/{INDEX}/_search", {"track_total_hits": True, "_source": False, **body})


def analyze(body, index=INDEX):
    return ("POST", f"/{index}/_analyze" if index else "/_analyze", body)


def steps():
    bulk = "".join(json.dumps({"index": {"_index": INDEX, "_id": str(i)}}) + "\n" + json.dumps(d) + "\n"
                   for i, d in enumerate(DOCS))
    aggs = {f: {"terms": {"field": f, "size": 10}} for f in ["tag", "code", "shout", "plain", "title.raw"]}
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_mapping", None),
        ("POST", "/_bulk?refresh=true", bulk),
        search({"size": 0, "aggs": aggs}),
        search({"query": {"term": {"tag": "CAFÉ"}}, "sort": ["_doc"]}),
        search({"query": {"term": {"plain": "CAFÉ"}}}),
        search({"query": {"terms": {"tag": ["cafe", "CRÈME", "nope"]}}, "sort": ["_doc"]}),
        search({"query": {"match": {"code": "aB-1"}}, "sort": ["_doc"]}),
        search({"query": {"term": {"shout": "hello"}}, "sort": ["_doc"]}),
        search({"query": {"term": {"shout": " HELLO  "}}, "sort": ["_doc"]}),
        search({"query": {"prefix": {"tag": "CA"}}, "sort": ["_doc"]}),
        search({"query": {"wildcard": {"tag": {"value": "C*É"}}}, "sort": ["_doc"]}),
        search({"query": {"range": {"tag": {"gte": "BAR", "lt": "CAFF"}}}, "sort": ["_doc"]}),
        search({"query": {"query_string": {"query": "tag:CAFÉ OR code:ZZ"}}, "sort": ["_doc"]}),
        search({"query": {"term": {"title.raw": "CREME BRULEE"}}, "sort": ["_doc"]}),
        search({"sort": [{"tag": "asc"}, {"code": "desc"}, "_doc"]}),
        search({"sort": [{"shout": "desc"}, "_doc"]}),
        analyze({"normalizer": "folded", "text": ["Crème Brûlée", "ÀB"]}),
        analyze({"normalizer": "lowercase", "text": "MiXeD"}),
        analyze({"field": "tag", "text": "Ça Va"}),
        analyze({"field": "shout", "text": ["  quiet  ", "x"]}),
        analyze({"normalizer": "nope", "text": "x"}),
        analyze({"normalizer": "folded", "analyzer": "standard", "text": "x"}),
        analyze({"normalizer": "lowercase", "text": "X"}, index=None),
        ("PUT", "/needle-norm-bad", {"mappings": {"properties": {"k": {"type": "keyword", "normalizer": "nope"}}}}),
        ("PUT", "/needle-norm-bad", {"mappings": {"properties": {"t": {"type": "text", "normalizer": "lowercase"}}}}),
        ("PUT", "/needle-norm-bad", {"settings": {"analysis": {"normalizer": {"n": {"filter": ["porter_stem"]}}}}}),
        ("PUT", "/needle-norm-bad", {"settings": {"analysis": {"normalizer": {"n": {"type": "odd"}}}}}),
        # The other normalizing filters: German and Arabic normalization, digits, CJK widths, elision.
        ("PUT", f"/{LANGS}", {"settings": LANGS_SETTINGS, "mappings": LANGS_MAPPING}),
        bulk_step(LANGS, LANGS_DOCS),
        analyze({"normalizer": "langs", "text": ["Straße", "l'Été", "أحمد ٣", "ＡＢＣ"]}, index=LANGS),
        *[("POST", f"/{LANGS}/_search", {"track_total_hits": True, "_source": False, "query": q}) for q in [
            {"term": {"word": "STRASSE"}}, {"term": {"word": "ete"}}, {"term": {"word": "احمد 3"}},
            {"term": {"word": "abc"}}, {"term": {"word": "strasse"}},
            {"wildcard": {"text": {"value": "stra*"}}},
            {"query_string": {"query": "text:Straß*"}},
        ]],
        ("PUT", "/needle-norm-bad", {"settings": {"analysis": {"normalizer": {"n": {"filter": ["kstem"]}}}}}),
    ]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    for index in [INDEX, "needle-norm-bad", LANGS]:
        call(base, "DELETE", f"/{index}")
    name, cases = record_steps(base, steps(), shaped)
    for index in [INDEX, "needle-norm-bad", LANGS]:
        call(base, "DELETE", f"/{index}")
    print_golden([("node", name)], cases)


if __name__ == "__main__":
    main()
