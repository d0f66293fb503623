#!/usr/bin/env bash
# `needle-bench values` on the 1 GB scaled corpus with values, Needle and tantivy each in a 512 MB
# memory cgroup (bench/README.md 7a with --memory 512MB), the request kinds that trailed on
# 2026-11-27 (bench/results/2026-11-27/values-scaled-1g-512mb, whose run.sh makes the corpus and
# indexes). B: the needle-bench build; IDX: the folder of the indexes.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
A="$R/answers"
M="--memory 512MB --warmup 50 --runs 300 --only floor,terms_all,terms_10pct,count_range,match_range_filter"
"$B" values --engine needle --index "$IDX/needle-values" --answers-dir "$A" $M --out "$R/needle.json"
"$B" values --engine tantivy --index "$IDX/tantivy-values" --answers-dir "$A" $M --out "$R/tantivy.json"
"$B" compare-values --answers-dir "$A" --reference needle || true
