#!/usr/bin/env bash
# The aggregation requests again, the order of the engines turned around (this build first, the
# build before last), three rounds: run.sh always ran the build before first and this build
# second, and on this machine's slow spells the second run read slower even on requests whose
# code did not change.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
A="$R/answers"
ONLY=terms_all,date_histogram_all,date_histogram_10pct,stats_histogram
for round in 1 2 3; do
  mkdir -p "$R/aggs-r$round"
  "$NEW" values --engine needle --only "$ONLY" --index "$IDX/needle-values" --answers-dir "$A" --out "$R/aggs-r$round/needle.json"
  "$NEW" values --engine tantivy --only "$ONLY" --index "$IDX/tantivy-values" --answers-dir "$A" --out "$R/aggs-r$round/tantivy.json"
  JAVA_OPTS='-Xms2g -Xmx2g' "$NEW" values --engine lucene --only "$ONLY" --warmup 1500 --index "$IDX/lucene-values" --answers-dir "$A" --out "$R/aggs-r$round/lucene.json"
  "$OLD" values --engine needle --label needle-before --only "$ONLY" --index "$IDX/needle-values" --answers-dir "$A" --out "$R/aggs-r$round/needle-before.json"
done
