#!/usr/bin/env bash
# Indexing the shared corpus into one segment, ROUNDS rounds, one engine after
# the other in each round: Needle before this change (OLD: its `needle`
# binary), Needle now (`needle index --threads 2`, then `needle merge`), the
# tantivy peer (one indexing thread) and the Lucene peer (`BenchIndex`, its
# JVM start included). Wall, user and system seconds of each step go to
# OUT/times.txt ("engine step wall user sys").
#   bench/results/2026-12-02/indexing-prefetch/run.sh OLD ROUNDS OUT
set -euo pipefail
OLD=$1; ROUNDS=${2:-3}; OUT=$3
C=../shared/data/corpus.jsonl.gz
IDX=$(mktemp -d)
mkdir -p "$OUT"
timed() { local label=$1; shift; /usr/bin/time -f "$label %e %U %S" -a -o "$OUT/times.txt" "$@" > /dev/null 2>&1; }
needle() {
  local label=$1 bin=$2
  rm -rf "$IDX/$label"
  timed "$label index" "$bin" index --index "$IDX/$label" --input $C --threads 2
  timed "$label merge" "$bin" merge --index "$IDX/$label"
  du -sb "$IDX/$label" | awk -v l="$label" '{print l, "bytes", $1}' >> "$OUT/sizes.txt"
}
for _ in $(seq "$ROUNDS"); do
  needle needle-before "$OLD"
  needle needle target/release/needle
  rm -rf "$IDX/tantivy"
  timed "tantivy index" bench/peers/tantivy/target/release/tantivy-peer index --corpus $C --index "$IDX/tantivy"
  rm -rf "$IDX/lucene"
  timed "lucene index" bash bench/peers/lucene/run.sh needle.bench.BenchIndex --corpus $C --index "$IDX/lucene"
done
du -sb "$IDX/tantivy" "$IDX/lucene" >> "$OUT/sizes.txt"
rm -rf "$IDX"
