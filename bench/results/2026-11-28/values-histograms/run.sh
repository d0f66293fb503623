#!/usr/bin/env bash
# Three rounds of `needle-bench values`: Needle before (OLD, a build of d5639b2's aggregation code) and
# after (NEW) the histogram and stats changes, tantivy and Lucene, one after the other on the same
# indexes (bench/README.md 7a). IDX: the folder of the three indexes.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
A="$R/answers"
for round in 1 2 3; do
  mkdir -p "$R/r$round"
  "$OLD" values --engine needle --label needle-before --index "$IDX/needle-values" --answers-dir "$A" --out "$R/r$round/needle-before.json"
  "$NEW" values --engine needle --index "$IDX/needle-values" --answers-dir "$A" --out "$R/r$round/needle.json"
  "$NEW" values --engine tantivy --index "$IDX/tantivy-values" --answers-dir "$A" --out "$R/r$round/tantivy.json"
  JAVA_OPTS='-Xms2g -Xmx2g' "$NEW" values --engine lucene --warmup 1500 --index "$IDX/lucene-values" --answers-dir "$A" --out "$R/r$round/lucene.json"
done
"$NEW" compare-values --answers-dir "$A" --reference needle
