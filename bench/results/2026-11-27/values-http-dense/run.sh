#!/usr/bin/env bash
# Two rounds of bench/http/values.py against the index `values-bench` loaded by a first run
# (without --reuse) into both servers, Needle's server alternating between the build before
# (95b5c5b, OLD) and after (9f7e0d1, NEW) on the same data directory; OpenSearch 3.8 on 9201
# (../shared/opensearch, OS_HEAP=4g OS_PORT=9201), warmed by two runs first.
set -euo pipefail
R="$(cd "$(dirname "$0")" && pwd)"
for round in 1 2; do
  for v in NEW OLD; do
    "${!v}" serve --data "$DATA" --bind 127.0.0.1:9202 > /dev/null 2>&1 & pid=$!
    sleep 3
    python3 bench/http/values.py --reuse --runs 30 --warmup 30 > /dev/null   # the server's own warm-up
    python3 bench/http/values.py --reuse --runs 200 --warmup 100 > "$R/round$round-${v,,}.md"
    kill $pid; wait $pid || true
  done
done
