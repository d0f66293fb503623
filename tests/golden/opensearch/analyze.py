#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to `_analyze` requests (named
analyzers, an index's fields, several texts, the errors; a second index's
own analyzers, defined in its settings, and how its settings show them) for
`crates/needle-server/tests/api/opensearch_analyze.rs` to send Needle and
compare: the status, then every token (term, offsets, type, position) or
the error's type.

    python3 tests/golden/opensearch/analyze.py http://127.0.0.1:9201 > tests/golden/opensearch/analyze.json

The node: ../shared/opensearch (OpenSearch 3.8).
"""

import sys

from record import call_with_status as call, fresh_index, print_golden

OWN = "needle-analyze-own"
# The analyzers of OWN's settings, and its mapping (a field added later names one too).
ANALYSIS = {
    "analyzer": {
        "default": {"type": "english"},
        "my_stop": {"type": "standard", "stopwords": ["quick", "The"]},
        "snow": {"type": "snowball", "language": "English"},
        "plain": {"type": "english", "stopwords": "_none_"},
        "std_english": {"type": "standard", "stopwords": "_english_"},
        "ws": {"type": "custom", "tokenizer": "whitespace", "filter": ["stop", "lowercase", "porter_stem"]},
        "mine": {"tokenizer": "standard", "filter": ["lowercase", "no_fox", "stem", "possessive"]},
        "exact": {"type": "custom", "tokenizer": "keyword", "filter": ["lowercase"]},
        "snowy": {"type": "custom", "tokenizer": "standard", "filter": ["lower", "snowball", "snow_f", "p2"]},
        "folded": {"tokenizer": "standard", "filter": ["asciifolding", "lowercase", "short", "cut"]},
        "letters": {"tokenizer": "lowercase", "filter": ["reverse"]},
        "loud": {"tokenizer": "letter", "filter": ["fold", "uppercase", "len2"]},
        "stopped": {"type": "stop", "stopwords": ["über", "fox"]},
        "plain_stop": {"type": "stop"},
        "simple_one": {"type": "simple"},
        "cut_ws": {"tokenizer": "whitespace", "filter": ["trim", "apostrophe", "truncate", "length"]},
        "prefixes": {"tokenizer": "standard", "filter": ["lowercase", "edges", "stop"]},
        "grams": {"tokenizer": "whitespace", "filter": ["tri", "fold_keep"]},
        "auto": {"tokenizer": "auto_tok", "filter": ["lowercase"]},
        "tri_tok": {"tokenizer": "tri_chars"},
    },
    "tokenizer": {
        "auto_tok": {"type": "edge_ngram", "min_gram": 2, "max_gram": 5, "token_chars": ["letter", "digit"]},
        "tri_chars": {"type": "ngram", "min_gram": 2, "max_gram": 3, "token_chars": ["letter", "punctuation", "symbol"]},
    },
    "filter": {
        "no_fox": {"type": "stop", "stopwords": ["fox"], "ignore_case": True},
        "stem": {"type": "stemmer", "language": "english"},
        "possessive": {"type": "stemmer", "language": "possessive_english"},
        "p2": {"type": "stemmer", "language": "porter2"},
        "lower": {"type": "lowercase"},
        "snow_f": {"type": "snowball", "language": "English"},
        "short": {"type": "length", "max": 6},
        "cut": {"type": "truncate", "length": 3},
        "len2": {"type": "length", "min": 2},
        "fold": {"type": "asciifolding", "preserve_original": False},
        "edges": {"type": "edge_ngram", "min_gram": 2, "max_gram": 4, "preserve_original": True},
        "tri": {"type": "ngram", "min_gram": 2, "max_gram": 3},
        "fold_keep": {"type": "asciifolding", "preserve_original": True},
    },
}
OWN_MAPPING = {"properties": {"a": {"type": "text"}, "b": {"type": "text", "analyzer": "my_stop"},
                              "c": {"type": "text", "analyzer": "standard"},
                              "w": {"type": "text", "analyzer": "ws"}, "x": {"type": "text", "analyzer": "exact"},
                              "f": {"type": "text", "analyzer": "folded"}, "s": {"type": "text", "analyzer": "simple"}}}
SPACES = "a\u00a0b\tc\u3000d e\u2007f\u2028g  The FOX's fox, Foxes" + " " + "y" * 300
ADDED = {"properties": {"d": {"type": "text", "analyzer": "plain"}}}

INDEX = "needle-analyze"
MAPPING = {"properties": {"t": {"type": "text"}, "k": {"type": "keyword"}, "n": {"type": "long"},
                          "e": {"type": "text", "analyzer": "english"},
                          "s": {"type": "text", "analyzer": "snowball"}}}
MIXED = ("The Quick-brown fox, 3.14 1,000 abc123 123abc U.S.A. l'homme café 東京都 ひらがな カタカナ "
         "한국어 ไทย 😀 x_y ©2024 naïve Ωmega")
FOLDING = ("Ærøskøbing café naïve ﬁnance straße ①②Ⓐ Œuvre Łódź Ĳssel ½ “quotes” ‘x’ «y» — ™ € Ω "
           "ÀÉÎÕÜ àéîõü Çç Ññ Ðð Þþ ǅ ẞ ℌ 𝔸 ＡＢＣ１２ x²y₃ ⅻ ⒜")
ENGLISH = ("It's the Nation's people’s choice: generously running ponies, skies and relational "
           "hopefulness; THE Government's AGREED rates were controlling")


def requests():
    return [
        ("/_analyze", {"analyzer": "standard", "text": MIXED}),
        ("/_analyze", {"text": "Hello, World! 42"}),
        ("/_analyze", {"analyzer": "standard", "text": ["one two", "three", "😀 four"]}),
        ("/_analyze", {"analyzer": "keyword", "text": ["One Two", "x"]}),
        ("/_analyze", {"analyzer": "standard", "text": "a" * 300 + " end"}),
        (f"/{INDEX}/_analyze", {"field": "t", "text": ["one two", "three"]}),
        (f"/{INDEX}/_analyze", {"field": "t", "text": MIXED}),
        (f"/{INDEX}/_analyze", {"field": "k", "text": ["One Two", "x"]}),
        ("/_analyze", {"analyzer": "english", "text": ENGLISH}),
        ("/_analyze", {"analyzer": "snowball", "text": ENGLISH}),
        ("/_analyze", {"analyzer": "english", "text": MIXED}),
        (f"/{INDEX}/_analyze", {"field": "e", "text": [ENGLISH, "the end"]}),
        (f"/{INDEX}/_analyze", {"field": "s", "text": [ENGLISH, "the end"]}),
        (f"/{INDEX}/_analyze", {"field": "unmapped", "text": ["A b", "c"]}),
        (f"/{INDEX}/_analyze", {"analyzer": "keyword", "field": "t", "text": "A b"}),
        (f"/{INDEX}/_analyze", {"text": "A b"}),
        (f"/{INDEX}/_analyze", {"field": "n", "text": "12"}),
        ("/_analyze", {"analyzer": "nope", "text": "x"}),
        ("/_analyze", {"analyzer": "standard"}),
        ("/_analyze", {"field": "t", "text": "a"}),
        ("/_analyze", {"text": "a", "unknown": 1}),
        ("/needle-no-such-index/_analyze", {"text": "a"}),
        ("/_analyze", {"filter": ["lowercase"], "text": ["A B", "C"]}),
        ("/_analyze", {"analyzer": "whitespace", "text": [SPACES, ENGLISH]}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": ["lowercase", "porter_stem"], "text": ENGLISH}),
        ("/_analyze", {"tokenizer": "standard", "filter": ["snowball", "stop"], "text": ENGLISH}),
        ("/_analyze", {"tokenizer": "keyword", "text": ENGLISH}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": "lowercase", "text": "A B"}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": ["nope"], "text": "x"}),
        ("/_analyze", {"analyzer": "standard", "tokenizer": "whitespace", "text": "x"}),
        ("/_analyze", {"analyzer": "simple", "text": [MIXED, SPACES]}),
        ("/_analyze", {"analyzer": "stop", "text": [ENGLISH, MIXED]}),
        ("/_analyze", {"tokenizer": "letter", "text": [MIXED, FOLDING, SPACES]}),
        ("/_analyze", {"tokenizer": "lowercase", "text": [MIXED, FOLDING]}),
        ("/_analyze", {"tokenizer": "standard", "filter": ["asciifolding"], "text": [FOLDING, MIXED]}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": ["asciifolding", "lowercase"], "text": FOLDING}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": ["uppercase", "reverse"], "text": [MIXED, FOLDING]}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": ["trim", "apostrophe", "length", "truncate"],
                       "text": [ENGLISH, MIXED]}),
        ("/_analyze", {"tokenizer": "keyword", "filter": ["trim", "uppercase"], "text": ["  a b  ", "\tc\n"]}),
        ("/_analyze", {"tokenizer": {"type": "whitespace"},
                       "filter": [{"type": "length", "min": 3, "max": 5}, {"type": "truncate", "length": 4}, "lowercase"],
                       "text": ENGLISH}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "stop", "stopwords": ["the", "fox"]}],
                       "text": "the quick fox and the dog"}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "asciifolding"}, {"type": "uppercase"}],
                       "text": FOLDING}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "length", "min": 5, "max": 2}], "text": "x"}),
        ("/_analyze", {"tokenizer": "nope_tokenizer", "text": "x"}),
        ("/_analyze", {"tokenizer": "standard", "filter": ["edge_ngram"], "text": ["Quick fox", FOLDING]}),
        ("/_analyze", {"tokenizer": "standard", "filter": ["ngram"], "text": "Quick 😀 fox"}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "edge_ngram", "min_gram": 3, "max_gram": 5}],
                       "text": [ENGLISH, "a an the"]}),
        ("/_analyze", {"tokenizer": "whitespace", "filter": [{"type": "ngram", "min_gram": 1, "max_gram": 2,
                                                              "preserve_original": True}, "uppercase"],
                       "text": "ab 😀x ß"}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "asciifolding", "preserve_original": True}],
                       "text": [FOLDING, "plain ascii"]}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "ngram", "min_gram": 1, "max_gram": 4}],
                       "text": "x"}),
        ("/_analyze", {"tokenizer": "standard", "filter": [{"type": "edge_ngram", "min_gram": 4, "max_gram": 2}],
                       "text": "x"}),
        ("/_analyze", {"tokenizer": "edge_ngram", "text": ["Quick fox", "ü😀x"]}),
        ("/_analyze", {"tokenizer": "ngram", "text": "a b😀"}),
        ("/_analyze", {"tokenizer": {"type": "edge_ngram", "min_gram": 1, "max_gram": 4,
                                     "token_chars": ["letter", "digit"]}, "text": [MIXED, FOLDING]}),
        ("/_analyze", {"tokenizer": {"type": "ngram", "min_gram": 2, "max_gram": 3,
                                     "token_chars": ["whitespace", "symbol"]}, "text": MIXED}),
        ("/_analyze", {"tokenizer": {"type": "ngram", "token_chars": ["digit", "punctuation"]},
                       "filter": ["uppercase"], "text": MIXED}),
        ("/_analyze", {"tokenizer": {"type": "edge_ngram", "token_chars": ["letter", "odd"]}, "text": "x"}),
    ] + [(f"/{OWN}/_analyze", body) for body in [
        {"analyzer": "my_stop", "text": ENGLISH},
        {"analyzer": "snow", "text": ENGLISH},
        {"analyzer": "plain", "text": ENGLISH},
        {"analyzer": "std_english", "text": ENGLISH},
        {"analyzer": "default", "text": ENGLISH},
        {"analyzer": "english", "text": ENGLISH},
        {"text": ENGLISH},
        {"field": "a", "text": ENGLISH},
        {"field": "b", "text": [ENGLISH, "the end"]},
        {"field": "c", "text": ENGLISH},
        {"field": "d", "text": ENGLISH},
        {"field": "unmapped", "text": ENGLISH},
        {"analyzer": "no_such", "text": "x"},
        {"analyzer": "ws", "text": [ENGLISH, SPACES]},
        {"analyzer": "mine", "text": [ENGLISH, SPACES]},
        {"analyzer": "exact", "text": [ENGLISH, SPACES]},
        {"analyzer": "snowy", "text": ENGLISH},
        {"field": "w", "text": SPACES},
        {"field": "x", "text": [ENGLISH, "Two"]},
        {"tokenizer": "standard", "filter": ["lowercase", "no_fox", "stem", "stop"], "text": ENGLISH},
        {"field": "a", "tokenizer": "standard", "text": "x"},
        {"analyzer": "folded", "text": [FOLDING, ENGLISH]},
        {"analyzer": "letters", "text": [MIXED, SPACES]},
        {"analyzer": "loud", "text": [FOLDING, MIXED]},
        {"analyzer": "stopped", "text": ["Über the fox and a dog", ENGLISH]},
        {"analyzer": "plain_stop", "text": ENGLISH},
        {"analyzer": "simple_one", "text": MIXED},
        {"analyzer": "cut_ws", "text": [ENGLISH, SPACES]},
        {"field": "f", "text": FOLDING},
        {"field": "s", "text": [MIXED, "x"]},
        {"tokenizer": "whitespace", "filter": ["cut", "fold", "len2"], "text": FOLDING},
        {"analyzer": "prefixes", "text": [ENGLISH, "a be the x"]},
        {"analyzer": "grams", "text": [FOLDING, "ab"]},
        {"analyzer": "auto", "text": [MIXED, ENGLISH]},
        {"analyzer": "tri_tok", "text": [MIXED, FOLDING]},
        {"tokenizer": "auto_tok", "filter": ["uppercase"], "text": "Quick-fox 42"},
    ]]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    fresh_index(base, INDEX, MAPPING)
    call(base, "DELETE", f"/{OWN}")
    status, made = call(base, "PUT", f"/{OWN}", {"settings": {"analysis": ANALYSIS}, "mappings": OWN_MAPPING})
    assert status == 200, made
    status, added = call(base, "PUT", f"/{OWN}/_mapping", ADDED)
    assert status == 200, added
    _, settings = call(base, "GET", f"/{OWN}/_settings")
    shown = settings[OWN]["settings"]["index"]["analysis"]
    _, node = call(base, "GET", "/")
    cases = []
    for path, body in requests():
        status, answer = call(base, "POST", path, body)
        if isinstance(answer.get("error"), dict):
            answer = {"error": answer["error"]["type"]}
        cases.append({"path": path, "body": body, "status": status, "answer": answer})
    call(base, "DELETE", f"/{INDEX}")
    call(base, "DELETE", f"/{OWN}")
    name = node["version"]["distribution"] + " " + node["version"]["number"]
    fields = [("node", name), ("index", INDEX), ("mapping", MAPPING), ("own", OWN), ("analysis", ANALYSIS),
              ("own_mapping", OWN_MAPPING), ("added", ADDED), ("analysis_shown", shown)]
    print_golden(fields, cases)


if __name__ == "__main__":
    main()
