#!/usr/bin/env bash
# Ingest and query capacity of a Needle cluster of 1, 2 and 3 nodes on this
# machine: for each size, a cluster on loopback (scripts/cluster.sh: three
# etcd members, NODES Needle nodes), an index of as many shards as nodes fed
# by `needle-bench bulk` through the first node, then `needle-bench capacity`
# (the highest open-loop rate whose p99 stays under P99_MS) with every
# search sent to the first node, which coordinates it over the shards.
# Every process shares this machine's cores: the figures show what the
# coordination costs and how the work spreads, not what more machines add.
#
#   scripts/cluster_bench.sh OUT_DIR
#
# Settings (environment): CORPUS (default ../shared/data/corpus.jsonl.gz),
# WORKLOAD (a workload file of `needle-bench workload`, required), SIZES
# ("1 2 3"), P99_MS (50), THREADS (16 connections), START_RATE (100).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: scripts/cluster_bench.sh OUT_DIR}"
CORPUS="${CORPUS:-$root/../shared/data/corpus.jsonl.gz}"
WORKLOAD="${WORKLOAD:?WORKLOAD: a workload file, e.g. wl/real/realistic.txt (bench/README.md, section 4)}"
SIZES="${SIZES:-1 2 3}"
B="$root/target/release/needle-bench"
[[ -x "$B" && -x "$root/target/release/needle" ]] || (cd "$root" && cargo build --release -p needle-bench -p needle-cli)
mkdir -p "$out"
url="http://127.0.0.1:$((${NODE_PORT:-9210} + 1))"  # the first node of scripts/cluster.sh

for n in $SIZES; do
  dir="$(mktemp -d)"
  DIR="$dir" NODES="$n" "$root/scripts/cluster.sh" up
  trap 'DIR="$dir" "$root/scripts/cluster.sh" down' EXIT
  # Every node has seen the others before the shards are placed.
  for _ in $(seq 100); do
    [[ "$(curl -fsS "$url/_cat/nodes?h=name" | wc -l)" -ge "$n" ]] && break
    sleep 0.1
  done
  "$B" bulk --url "$url" --index sotu --corpus "$CORPUS" --settings "{\"number_of_shards\": $n}" \
    --out "$out/bulk-$n.json"
  curl -fsS "$url/_cat/shards?v" | tee "$out/shards-$n.txt"
  "$B" capacity --engine http --label "cluster-$n" --engine-arg=--url="$url" --index sotu \
    --threads "${THREADS:-16}" --workload "$WORKLOAD" --start-rate "${START_RATE:-100}" \
    --p99-ms "${P99_MS:-50}" --out "$out/capacity-$n.json"
  DIR="$dir" "$root/scripts/cluster.sh" down
  trap - EXIT
  rm -rf "$dir"
done
python3 - "$out" $SIZES <<'PY' | tee "$out/summary.txt"
import json, sys
out, sizes = sys.argv[1], sys.argv[2:]
print("nodes  bulk docs/s  capacity q/s (p99 bound)")
for n in sizes:
    bulk = json.load(open(f"{out}/bulk-{n}.json"))
    cap = json.load(open(f"{out}/capacity-{n}.json"))
    print(f"{n:>5}  {bulk['docs_per_second']:>11.0f}  {cap.get('capacity_qps')}")
PY
