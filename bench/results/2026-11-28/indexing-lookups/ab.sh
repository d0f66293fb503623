#!/usr/bin/env bash
# One-thread indexing of the shared corpus into one segment (no merge) by two
# needle-bench builds, alternating, ROUNDS rounds. Prints: round, build, wall s,
# user s, index bytes.   ab.sh BEFORE AFTER ROUNDS > runs.txt
set -euo pipefail
A=$1; B=$2; ROUNDS=${3:-3}
T=$(mktemp -d)
for r in $(seq "$ROUNDS"); do
  for pair in "before:$A" "after:$B"; do
    name=${pair%%:*}; bin=${pair#*:}
    rm -rf "$T/idx"
    /usr/bin/time -f "%e %U" -o "$T/time" "$bin" index-needle --corpus ../shared/data/corpus.jsonl.gz \
      --index "$T/idx" --threads 1 --memory 1100000000 > /dev/null 2>&1
    echo "$r $name $(cat "$T/time") $(du -sb "$T/idx" | cut -f1)"
  done
done
rm -rf "$T"
