#!/usr/bin/env bash
# Field values in-process (Needle, tantivy, Lucene), the harness and each engine
# on one core (`taskset -c CPU`, inherited by the engine's process and threads),
# then on both cores, ROUNDS rounds, each engine after the other. Needs the
# indexes of bench/README.md section 7a in IDX (needle-values, lucene-values,
# tantivy-values).
#   run.sh IDX ROUNDS OUT [CPU]
set -euo pipefail
IDX=$1 ROUNDS=$2 OUT=$3 CPU=${4:-0}
B=target/release/needle-bench
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for cores in one two; do
    d=$OUT/r$r-$cores; mkdir -p "$d"
    pin=(); [ "$cores" = one ] && pin=(taskset -c "$CPU")
    "${pin[@]}" $B values --engine needle --index "$IDX/needle-values" --answers-dir "$d/answers" --out "$d/needle.json"
    "${pin[@]}" $B values --engine tantivy --index "$IDX/tantivy-values" --answers-dir "$d/answers" --out "$d/tantivy.json"
    JAVA_OPTS='-Xms2g -Xmx2g' "${pin[@]}" $B values --engine lucene --warmup 1500 --index "$IDX/lucene-values" \
      --answers-dir "$d/answers" --out "$d/lucene.json"
    $B compare-values --answers-dir "$d/answers" --reference needle > "$d/compare.txt" || true
  done
done
