#!/usr/bin/env bash
# Needle's server with its request cache off, ROUNDS rounds, beside OpenSearch with its cache off.
set -euo pipefail
NEEDLE=$1 OS=$2 ROUNDS=$3 OUT=$4
B=target/release/needle-bench
for r in $(seq 1 "$ROUNDS"); do
  d=$OUT/r$r; mkdir -p "$d"
  for url in "$NEEDLE" "$OS"; do
    curl -s -XPUT "$url/values/_settings" -H 'content-type: application/json' \
      -d '{"index.requests.cache.enable": false}' > /dev/null
  done
  $B values --engine http --label needle-nocache-http --index values --engine-arg=--url="$NEEDLE" \
    --warmup 1000 --answers-dir "$d/answers" --out "$d/needle-nocache-http.json"
  $B values --engine http --label opensearch-nocache-http --index values --engine-arg=--url="$OS" \
    --warmup 1000 --answers-dir "$d/answers" --out "$d/opensearch-nocache-http.json"
  curl -s -XPUT "$NEEDLE/values/_settings" -H 'content-type: application/json' \
    -d '{"index.requests.cache.enable": true}' > /dev/null
  $B compare-values --answers-dir "$d/answers" --reference needle-nocache-http > "$d/compare.txt" || true
done
