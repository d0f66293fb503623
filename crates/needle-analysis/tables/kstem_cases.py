#!/usr/bin/env python3
"""Records Lucene's KStemFilter's stem of each word of the bundled State of
the Union corpus, of dictionary words given endings the stemmer takes off
(a fixed seed), and of terms it must leave alone, for `src/kstem.rs`'s test
to compare Needle's stemmer with: a line `[word, stem]` each. Builds and runs
KStemCases.java on the Lucene peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/kstem_cases.py > tests/golden/lucene/kstem.jsonl
"""

import gzip
import json
import os
import random
import re
import sys

import lucene_peer

HERE = os.path.dirname(os.path.abspath(__file__))
ENDINGS = ["s", "es", "ies", "ed", "ied", "ing", "ity", "ility", "ivity", "ality", "ness", "iness", "ion", "ation",
           "ication", "ization", "ition", "er", "or", "ier", "eer", "izer", "ly", "ally", "ably", "ily", "al", "ical",
           "ial", "ive", "ative", "ize", "ment", "able", "ible", "ism", "ic", "ency", "ancy", "ence", "ance"]
ODD = ["able", "ible", "ies", "ied", "sss", "ous", "ing", "thing", "unbed", "unfixed", "abcdefing", "zzzing", "yyyed",
       "Cats", "CATS", "café", "naïve", "a1s", "x", "xs", "xyz", "s" * 48, "s" * 49, "s" * 50, "running" * 7,
       "kicked", "crosses", "aides", "aided", "calories", "militarily", "heuristically", "determinative"]


def corpus_words():
    path = os.path.join(HERE, "../../../examples/data/sotu.jsonl.gz")
    words = set()
    with gzip.open(path, "rt") as f:
        for line in f:
            d = json.loads(line)
            words.update(re.findall(r"[a-z]+", (d.get("title", "") + " " + d.get("body", "")).lower()))
    return sorted(words)


def dictionary_words():
    text = open(os.path.join(HERE, "../src/tables/kstem_dictionary.rs")).read()
    return re.findall(r"^([a-z]+)[ \\]", text, re.M)


def cases():
    rng = random.Random(20261207)
    words = corpus_words() + ODD
    for word in dictionary_words()[::2]:
        ending = rng.choice(ENDINGS)
        words.append(word + ending)
        if rng.random() < 0.1:
            words.append(word + word[-1] + rng.choice(["ing", "ed", "er", "able", "al", "ize"]))
    seen = set()
    return [w for w in words if not (w in seen or seen.add(w))]


def main():
    words = cases()
    stems = lucene_peer.run("KStemCases", "".join(w + "\n" for w in words).encode()).decode().splitlines()
    assert len(stems) == len(words)
    for word, stem in zip(words, stems):
        sys.stdout.write(json.dumps([word, stem], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
