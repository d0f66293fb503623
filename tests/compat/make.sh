#!/usr/bin/env bash
# Builds the compatibility fixture of one format version with that version's
# `needle` (README.md here says which commit made each):
#
#   tests/compat/make.sh NEEDLE_BINARY OUT_DIR
#
# corpus.jsonl imported in several segments, then updates.jsonl ingested and
# committed (replacements: deletion files, one more segment), then a durable
# ingest of logged.jsonl killed once every document was acknowledged: those
# documents are in the write-ahead log only. (The test reads the folder with
# and without its log.)
set -euo pipefail
needle="$(realpath "$1")"
out="$2"
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$out"
"$needle" index --index "$out" --input "$here/corpus.jsonl" --memory 256KB --threads 2 > /dev/null
"$needle" ingest --index "$out" --input "$here/updates.jsonl" --durability graceful 2> /dev/null
expected=$(wc -l < "$here/logged.jsonl")
coproc INGEST { exec "$needle" ingest --index "$out" --input - --durability durable --ack 2> /dev/null; }
cat "$here/logged.jsonl" >&"${INGEST[1]}"
for _ in $(seq "$expected"); do
  read -r _ <&"${INGEST[0]}"
done
kill -9 "$INGEST_PID"
wait "$INGEST_PID" 2> /dev/null || true
rm -f "$out/write.lock"
du -sh "$out"
