#!/usr/bin/env python3
"""Records Lucene's SnowballFilter's stem of words in each language Needle's
Snowball stemmers (the rust-stemmers crate) cover, for `src/filters.rs`'s
test to compare them with: per language, its stop words where Lucene has a
list, and words made of random letters of the language followed by one or
two of the endings Lucene's stemmer itself knows (read out of its tables),
and for German also words of runs of vowels its first steps read, a fixed
seed; a line `[language, word, stem]` each. Builds and runs
SnowballCases.java on the Lucene peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/snowball_cases.py > tests/golden/lucene/snowball.jsonl
"""

import glob
import json
import os
import random
import subprocess
import sys

import lucene_peer

LANGUAGES = ["Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German", "Greek", "Hungarian", "Italian",
             "Norwegian", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Tamil", "Turkish"]
PER_LANGUAGE = 1500


def stop_words(language):
    jar = glob.glob(os.path.join(lucene_peer.PEER, "target/lib/lucene-analysis-common-*.jar"))[0]
    name = f"org/apache/lucene/analysis/snowball/{language.lower()}_stop.txt"
    listed = subprocess.run(["unzip", "-p", jar, name], capture_output=True)
    if listed.returncode != 0:
        return []
    words = (line.split("|")[0].strip() for line in listed.stdout.decode("utf-8").splitlines())
    return [w for w in words if w]


def cases():
    asked = "".join(f"suffixes\t{lang}\n" for lang in LANGUAGES).encode()
    rows = lucene_peer.run("SnowballCases", asked).decode().split("\n")
    rng = random.Random(20261207)
    out = []
    known = {}
    for language, row in zip(LANGUAGES, rows):
        # Uppercase letters in Lucene's tables are the stemmers' own marks, not input.
        endings = sorted({s for s in row.split("\t") if s and s == s.lower()})
        known[language] = endings
        stops = stop_words(language)
        letters = sorted({c for w in endings + stops for c in w if c.isalpha()})
        words = list(dict.fromkeys(stops[:300]))
        while len(words) < PER_LANGUAGE:
            base = "".join(rng.choice(letters) for _ in range(rng.randint(2, 7)))
            tail = "".join(rng.choice(endings) for _ in range(rng.choice([1, 1, 1, 2])))
            words.append(base + tail)
        out += [(language, w) for w in dict.fromkeys(words)]
    # German's first steps read runs of vowels (a u or y between vowels, ae, oe, ue, qu): words made of them.
    pieces = ["ae", "oe", "ue", "qu", "au", "eu", "ay", "uy", "ya", "yu", "uu", "aue", "eue", "ß", "ä", "ö", "ü", "u",
              "y", "e", "b", "k", "l", "n", "s", "t"]
    extra = ["".join(rng.choice(pieces) for _ in range(rng.randint(2, 6))) + rng.choice(known["German"] + [""])
             for _ in range(1500)]
    out += [("German", w) for w in dict.fromkeys(extra) if ("German", w) not in out]
    return out


def main():
    cs = cases()
    stems = lucene_peer.run("SnowballCases", "".join(f"{lang}\t{w}\n" for lang, w in cs).encode()).decode()
    for (language, word), stem in zip(cs, stems.split("\n")):
        sys.stdout.write(json.dumps([language, word, stem], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
