#!/usr/bin/env bash
# Run a main class of the Lucene peer: run.sh CLASS ARGS...
# Needs build.sh to have run first (it writes target/java-path).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -lt 1 ]]; then
  echo "usage: $0 CLASS ARGS..." >&2
  exit 2
fi
if [[ ! -f "$HERE/target/java-path" || ! -d "$HERE/target/classes" ]]; then
  echo "$0: run bench/peers/lucene/build.sh first" >&2
  exit 1
fi
JAVA="$(cat "$HERE/target/java-path")"
CLASS="$1"
shift
exec "$JAVA" ${JAVA_OPTS:-} -cp "$HERE/target/classes:$HERE/target/lib/*" "$CLASS" "$@"
