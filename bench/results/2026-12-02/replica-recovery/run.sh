#!/usr/bin/env bash
# How long a replica takes to be made: scripts/cluster.sh up (three etcd members, three NATS
# servers, three nodes; with a segment store unless STORE=0), the shared corpus bulk-loaded into
# an index of three shards without replicas, flushed and left 5 s (with the store: each shard's
# commit stored, its stream trimmed), then `number_of_replicas` set to 1 and the time taken
# until `_cluster/health?wait_for_status=green` answers (every replica filled and served; a copy
# being made counts as initializing). ROUNDS rounds; the report goes to OUT.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-bench/results/2026-12-02/replica-recovery}
CORPUS=${CORPUS:-../shared/data/corpus.jsonl.gz}
base=http://127.0.0.1:9211
for round in $(seq 1 "${ROUNDS:-2}"); do
  dir="$(mktemp -d)"
  DIR="$dir" scripts/cluster.sh up
  for _ in $(seq 100); do
    [[ "$(curl -fsS $base/_cat/nodes?h=name | wc -l)" -ge 3 ]] && break
    sleep 0.1
  done
  target/release/needle-bench bulk --url $base --index sotu --corpus "$CORPUS" \
    --settings '{"number_of_shards": 3}' --out "$dir/bulk.json"
  curl -fsS -XPOST $base/sotu/_flush >/dev/null
  sleep 5
  python3 - "$OUT/round$round-store${STORE:-1}.json" <<'PY'
import json, os, sys, time, urllib.request
out = sys.argv[1]
base = "http://127.0.0.1:9211"
def call(method, path, body=None):
    req = urllib.request.Request(base + path, data=body and json.dumps(body).encode(), method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=200) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
count = call("GET", "/sotu/_count")[1]["count"]
started = time.monotonic()
status, _ = call("PUT", "/sotu/_settings", {"index": {"number_of_replicas": 1}})
assert status == 200, status
status, health = call("GET", "/_cluster/health?wait_for_status=green&timeout=180s")
took = round(time.monotonic() - started, 2)
shards = call("GET", "/_cat/shards/sotu?format=json")[1]
copies = {}
for s in shards:
    copies.setdefault(s["shard"], []).append(int(s["docs"] or 0))
report = {"documents": count, "store": os.environ.get("STORE", "1") != "0", "green": status == 200,
          "replicas_green_after_s": took, "health": health, "docs_per_copy": copies,
          "copies_agree": all(len(set(c)) == 1 for c in copies.values())}
json.dump(report, open(out, "w"), indent=1)
print(json.dumps({k: v for k, v in report.items() if k != "health"}))
PY
  DIR="$dir" scripts/cluster.sh down
  rm -rf "$dir"
done
