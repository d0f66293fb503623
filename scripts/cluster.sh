#!/usr/bin/env bash
# A local Needle cluster on loopback, with no containers: three etcd members
# (Debian's etcd-server) keeping the membership, three NATS servers with
# JetStream (Debian's nats-server) keeping each shard's ingest log in three
# copies, and three `needle serve` nodes joined to them. Each process's PID is
# recorded in the cluster's folder; `down` stops exactly those.
#
#   scripts/cluster.sh up       start it (the nodes serve on ports 9211-9213)
#   scripts/cluster.sh status   each node's `_cat/nodes`
#   scripts/cluster.sh down     stop every process it started
#
# Settings (environment): DIR, the cluster's folder (default: ./cluster-data);
# NEEDLE, the binary (default: target/release/needle, built if missing);
# NODES, how many Needle nodes (default 3; the first serves on NODE_PORT + 1);
# LOG=0, nodes that keep their writes on their own disks only (no NATS);
# NODE_PORT (9210), ETCD_PORT (23790) and NATS_PORT (4230), the ports before
# the first node's, the first etcd member's and the first NATS server's client
# port (etcd peers: ETCD_PORT + 10 + i; NATS routes: NATS_PORT + 10 + i).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${DIR:-$PWD/cluster-data}"
NEEDLE="${NEEDLE:-$root/target/release/needle}"
NODE_PORT="${NODE_PORT:-9210}"
ETCD_PORT="${ETCD_PORT:-23790}"
NATS_PORT="${NATS_PORT:-4230}"
members=(1 2 3)
nodes=($(seq "${NODES:-3}"))

etcd_urls() {
  local urls=()
  for i in "${members[@]}"; do urls+=("http://127.0.0.1:$((ETCD_PORT + i))"); done
  (IFS=,; echo "${urls[*]}")
}

nats_urls() {
  local urls=()
  for i in "${members[@]}"; do urls+=("nats://127.0.0.1:$((NATS_PORT + i))"); done
  (IFS=,; echo "${urls[*]}")
}

# Waits up to 30 s for something to listen on port $1.
wait_port() {
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1 after 30 s (see $DIR/*.log)" >&2
  return 1
}

# Three NATS servers with JetStream, routed to each other as one cluster.
start_nats() {
  local routes=()
  for i in "${members[@]}"; do routes+=("nats://127.0.0.1:$((NATS_PORT + 10 + i))"); done
  routes="$(IFS=,; echo "${routes[*]}")"
  for i in "${members[@]}"; do
    nats-server -js -n "nats-$i" -a 127.0.0.1 -p $((NATS_PORT + i)) -sd "$DIR/nats-$i" \
      --cluster_name needle-log --cluster "nats://127.0.0.1:$((NATS_PORT + 10 + i))" --routes "$routes" \
      >"$DIR/nats-$i.log" 2>&1 &
    echo $! >"$DIR/nats-$i.pid"
  done
  for i in "${members[@]}"; do wait_port $((NATS_PORT + i)); done
  # JetStream answers once its servers have elected a leader for its metadata.
  for _ in $(seq 150); do
    grep -q "JetStream cluster new metadata leader\|Self is new JetStream cluster metadata leader" "$DIR"/nats-*.log && break
    sleep 0.2
  done
}

up() {
  command -v etcd >/dev/null || { echo "etcd is not installed: apt-get install etcd-server" >&2; exit 1; }
  local log=()
  if [[ "${LOG:-1}" != 0 ]]; then
    command -v nats-server >/dev/null || { echo "nats-server is not installed: apt-get install nats-server" >&2; exit 1; }
    log=(--log "nats=$(nats_urls)")
  fi
  if [[ ! -x "$NEEDLE" ]]; then
    (cd "$root" && cargo build --release -p needle-cli)
  fi
  mkdir -p "$DIR"
  if compgen -G "$DIR/*.pid" >/dev/null; then
    echo "$DIR holds a running cluster's PIDs: scripts/cluster.sh down first" >&2
    exit 1
  fi
  local initial=()
  for i in "${members[@]}"; do initial+=("e$i=http://127.0.0.1:$((ETCD_PORT + 10 + i))"); done
  initial="$(IFS=,; echo "${initial[*]}")"
  for i in "${members[@]}"; do
    local client="http://127.0.0.1:$((ETCD_PORT + i))" peer="http://127.0.0.1:$((ETCD_PORT + 10 + i))"
    etcd --name "e$i" --data-dir "$DIR/etcd-$i" \
      --listen-client-urls "$client" --advertise-client-urls "$client" \
      --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
      --initial-cluster "$initial" --initial-cluster-state new \
      >"$DIR/etcd-$i.log" 2>&1 &
    echo $! >"$DIR/etcd-$i.pid"
  done
  for i in "${members[@]}"; do wait_port $((ETCD_PORT + i)); done
  [[ ${#log[@]} -eq 0 ]] || start_nats
  for i in "${nodes[@]}"; do
    "$NEEDLE" serve --data "$DIR/node-$i" --bind "127.0.0.1:$((NODE_PORT + i))" \
      --cluster "etcd=$(etcd_urls)" --node-id "node-$i" "${log[@]}" >"$DIR/node-$i.log" 2>&1 &
    echo $! >"$DIR/node-$i.pid"
  done
  for i in "${nodes[@]}"; do wait_port $((NODE_PORT + i)); done
  local logged=""
  [[ ${#log[@]} -eq 0 ]] || logged=", NATS on $(nats_urls)"
  echo "cluster up: nodes on http://127.0.0.1:$((NODE_PORT + 1))-$((NODE_PORT + ${#nodes[@]})), etcd on $(etcd_urls)$logged"
}

status() {
  for i in "${nodes[@]}"; do
    echo "node-$i (http://127.0.0.1:$((NODE_PORT + i))):"
    curl -fsS "http://127.0.0.1:$((NODE_PORT + i))/_cat/nodes?v&h=ip,name,master" || echo "  not answering"
  done
}

down() {
  # The nodes first, so they leave the cluster while etcd is still there.
  local pidfile pid
  for pidfile in "$DIR"/node-*.pid "$DIR"/etcd-*.pid "$DIR"/nats-*.pid; do
    [[ -e "$pidfile" ]] || continue
    pid="$(cat "$pidfile")"
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$pidfile"
  done
  echo "cluster down (data kept in $DIR)"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  down) down ;;
  *) echo "usage: scripts/cluster.sh up|status|down" >&2; exit 2 ;;
esac
