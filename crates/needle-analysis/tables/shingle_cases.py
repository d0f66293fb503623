#!/usr/bin/env python3
"""Records Lucene's ShingleFilter's tokens (after a whitespace tokenizer and a
stop filter removing `x`, so that holes are filled) for fixed texts and for
thousands of random texts under random options (a fixed seed): each token's
text, position, position length, offsets and type, and the position after
the text, for `src/shingle.rs`'s test to compare Needle's filter with.
Builds and runs ShingleCases.java on the Lucene peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/shingle_cases.py > tests/golden/lucene/shingle.jsonl
"""

import json
import random
import sys

import lucene_peer

DEFAULTS = {"min": 2, "max": 2, "unigrams": True, "unigrams_if_none": False, "separator": " ", "filler": "_"}
FIXED = ["", "a", "x", "a b", "a b c d e", "x a", "a x", "x a x b x", "a x x x b", "x x x x a", "a x x x x",
         "x", "x x", "one two  three   four"]
WORDS = ["a", "b", "c", "dd", "eee", "x", "x", "x"]


def cases():
    rng = random.Random(20261208)
    out = [(t, dict(DEFAULTS)) for t in FIXED]
    for t in FIXED:
        out.append((t, {"min": 2, "max": 4, "unigrams": False, "unigrams_if_none": True, "separator": "+",
                        "filler": "-"}))
    for _ in range(3000):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 9))]
        text = "".join(w + " " * rng.randint(1, 2) for w in words)[: rng.choice([None, -1])]
        low = rng.randint(2, 4)
        options = {"min": low, "max": rng.randint(low, 5), "unigrams": rng.random() < 0.5,
                   "unigrams_if_none": rng.random() < 0.5, "separator": rng.choice([" ", "", "+", "--"]),
                   "filler": rng.choice(["_", "", "-", "FILL"])}
        out.append((text, options))
    return out


def line(text, o):
    fields = [str(o["min"]), str(o["max"]), str(int(o["unigrams"])), str(int(o["unigrams_if_none"])),
              o["separator"].encode().hex(), o["filler"].encode().hex(), text.encode().hex()]
    return "\t".join(fields) + "\n"


def main():
    cs = cases()
    rows = lucene_peer.run("ShingleCases", "".join(line(t, o) for t, o in cs).encode()).decode().split("\n")
    for (text, options), row in zip(cs, rows[:len(cs)]):
        end, *tokens = row.split("\t")
        shown = []
        for token in tokens:
            term, pos, length, start, stop, kind = token.split(",")
            shown.append([bytes.fromhex(term).decode(), int(pos), int(length), int(start), int(stop), kind])
        case = {"text": text, "options": options, "end": int(end), "tokens": shown}
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
