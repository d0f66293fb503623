#!/usr/bin/env bash
# The search page in headless Chromium (Debian's package, installed when
# missing) against the `needle` binary `cargo test` built; screenshots go to
# target/ui-screenshots/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
cd "$root"
browser="$(command -v chromium || true)"
if [[ -z "$browser" ]]; then
  sudo_if=""
  [[ $(id -u) -ne 0 ]] && sudo_if="sudo"
  $sudo_if apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_if apt-get install -y -qq --no-install-recommends chromium >/dev/null
  browser="$(command -v chromium)"
fi
# The build of `cargo test --workspace` itself (its features: a build of the binary
# alone would resolve them otherwise and compile much of the workspace again).
cargo test --workspace --no-run --quiet
python3 "$here/check.py" "$root/target/debug/needle" "$browser" "$root/target/ui-screenshots"
