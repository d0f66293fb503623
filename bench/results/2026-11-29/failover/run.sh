#!/usr/bin/env bash
# The failover window of a cluster on this machine: scripts/cluster.sh (three etcd members,
# three NATS servers with JetStream, three Needle nodes logging to them, the default 10 s
# lease), the shared corpus bulk-loaded into an index of three shards through node 1, then
# node 3 killed with SIGKILL. Node 1 is asked every 100 ms for a count of every shard and
# to index 30 documents (their ids spread over the shards); the report is the time from the
# kill to the first count with no shard failing and to the first fully acknowledged write.
# SETTINGS, the index's settings (default {"number_of_shards": 3}; with "number_of_replicas": 1,
# the failover of a cluster with replicas). ROUNDS rounds. Every process shares the machine's cores.
# The index is flushed and left 5 s before the kill, so that with a segment store (scripts/cluster.sh
# stores commits unless STORE=0) the shards' commits are stored and their streams trimmed; LEASE
# sets the nodes' lease (10 s when unset).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-bench/results/2026-11-29/failover}
CORPUS=${CORPUS:-../shared/data/corpus.jsonl.gz}
for round in $(seq 1 "${ROUNDS:-2}"); do
  dir="$(mktemp -d)"
  DIR="$dir" scripts/cluster.sh up
  for _ in $(seq 100); do
    [[ "$(curl -fsS http://127.0.0.1:9211/_cat/nodes?h=name | wc -l)" -ge 3 ]] && break
    sleep 0.1
  done
  target/release/needle-bench bulk --url http://127.0.0.1:9211 --index sotu --corpus "$CORPUS" \
    --settings "${SETTINGS:-{\"number_of_shards\": 3\}}" --out "$dir/bulk.json"
  curl -fsS -XPOST http://127.0.0.1:9211/sotu/_refresh >/dev/null
  curl -fsS -XPOST http://127.0.0.1:9211/sotu/_flush >/dev/null
  sleep 5
  python3 - "$dir" "$OUT/round$round.json" <<'PY'
import json, os, signal, subprocess, sys, time, urllib.request
dir, out = sys.argv[1], sys.argv[2]
base = "http://127.0.0.1:9211"
def call(method, path, body=None):
    req = urllib.request.Request(base + path, data=body, method=method,
                                 headers={"content-type": "application/x-ndjson"})
    try:
        with urllib.request.urlopen(req, timeout=70) as r:
            return json.load(r)
    except Exception:
        return None
total = call("GET", "/sotu/_count")["count"]
shard = [n for n in os.listdir(f"{dir}/node-3/indices") if n.startswith("sotu.shard-")]
pid = int(open(f"{dir}/node-3.pid").read())
os.kill(pid, signal.SIGKILL)
killed = time.monotonic()
first = {"count": None, "write": None}
probes = acknowledged = 0
while time.monotonic() - killed < 180 and None in first.values():
    probes += 1
    now = lambda: round(time.monotonic() - killed, 2)
    if first["count"] is None:
        c = call("GET", "/sotu/_count")
        if c and c["_shards"]["failed"] == 0 and c["count"] >= total:
            first["count"] = now()
    if first["write"] is None:
        lines = "".join(json.dumps({"index": {"_id": f"probe-{probes}-{i}"}}) + "\n" + json.dumps({"n": i}) + "\n"
                        for i in range(30))
        w = call("POST", "/sotu/_bulk", lines.encode())
        if w:
            acknowledged += sum(1 for item in w["items"] if item["index"]["status"] < 300)
        if w and not w["errors"]:
            first["write"] = now()
    time.sleep(0.1)
call("POST", "/sotu/_refresh")
final = call("GET", "/sotu/_count")
moved = [l for n in (1, 2) for l in open(f"{dir}/node-{n}.log") if "placed (gone" in l]
report = {"documents": total, "killed_node_shard": shard, "lease_ttl_s": int(os.environ.get("LEASE") or 10),
          "store": os.environ.get("STORE", "1") != "0",
          "settings": json.loads(os.environ.get("SETTINGS") or '{"number_of_shards": 3}'),
          "first_full_count_s": first["count"], "first_acknowledged_write_s": first["write"],
          "manager_log": moved,
          "acknowledged_probe_docs": acknowledged, "count_after": final["count"],
          "lost": total + acknowledged - final["count"]}
json.dump(report, open(out, "w"), indent=1)
print(json.dumps(report))
PY
  DIR="$dir" scripts/cluster.sh down
  rm -rf "$dir"
done
