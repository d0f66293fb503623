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
#   scripts/cluster.sh cut N    (NETNS=1) cut member N (its etcd, NATS server and
#                               node) off the others: its link to the bridge down
#   scripts/cluster.sh heal N   (NETNS=1) bring that link back up
#
# Settings (environment): DIR, the cluster's folder (default: ./cluster-data);
# NEEDLE, the binary (default: target/release/needle, built if missing);
# NODES, how many Needle nodes (default 3; the first serves on NODE_PORT + 1);
# LOG=0, nodes that keep their writes on their own disks only (no NATS);
# STORE=0, no segment store (by default the nodes store their shards' commits
# in $DIR/store, so a copy made elsewhere starts from them and streams are trimmed);
# NODE_PORT (9210), ETCD_PORT (23790) and NATS_PORT (4230), the ports before
# the first node's, the first etcd member's and the first NATS server's client
# port (etcd peers: ETCD_PORT + 10 + i; NATS routes: NATS_PORT + 10 + i);
# LEASE, the nodes' lease in seconds (their default, 10, when unset);
# NETNS=1 (as root), member i (etcd member, NATS server and node i) in network
# namespace needle-i at 10.231.0.i, joined by the bridge needle-br (the host is
# 10.231.0.254 on it), so that `cut` can partition one member from the others.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${DIR:-$PWD/cluster-data}"
NEEDLE="${NEEDLE:-$root/target/release/needle}"
NODE_PORT="${NODE_PORT:-9210}"
ETCD_PORT="${ETCD_PORT:-23790}"
NATS_PORT="${NATS_PORT:-4230}"
members=(1 2 3)
nodes=($(seq "${NODES:-3}"))
NETNS="${NETNS:-0}"

# The address member $1 listens on.
host() {
  if [[ "$NETNS" == 1 ]]; then echo "10.231.0.$1"; else echo 127.0.0.1; fi
}

# Sets `run_as` to what runs a command as member $1 (in its namespace with NETNS=1):
# `"${run_as[@]}" command &` records the command's own PID in `$!` (ip execs it).
as_member() {
  run_as=()
  [[ "$NETNS" != 1 ]] || run_as=(ip netns exec "needle-$1")
}

etcd_urls() {
  local urls=()
  for i in "${members[@]}"; do urls+=("http://$(host "$i"):$((ETCD_PORT + i))"); done
  (IFS=,; echo "${urls[*]}")
}

nats_urls() {
  local urls=()
  for i in "${members[@]}"; do urls+=("nats://$(host "$i"):$((NATS_PORT + i))"); done
  (IFS=,; echo "${urls[*]}")
}

