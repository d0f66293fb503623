#!/usr/bin/env bash
# Merge speed beside Lucene's, ROUNDS rounds: Lucene 10.6's BenchIndex (its
# stderr gives the indexing time and the total with forceMerge(1)), then
# `needle index --threads 1` (two segments) and `needle merge --max-segments 1`
# timed alone. Prints: engine, merge s, index bytes after the merge.
#   bench/results/2026-11-27/parallel-merge/merge-vs-lucene.sh ROUNDS > merge-vs-lucene.tsv
set -euo pipefail
ROUNDS=${1:-3}
C=../shared/data/corpus.jsonl.gz
T=$(mktemp -d)
echo '{"dynamic": false, "properties": {"title": {"type": "text"}, "body": {"type": "text"}}}' > "$T/map.json"
for r in $(seq "$ROUNDS"); do
  rm -rf "$T/l"
  line=$(bash bench/peers/lucene/run.sh needle.bench.BenchIndex --corpus $C --index "$T/l" 2>&1 | grep '^BenchIndex:')
  merge=$(sed -E 's/.* in ([0-9.]+)s, merged.* total ([0-9.]+)s.*/\2 - \1/' <<< "$line" | bc)
  printf 'lucene\t%s\t%s\n' "$merge" "$(du -sb "$T/l" | cut -f1)"
  rm -rf "$T/n"
  target/release/needle index --index "$T/n" --input $C --mapping "$T/map.json" --threads 1 > /dev/null
  /usr/bin/time -f "%e" -o "$T/time" target/release/needle merge --index "$T/n" --max-segments 1 > /dev/null
  printf 'needle\t%s\t%s\n' "$(cat "$T/time")" "$(du -sb "$T/n" | cut -f1)"
done
rm -rf "$T"
