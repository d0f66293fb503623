#!/usr/bin/env bash
# Indexing the shared corpus, each engine one after the other, ROUNDS rounds:
# the Needle build before this change (OLD=path of its needle-bench), today's
# (2 threads, then 1), tantivy 0.27 and Lucene 10.6. Each includes the merge to
# one segment. Prints one line per run: engine, wall s, user s, sys s, peak RSS KB, index bytes.
# NEEDLE_ONLY=1 leaves the peers out.
#   bench/results/2026-11-27/parallel-merge/index-run.sh OLD ROUNDS > index-runs.tsv
set -euo pipefail
OLD=$1; ROUNDS=${2:-2}
C=../shared/data/corpus.jsonl.gz
T=$(mktemp -d)
run() {
  local name=$1; shift
  rm -rf "$T/idx"
  /usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" > /dev/null 2> "$T/err" || { cat "$T/err" >&2; exit 1; }
  printf '%s\t%s\t%s\n' "$name" "$(tr ' ' '\t' < "$T/time")" "$(du -sb "$T/idx" | cut -f1)"
}
for r in $(seq "$ROUNDS"); do
  run needle-before-2t "$OLD" index-needle --corpus $C --index "$T/idx" --threads 2
  run needle-2t target/release/needle-bench index-needle --corpus $C --index "$T/idx" --threads 2
  run needle-before-1t "$OLD" index-needle --corpus $C --index "$T/idx" --threads 1
  run needle-1t target/release/needle-bench index-needle --corpus $C --index "$T/idx" --threads 1
  [[ -n "${NEEDLE_ONLY:-}" ]] && continue
  run tantivy bench/peers/tantivy/target/release/tantivy-peer index --corpus $C --index "$T/idx"
  run lucene bash bench/peers/lucene/run.sh needle.bench.BenchIndex --corpus $C --index "$T/idx"
done
rm -rf "$T"
