#!/usr/bin/env bash
# The updates of ../updates-1m (same corpus, indexes and protocol), results into this folder.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUT=bench/results/2026-11-29/updates-1m-lean-layers exec bash bench/results/2026-11-29/updates-1m/run.sh
