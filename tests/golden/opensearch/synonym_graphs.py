#!/usr/bin/env python3
"""Records a real OpenSearch node's answers over synonym rules of several
words (`ny, new york`, `nyc => new york city`): `_analyze` with
`synonym_graph` (Lucene's SynonymGraphFilter: a match becomes a graph, each
output a path of its own, position lengths) and with `synonym` (its older
SynonymFilter: outputs stacked on the tokens they match, past the text
when longer), with holes left by stop words, `expand` off, `lenient`; the
index's settings; a field indexed with the older filter, searched by term
and by match; a field searched through `synonym_graph` (match with
`operator`, `minimum_should_match` and
`auto_generate_synonyms_phrase_query`, multi_match, query_string,
simple_query_string, phrases with a slop, and phrases without one: Lucene's
span queries); the errors both refuse; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.

    python3 tests/golden/opensearch/synonym_graphs.py http://127.0.0.1:9201 > tests/golden/opensearch/synonym_graphs.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-syn-graph"
RULES = ["ny, new york", "nyc => new york city", "usa, united states of america", "tv, television, tele vision",
         "big apple => new york"]
SETTINGS = {"analysis": {
    "filter": {
        "graph": {"type": "synonym_graph", "synonyms": RULES},
        "plain": {"type": "synonym", "synonyms": RULES},
        "first": {"type": "synonym_graph", "synonyms": ["new york, ny, big apple"], "expand": False},
        "loose": {"type": "synonym_graph", "synonyms": ["statue of liberty, lady liberty", "tv, telly"],
                  "lenient": True},
    },
    "analyzer": {
        "graph": {"tokenizer": "standard", "filter": ["lowercase", "graph"]},
        "plain": {"tokenizer": "standard", "filter": ["lowercase", "plain"]},
        "first": {"tokenizer": "standard", "filter": ["lowercase", "first"]},
        "stops": {"tokenizer": "standard", "filter": ["lowercase", "stop", "loose"]},
    },
}}
MAPPING = {"properties": {
    "body": {"type": "text", "analyzer": "standard", "search_analyzer": "graph"},
    "place": {"type": "text", "analyzer": "plain"},
    "city": {"type": "text", "analyzer": "standard", "search_analyzer": "first"},
    "note": {"type": "text", "analyzer": "standard", "search_analyzer": "stops"},
}}
DOCS = [
    {"body": "I love New York city", "place": "New York city", "city": "the big apple", "note": "the statue of liberty"},
    {"body": "NY is big", "place": "ny", "city": "new york state", "note": "lady liberty stands"},
    {"body": "the new york times", "place": "nyc", "city": "ny", "note": "liberty island"},
    {"body": "york new", "place": "the united states of america", "city": "york", "note": "a tv show"},
    {"body": "United States of America", "place": "usa today", "city": "new jersey", "note": "telly addicts"},
    {"body": "the usa today", "place": "tv", "city": "new ny", "note": "statue"},
    {"body": "tv shows and a television set", "place": "tele vision", "city": "apple", "note": "lady"},
    {"body": "new jersey and new mexico", "place": "new jersey", "city": "big", "note": "nothing"},
    {"body": "tele vision", "place": "big apple", "city": "big apple pie", "note": "of liberty"},
    {"body": "i love ny and ny city and new york city", "place": "ny york city", "city": "apple big",
     "note": "liberty"},
    {"body": "new york new york ny ny times", "place": "new york new york city", "city": "new", "note": "x"},
]


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
    for text in ["new york city", "NY", "I love NYC", "the usa", "united states of america today", "tv",
                 "tele vision set", "big apple", "new new york", "york new"]:
        out.append(analyze({"analyzer": "graph", "text": text}))
        out.append(analyze({"analyzer": "plain", "text": text}))
    out += [
        analyze({"analyzer": "first", "text": "the big apple and ny"}),
        analyze({"analyzer": "stops", "text": "the statue of liberty on tv"}),
        analyze({"analyzer": "stops", "text": "a lady liberty"}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "stop",
                 {"type": "synonym_graph", "synonyms": ["quick fox, fast"]}], "text": "the quick fox the fast"}, None),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "stop",
                 {"type": "synonym", "synonyms": ["quick fox, fast"]}], "text": "the quick the fox and fast the"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "synonym", "synonyms": ["a => b c d", "b => e"]}],
                 "text": "a b"}, None),
        analyze({"tokenizer": "whitespace", "filter": [
            {"type": "synonym_graph", "synonyms": ["a b, c"]}, {"type": "synonym_graph", "synonyms": ["c, d e"]}],
                 "text": "a b"}, None),
    ]
    for text in ["ny", "new york", "NYC", "usa", "united states", "tv", "television", "big apple"]:
        out.append(search({"query": {"match": {"body": text}}}))
    # A phrase without slop over a graph: Lucene's span queries.
    for text in ["ny", "new york", "ny times", "love ny", "love ny city", "i love new york city", "ny city",
                 "usa today", "the usa", "united states of america", "tv shows", "a television set",
                 "tele vision", "big apple", "york new", "new york times"]:
        out.append(search({"query": {"match_phrase": {"body": text}}}))
    for text in ["new york city", "ny", "nyc", "new york", "big apple", "usa today", "tele vision", "ny york city"]:
        out.append(search({"query": {"match_phrase": {"place": text}}}))
    out += [
        search({"query": {"term": {"place": "ny"}}}),
        search({"query": {"term": {"place": "york"}}}),
        search({"query": {"term": {"place": "america"}}}),
        search({"query": {"match": {"place": "ny"}}}),
        search({"query": {"match": {"place": "big apple"}}}),
        search({"query": {"match": {"body": {"query": "ny times", "operator": "and"}}}}),
        search({"query": {"match": {"body": {"query": "usa today love", "minimum_should_match": 2}}}}),
        search({"query": {"match": {"body": {"query": "ny city", "auto_generate_synonyms_phrase_query": False}}}}),
        search({"query": {"match_phrase": {"body": {"query": "ny times", "slop": 1}}}}),
        search({"query": {"match_phrase": {"body": {"query": "love ny", "slop": 2}}}}),
        search({"query": {"multi_match": {"query": "ny tv", "fields": ["body", "place"]}}}),
        search({"query": {"multi_match": {"query": "ny city", "fields": ["body", "place"], "type": "phrase"}}}),
        search({"query": {"multi_match": {"query": "new york", "fields": ["body", "city^2"], "type": "most_fields"}}}),
        search({"query": {"query_string": {"query": "ny OR tv", "default_field": "body"}}}),
        search({"query": {"query_string": {"query": "body:usa AND body:today"}}}),
        search({"query": {"query_string": {"query": "\"ny times\" OR \"tele vision\"", "default_field": "body"}}}),
        search({"query": {"query_string": {"query": "\"love ny\"~2", "default_field": "body"}}}),
        search({"query": {"query_string": {"query": "place:\"new york city\" OR body:\"big apple\""}}}),
        search({"query": {"simple_query_string": {"query": "\"ny city\" | tv", "fields": ["body"]}}}),
        search({"query": {"simple_query_string": {"query": "\"ny times\"~1", "fields": ["body", "place"]}}}),
        search({"query": {"simple_query_string": {"query": "\"new jersey\" apple", "fields": ["body", "place^2"]}}}),
        search({"query": {"simple_query_string": {"query": "big apple", "fields": ["body", "city"]}}}),
        search({"query": {"match": {"city": "big apple"}}}),
        search({"query": {"match_phrase": {"city": "the big apple"}}}),
        search({"query": {"match": {"city": "new york"}}}),
        search({"query": {"match": {"note": "statue of liberty"}}}),
        search({"query": {"match": {"note": "tv"}}}),
        ("PUT", "/needle-syn-graph-bad", {"settings": {"analysis": {
            "filter": {"s": {"type": "synonym_graph", "synonyms": ["statue of liberty, lady liberty"]}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["stop", "s"]}}}}}),
        ("PUT", "/needle-syn-graph-bad", {"settings": {"analysis": {
            "filter": {"s": {"type": "synonym", "synonyms": ["the end, finish"]}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["lowercase", "stop", "s"]}}}}}),
    ]
    return out


def main():
    record_main([INDEX, "needle-syn-graph-bad"], steps)


if __name__ == "__main__":
    main()
