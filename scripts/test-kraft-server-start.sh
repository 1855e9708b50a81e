#!/usr/bin/env bash
# Thin wrapper with the flags of Kafka's raft/bin/test-kraft-server-start.sh:
#   scripts/test-kraft-server-start.sh --config FILE --replica-directory-id ID [--throughput N] [--record-size S] ...
# Runs bin/controller (built by `make build` when missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${KRAFTD_BIN:-$root/bin/controller}"
if [ ! -x "$bin" ]; then
  (cd "$root" && make -s build)
fi
exec "$bin" test-kraft-server-start "$@"
