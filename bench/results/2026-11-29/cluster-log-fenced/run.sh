#!/usr/bin/env bash
# The ingest of ../cluster-log (same corpus, clusters and protocol), results into this folder:
# the build whose messages name the stream sequence they follow (fencing).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-11-29/cluster-log-fenced exec bash bench/results/2026-11-29/cluster-log/run.sh
