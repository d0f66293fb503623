#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to `match_phrase_prefix` and
`multi_match` of type `phrase_prefix` (a phrase whose last word is a prefix
of the terms that may fill its place: the first `max_expansions` in term
order, a lone prefix a disjunction of its terms), `match_bool_prefix` and
`multi_match` of type `bool_prefix` (the words as terms, fuzzy with
`fuzziness`, the last one a prefix query), with `slop`, an
`analyzer`, `zero_terms_query` and stop words before the prefix (a keyword
field, which OpenSearch refuses with its shard failure's wrapper, is refused
by Needle as a 400 too: `tests/api/index_analyzers.rs`); for `crates/needle-server/tests/api/opensearch_multi_fields.rs` to
replay on Needle and compare step by step, shaped as `multi_fields.py`
shapes them.

    python3 tests/golden/opensearch/phrase_prefix.py http://127.0.0.1:9201 > tests/golden/opensearch/phrase_prefix.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import bulk_step, record_main, search_step

INDEX = "needle-pp"
MAPPING = {"properties": {
    "title": {"type": "text"},
    "body": {"type": "text", "analyzer": "english"},
    "tag": {"type": "keyword"},
}}
DOCS = [
    {"title": "Quick brown fox", "body": "The quick brown foxes jumped", "tag": "quick"},
    {"title": "Quick brownies recipe", "body": "Brownies are quickly made", "tag": "brown"},
    {"title": "The quiet brown bear", "body": "A quiet bear in the brown woods", "tag": "bear"},
    {"title": "Brown quick fox", "body": "brown and quick, the fox", "tag": "fox"},
    {"title": "quick brown box of quicksand", "body": "boxes of sand", "tag": "box"},
    {"title": "A fox is quick", "body": "the fox is quicker than the bear", "tag": "quick"},
]


def search(body, index=INDEX):
    return search_step(body, index)


def steps():
    q = lambda body: search({"query": body})
    mpp = lambda field, query, **options: q({"match_phrase_prefix": {field: {"query": query, **options}}})
    return [
        ("PUT", f"/{INDEX}", {"mappings": MAPPING}),
        bulk_step(INDEX, DOCS),
        q({"match_phrase_prefix": {"title": "quick br"}}),
        q({"match_phrase_prefix": {"title": "quick bro"}}),
        q({"match_phrase_prefix": {"title": "qui"}}),
        q({"match_phrase_prefix": {"title": "quick brown f"}}),
        q({"match_phrase_prefix": {"title": "brown qu"}}),
        q({"match_phrase_prefix": {"title": "zz"}}),
        q({"match_phrase_prefix": {"title": "quick zz"}}),
        mpp("title", "quick b", max_expansions=1),
        mpp("title", "quick b", max_expansions=2),
        mpp("title", "qu", max_expansions=1),
        mpp("title", "quick f", slop=1),
        mpp("title", "fox quick", slop=3),
        mpp("title", "the qu"),
        mpp("body", "the quick brown fox"),
        mpp("body", "quickly ma"),
        mpp("body", "fox is qu"),
        mpp("body", "the"),
        mpp("body", "the", zero_terms_query="all"),
        mpp("title", "QUICK BR", analyzer="whitespace"),
        mpp("title", "quick BR", analyzer="keyword"),
        mpp("title", "quick br", boost=2.5),
        q({"multi_match": {"query": "quick br", "fields": ["title", "body"], "type": "phrase_prefix"}}),
        q({"multi_match": {"query": "brown fox", "fields": ["title^2", "body"], "type": "phrase_prefix", "max_expansions": 3}}),
        q({"multi_match": {"query": "quick b", "fields": ["title", "body"], "type": "phrase_prefix", "slop": 2, "tie_breaker": 0.3}}),
        q({"bool": {"must": [{"match_phrase_prefix": {"title": "quick br"}}], "filter": [{"term": {"tag": "quick"}}]}}),
        q({"match_bool_prefix": {"title": "quick br"}}),
        q({"match_bool_prefix": {"title": "br"}}),
        q({"match_bool_prefix": {"title": "brown quick f"}}),
        q({"match_bool_prefix": {"title": {"query": "quick brown f", "operator": "and"}}}),
        q({"match_bool_prefix": {"title": {"query": "quick brown f", "minimum_should_match": 2}}}),
        q({"match_bool_prefix": {"title": {"query": "QUICK BR", "analyzer": "whitespace"}}}),
        q({"match_bool_prefix": {"title": {"query": "quick br", "boost": 3}}}),
        q({"match_bool_prefix": {"body": "the quick fo"}}),
        q({"match_bool_prefix": {"body": "fox the"}}),
        q({"match_bool_prefix": {"tag": "qu"}}),
        q({"match_bool_prefix": {"title": "quick br "}}),
        q({"match_bool_prefix": {"title": "quick br,"}}),
        q({"match_bool_prefix": {"title": "brown the"}}),
        q({"multi_match": {"query": "quick br", "fields": ["title", "body"], "type": "bool_prefix"}}),
        q({"multi_match": {"query": "brown f", "fields": ["title^2", "body"], "type": "bool_prefix", "operator": "and"}}),
        q({"match_bool_prefix": {"title": {"query": "quikc brwn", "fuzziness": 1}}}),
        q({"match_bool_prefix": {"title": {"query": "qick br", "fuzziness": "AUTO"}}}),
        q({"match_bool_prefix": {"title": {"query": "quack brown f", "fuzziness": 1, "prefix_length": 2,
                                           "operator": "and"}}}),
        q({"match_bool_prefix": {"title": {"query": "quick browm ", "fuzziness": 2, "fuzzy_transpositions": False}}}),
        q({"multi_match": {"query": "quikc br", "fields": ["title", "body"], "type": "bool_prefix", "fuzziness": 1}}),
    ]


def main():
    record_main([INDEX], steps)


if __name__ == "__main__":
    main()
