#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over text fields
analyzed with synonym filters (`synonym` and `synonym_graph`, rules in
Solr's format: equivalent words, with and without `expand`, explicit
mappings, `lenient`), at index time and at search time: `_analyze` (tokens,
their order and types), the index's settings as shown, match (with
`operator` and `minimum_should_match`), multi_match, query_string and
simple_query_string queries and their scores (a position of several terms
is scored as one term: Lucene's SynonymQuery), term queries on what was
indexed, and the errors both refuse; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.

    python3 tests/golden/opensearch/synonyms.py http://127.0.0.1:9201 > tests/golden/opensearch/synonyms.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-syn"
SETTINGS = {"analysis": {
    "filter": {
        "equiv": {"type": "synonym", "synonyms": ["quick, fast, rapid", "Car, automobile", "# a comment"]},
        "first": {"type": "synonym", "synonyms": ["couch, sofa, settee"], "expand": False},
        "explicit": {"type": "synonym_graph", "synonyms": ["tv, television => telly", "big, large"]},
        "loose": {"type": "synonym", "synonyms": ["the, a", "happy, glad"], "lenient": True},
        "stemmed": {"type": "synonym", "synonyms": ["running, jogging"]},
        "prefixes": {"type": "edge_ngram", "min_gram": 1, "max_gram": 5},
        "keep_folded": {"type": "asciifolding", "preserve_original": True},
    },
    "analyzer": {
        "at_index": {"tokenizer": "standard", "filter": ["lowercase", "equiv"]},
        "first_word": {"tokenizer": "standard", "filter": ["lowercase", "first"]},
        "at_search": {"tokenizer": "standard", "filter": ["lowercase", "explicit"]},
        "stops": {"tokenizer": "standard", "filter": ["lowercase", "stop", "loose"]},
        "stems": {"tokenizer": "standard", "filter": ["lowercase", "porter_stem", "stemmed"]},
        "autocomplete": {"tokenizer": "standard", "filter": ["lowercase", "prefixes"]},
        "folding_keep": {"tokenizer": "standard", "filter": ["lowercase", "keep_folded"]},
    },
}}
MAPPING = {"properties": {
    "title": {"type": "text", "analyzer": "at_index"},
    "seat": {"type": "text", "analyzer": "first_word"},
    "body": {"type": "text", "analyzer": "standard", "search_analyzer": "at_search"},
    "mood": {"type": "text", "analyzer": "stops"},
    "sport": {"type": "text", "analyzer": "stems"},
    "name": {"type": "text", "analyzer": "autocomplete"},
    "place": {"type": "text", "analyzer": "folding_keep"},
}}
DOCS = [
    {"title": "A quick brown fox", "seat": "an old couch", "body": "the telly is big", "mood": "a happy day", "sport": "running shoes", "name": "Quick fox", "place": "Café de Flore"},
    {"title": "Fast cars and rapid boats", "seat": "a red sofa", "body": "a large television", "mood": "glad tidings", "sport": "jogging in the park", "name": "Quiet quiz", "place": "cafe society"},
    {"title": "The automobile museum", "seat": "settee for two", "body": "big tv, big telly", "mood": "the end", "sport": "he runs and jogs", "name": "Fox-trot", "place": "CAFÉ CAFÉ"},
    {"title": "Slow and steady", "seat": "a chair", "body": "small radio", "mood": "sad songs", "sport": "walking"},
    {"title": "quick quick fast", "seat": "couch couch sofa", "body": "television large large", "mood": "happy glad happy", "sport": "jog run"},
]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
        analyze({"field": "title", "text": "The quick car"}),
        analyze({"field": "seat", "text": "Sofa and settee"}),
        analyze({"analyzer": "at_search", "text": "Big TV"}),
        analyze({"analyzer": "stops", "text": "The happy one"}),
        analyze({"analyzer": "stems", "text": "running"}),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "synonym", "synonyms": ["a, b, c"]}], "text": "b x"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "synonym_graph", "synonyms": ["a, b, c"]}], "text": "b x"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "synonym", "synonyms": ["a, b => c, d", "a => e", "b, f"]}], "text": "a b f"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "synonym", "synonyms": ["a => a, d"]}], "text": "a"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "synonym", "synonyms": "x, y"}], "text": "x"}, None),
        analyze({"tokenizer": "standard", "filter": ["lowercase", {"type": "synonym", "synonyms": ["Quick, FAST"]}, "uppercase"], "text": "fast"}, None),
        analyze({"tokenizer": "standard", "filter": [{"type": "synonym", "synonyms": ["Quick, FAST"]}], "text": "fast FAST"}, None),
        analyze({"tokenizer": "standard", "filter": [{"type": "asciifolding", "preserve_original": True}, {"type": "synonym", "synonyms": ["cafe, bistro"]}], "text": "café"}, None),
        analyze({"tokenizer": "standard", "filter": [{"type": "synonym", "synonyms": ["a, b"]}, {"type": "synonym", "synonyms": ["b, c"]}], "text": "a"}, None),
        analyze({"tokenizer": "standard", "filter": [{"type": "synonym", "synonyms": ["a\\, b"]}], "text": "a"}, None),
        search({"query": {"match": {"title": "fast"}}}),
        search({"query": {"match": {"title": "automobile"}}}),
        search({"query": {"match": {"title": {"query": "rapid brown", "operator": "and"}}}}),
        search({"query": {"match": {"title": {"query": "quick car museum", "minimum_should_match": 2}}}}),
        search({"query": {"term": {"title": "rapid"}}}),
        search({"query": {"match": {"seat": "settee"}}}),
        search({"query": {"term": {"seat": "couch"}}}),
        search({"query": {"term": {"seat": "sofa"}}}),
        search({"query": {"match": {"body": "tv"}}}),
        search({"query": {"match": {"body": "big"}}}),
        search({"query": {"match": {"body": "large television"}}}),
        search({"query": {"match": {"mood": "glad"}}}),
        search({"query": {"match": {"sport": "jogging"}}}),
        search({"query": {"match": {"sport": "runs"}}}),
        search({"query": {"multi_match": {"query": "fast couch", "fields": ["title", "seat"]}}}),
        search({"query": {"multi_match": {"query": "fast couch", "fields": ["title", "seat^2"], "type": "most_fields"}}}),
        search({"query": {"query_string": {"query": "title:fast OR body:tv"}}}),
        search({"query": {"query_string": {"query": "car", "default_field": "title"}}}),
        search({"query": {"simple_query_string": {"query": "rapid +brown", "fields": ["title"]}}}),
        search({"query": {"match": {"name": "qui"}}}),
        search({"query": {"match": {"name": "quick fo"}}}),
        search({"query": {"match": {"name": {"query": "qu fox", "operator": "and"}}}}),
        search({"query": {"match": {"place": "café"}}}),
        search({"query": {"match": {"place": "cafe flore"}}}),
        search({"query": {"query_string": {"query": "place:café OR name:qu"}}}),
        search({"query": {"match_phrase": {"title": "fast brown fox"}}}),
        search({"query": {"match_phrase": {"title": "quick quick"}}}),
        search({"query": {"match_phrase": {"title": {"query": "rapid boats", "slop": 1}}}}),
        search({"query": {"match_phrase": {"title": {"query": "fast boats", "slop": 2}}}}),
        search({"query": {"match_phrase": {"body": "big tv"}}}),
        search({"query": {"match_phrase": {"place": "café de"}}}),
        search({"query": {"match_phrase": {"place": "CAFÉ café"}}}),
        search({"query": {"match_phrase": {"name": "qu fo"}}}),
        search({"query": {"query_string": {"query": "\"fast brown\" OR place:\"cafe society\"", "default_field": "title"}}}),
        search({"query": {"bool": {"should": [{"match": {"title": "quick"}}], "filter": [{"match": {"seat": "sofa"}}]}}}),
        ("PUT", "/needle-syn-bad", {"settings": {"analysis": {
            "filter": {"gone": {"type": "synonym", "synonyms": ["the, a"]}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["stop", "gone"]}}}}}),
        ("PUT", "/needle-syn-bad", {"settings": {"analysis": {
            "filter": {"s": {"type": "synonym", "synonyms": ["ab, cd"]}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["edge_ngram", "s"]}}}}}),
        ("PUT", "/needle-syn-bad", {"settings": {"analysis": {
            "filter": {"s": {"type": "synonym"}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["s"]}}}}}),
        ("PUT", "/needle-syn-bad", {"settings": {"analysis": {
            "filter": {"s": {"type": "synonym", "synonyms": ["a => b => c"]}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["s"]}}}}}),
        analyze({"tokenizer": "standard", "filter": ["stop", {"type": "synonym", "synonyms": ["the, a"]}], "text": "x"}, None),
    ]


def main():
    record_main([INDEX, "needle-syn-bad"], steps)


if __name__ == "__main__":
    main()
