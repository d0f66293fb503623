#!/usr/bin/env bash
# The ingest of ../cluster-log (same corpus, clusters and protocol), results into this folder.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-11-29/cluster-log-batched exec bash bench/results/2026-11-29/cluster-log/run.sh
