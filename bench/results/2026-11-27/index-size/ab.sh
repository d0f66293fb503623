#!/usr/bin/env bash
# Two indexes of the shared corpus timed by one build, in memory, one thread,
# closed loop, alternating ROUNDS times: the 5 phrase_L categories, and the
# realistic workload (its four categories; the filters' A/B timed real_phrase
# only). The first round validates (hit counts compared across the two).
#   bench/results/2026-11-27/index-size/ab.sh LABEL_A INDEX_A LABEL_B INDEX_B WORKLOAD_DIR ROUNDS OUT
# WORKLOAD_DIR from `needle-bench workload --per-category 1000 --queries ../shared/data/queries`.
set -euo pipefail
LA=$1; IA=$2; LB=$3; IB=$4; W=$5; ROUNDS=$6; OUT=$7
B=target/release/needle-bench
mkdir -p "$OUT"
for r in $(seq "$ROUNDS"); do
  for v in "$LA:$IA" "$LB:$IB"; do
    label=${v%%:*}; idx=${v#*:}
    val=--no-validate; [ "$r" = 1 ] && val="--answers-dir $OUT/answers"
    $B run --engine needle --label "$label" --index "$idx" --workload "$W/realistic.txt" $val \
      --duration 8 --warmup 3 --out "$OUT/rl-$label-$r.json" > "$OUT/rl-$label-$r.log" 2>&1
    $B run --engine needle --label "$label" --index "$idx" --workload "$W/phrase.txt" --no-validate \
      --duration 6 --warmup 2 --out "$OUT/ph-$label-$r.json" > "$OUT/ph-$label-$r.log" 2>&1
  done
done
