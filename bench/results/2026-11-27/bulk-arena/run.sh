#!/usr/bin/env bash
# `_bulk` ingest of the shared corpus (1,000-document batches, 2 connections,
# then a refresh and a force-merge to one segment), ROUNDS rounds of: the
# Needle server before this change (OLD: its `needle` binary), today's, and an
# OpenSearch node already running on port 9201 (../shared/opensearch, 12 GB heap;
# OS_HOME names its home when it is not ../shared/opensearch/home).
#   bench/results/2026-11-27/bulk-arena/run.sh OLD ROUNDS OUTDIR
set -euo pipefail
OLD=$1; ROUNDS=${2:-2}; OUT=$3
C=../shared/data/corpus.jsonl.gz
B=target/release/needle-bench
OSPID=$(cat "${OS_HOME:-../shared/opensearch/home}/opensearch.pid")
needle_bulk() {
  local name=$1 bin=$2 r=$3
  local data; data=$(mktemp -d)
  "$bin" serve --data "$data" --bind 127.0.0.1:9202 > "$data.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -sf 127.0.0.1:9202 > /dev/null && break; sleep 0.1; done
  $B bulk --url http://127.0.0.1:9202 --index sotu --corpus $C --forcemerge --server-pid $pid \
    --out "$OUT/bulk-$name.round$r.json"
  kill "$pid"; wait "$pid" || true
  rm -rf "$data" "$data.log"
}
for r in $(seq "${FIRST:-1}" "$ROUNDS"); do
  needle_bulk needle-before "$OLD" "$r"
  needle_bulk needle target/release/needle "$r"
  $B bulk --url http://127.0.0.1:9201 --index sotu --corpus $C --forcemerge --server-pid "$OSPID" \
    --out "$OUT/bulk-opensearch.round$r.json"
done
