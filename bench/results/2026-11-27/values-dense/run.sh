#!/usr/bin/env bash
# Three rounds of `needle-bench values`: Needle before (95b5c5b) and after (9f7e0d1) the array-counted
# histograms, tantivy and Lucene, one after the other on the same indexes (bench/README.md 7a).
# OLD and NEW: the two needle-bench builds; IDX: the folder of the three indexes; OUT: where the
# rounds and answers go (this folder unless given).
set -euo pipefail
R="${OUT:-$(cd "$(dirname "$0")" && pwd)}"
A="$R/answers"
for round in 1 2 3; do
  mkdir -p "$R/r$round"
  "$OLD" values --engine needle --label needle-before --index "$IDX/needle-values" --answers-dir "$A" --out "$R/r$round/needle-before.json"
  "$NEW" values --engine needle --index "$IDX/needle-values" --answers-dir "$A" --out "$R/r$round/needle.json"
  "$NEW" values --engine tantivy --index "$IDX/tantivy-values" --answers-dir "$A" --out "$R/r$round/tantivy.json"
  JAVA_OPTS='-Xms2g -Xmx2g' "$NEW" values --engine lucene --warmup 1500 --index "$IDX/lucene-values" --answers-dir "$A" --out "$R/r$round/lucene.json"
done
"$NEW" compare-values --answers-dir "$A" --reference needle