# Waits up to 30 s for something to listen on port $2 of host $1.
wait_port() {
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on $1:$2 after 30 s (see $DIR/*.log)" >&2
  return 1
}

# A namespace a member, each with a link (nv-i, nvp-i inside) to one bridge.
netns_up() {
  ip link add needle-br type bridge
  ip addr add 10.231.0.254/24 dev needle-br
  ip link set needle-br up
  for i in "${members[@]}"; do
    ip netns add "needle-$i"
    ip link add "nv-$i" type veth peer name "nvp-$i"
    ip link set "nvp-$i" netns "needle-$i"
    ip netns exec "needle-$i" ip addr add "10.231.0.$i/24" dev "nvp-$i"
    ip netns exec "needle-$i" ip link set "nvp-$i" up
    ip netns exec "needle-$i" ip link set lo up
    ip link set "nv-$i" master needle-br
    ip link set "nv-$i" up
  done
}

netns_down() {
  for i in "${members[@]}"; do
    ip link del "nv-$i" 2>/dev/null || true
    ip netns del "needle-$i" 2>/dev/null || true
  done
  ip link del needle-br 2>/dev/null || true
}

# Three NATS servers with JetStream, routed to each other as one cluster.
start_nats() {
  local routes=()
  for i in "${members[@]}"; do routes+=("nats://$(host "$i"):$((NATS_PORT + 10 + i))"); done
  routes="$(IFS=,; echo "${routes[*]}")"
  for i in "${members[@]}"; do
    as_member "$i"
    "${run_as[@]}" nats-server -js -n "nats-$i" -a "$(host "$i")" -p $((NATS_PORT + i)) -sd "$DIR/nats-$i" \
      --cluster_name needle-log --cluster "nats://$(host "$i"):$((NATS_PORT + 10 + i))" --routes "$routes" \
      >"$DIR/nats-$i.log" 2>&1 &
    echo $! >"$DIR/nats-$i.pid"
  done
  for i in "${members[@]}"; do wait_port "$(host "$i")" $((NATS_PORT + i)); done
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
    if [[ "${STORE:-1}" != 0 ]]; then log+=(--store "$DIR/store"); fi
  fi
  if [[ ! -x "$NEEDLE" ]]; then
    (cd "$root" && cargo build --release -p needle-cli)
  fi
  mkdir -p "$DIR"
  if compgen -G "$DIR/*.pid" >/dev/null; then
    echo "$DIR holds a running cluster's PIDs: scripts/cluster.sh down first" >&2
    exit 1
  fi
  if [[ "$NETNS" == 1 ]]; then
    [[ ${#nodes[@]} -le ${#members[@]} ]] || { echo "NETNS=1 runs a node a member: NODES <= 3" >&2; exit 1; }
    netns_up
  fi
  local initial=()
  for i in "${members[@]}"; do initial+=("e$i=http://$(host "$i"):$((ETCD_PORT + 10 + i))"); done
  initial="$(IFS=,; echo "${initial[*]}")"
  for i in "${members[@]}"; do
    local client="http://$(host "$i"):$((ETCD_PORT + i))" peer="http://$(host "$i"):$((ETCD_PORT + 10 + i))"
    as_member "$i"
    "${run_as[@]}" etcd --name "e$i" --data-dir "$DIR/etcd-$i" \
      --listen-client-urls "$client" --advertise-client-urls "$client" \
      --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
      --initial-cluster "$initial" --initial-cluster-state new \
      >"$DIR/etcd-$i.log" 2>&1 &
    echo $! >"$DIR/etcd-$i.pid"
  done
  for i in "${members[@]}"; do wait_port "$(host "$i")" $((ETCD_PORT + i)); done
  [[ ${#log[@]} -eq 0 ]] || start_nats
  local lease=()
  [[ -z "${LEASE:-}" ]] || lease=(--lease-ttl "$LEASE")
  for i in "${nodes[@]}"; do
    as_member "$i"
    "${run_as[@]}" "$NEEDLE" serve --data "$DIR/node-$i" --bind "$(host "$i"):$((NODE_PORT + i))" \
      --cluster "etcd=$(etcd_urls)" --node-id "node-$i" "${log[@]}" "${lease[@]}" >"$DIR/node-$i.log" 2>&1 &
    echo $! >"$DIR/node-$i.pid"
  done
  for i in "${nodes[@]}"; do wait_port "$(host "$i")" $((NODE_PORT + i)); done
  local logged="" urls=()
  [[ ${#log[@]} -eq 0 ]] || logged=", NATS on $(nats_urls)"
  for i in "${nodes[@]}"; do urls+=("http://$(host "$i"):$((NODE_PORT + i))"); done
  echo "cluster up: nodes on ${urls[*]}, etcd on $(etcd_urls)$logged"
}

status() {
  for i in "${nodes[@]}"; do
    echo "node-$i (http://$(host "$i"):$((NODE_PORT + i))):"
    curl -fsS -m 5 "http://$(host "$i"):$((NODE_PORT + i))/_cat/nodes?v&h=ip,name,master" || echo "  not answering"
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
  [[ "$NETNS" != 1 ]] || netns_down
  echo "cluster down (data kept in $DIR)"
}

# Member $2's link to the bridge, $1 (down: cut off; up: healed).
link() {
  [[ "$NETNS" == 1 ]] || { echo "cut and heal need NETNS=1" >&2; exit 2; }
  ip link set "nv-$2" "$1"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  down) down ;;
  cut) link down "${2:?which member}" ;;
  heal) link up "${2:?which member}" ;;
  *) echo "usage: scripts/cluster.sh up|status|down|cut N|heal N" >&2; exit 2 ;;
esac
