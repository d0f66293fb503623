#!/usr/bin/env bash
# Field values in-process (Needle, tantivy, Lucene) and over HTTP (needle serve,
# OpenSearch with its request cache on, then off), ROUNDS rounds, each engine
# after the other. Needs the indexes of bench/README.md section 7a in IDX
# (needle-values, lucene-values, tantivy-values), and both servers running with
# the index `values` loaded by `needle-bench bulk --mapping` (see README.md here).
#   run.sh IDX NEEDLE_URL OPENSEARCH_URL ROUNDS OUT
set -euo pipefail
IDX=$1 NEEDLE=$2 OS=$3 ROUNDS=$4 OUT=$5
B=target/release/needle-bench
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  d=$OUT/r$r; mkdir -p "$d"
  $B values --engine needle --index "$IDX/needle-values" --answers-dir "$d/answers" --out "$d/needle.json"
  $B values --engine tantivy --index "$IDX/tantivy-values" --answers-dir "$d/answers" --out "$d/tantivy.json"
  JAVA_OPTS='-Xms2g -Xmx2g' $B values --engine lucene --warmup 1500 --index "$IDX/lucene-values" \
    --answers-dir "$d/answers" --out "$d/lucene.json"
  $B values --engine http --label needle-http --index values --engine-arg=--url="$NEEDLE" \
    --warmup 1000 --answers-dir "$d/answers" --out "$d/needle-http.json"
  curl -s -XPUT "$OS/values/_settings" -H 'content-type: application/json' \
    -d '{"index.requests.cache.enable": true}' > /dev/null
  $B values --engine http --label opensearch-http --index values --engine-arg=--url="$OS" \
    --warmup 1000 --answers-dir "$d/answers" --out "$d/opensearch-http.json"
  curl -s -XPUT "$OS/values/_settings" -H 'content-type: application/json' \
    -d '{"index.requests.cache.enable": false}' > /dev/null
  $B values --engine http --label opensearch-nocache-http --index values --engine-arg=--url="$OS" \
    --warmup 1000 --answers-dir "$d/answers" --out "$d/opensearch-nocache-http.json"
  $B compare-values --answers-dir "$d/answers" --reference needle > "$d/compare.txt" || true
done
