#!/usr/bin/env bash
# Numeric updates at 1,000/s while two clients search sorted by last_modified (bench/README.md
# section 7), three rounds alternating the build before (BEFORE) and after (AFTER) the change.
# VB: the folder of values.jsonl and needle-values; WL: the realistic workload.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
for round in 1 2 3; do
  for v in BEFORE AFTER; do
    rm -rf /tmp/upd-work
    "${!v}" updates --engine needle --engine-arg=--durability=volatile --base-index "$VB/needle-values" \
      --work-dir /tmp/upd-work --docs "$VB/values.jsonl" --workload "$WL" --duration 20 --warmup 5 --idle 5 \
      --methods numeric --rates 1000 --out "$R/round$round-${v,,}.json"
  done
done
