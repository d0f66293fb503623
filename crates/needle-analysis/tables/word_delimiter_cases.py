#!/usr/bin/env python3
"""Records Lucene's WordDelimiterGraphFilter's parts (with `--plain`, the
older WordDelimiterFilter's) of fixed terms and of
thousands of terms made of word, number and delimiter fragments under
random options (a fixed seed; `flags` adds up the options set, as `FLAGS`
numbers them): each part's text, position, end position and offsets (UTF-16
units), for `src/word_delimiter.rs`'s test to compare Needle's filter
with. Builds and runs WordDelimiterCases.java on the Lucene peer's jars
(`lucene_peer.py`):

    python3 crates/needle-analysis/tables/word_delimiter_cases.py > tests/golden/lucene/word_delimiter.jsonl
    python3 crates/needle-analysis/tables/word_delimiter_cases.py --plain > tests/golden/lucene/word_delimiter_plain.jsonl
"""

import json
import random
import sys

import lucene_peer

# WordDelimiterGraphFilter's flags, by Elasticsearch's names of them.
FLAGS = {"generate_word_parts": 1, "generate_number_parts": 2, "catenate_words": 4, "catenate_numbers": 8,
         "catenate_all": 16, "preserve_original": 32, "split_on_case_change": 64, "split_on_numerics": 128,
         "stem_english_possessive": 256}
DEFAULTS = {"generate_word_parts": True, "generate_number_parts": True, "catenate_words": False,
            "catenate_numbers": False, "catenate_all": False, "preserve_original": False,
            "split_on_case_change": True, "split_on_numerics": True, "stem_english_possessive": True}
FIXED = ["Wi-Fi", "wi-fi-4000", "PowerShot", "PowerShot500", "SD500", "j2se", "O'Neil's", "O'Neil", "Neil's",
         "500-42", "ABCdef", "aBC", "--", "-a-", "a", "'s", "x's", "a's-b's", "don't", "école-ÉTÉ", "日本-語",
         "ǅemal", "٣٤-x", "Ⅻ-x", "a😀b", "😀-x", "foo_bar.baz", "x--y", "iPod", "HTTPServer", "e-mail's"]
FRAGS = ["wi", "Fi", "Power", "Shot", "500", "42", "-", "_", ".", "'s", "'S", "'", "O", "Neil", "j", "2", "se", "SD",
         "x", "ABC", "def", "é", "É", "日本", "ǅ", "٣", "Ⅻ", "😀", "s", "S", "a1", "--", "/", "iPod", "0"]


def cases():
    rng = random.Random(20261207)
    out = [(t, dict(DEFAULTS)) for t in FIXED]
    for t in FIXED:
        out.append((t, {k: True for k in DEFAULTS}))
    for _ in range(3000):
        term = "".join(rng.choice(FRAGS) for _ in range(rng.randint(1, 7)))
        out.append((term, {k: rng.random() < 0.5 for k in DEFAULTS}))
    return out


def main():
    cs = cases()
    plain = "\tplain" if "--plain" in sys.argv else ""
    lines = "".join(f"{sum(FLAGS[k] for k, v in o.items() if v)}\t{t.encode().hex()}{plain}\n" for t, o in cs)
    rows = lucene_peer.run("WordDelimiterCases", lines.encode()).decode().split("\n")[:len(cs)]
    for (term, options), row in zip(cs, rows):
        parts = []
        for part in filter(None, row.split("\t")):
            text, pos, length, start, end = part.split(",")
            parts.append([bytes.fromhex(text).decode(), int(pos), int(pos) + int(length), int(start), int(end)])
        flags = sum(FLAGS[k] for k, v in options.items() if v)
        sys.stdout.write(json.dumps({"term": term, "flags": flags, "parts": parts}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
