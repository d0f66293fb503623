#!/usr/bin/env python3
"""Records what Lucene's FrenchLightStemFilter, GermanLightStemFilter,
SpanishLightStemFilter, ItalianLightStemFilter, PortugueseLightStemFilter and
GermanNormalizationFilter and TurkishLowerCaseFilter, and ArabicStemFilter
and ArabicNormalizationFilter, make of words of their language (those
`snowball.jsonl` holds for it) and of
words made of random letters and the endings each stemmer takes off (and the
prefixes Arabic's does), accents
and doubled letters among them (a fixed seed), for `src/light_stemmers.rs`'s
test: a line `[filter, word, output]` each. Builds and runs LightStemCases.java
on the Lucene peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/light_stem_cases.py > tests/golden/lucene/light_stems.jsonl
"""

import json
import os
import random
import sys

import lucene_peer

HERE = os.path.dirname(os.path.abspath(__file__))
ENDINGS = {
    "French": ["x", "aux", "eaux", "s", "issement", "issant", "ement", "ivement", "ficatrice", "ficateur", "catrice",
               "cateur", "atrice", "ateur", "trice", "ième", "teuse", "teur", "euse", "ère", "ive", "folle", "molle",
               "nnelle", "nnel", "ète", "ique", "esse", "inage", "isation", "ualisation", "isateur", "ation", "ition",
               "ie", "er", "ee", "ll", "é", "ç", "ô", "î", "ù"],
    "German": ["ern", "em", "en", "er", "es", "e", "s", "bs", "ts", "est", "st", "nst", "ä", "ö", "ü", "ß", "ae",
               "oe", "ue", "äs"],
    "Spanish": ["o", "a", "e", "s", "eses", "ces", "os", "as", "es", "á", "í", "ó", "ú", "ü"],
    "Italian": ["e", "ie", "he", "i", "hi", "ii", "a", "ia", "o", "io", "à", "è", "ì", "ò"],
    "Portuguese": ["es", "res", "ses", "les", "zes", "ns", "eis", "éis", "ais", "óis", "is", "ões", "ães", "mente",
                   "s", "inha", "iaca", "eira", "osa", "ica", "ida", "ada", "iva", "ama", "ona", "ora", "esa", "na",
                   "a", "e", "o", "ã", "õ", "ç", "ê"],
}
ENDINGS["GermanNormalization"] = ENDINGS["German"] + ["que", "quae", "aue", "oue", "eue", "ß"]
# Capital I with and without dots, combining marks between, other capitals.
ENDINGS["TurkishLowerCase"] = ["I", "İ", "I\u0307", "I\u0301\u0307", "I\u0301", "\u0307", "Ş", "Ğ", "Ç", "Ö", "Ü", "ı", "i",
                               "A", "ş", "\u0301"]
# Larkey's endings and, in front, the article, conjunction and prepositions (Lucene's ArabicStemmer).
ENDINGS["Arabic"] = ["\u0647\u0627", "\u0627\u0646", "\u0627\u062a", "\u0648\u0646", "\u064a\u0646", "\u064a\u0647",
                     "\u064a\u0629", "\u0647", "\u0629", "\u064a"]
# Hamza seats, alef maksura, teh marbuta, tatweel and the harakat (Lucene's ArabicNormalizer).
ENDINGS["ArabicNormalization"] = ["\u0622", "\u0623", "\u0625", "\u0649", "\u0629", "\u0640", "\u064b", "\u064c",
                                  "\u064d", "\u064e", "\u064f", "\u0650", "\u0651", "\u0652", "\u0627", "\u0653"]
PREFIXES = {"Arabic": ["", "", "\u0627\u0644", "\u0648\u0627\u0644", "\u0628\u0627\u0644", "\u0643\u0627\u0644",
                       "\u0641\u0627\u0644", "\u0644\u0644", "\u0648", "\u0648\u0648"],
            "ArabicNormalization": ["", "\u0623", "\u0640"]}


def cases():
    path = os.path.join(HERE, "../../../tests/golden/lucene/snowball.jsonl")
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    rng = random.Random(20261207)
    out = []
    for filt, endings in ENDINGS.items():
        language = {"GermanNormalization": "German", "TurkishLowerCase": "Turkish",
                    "ArabicNormalization": "Arabic"}.get(filt, filt)
        words = [w for lang, w, _ in rows if lang == language][:700]
        letters = sorted({c for w in words + endings for c in w if c.isalpha()})
        for _ in range(700):
            base = "".join(rng.choice(letters) for _ in range(rng.randint(1, 8)))
            front = rng.choice(PREFIXES[filt]) if filt in PREFIXES else ""
            words.append(front + base + "".join(rng.choice(endings) for _ in range(rng.choice([1, 1, 2]))))
        out += [(filt, w) for w in dict.fromkeys(words)]
    return out


def main():
    cs = cases()
    made = lucene_peer.run("LightStemCases", "".join(f"{f}\t{w}\n" for f, w in cs).encode()).decode().split("\n")
    for (filt, word), output in zip(cs, made):
        sys.stdout.write(json.dumps([filt, word, output], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
