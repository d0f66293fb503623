#!/usr/bin/env bash
# A/B of two needle-bench builds (the three rounds after run.sh's two in runs.tsv):
#   bench/results/2026-11-27/indexing-arena/ab.sh OLD NEW ROUNDS
set -euo pipefail
OLD=$1; NEW=$2; ROUNDS=$3
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
  run needle-2t "$NEW" index-needle --corpus $C --index "$T/idx" --threads 2
  run needle-before-1t "$OLD" index-needle --corpus $C --index "$T/idx" --threads 1
  run needle-1t "$NEW" index-needle --corpus $C --index "$T/idx" --threads 1
done
rm -rf "$T"
