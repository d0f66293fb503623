#!/usr/bin/env bash
# Runs test_clients.py with each official client (elasticsearch 9.x and 8.x,
# opensearch-py 3.x, pinned in requirements-*.txt), each in its own virtual
# environment, against the `needle` binary that `cargo test` built.
#
#   tests/clients/run.sh [es9 es8 opensearch]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
cd "$root"
# The build of `cargo test --workspace` itself (its features: a build of the binary
# alone would resolve them otherwise and compile much of the workspace again).
cargo test --workspace --no-run --quiet
binary="$root/target/debug/needle"
venvs="${CLIENT_VENVS:-$root/target/client-venvs}"
clients=("$@")
[[ ${#clients[@]} -gt 0 ]] || clients=(es9 es8 opensearch)
for c in "${clients[@]}"; do
  # Marked once installed whole: an install cut short is done again next time.
  if [[ ! -f "$venvs/$c/installed" ]]; then
    python3 -m venv "$venvs/$c"
    # The package index is across a network: a slow answer is retried, not fatal.
    "$venvs/$c/bin/pip" install --quiet --disable-pip-version-check --retries 10 --timeout 60 \
      -r "$here/requirements-$c.txt"
    touch "$venvs/$c/installed"
  fi
  "$venvs/$c/bin/python" "$here/test_clients.py" "$binary" "$c"
done
