#!/usr/bin/env python3
"""Records Lucene's CJKWidthFilter and CJKBigramFilter (after its standard
tokenizer and a lowercase filter) on fixed texts and on thousands of random
texts of Han, Hiragana, Katakana (fullwidth and halfwidth, with voiced
marks), Hangul, fullwidth and plain Latin, under random options (a fixed
seed): each token's text, position, position length, offsets (UTF-16 units)
and type, and the position after the text, for `src/cjk_bigram.rs`'s test to
compare Needle's filters with. Builds and runs CjkCases.java on the Lucene
peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/cjk_cases.py > tests/golden/lucene/cjk.jsonl
"""

import json
import random
import sys

import lucene_peer

FIXED = ["", "中", "中文", "中文字", "日本語のテキスト", "한국어 텍스트", "中文 abc 中文", "ｶﾞｷﾞ ﾊﾟﾝ", "ＡＢＣ１２３",
         "中 文", "中。文", "x中y", "𠀀𠀁 中", "ウﾞ ヽﾞ ﾜﾞ", "東京タワー", "ラーメン屋さん"]
FRAGMENTS = ["中", "文字", "日本語", "ひらがな", "カタカナ", "ｶﾀｶﾅ", "ｶﾞ", "ﾊﾟ", "ﾞ", "한국어", "가", "ABC", "ＡＢＣ", "x1",
             " ", "  ", "。", ",", "-", "the", "𠀀", "ー", "々", "Ｘ", "ﾝ", "ㄱ"]


def cases():
    rng = random.Random(20261208)
    out = [(t, (1, 15, 0)) for t in FIXED] + [(t, (1, 15, 1)) for t in FIXED] + [(t, (0, 5, 0)) for t in FIXED]
    for _ in range(3000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 10)))
        out.append((text, (rng.randint(0, 1), rng.randint(0, 15), rng.randint(0, 1))))
    return out


def main():
    cs = cases()
    lines = "".join(f"{w}\t{f}\t{u}\t{t.encode().hex()}\n" for t, (w, f, u) in cs)
    rows = lucene_peer.run("CjkCases", lines.encode()).decode().split("\n")
    for (text, (width, flags, unigrams)), row in zip(cs, rows[:len(cs)]):
        end, *tokens = row.split("\t")
        shown = []
        for token in tokens:
            term, pos, length, start, stop, kind = token.split(",")
            shown.append([bytes.fromhex(term).decode(), int(pos), int(length), int(start), int(stop), kind])
        case = {"text": text, "width": bool(width), "flags": flags, "unigrams": bool(unigrams), "end": int(end),
                "tokens": shown}
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
