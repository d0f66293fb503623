#!/usr/bin/env bash
# Coverage-guided fuzzing of Needle's readers and parsers (see README.md here).
#
#   fuzz/run.sh [--runs N | --seconds S] [--report FILE] [--no-asan | --quick] [TARGET...]
#
# Runs each target (all of them by default) for N executions (default 10
# million) or S seconds, starting from the committed corpus (fuzz/corpus/T,
# read only: new inputs go to a scratch folder) and writes a report to
# fuzz/report.md or FILE (the executions, time and result of each run). A crash
# leaves its input in fuzz/artifacts/T/ and fails the script. Needs a nightly
# toolchain and cargo-fuzz (`cargo install cargo-fuzz`). --no-asan builds
# without AddressSanitizer into its own target folder: the segment target runs
# about nine times as many executions a second, and AddressSanitizer only
# guards the few `unsafe` blocks. --quick builds that way at a low optimization
# level (Cargo.toml's dev profile, debug assertions on) in about half the time,
# for a short slice (CI's); its executions are several times slower.
set -euo pipefail
cd "$(dirname "$0")"

limit="-runs=10000000"
report="report.md"
targets=()
build=(-O)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) limit="-runs=$2"; shift 2 ;;
    --seconds) limit="-max_total_time=$2"; shift 2 ;;
    --report) report="$2"; shift 2 ;;
    --no-asan) build=(-O -s none --target-dir target/no-asan); shift ;;
    --quick) build=(--dev -s none --target-dir target/quick); shift ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(query search_body document manifest deletes updates wal postings docstore termmap segment)
fi

cargo +nightly fuzz build "${build[@]}"
# FUZZ_WORK keeps what the runs find (to minimize into the corpus: README.md).
if [[ -n "${FUZZ_WORK:-}" ]]; then
  scratch="$FUZZ_WORK"
  mkdir -p "$scratch"
else
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
fi
{
  echo "# Fuzzing report"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), \`fuzz/run.sh ${limit#-} ${build[*]} ${targets[*]}\`"
  echo
  echo "| target | executions | seconds | executions/s | corpus | result |"
  echo "|---|---:|---:|---:|---:|---|"
} > "$report"

failed=0
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  extra=()
  [[ -f "$t.dict" ]] && extra+=("-dict=$t.dict")
  start=$(date +%s)
  result="no crash"
  # The committed corpus is read; what the run finds goes to the scratch folder.
  # The term map's caught panics print a line each: kept out of the log.
  set +e
  RUST_BACKTRACE=0 cargo +nightly fuzz run "${build[@]}" "$t" "$scratch/$t" "corpus/$t" -- \
      "$limit" -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 "${extra[@]}" 2>&1 \
    | grep -v -e "^thread '<unnamed>' .* panicked at .*fst" -e "^note: run with" > "$scratch/$t.log"
  status=${PIPESTATUS[0]}
  set -e
  if [[ $status -ne 0 ]]; then
    result="CRASH (see fuzz/artifacts/$t)"
    failed=1
  fi
  seconds=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$t.log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$scratch/$t.log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(find "$scratch/$t" "corpus/$t" -type f | wc -l)
  echo "| $t | $execs | $seconds | $rate | $corpus | $result |" >> "$report"
  echo "$t: $execs executions in $seconds s: $result"
  [[ "$result" == "no crash" ]] || tail -30 "$scratch/$t.log"
done
exit $failed
