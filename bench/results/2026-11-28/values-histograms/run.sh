#!/usr/bin/env bash
# Three rounds of `needle-bench values`: Needle before (OLD, a build of d5639b2's aggregation code) and
# after (NEW) the histogram and stats changes, tantivy and Lucene, one after the other on the same
# indexes (bench/README.md 7a). IDX: the folder of the three indexes. The rounds are those of
# 2026-11-27/values-dense, written here.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
OUT="$R" exec "$R/../../2026-11-27/values-dense/run.sh"
