#!/usr/bin/env bash
# The crash loop: SIGKILL a durable `needle ingest` ROUNDS times (default
# 1,000) while it flushes, commits and merges; after each kill, before any
# recovery step, read every acknowledged document back with `needle get` and
# find each exactly once (crates/needle-cli/tests/crash.rs, which CI runs
# with 50 rounds). Writes scripts/crash-loop-report.md.
#
#   scripts/crash_loop.sh [ROUNDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-1000}"
seed="${2:-$RANDOM$RANDOM}"
report="scripts/crash-loop-report.md"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

start=$(date +%s)
status=0
NEEDLE_CRASH_ROUNDS="$rounds" NEEDLE_TEST_SEED="$seed" \
  cargo test --release --locked -p needle-cli --test crash -- --nocapture > "$log" 2>&1 || status=$?
seconds=$(( $(date +%s) - start ))

{
  echo "# Crash loop report"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), \`scripts/crash_loop.sh $rounds $seed\`, $seconds s, exit status $status"
  echo
  grep -E "^[0-9]+ kills|panicked|acknowledged .* found" "$log" | sed 's/^/    /' || true
  echo
  echo "Per round: documents acknowledged before the kill, ids checked (those and a sample of"
  echo "earlier ones), and what the reader replayed from the write-ahead log to see them:"
  echo
  awk '/^round [0-9]+:/ { n++; a += $3; r += $(NF-5); if ($(NF-5) > maxr) maxr = $(NF-5); t = $(NF-1); if (t > maxt) maxt = t }
       END { if (n) printf "    %d rounds, %.0f acknowledged a round on average, %.0f log records replayed on average (at most %d, at most %.3f s)\n", n, a / n, r / n, maxr, maxt }' "$log"
  echo
  echo "Last rounds:"
  echo
  grep -E "^round [0-9]+:" "$log" | tail -5 | sed 's/^/    /'
} > "$report"
cat "$report"
exit "$status"
