#!/usr/bin/env bash
# Starts the real engine server for the worker engine's integration tests:
# ../shared/comfyui/run-comfyui.sh PORT, after installing what its package
# list lacks (python3-packaging, which its server imports). Used by the tests
# (test/helpers/real-comfyui.ts) and by .ci/run, so that `npm test` on a
# fresh machine installs what it needs (minutes the first time).
# Prints the server's PID last; `kill -- -PID` stops it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! dpkg-query -W -f='${Status}' python3-packaging 2>/dev/null | grep -q 'install ok installed'; then
  export DEBIAN_FRONTEND=noninteractive
  # Serialized like the script's own setup: tests start servers in parallel.
  exec 9>/tmp/real-comfyui.lock
  flock 9
  dpkg-query -W -f='${Status}' python3-packaging 2>/dev/null | grep -q 'install ok installed' ||
    apt-get install -y --no-install-recommends python3-packaging >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends python3-packaging >&2; }
  flock -u 9
  exec 9>&-
fi
exec bash "$here/../../shared/comfyui/run-comfyui.sh" "$@"
