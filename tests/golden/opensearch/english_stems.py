#!/usr/bin/env python3
"""Records what a real OpenSearch node's `english` analyzer (Lucene's
EnglishAnalyzer: possessive filter, lowercase, English stop words, the Porter
stemmer) makes of every word occurring twice or more in the bundled State of
the Union corpus, and of a few possessives: a line `WORD<TAB>STEM` for each
word it keeps (stop words give no token and no line). `porter.rs` in
needle-analysis checks its stemmer against every line.

    python3 tests/golden/opensearch/english_stems.py http://127.0.0.1:9201 > tests/golden/opensearch/english_stems.tsv

The node: ../shared/opensearch (OpenSearch 3.8).
"""

import collections
import gzip
import json
import os
import re
import sys

from record import call


def words():
    corpus = os.path.join(os.path.dirname(__file__), "../../../examples/data/sotu.jsonl.gz")
    counts = collections.Counter()
    with gzip.open(corpus, "rt") as f:
        for line in f:
            d = json.loads(line)
            counts.update(re.findall(r"[a-z]+", (d.get("title", "") + " " + d.get("body", "")).lower()))
    listed = sorted(w for w, c in counts.items() if c >= 2)
    return listed + ["nation's", "people’s", "Government's", "a", "is", "by", "sky", "skies", "dying",
                     "lying", "news"]


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    kept = {}
    for w in words():
        tokens = call(base, "POST", "/_analyze", {"analyzer": "english", "text": w})["tokens"]
        if tokens:
            kept[w] = tokens[0]["token"]
    for w in sorted(kept):
        print(f"{w}\t{kept[w]}")


if __name__ == "__main__":
    main()
