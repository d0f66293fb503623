#!/usr/bin/env bash
# Issue 19's partition test (its test 5), on one machine, as root: scripts/cluster.sh with
# NETNS=1 puts member i (etcd member, NATS server and Needle node i) in network namespace
# needle-i, all joined by one bridge, with a LEASE-second lease (default 3). An index of three
# shards with one replica each is loaded through node 2; then every node is sent a `_bulk` of
# twelve new documents every 200 ms while member 1 is cut off (its link to the bridge down) for
# CUT seconds (default 20), then healed. The report (OUT/round<N>.json) holds:
# - the writes each node acknowledged before, during and after the cut (node 1, cut off from
#   the quorums of etcd and NATS, must acknowledge none once cut);
# - the time from the cut to the first `_bulk` through node 2 acknowledged whole, and to the
#   first count through node 2 with no shard failing (the failover window);
# - after the heal: the time until node 1 is in the cluster again and the index green, and
#   whether every acknowledged document is found through every node (`lost` must be 0).
# NEEDLE, the binary (target/release/needle by default). ROUNDS rounds; KEEP=1 keeps each round's folder (the processes' logs). Every process shares
# the machine's cores.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-bench/results/2026-11-29/partition}
export LEASE=${LEASE:-3} NETNS=1
CUT=${CUT:-20}
export NEEDLE=${NEEDLE:-$PWD/target/release/needle}
[[ -x "$NEEDLE" ]] || cargo build --release -p needle-cli
# A round whose cluster never starts every copy of the index (set-up, before anything is cut:
# exit 3) shows the nodes' logs and is run once more on a fresh cluster; any other failure ends the run.
round=1 setup_failures=0
while (( round <= ${ROUNDS:-1} )); do
  dir="$(mktemp -d)"
  # A failed round shows the ends of the nodes' logs before its folder goes.
  trap 'rc=$?; [[ $rc -eq 0 ]] || tail -n 40 "$dir"/node-*.log >&2 || true
        DIR="$dir" scripts/cluster.sh down >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
  DIR="$dir" scripts/cluster.sh up
  set +e
  DIR="$dir" python3 - "$OUT/round$round.json" "$CUT" <<'PY'
import json, os, subprocess, sys, threading, time, urllib.request

out, cut_seconds = sys.argv[1], float(sys.argv[2])
nodes = {i: f"http://10.231.0.{i}:{9210 + i}" for i in (1, 2, 3)}

