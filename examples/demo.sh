#!/usr/bin/env bash
# Builds Needle, indexes the bundled State of the Union addresses (233
# speeches, 1790-2021, public domain) and runs a few searches with highlights.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet -p needle-cli
needle=./target/release/needle
index=target/demo-index

rm -rf "$index"
"$needle" index --index "$index" --input examples/data/sotu.jsonl.gz

run() {
    echo
    echo "\$ needle search --index $index --top 3 --highlight '$1'"
    "$needle" search --index "$index" --top 3 --highlight "$1"
}
run 'railroad'
run '"manifest destiny"'
run '+slavery +emancipation -title:1863'
run '+title:roosevelt "new deal"'
