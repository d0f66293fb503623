#!/usr/bin/env bash
# `needle-bench values` on a 1 GB scaled corpus with values, each engine in a 512 MB memory
# cgroup, one after the other (bench/README.md 7a with --memory 512MB). Corpus and indexes:
#   $B scale --corpus ../shared/data/corpus.jsonl.gz --out scaled-1g.jsonl.gz --size 1GB --doc-len 1KB --seed 42
#   $B with-values --corpus scaled-1g.jsonl.gz --out values.jsonl
#   $B index-needle --corpus values.jsonl --index needle-values
#   tantivy-peer index --corpus values.jsonl --index tantivy-values
#   bench/peers/lucene/run.sh needle.bench.BenchIndex --corpus values.jsonl --index lucene-values
# B: the needle-bench build (9d63f7c); IDX: the folder of the indexes.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
A="$R/answers"
M="--memory 512MB --warmup 50 --runs 300"
"$B" values --engine needle --index "$IDX/needle-values" --answers-dir "$A" $M --out "$R/needle.json"
"$B" values --engine tantivy --index "$IDX/tantivy-values" --answers-dir "$A" $M --out "$R/tantivy.json"
JAVA_OPTS='-Xms256m -Xmx256m' "$B" values --engine lucene --index "$IDX/lucene-values" --answers-dir "$A" \
  --memory 512MB --warmup 500 --runs 300 --out "$R/lucene.json"
"$B" compare-values --answers-dir "$A" --reference needle || true