def call(node, method, path, body=None, timeout=20):
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(nodes[node] + path, data=data, method=method,
                                 headers={"content-type": "application/x-ndjson"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        try:
            return json.load(e)
        except Exception:
            return None
    except Exception:
        return None

def wait(what, test, limit=60, setup=False):
    started = time.monotonic()
    while not test():
        if time.monotonic() - started > limit:
            print(f"{what}: not after {limit} s", file=sys.stderr)
            sys.exit(3 if setup else 1)
        time.sleep(0.1)
    return round(time.monotonic() - started, 2)

def bulk_lines(ids):
    return "".join(json.dumps({"index": {"_id": i}}) + "\n" + json.dumps({"n": n, "body": "partition test"}) + "\n"
                   for n, i in enumerate(ids))

def cluster(*args):
    subprocess.run(["scripts/cluster.sh", *args], check=True, env=os.environ)

for i in nodes:
    wait(f"node {i} sees 3 nodes", lambda: (call(i, "GET", "/_cluster/health") or {}).get("number_of_nodes") == 3, setup=True)
made = call(2, "PUT", "/logs", json.dumps({"settings": {"number_of_shards": 3, "number_of_replicas": 1}}))
assert made and made.get("acknowledged"), made
def started_copies():
    return sum(1 for s in call(2, "GET", "/_cat/shards/logs?format=json") or [] if s["state"] == "STARTED")
# Set-up, not what is tested: a loaded machine may take longer than a minute.
wait("every copy started", lambda: started_copies() == 6, limit=120, setup=True)
loaded = [f"pre-{n}" for n in range(3000)]
answer = call(2, "POST", "/logs/_bulk?refresh=true", bulk_lines(loaded), timeout=120)
assert answer and not answer["errors"], answer
shards = call(2, "GET", "/_cat/shards/logs?format=json")
shards_of_1 = [s for s in shards if s["node"] == "node-1"]

events = {}
acknowledged = {i: [] for i in nodes}   # (time, id) a node acknowledged
refused = {i: 0 for i in nodes}
reasons = {}  # (node, why an item was refused) -> [first, last] time after the cut
first_whole_write = None
stop = threading.Event()

def writer(node):
    global first_whole_write
    batch = 0
    while not stop.is_set():
        ids = [f"w{node}-{batch}-{j}" for j in range(12)]
        batch += 1
        sent = time.monotonic()
        answer = call(node, "POST", "/logs/_bulk", bulk_lines(ids))
        items = (answer or {}).get("items", [])
        done = time.monotonic()
        ok = [it["index"]["_id"] for it in items if it["index"]["status"] < 300]
        whys = {it["index"].get("error", {}).get("reason", "")[:90] for it in items if it["index"]["status"] >= 300}
        if answer is None:
            whys = {"no answer in 20 s"}
        for why in whys:
            at = round(done - events.get("cut", done), 1)
            reasons.setdefault(f"node {node}: {why}", [at, at])[1] = at
        acknowledged[node].extend((done, i) for i in ok)
        refused[node] += len(ids) - len(ok)
        if node == 2 and len(ok) == 12 and "cut" in events and sent > events["cut"] and first_whole_write is None:
            first_whole_write = round(done - events["cut"], 2)
        time.sleep(0.2)

threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in nodes]
for t in threads:
    t.start()
time.sleep(3)
cluster("cut", "1")
events["cut"] = time.monotonic()
first_full_count = None
while time.monotonic() - events["cut"] < cut_seconds:
    if first_full_count is None:
        counted = call(2, "GET", "/logs/_count", timeout=70)
        if counted and counted["_shards"]["failed"] == 0:
            first_full_count = round(time.monotonic() - events["cut"], 2)
    time.sleep(0.2)
cluster("heal", "1")
events["heal"] = time.monotonic()
rejoined = wait("node 1 back", lambda: (call(2, "GET", "/_cluster/health") or {}).get("number_of_nodes") == 3, 90)
wait("green", lambda: (call(2, "GET", "/_cluster/health") or {}).get("status") == "green", 90)
green_after_heal = round(time.monotonic() - events["heal"], 2)
time.sleep(10)
stop.set()
for t in threads:
    t.join()

def phase(t):
    if t < events["cut"]:
        return "before"
    return "during" if t < events["heal"] else "after"

by_phase = {i: {"before": 0, "during": 0, "after": 0} for i in nodes}
for i, acks in acknowledged.items():
    for t, _ in acks:
        by_phase[i][phase(t)] += 1
# Writes node 1 acknowledged once cut, past the ones in flight at the cut (a publish waits 5 s at most).
minority_late = sum(1 for t, _ in acknowledged[1] if events["cut"] + 6 < t < events["heal"])
call(2, "POST", "/logs/_refresh")
wanted = set(loaded) | {i for acks in acknowledged.values() for _, i in acks}
found = {}
def every_id(node):
    """Every `_id` through `node` by a scroll, or None when a shard failed."""
    page = call(node, "POST", "/logs/_search?scroll=1m", json.dumps({"size": 1000, "_source": False}), timeout=60)
    ids = set()
    while page and page["_shards"]["failed"] == 0 and page["hits"]["hits"]:
        ids |= {h["_id"] for h in page["hits"]["hits"]}
        page = call(node, "POST", "/_search/scroll", json.dumps({"scroll": "1m", "scroll_id": page["_scroll_id"]}))
    return ids if page and page["_shards"]["failed"] == 0 else None

for node in nodes:
    read = {}
    read_whole = wait(f"every shard answering through node {node}",
                      lambda: read.update(ids=every_id(node)) or read["ids"] is not None)
    ids = read["ids"]
    found[node] = {"count": call(node, "GET", "/logs/_count")["count"], "missing": len(wanted - ids),
                   "read_whole_after_s": read_whole}
report = {
    "lease_ttl_s": float(os.environ["LEASE"]), "cut_s": cut_seconds,
    "shards_on_node_1_before": [(s["shard"], s["prirep"]) for s in shards_of_1],
    "acknowledged_by_node": by_phase, "refused_by_node": refused,
    "node_1_acknowledged_while_cut_after_6_s": minority_late,
    "first_whole_write_through_node_2_after_cut_s": first_whole_write,
    "first_full_count_through_node_2_after_cut_s": first_full_count,
    "node_1_in_the_cluster_again_after_heal_s": rejoined,
    "green_after_heal_s": green_after_heal,
    "shards_on_node_1_after": [(s["shard"], s["prirep"]) for s in call(2, "GET", "/_cat/shards/logs?format=json")
                               if s["node"] == "node-1"],
    "refusals_seconds_after_cut": reasons,
    "acknowledged_total": len(wanted), "found": found,
    "lost": max(f["missing"] for f in found.values()),
}
json.dump(report, open(out, "w"), indent=1)
print(json.dumps(report, indent=1))
assert minority_late == 0, "the cut-off node acknowledged writes"
assert report["lost"] == 0, "acknowledged writes lost"
PY
  rc=$?
  set -e
  if (( rc == 3 && setup_failures == 0 )); then
    setup_failures=1
    tail -n 40 "$dir"/node-*.log >&2 || true
    # Where each node's threads are (Needle's server and cluster frames), when gdb is here.
    if command -v gdb >/dev/null; then
      for pidfile in "$dir"/node-*.pid; do
        echo "== threads of $(basename "$pidfile" .pid)"
        gdb -p "$(cat "$pidfile")" -batch -ex "thread apply all bt 40" 2>/dev/null |
          grep -E '^Thread| in (needle_server|needle_cluster)::' | head -n 200 || true
      done >&2
    fi
    DIR="$dir" scripts/cluster.sh down >/dev/null 2>&1 || true
    rm -rf "$dir"
    trap - EXIT
    echo "round $round: the cluster did not start every copy; once more on a fresh one" >&2
    continue
  fi
  (( rc == 0 )) || exit "$rc"
  DIR="$dir" scripts/cluster.sh down
  if [[ -n "${KEEP:-}" ]]; then echo "logs kept in $dir"; else rm -rf "$dir"; fi
  trap - EXIT
  round=$((round + 1))
done
