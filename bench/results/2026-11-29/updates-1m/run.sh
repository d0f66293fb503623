#!/usr/bin/env bash
# Seed 002's updates at 1,000 documents/s (numeric and binary in place) on a 1M-document segment,
# Needle and Lucene 10.6 alternating, ROUNDS rounds (bench/README.md section 7). DATA holds
# values.jsonl (the 1 GB scaled corpus with values) and the two engines' indexes of it
# (needle-values, lucene-values), each merged to one segment; WL holds realistic.txt.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
B=target/release/needle-bench
OUT=${OUT:-bench/results/2026-11-29/updates-1m}
DATA=${DATA:?the folder with values.jsonl and the indexes} WL=${WL:?the workload folder}
SCRATCH=${SCRATCH:-$(mktemp -d)}
U="--docs $DATA/values.jsonl --workload $WL/realistic.txt --duration 20 --warmup 5 --idle 5 --methods ${METHODS:-numeric,binary} --rates 1000"
for round in $(seq 1 "${ROUNDS:-2}"); do
  rm -rf "$SCRATCH"/needle "$SCRATCH"/lucene
  $B updates --engine needle --engine-arg=--durability=volatile --base-index "$DATA/needle-values" \
    --work-dir "$SCRATCH/needle" $U --out "$OUT/needle${TAG:-}.round$round.json"
  JAVA_OPTS='-Xms2g -Xmx2g' $B updates --engine lucene --base-index "$DATA/lucene-values" \
    --work-dir "$SCRATCH/lucene" $U --reopen-s 1 --out "$OUT/lucene${TAG:-}.round$round.json"
done
