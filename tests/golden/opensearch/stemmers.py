#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over analyzers with
the `kstem` filter (Lucene's KStemFilter, also the `stemmer` filter's
`light_english`), beside the Porter stemmer, and with the `snowball` filter
in every language Needle offers (and the `stemmer` languages Elasticsearch
runs Snowball's stemmer for), and the danish, finnish, hungarian, norwegian,
russian, french, german, spanish, italian, portuguese, dutch, turkish,
swedish and romanian analyzers (their stop words, a
language's stop list by name, elided articles, German normalization), the
light stemmers, the german_normalization filter and Turkish lowercasing, and
the snowball analyzer in Dutch, Turkish, Russian, French and English (its
language's lowercasing and default stop words, or its own), on 40 words of each from `tests/golden/lucene/snowball.jsonl`: `_analyze` tokens of the
filter by name, defined in place and through an index's analyzers, the
stemmer's language names (case ignored), keyword-marked terms left alone,
searches through a kstem field (words of one stem find each other, words
the dictionary keeps whole do not), and a normalizer naming the filter,
which both refuse; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's stemmer is also checked against Lucene's own on 39,065 words:
`tests/golden/lucene/kstem.jsonl`.)

    python3 tests/golden/opensearch/stemmers.py http://127.0.0.1:9201 > tests/golden/opensearch/stemmers.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

import json
import os

from multi_fields import analyze_step, bulk_step, record_main, search_step

SNOWBALL = ["Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German", "Greek", "Hungarian", "Italian",
            "Norwegian", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Tamil", "Turkish"]
LANGUAGE_ANALYZERS = ["danish", "finnish", "hungarian", "norwegian", "russian", "french", "german", "spanish",
                      "italian", "portuguese", "dutch", "turkish", "swedish", "romanian"]
LIGHT = ["light_french", "light_german", "light_spanish", "light_italian", "light_portuguese"]
# Elided articles, accents, umlauts written out, sharp s.
PHRASES = {"french": "L'Assemblée nationale d'État QU'ILS jusqu'aux organisations nationaux",
           "italian": "Dell'Italia all'università l'amicizia gl'italiani",
           "german": "Straße Häuser Haeuser schoen Quelle Bücher",
           "spanish": "Las canciones felices naciones",
           "portuguese": "As canções nacionais Brasileiras felizmente pães",
           "dutch": "De fiets en bromfietsen kind kinderen ei eieren lichamelijk",
           "turkish": "İstanbul'da IŞIK Iğdır'ın KİTAPLARI ve I\u0307lk"}
STEMMER_SNOWBALL = ["danish", "dutch", "finnish", "french", "german", "hungarian", "italian", "norwegian", "portuguese",
                    "romanian", "russian", "spanish", "swedish", "turkish"]

INDEX = "needle-stem"
SETTINGS = {"analysis": {
    "filter": {
        "light": {"type": "stemmer", "language": "light_english"},
        "light_camel": {"type": "stemmer", "name": "lightEnglish"},
        "light_upper": {"type": "stemmer", "language": "Light_English"},
        "by_kstem": {"type": "stemmer", "language": "kstem"},
        "typed": {"type": "kstem"},
        "porter_typed": {"type": "porter_stem"},
        "minimal_camel": {"type": "stemmer", "language": "minimalEnglish"},
        "keep": {"type": "keyword_marker", "keywords": ["treaties"]},
        "french_snow": {"type": "snowball", "language": "french"},
        "russian_stop": {"type": "stop", "stopwords": "_russian_"},
    },
    "analyzer": {
        "french": {"tokenizer": "standard", "filter": ["lowercase", "french_snow"]},
        "danish_all": {"type": "danish", "stopwords": "_none_"},
        "russian_stops": {"tokenizer": "standard", "filter": ["lowercase", "russian_stop"]},
        "k": {"tokenizer": "standard", "filter": ["lowercase", "kstem"]},
        "light": {"tokenizer": "standard", "filter": ["lowercase", "light"]},
        "kept": {"tokenizer": "standard", "filter": ["lowercase", "keep", "typed"]},
        "upper_first": {"tokenizer": "standard", "filter": ["kstem", "lowercase"]},
        "snow_dutch": {"type": "snowball", "language": "Dutch"},
        "snow_turkish": {"type": "snowball", "language": "Turkish"},
        "snow_russian": {"type": "snowball", "language": "Russian", "stopwords": "_russian_"},
        "snow_french": {"type": "snowball", "language": "French"},
        "snow_german": {"type": "snowball", "language": "German"},
        "snow_english": {"type": "snowball", "language": "English", "stopwords": ["signed"]},
    },
}}
MAPPING = {"properties": {
    "body": {"type": "text", "analyzer": "k"},
    "porter": {"type": "text", "analyzer": "english"},
    "fr": {"type": "text", "analyzer": "french"},
    "ru": {"type": "text", "analyzer": "russian"},
}}
DOCS = [
    {"body": "The treaties were signed by the presidents", "porter": "The treaties were signed by the presidents",
     "fr": "Les assemblées nationales", "ru": "Государственные думы и советы"},
    {"body": "A treaty of organizational reform", "porter": "A treaty of organizational reform"},
    {"body": "Happiness and happy nations", "porter": "Happiness and happy nations"},
    {"body": "Italians walked to the American embassy", "porter": "Italians walked to the American embassy"},
    {"body": "running runners ran", "porter": "running runners ran"},
]
TEXT = ("The Italians' governments walked, talking happily of organizational treaties, "
        "determinative militarily calories crosses aides aided ible able running americans café CATS")


def words(language):
    """40 words of `language` the Lucene recording stems: its first 20 (stop words where
    Lucene lists them) and 20 made of its endings."""
    path = os.path.join(os.path.dirname(__file__), "../lucene/snowball.jsonl")
    mine = [w for lang, w, _ in map(json.loads, open(path, encoding="utf-8")) if lang == language]
    return mine[:20] + mine[-20:]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    out = [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
        analyze({"field": "body", "text": TEXT}),
        analyze({"analyzer": "light", "text": TEXT}),
        analyze({"analyzer": "kept", "text": TEXT}),
        analyze({"analyzer": "upper_first", "text": TEXT}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "light_camel"], "text": TEXT}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "light_upper"], "text": TEXT}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "by_kstem"], "text": TEXT}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "porter_typed"], "text": TEXT}),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "minimal_camel"], "text": TEXT}),
        analyze({"tokenizer": "whitespace", "filter": ["kstem"], "text": "treaties Treaties TREATIES don't x1s"}, None),
        analyze({"tokenizer": "keyword", "filter": [{"type": "kstem"}], "text": "organizational"}, None),
        analyze({"tokenizer": "keyword", "filter": [{"type": "stemmer", "language": "light_english"}],
                 "text": "happiness"}, None),
        analyze({"tokenizer": "standard", "filter": ["lowercase", "kstem"], "text": TEXT, "explain": True,
                 "attributes": ["keyword"]}, None),
        *[analyze({"tokenizer": "whitespace", "filter": [{"type": "snowball", "language": lang}],
                   "text": " ".join(words(lang))}, None) for lang in SNOWBALL],
        *[analyze({"tokenizer": "whitespace", "filter": [{"type": "stemmer", "language": lang}],
                   "text": " ".join(words(lang.capitalize()))}, None) for lang in STEMMER_SNOWBALL],
        search({"query": {"match": {"fr": "nationales"}}}),
        *[analyze({"analyzer": lang, "text": "Det OG " + PHRASES.get(lang, "") + " " + " ".join(words(lang.capitalize()))},
                  None) for lang in LANGUAGE_ANALYZERS],
        *[analyze({"tokenizer": "whitespace", "filter": [{"type": "stemmer", "language": lang}],
                   "text": " ".join(words(lang[len("light_"):].capitalize()))}, None) for lang in LIGHT],
        analyze({"tokenizer": "whitespace", "filter": ["german_normalization"], "text": PHRASES["german"]}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "german_normalization"}], "text": "Aeon quae"}, None),
        analyze({"tokenizer": "whitespace", "filter": [{"type": "lowercase", "language": "turkish"}],
                 "text": PHRASES["turkish"]}, None),
        analyze({"analyzer": "danish_all", "text": " ".join(words("Danish")[:20])}),
        analyze({"analyzer": "russian_stops", "text": " ".join(words("Russian")[:20])}),
        search({"query": {"match": {"ru": "государственная дума"}}}),
        *[analyze({"analyzer": f"snow_{lang}", "text": PHRASES.get(lang, TEXT) + " " + " ".join(words(lang.capitalize()))})
          for lang in ["dutch", "turkish", "russian", "french", "german"]],
        analyze({"analyzer": "snow_english", "text": TEXT + " The treaties were signed"}),
        search({"query": {"match": {"ru": "и"}}}),
        search({"query": {"match": {"body": "treaty"}}}),
        search({"query": {"match": {"body": "organization"}}}),
        search({"query": {"match": {"body": "happy"}}}),
        search({"query": {"match": {"body": "italy"}}}),
        search({"query": {"match": {"body": "america"}}}),
        search({"query": {"match": {"body": "runs"}}}),
        search({"query": {"match": {"porter": "happy"}}}),
        search({"query": {"match_phrase": {"body": "treaty were signed"}}}),
        search({"query": {"query_string": {"query": "walking AND italian", "default_field": "body"}}}),
        ("PUT", "/needle-stem-bad", {"settings": {"analysis": {
            "normalizer": {"n": {"type": "custom", "filter": ["kstem"]}}}}}),
        ("PUT", "/needle-stem-bad", {"settings": {"analysis": {
            "filter": {"f": {"type": "stemmer", "language": "klingon"}},
            "analyzer": {"a": {"tokenizer": "standard", "filter": ["f"]}}}}}),
    ]
    return out


def main():
    record_main([INDEX, "needle-stem-bad"], steps)


if __name__ == "__main__":
    main()
