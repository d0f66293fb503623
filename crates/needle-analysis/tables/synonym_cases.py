#!/usr/bin/env python3
"""Records Lucene's SynonymGraphFilter's and SynonymFilter's tokens (after a
whitespace tokenizer and a stop filter removing `x`, so that holes are
left) for fixed rules and texts and for thousands of random ones (a fixed
seed): rules of one to three words a side, explicit (`a b => c`) or
equivalent (`a, b c`), with and without `expand`; each token's text,
position, position length, offsets and type, and the position after the
text, for `src/synonym_filter.rs`'s test to compare Needle's filters with.
Builds and runs SynonymCases.java on the Lucene peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/synonym_cases.py > tests/golden/lucene/synonym.jsonl
"""

import json
import random
import sys

import lucene_peer

FIXED = [
    (["ny, new york"], ["new york city", "ny x", "x ny", "new x york", "in new york", "new york"]),
    (["new york => ny", "ny => new york state"], ["ny", "in new york", "new york ny ny", "x new york x"]),
    (["a b c, d", "a b => e f g"], ["a b c", "a b d", "a b", "x a b x c a b c", "a"]),
    (["quick, fast", "the quick => speedy"], ["the quick fox", "x quick x", "quick fast"]),
]
WORDS = ["a", "b", "c", "d", "e"]


def phrase(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.choice([1, 1, 2, 2, 3])))


def rule(rng):
    if rng.random() < 0.5:
        return ", ".join(phrase(rng) for _ in range(rng.randint(2, 3)))
    left = ", ".join(phrase(rng) for _ in range(rng.randint(1, 2)))
    return left + " => " + ", ".join(phrase(rng) for _ in range(rng.randint(1, 2)))


def cases():
    rng = random.Random(20261208)
    out = []
    for rules, texts in FIXED:
        for text in texts:
            for expand in (True, False):
                for graph in (True, False):
                    out.append((rules, expand, graph, text))
    for _ in range(3000):
        rules = [rule(rng) for _ in range(rng.randint(1, 4))]
        words = [rng.choice(WORDS + ["x"]) for _ in range(rng.randint(0, 9))]
        text = "".join(w + " " * rng.randint(1, 2) for w in words)[: rng.choice([None, -1])]
        out.append((rules, rng.random() < 0.7, rng.random() < 0.5, text))
    return out


def line(rules, expand, graph, text):
    fields = ["\n".join(rules).encode().hex(), str(int(expand)), str(int(graph)), text.encode().hex()]
    return "\t".join(fields) + "\n"


def main():
    cs = cases()
    rows = lucene_peer.run("SynonymCases", "".join(line(*c) for c in cs).encode()).decode().split("\n")
    for (rules, expand, graph, text), row in zip(cs, rows[:len(cs)]):
        end, *tokens = row.split("\t")
        shown = []
        for token in tokens:
            term, pos, length, start, stop, kind = token.split(",")
            shown.append([bytes.fromhex(term).decode(), int(pos), int(length), int(start), int(stop), kind])
        case = {"rules": rules, "expand": expand, "graph": graph, "text": text, "end": int(end), "tokens": shown}
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
