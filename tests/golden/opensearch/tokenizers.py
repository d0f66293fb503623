#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to `_analyze` requests and
searches over the `pattern` tokenizer (Java regular expressions: the pieces
between matches, or a group of each match; flags), the `char_group`
tokenizer (classes and characters split on, `max_token_length`), and the
`elision`, `decimal_digit`, `keyword_marker`, `stemmer_override`, `unique`
and `limit` filters (the positions of the tokens after the ones they
remove, within a value and across a field's values), named in an index's settings or
defined in place, and the errors both refuse (an unknown class, which OpenSearch answers
with a 500, and a pattern Java cannot read are 400s in Needle:
`tests/api/index_analyzers.rs`); for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.

    python3 tests/golden/opensearch/tokenizers.py http://127.0.0.1:9201 > tests/golden/opensearch/tokenizers.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-tok"
SETTINGS = {"analysis": {
    "tokenizer": {
        "commas": {"type": "pattern", "pattern": ","},
        "quoted": {"type": "pattern", "pattern": "\"([^\"]+)\"", "group": 1},
        "dashes": {"type": "char_group", "tokenize_on_chars": ["whitespace", "-", "\\n"]},
        "short": {"type": "char_group", "tokenize_on_chars": ["punctuation", "digit"], "max_token_length": 3},
        "nocase": {"type": "pattern", "pattern": "x", "flags": "CASE_INSENSITIVE"},
        "paths": {"type": "path_hierarchy", "delimiter": "-", "replacement": "/", "skip": 1},
    },
    "filter": {
        "fr": {"type": "elision", "articles": ["l", "M", "qu"], "articles_case": True},
        "fr_exact": {"type": "elision", "articles": ["l"]},
        "marked": {"type": "keyword_marker", "keywords": ["running", "Jumping"]},
        "marked_ci": {"type": "keyword_marker", "keywords": ["Jumping"], "ignore_case": True},
        "marked_re": {"type": "keyword_marker", "keywords_pattern": "run.*"},
        "override": {"type": "stemmer_override", "rules": ["running, runs => run", "mice => mouse", "mice => mice"]},
        "minimal": {"type": "stemmer", "language": "minimal_english"},
        "once": {"type": "unique"},
        "once_here": {"type": "unique", "only_on_same_position": True},
        "first_two": {"type": "limit", "max_token_count": 2},
        "first_two_all": {"type": "limit", "max_token_count": "2", "consume_all_tokens": True},
        "ab": {"type": "synonym", "synonyms": ["a, b"]},
        "letters": {"type": "ngram", "min_gram": 1, "max_gram": 1},
    },
    "analyzer": {
        "csv": {"tokenizer": "commas", "filter": ["trim", "lowercase"]},
        "quotes": {"tokenizer": "quoted"},
        "dashed": {"tokenizer": "dashes", "filter": ["lowercase"]},
        "french": {"tokenizer": "standard", "filter": ["fr", "lowercase"]},
        "digits": {"tokenizer": "standard", "filter": ["decimal_digit"]},
        "words": {"tokenizer": "pattern"},
        "stemmed": {"tokenizer": "standard", "filter": ["lowercase", "marked", "override", "porter_stem"]},
        "plural": {"tokenizer": "standard", "filter": ["lowercase", "marked_ci", "minimal"]},
        "folders": {"tokenizer": "path_hierarchy", "filter": ["lowercase"]},
        "deduped": {"tokenizer": "standard", "filter": ["lowercase", "once"]},
        "deduped_ab": {"tokenizer": "whitespace", "filter": ["ab", "once"]},
        "deduped_ab_here": {"tokenizer": "whitespace", "filter": ["ab", "once_here"]},
        "stop_once": {"tokenizer": "standard", "filter": ["lowercase", "stop", "once"]},
        "once_stop": {"tokenizer": "standard", "filter": ["lowercase", "once", "stop"]},
        "letters_once": {"tokenizer": "whitespace", "filter": ["letters", "once_here"]},
        "short": {"tokenizer": "standard", "filter": ["lowercase", "first_two"]},
        "short_once": {"tokenizer": "standard", "filter": ["once", "first_two_all"]},
    },
}}
MAPPING = {"properties": {
    "tags": {"type": "text", "analyzer": "csv"},
    "said": {"type": "text", "analyzer": "quotes"},
    "parts": {"type": "text", "analyzer": "dashed"},
    "text": {"type": "text", "analyzer": "french"},
    "num": {"type": "text", "analyzer": "digits"},
    "verbs": {"type": "text", "analyzer": "stemmed"},
    "path": {"type": "text", "analyzer": "folders"},
    "dedup": {"type": "text", "analyzer": "deduped"},
    "brief": {"type": "text", "analyzer": "short"},
}}
DOCS = [
    {"tags": "Red, green ,BLUE", "said": "\"hello\" and \"good bye\"", "parts": "wi-fi router", "text": "l'avion et qu'il", "num": "١٢٣ items", "verbs": "running mice jumping", "path": "/Users/ann/notes.txt", "dedup": "a b A c", "brief": "one two three"},
    {"tags": "green,yellow", "said": "nothing quoted", "parts": "Wi Fi", "text": "L'eau M'a dit", "num": "123 more", "verbs": "he runs and jumps", "path": "/users/bob", "dedup": ["x y x", "z"], "brief": ["four", "five six seven"]},
]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    inline = lambda tokenizer, text, filters=None: analyze(
        {"tokenizer": tokenizer, "text": text, **({"filter": filters} if filters else {})}, None)
    return [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
        analyze({"analyzer": "csv", "text": "Red, green ,BLUE,,"}),
        analyze({"analyzer": "quotes", "text": "say \"hi there\" or \"\" or \"bye\""}),
        analyze({"analyzer": "dashed", "text": "The QUICK\nbrown-fox"}),
        analyze({"analyzer": "french", "text": "L'avion l’eau m'a QU'il d'accord"}),
        analyze({"analyzer": "digits", "text": "١٢٣ ४५ 𝟙𝟚 x٣y"}),
        analyze({"analyzer": "words", "text": "The foo_bar-size, ٣x"}),
        analyze({"tokenizer": "short", "text": "abcdef,gh1ij"}),
        analyze({"tokenizer": "nocase", "text": "aXbxc"}),
        analyze({"tokenizer": "standard", "filter": ["fr_exact"], "text": "L'avion l'eau"}),
        inline("pattern", "Hello, World! été 2024"),
        inline({"type": "pattern", "pattern": "\\s*;\\s*"}, "a ; b;c  ;  "),
        inline({"type": "pattern", "pattern": "(\\w+)@(\\w+)", "group": 2}, "me@host you@there"),
        inline({"type": "pattern", "pattern": "[a-z]*", "group": 0}, "abc12de"),
        inline({"type": "char_group", "tokenize_on_chars": ["letter"]}, "ab12cd3"),
        inline({"type": "char_group", "tokenize_on_chars": ["symbol", "whitespace"]}, "a+b c$d €e"),
        inline({"type": "char_group", "tokenize_on_chars": ["\\t", "\\u0041"]}, "xAy\tz"),
        inline("char_group", "a b"),
        inline("standard", "l'avion d'Artagnan jusqu'ici", ["elision"]),
        inline("standard", "٣ and ๓", ["decimal_digit"]),
        inline("whitespace", "L'AVION", [{"type": "elision", "articles": ["l"], "articles_case": True}]),
        analyze({"analyzer": "stemmed", "text": "running runs jumping Jumping walking mice"}),
        analyze({"analyzer": "plural", "text": "ponies horses cats bus glass queries plays toes jumpings"}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "marked_re", "porter_stem"], "text": "running runner walking"}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "marked", {"type": "synonym", "synonyms": ["running, jogging"]}, "porter_stem"], "text": "running"}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "marked", {"type": "stemmer", "language": "minimal_english"}, "snowball"], "text": "running dogs"}),
        analyze({"analyzer": "folders", "text": "/Users/ann/notes.txt"}),
        analyze({"tokenizer": "paths", "text": "a-b-c-d"}),
        inline("path_hierarchy", "one/two//three/"),
        inline("path_hierarchy", "/"),
        inline("path_hierarchy", "no-slash"),
        inline("path_hierarchy", "//a"),
        inline({"type": "path_hierarchy", "skip": 2}, "/a/b/c/d"),
        inline({"type": "path_hierarchy", "skip": 3}, "/a/b"),
        inline({"type": "path_hierarchy", "delimiter": "\\", "replacement": "/"}, "C:\\Users\\ann"),
        inline({"type": "path_hierarchy", "reverse": True}, "one/two//three/"),
        inline({"type": "path_hierarchy", "reverse": True}, "//a//b"),
        inline({"type": "path_hierarchy", "reverse": True}, "/"),
        inline({"type": "path_hierarchy", "reverse": True, "skip": 1}, "/one/two/"),
        inline({"type": "path_hierarchy", "reverse": True, "skip": 2}, "a/b/c/d"),
        inline({"type": "path_hierarchy", "reverse": True, "skip": 1}, "single"),
        inline({"type": "path_hierarchy", "reverse": True, "delimiter": ".", "replacement": "_"}, "www.example.co.uk"),
        inline({"type": "path_hierarchy", "reverse": "true", "delimiter": "é"}, "aébéc"),
        inline({"type": "ngram", "min_gram": 2, "max_gram": 3, "token_chars": ["letter", "custom"],
                "custom_token_chars": "+#"}, "c++ c# x-y"),
        inline({"type": "edge_ngram", "min_gram": 1, "max_gram": 4, "token_chars": ["custom"],
                "custom_token_chars": "-_é"}, "a-b_é-c é"),
        inline({"type": "ngram", "token_chars": ["digit"], "custom_token_chars": "+"}, "1+2"),
        inline({"type": "ngram", "token_chars": ["letter", "custom"]}, "ab"),
        analyze({"analyzer": "deduped", "text": "The cat the dog THE cat"}),
        analyze({"analyzer": "deduped_ab", "text": "a b a c b"}),
        analyze({"analyzer": "deduped_ab_here", "text": "a b a c b"}),
        analyze({"analyzer": "stop_once", "text": "the cat the dog cat a bird"}),
        analyze({"analyzer": "once_stop", "text": "the cat the dog cat a bird"}),
        analyze({"analyzer": "letters_once", "text": "abca bb"}),
        analyze({"analyzer": "short", "text": "One two three four"}),
        analyze({"analyzer": "short_once", "text": "x x y x z"}),
        analyze({"analyzer": "deduped", "text": ["b a", "a c"]}),
        analyze({"analyzer": "short", "text": ["one", "two three", "four"]}),
        inline("whitespace", "p q p q r", ["unique"]),
        inline("whitespace", "p q p q r", ["limit"]),
        inline("whitespace", "p q p q r", [{"type": "limit", "max_token_count": 3, "consume_all_tokens": True}]),
        inline("whitespace", "p q p q r", [{"type": "unique", "only_on_same_position": True}]),
        search({"query": {"match_phrase": {"dedup": "b c"}}}),
        search({"query": {"match_phrase": {"dedup": "a c"}}}),
        search({"query": {"match": {"dedup": "c"}}}),
        search({"query": {"match_phrase": {"dedup": "y z"}}}),
        search({"query": {"match_phrase": {"dedup": {"query": "y z", "slop": 200}}}}),
        search({"query": {"match": {"brief": "three"}}}),
        search({"query": {"match": {"brief": "two"}}}),
        search({"query": {"match": {"brief": "five"}}}),
        search({"query": {"match": {"brief": "six"}}}),
        search({"query": {"match_phrase": {"brief": {"query": "four five", "slop": 200}}}}),
        search({"query": {"term": {"path": "/users"}}}),
        search({"query": {"term": {"path": "/users/ann"}}}),
        search({"query": {"match": {"verbs": "run"}}}),
        search({"query": {"match": {"verbs": "running"}}}),
        search({"query": {"match": {"verbs": "mouse jump"}}}),
        search({"query": {"match": {"tags": "green"}}}),
        search({"query": {"match": {"tags": "blue"}}}),
        search({"query": {"match": {"said": "good bye"}}}),
        search({"query": {"match_phrase": {"parts": "wi fi"}}}),
        search({"query": {"match": {"text": "eau"}}}),
        search({"query": {"match": {"text": "il"}}}),
        search({"query": {"match": {"num": "123"}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"filter": {"e": {"type": "elision"}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"filter": {"k": {"type": "keyword_marker"}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"filter": {"k": {"type": "keyword_marker", "keywords": ["a"], "keywords_pattern": "b"}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"filter": {"o": {"type": "stemmer_override"}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"tokenizer": {"p": {"type": "path_hierarchy", "delimiter": "ab"}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"filter": {"l": {"type": "limit", "max_token_count": 0}},
                                                              "analyzer": {"a": {"tokenizer": "standard", "filter": ["l"]}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"filter": {"l": {"type": "limit", "max_token_count": -2}},
                                                              "analyzer": {"a": {"tokenizer": "standard", "filter": ["l"]}}}}}),
        ("PUT", "/needle-tok-bad", {"settings": {"analysis": {"normalizer": {"n": {"type": "custom", "filter": ["unique"]}}}}}),
    ]


def main():
    record_main([INDEX, "needle-tok-bad"], steps)


if __name__ == "__main__":
    main()
