#!/usr/bin/env bash
# `_bulk` ingest of the shared corpus into a cluster on this machine, with and
# without the ingest log: scripts/cluster.sh (three etcd members; with LOG=1,
# three NATS servers with JetStream, each shard's stream in three copies),
# NODES nodes, an index of as many shards, `needle-bench bulk` (1,000-document
# requests, two in flight) through the first node. ROUNDS rounds, the two
# alternating; every process shares the machine's cores.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-bench/results/2026-11-29/cluster-log}
CORPUS=${CORPUS:-../shared/data/corpus.jsonl.gz}
B=target/release/needle-bench
for round in $(seq 1 "${ROUNDS:-2}"); do
  for nodes in ${SIZES:-1 3}; do
    for log in 0 1; do
      dir="$(mktemp -d)"
      DIR="$dir" NODES="$nodes" LOG="$log" scripts/cluster.sh up
      for _ in $(seq 100); do
        [[ "$(curl -fsS http://127.0.0.1:9211/_cat/nodes?h=name | wc -l)" -ge "$nodes" ]] && break
        sleep 0.1
      done
      "$B" bulk --url http://127.0.0.1:9211 --index sotu --corpus "$CORPUS" \
        --settings "{\"number_of_shards\": $nodes}" --out "$OUT/bulk-nodes$nodes-log$log.round$round.json"
      DIR="$dir" scripts/cluster.sh down
      rm -rf "$dir"
    done
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
print("file  docs/s")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "bulk-*.json"))):
    print(os.path.basename(f), round(json.load(open(f))["docs_per_second"]))
PY
