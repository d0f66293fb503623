#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to the query types that expand
over the term dictionary (prefix, wildcard, regexp, fuzzy, `match` with fuzziness,
their `query_string` forms), to `query_string` over several fields, to
`simple_query_string` and to `boosting`, on the
bundled State of the Union corpus, for
`crates/needle-server/tests/api/opensearch_queries.rs` to compare Needle's
answers with: hit counts and every hit with its score (all of them, so that
hits with equal scores, which OpenSearch orders by its own document order,
can be compared as sets).

    python3 tests/golden/opensearch/queries.py http://127.0.0.1:9201 > tests/golden/opensearch/queries.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard, force-merged to one
segment so a fuzzy query's top terms are collected as on any one segment).
"""

import gzip
import json
import os
import sys

from record import call, load_merged, print_golden

INDEX = "needle-queries"
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "text"}}}
CORPUS = os.path.join(os.path.dirname(__file__), "../../../examples/data/sotu.jsonl.gz")


def queries():
    return [
        {"prefix": {"body": "amer"}},
        {"prefix": {"body": "Amer"}},
        {"prefix": {"title": {"value": "state", "boost": 2.5}}},
        {"prefix": {"body": "zz"}},
        {"wildcard": {"body": "gov*ment"}},
        {"wildcard": {"body": "wom?n"}},
        {"wildcard": {"body": {"value": "Tax*", "boost": 1.5}}},
        {"wildcard": {"body": "*ism"}},
        {"wildcard": {"body": "fr??dom"}},
        {"fuzzy": {"body": "goverment"}},
        {"fuzzy": {"body": "Goverment"}},
        {"fuzzy": {"body": {"value": "econmy", "fuzziness": 1}}},
        {"fuzzy": {"body": {"value": "nation", "fuzziness": "AUTO", "prefix_length": 2, "max_expansions": 10}}},
        {"fuzzy": {"body": {"value": "wra", "transpositions": False}}},
        {"fuzzy": {"body": {"value": "wra"}}},
        {"fuzzy": {"body": {"value": "taxs", "boost": 3}}},
        {"fuzzy": {"body": {"value": "of", "fuzziness": 2}}},
        {"fuzzy": {"body": {"value": "the", "fuzziness": 2, "max_expansions": 5}}},
        {"match": {"body": {"query": "goverment spendng", "fuzziness": "AUTO"}}},
        {"match": {"body": {"query": "goverment spendng", "fuzziness": 1, "operator": "and"}}},
        {"match": {"body": {"query": "freedom", "fuzziness": "2", "prefix_length": 1, "max_expansions": 20}}},
        {"query_string": {"query": "gov*"}},
        {"query_string": {"query": "Gov*"}},
        {"query_string": {"query": "wom?n"}},
        {"query_string": {"query": "goverment~"}},
        {"query_string": {"query": "econmy~1 AND war"}},
        {"query_string": {"query": "title:stat*"}},
        {"query_string": {"query": "body:taxes AND fre*"}},
        {"query_string": {"query": "freedom", "fields": ["body", "title"]}},
        {"query_string": {"query": "freedom liberty", "fields": ["body", "title", "source"]}},
        {"query_string": {"query": "freedom liberty"}},
        {"query_string": {"query": "\"free people\" union", "fields": ["body", "title"]}},
        {"bool": {"must": {"fuzzy": {"body": "slavry"}}, "filter": {"prefix": {"title": "18"}}}},
        {"bool": {"should": [{"prefix": {"body": "inflat"}}, {"match": {"body": "prices"}}]}},
        {"constant_score": {"filter": {"wildcard": {"body": "atom*"}}, "boost": 4}},
        {"prefix": {"body": {"value": "Amer", "case_insensitive": True}}},
        {"wildcard": {"body": {"value": "TAX?S", "case_insensitive": True}}},
        {"wildcard": {"body": {"wildcard": "liberat*"}}},
        {"query_string": {"query": "Goverment~"}},
        {"query_string": {"query": "union", "fields": ["body", "title"]}},
        {"query_string": {"query": "union", "fields": ["body", "title"], "type": "most_fields"}},
        {"query_string": {"query": "union peace~1", "fields": ["body", "title"], "tie_breaker": 0.3}},
        # Regular expressions: the DSL's (not normalized) and the query string's (normalized).
        {"regexp": {"body": "gov.*ment"}},
        {"regexp": {"body": {"value": "wom[ae]n", "boost": 2}}},
        {"regexp": {"body": "Gov.*"}},
        {"regexp": {"body": {"value": "Gov.*", "case_insensitive": True}}},
        {"regexp": {"body": "(peace|war)s?"}},
        {"regexp": {"body": "colou?r"}},
        {"regexp": {"body": "\\d{4}"}},
        {"regexp": {"body": "tax@"}},
        {"regexp": {"body": {"value": "a&b", "flags": "NONE"}}},
        {"regexp": {"title": "[^a-m].*on"}},
        {"query_string": {"query": "/Gov.*/ AND war"}},
        {"query_string": {"query": "body:/fr[ei]+dom/ liberty"}},
        # Runs of plain terms are one text per field, the fields in a dis-max.
        {"query_string": {"query": "washington lincoln peace", "fields": ["title", "body"]}},
        {"query_string": {"query": "washington lincoln", "fields": ["title", "body"], "default_operator": "and"}},
        {"query_string": {"query": "roosevelt war +peace jackson", "fields": ["title", "body"]}},
        {"query_string": {"query": "george bush the economy^2 taxes", "fields": ["title", "body"]}},
        {"query_string": {"query": "title:(george washington) union address", "fields": ["title", "body"]}},
        {"query_string": {"query": "washington lincoln", "fields": ["title", "body"], "type": "most_fields"}},
        {"query_string": {"query": "jefferson madison monroe", "fields": ["title", "body"], "tie_breaker": 0.3}},
        {"query_string": {"query": "lincoln grant NOT slavery", "fields": ["title", "body"]}},
        {"query_string": {"query": "lincoln grant OR truman", "fields": ["title", "body"], "default_operator": "and"}},
        {"match": {"title": {"query": "Stat", "fuzziness": "AUTO"}}},
        {"multi_match": {"query": "goverment unoin", "fields": ["body", "title"], "fuzziness": "AUTO"}},
        {"multi_match": {"query": "goverment", "fields": ["body", "title"], "type": "most_fields",
                         "fuzziness": 1, "prefix_length": 2}},
        {"simple_query_string": {"query": "freedom liberty"}},
        {"simple_query_string": {"query": "freedom -slavery"}},
        {"simple_query_string": {"query": "freedom -slavery", "default_operator": "and"}},
        {"simple_query_string": {"query": "\"free people\" | union", "fields": ["body", "title^2"]}},
        {"simple_query_string": {"query": "(war | peace) + treaty"}},
        {"simple_query_string": {"query": "gov* econmy~1", "fields": ["body"]}},
        {"simple_query_string": {"query": "\"united states\"~2 +congress"}},
        {"simple_query_string": {"query": "wi-fi \"unclosed phrase", "fields": ["body"]}},
        {"simple_query_string": {"query": "war peace treaty", "minimum_should_match": "2"}},
        {"simple_query_string": {"query": "war + peace", "flags": "NONE"}},
        {"simple_query_string": {"query": "war|peace -treaty", "flags": "AND|PREFIX"}},
        {"simple_query_string": {"query": "Amer* | Slav~", "fields": ["body"]}},
        {"simple_query_string": {"query": "*"}},
        {"boosting": {"positive": {"match": {"body": "war"}}, "negative": {"match": {"body": "peace"}},
                      "negative_boost": 0.3}},
        {"boosting": {"positive": {"match": {"body": "tax taxes"}}, "negative": {"prefix": {"body": "inflat"}},
                      "negative_boost": 0.5, "boost": 2}},
        {"bool": {"should": [{"boosting": {"positive": {"fuzzy": {"body": "goverment"}},
                                           "negative": {"match": {"title": "Roosevelt"}}, "negative_boost": 0}},
                             {"match": {"body": "budget"}}]}},
        {"exists": {"field": "title"}},
        {"bool": {"must": {"match": {"body": "railroad"}}, "must_not": {"exists": {"field": "source"}}}},
        {"bool": {}},
        {"bool": {"should": [{"fuzzy": {"body": {"value": "zzzzzz", "fuzziness": 0}}}],
                  "must_not": [{"match": {"body": "war"}}]}},
        # query_string's fuzziness (for `~` without a number) and fuzzy_* settings.
        {"query_string": {"query": "goverment~", "default_field": "body", "fuzziness": 1}},
        {"query_string": {"query": "goverment~ econmy~2", "default_field": "body", "fuzzy_max_expansions": 2}},
        {"query_string": {"query": "goverment~", "default_field": "body", "fuzzy_prefix_length": 3,
                          "fuzzy_transpositions": False}},
        {"query_string": {"query": "contsitution~ war~", "fields": ["title", "body"], "fuzziness": "AUTO:4,12"}},
        {"query_string": {"query": "peaec~", "default_field": "body", "fuzzy_transpositions": False}},
        # cross_fields: each term blended across the fields (one analyzer: one group).
        {"multi_match": {"query": "freedom liberty", "fields": ["body", "title", "source"], "type": "cross_fields"}},
        {"multi_match": {"query": "washington lincoln union", "fields": ["title^2", "body"], "type": "cross_fields",
                         "operator": "and"}},
        {"multi_match": {"query": "war peace treaty", "fields": ["title", "body"], "type": "cross_fields",
                         "minimum_should_match": "2"}},
        {"multi_match": {"query": "roosevelt economy address", "fields": ["title", "body", "source"],
                         "type": "cross_fields", "tie_breaker": 0.3}},
        {"multi_match": {"query": "union", "fields": ["*"], "type": "cross_fields"}},
        {"multi_match": {"query": "the of", "fields": ["title", "body"], "type": "cross_fields",
                         "zero_terms_query": "all"}},
    ]


def explained():
    """Searches whose top hits' score explanations are recorded too."""
    return [
        {"match": {"body": "war"}},
        {"bool": {"must": [{"match": {"body": "war"}}], "should": [{"match_phrase": {"body": "civil war"}}],
                  "filter": [{"match": {"title": "union"}}]}},
        {"match": {"title": {"query": "state union", "boost": 2}}},
        {"dis_max": {"queries": [{"match": {"body": "peace"}}, {"match": {"body": "treaty"}}], "tie_breaker": 0.3}},
        {"match_phrase": {"body": {"query": "free people", "slop": 2}}},
        {"multi_match": {"query": "lincoln war", "fields": ["title", "body^1.5"], "type": "cross_fields"}},
    ]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    with gzip.open(CORPUS, "rt") as f:
        docs = [json.loads(line) for line in f]
    load_merged(base, INDEX, MAPPING, docs)
    node = call(base, "GET", "/")
    cases = []
    for query in queries():
        body = {"query": query, "size": 250, "track_total_hits": True, "_source": False}
        answer = call(base, "POST", f"/{INDEX}/_search", body)
        if "hits" in answer:
            hits = [[h["_id"], h["_score"]] for h in answer["hits"]["hits"]]
            answer = {"total": answer["hits"]["total"]["value"], "hits": hits}
        cases.append({"body": body, "answer": answer})
    for query in explained():
        body = {"query": query, "size": 3, "explain": True, "_source": False}
        answer = call(base, "POST", f"/{INDEX}/_search", body)
        hits = [[h["_id"], h["_score"], h["_explanation"]] for h in answer["hits"]["hits"]]
        cases.append({"body": body, "answer": {"total": answer["hits"]["total"]["value"], "hits": hits}})
    name = node["version"]["distribution"] + " " + node["version"]["number"]
    print_golden([("node", name), ("mapping", MAPPING)], cases)


if __name__ == "__main__":
    main()
