#!/usr/bin/env bash
# make run: a local 3-node kraftd quorum on 127.0.0.1 running the test workload.
# Writes three properties files for free ports under a temp dir, starts three
# test-kraft-server-start processes (each formats its empty dir on first start),
# shows their stats for RUN_SECONDS (default 30) or until Ctrl-C, then stops
# them gracefully by pid and removes the temp dir (KEEP=1 keeps it).
# Env: RUN_SECONDS, THROUGHPUT (records/s, default 20000), RECORD_SIZE (256),
#      LINGER_MS (controller.quorum.append.linger.ms, Kafka default 25), KEEP.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${KRAFTD_BIN:-$root/bin/controller}"
run_seconds="${RUN_SECONDS:-30}"
throughput="${THROUGHPUT:-20000}"
record_size="${RECORD_SIZE:-256}"
linger="${LINGER_MS:-25}"

if [ ! -x "$bin" ]; then
  (cd "$root" && go build -o bin/controller ./cmd/controller)
fi

# Free ports: bind port 0 and read what the kernel picked (python3 or the
# controller-independent /dev/tcp fallback is not portable, so use Go's net
# package through a tiny program only when python3 is missing).
free_ports() {
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
  else
    local i p ports=()
    for i in $(seq "$1"); do
      while :; do
        p=$(( (RANDOM % 20000) + 30000 ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ports+=("$p"); break; fi
      done
    done
    echo "${ports[@]}"
  fi
}

dir="$(mktemp -d "${TMPDIR:-/tmp}/kraftd-run.XXXXXX")"
read -r p1 p2 p3 <<<"$(free_ports 3)"
voters="1@127.0.0.1:$p1,2@127.0.0.1:$p2,3@127.0.0.1:$p3"
ports=("" "$p1" "$p2" "$p3")
dirids=("" b8tRS7h4TJ2Vt43Dp85v2A Nkij_D9XRiYKNb41SiJo7Q 4-e97nI7eHPYKfEDtW8rtQ)
pids=()
tailpid=""

cleanup() {
  trap - INT TERM EXIT
  if [ -n "$tailpid" ]; then kill "$tailpid" 2>/dev/null || true; wait "$tailpid" 2>/dev/null || true; fi
  echo
  echo "stopping nodes (SIGTERM) ..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  local deadline=$((SECONDS + 15))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then echo "node pid $pid did not stop in time; killing"; kill -KILL "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
  done
  echo "final summaries:"
  for i in 1 2 3; do grep -h '^summary' "$dir/node$i.out" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for i in 1 2 3; do
  cat >"$dir/node$i.properties" <<PROPS
node.id=$i
process.roles=controller
listeners=CONTROLLER://127.0.0.1:${ports[$i]}
controller.listener.names=CONTROLLER
controller.quorum.voters=$voters
log.dirs=$dir/data$i
controller.quorum.append.linger.ms=$linger
PROPS
done

echo "kraftd: 3 nodes on 127.0.0.1 ports $p1 $p2 $p3, data and logs in $dir"
# Job control puts each node in its own process group, so Ctrl-C reaches
# this script only and the nodes get exactly one SIGTERM from cleanup.
set -m
echo "workload: $throughput records/s of $record_size bytes while leader; stats every 5 s for ${run_seconds}s (Ctrl-C stops)"
for i in 1 2 3; do
  "$bin" test-kraft-server-start --config "$dir/node$i.properties" \
    --replica-directory-id "${dirids[$i]}" --throughput "$throughput" --record-size "$record_size" \
    >"$dir/node$i.out" 2>"$dir/node$i.log" &
  pids+=("$!")
done

# Follow the three stats streams, prefixed by node.
tail -q -n +1 -F "$dir/node1.out" "$dir/node2.out" "$dir/node3.out" 2>/dev/null &
tailpid=$!
end=$((SECONDS + run_seconds))
while [ $SECONDS -lt $end ]; do
  for pid in "${pids[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "a node exited early; its log:"; kill "$tailpid" 2>/dev/null || true
      for i in 1 2 3; do echo "--- node$i.log"; tail -n 20 "$dir/node$i.log"; done
      exit 1
    fi
  done
  sleep 1
done
if [ "$run_seconds" -gt 0 ]; then
  "$bin" describe-quorum --bootstrap-controller "127.0.0.1:$p1" --replication --timeout 5s || true
fi
