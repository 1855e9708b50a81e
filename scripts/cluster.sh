#!/usr/bin/env bash
# make cluster: a local Kafka cluster on 127.0.0.1 in one command: three kraftd
# controllers (or, with CONTROLLERS=kafka, three Kafka 4.4.0 controllers) and three
# Kafka 4.4.0 brokers run from the interop jars (test/interop/lib, fetched by
# make interop-deps). Prints the bootstrap servers, then runs until Ctrl-C and
# stops every process it started.
#
#   scripts/cluster.sh [start]   start (foreground; Ctrl-C stops the cluster)
#   scripts/cluster.sh stop      stop a cluster started with CLUSTER_DETACH=1 (make cluster-stop)
#
# Everything lives in CLUSTER_DIR: properties, data dirs, one log per process
# (<name>.log), the pids it started (pids) and the bootstrap servers
# (bootstrap.servers). A second start on the same dir restarts the same cluster
# (its topics kept); CLUSTER_RESET=1 deletes it first.
# Env:
#   CONTROLLERS       kraftd (default) or kafka
#   CLUSTER_DIR       default ./cluster-data at the repository root
#   CLUSTER_DETACH=1  start, print, and return with the cluster running
#   CONTROLLER_PORTS  three ports (default "19093 19193 19293"), or "free"
#   BROKER_PORTS      three ports (default "9092 9192 9292"), or "free"
#   START_TIMEOUT     seconds to wait for the brokers (default 180)
#   KRAFTD_BIN        a built controller binary (default: go build into bin/controller)
#   KRAFTD_INTEROP_LIB, KRAFTD_JAVA   the jars' dir and the java binary (as scripts/kafka-tool.sh)
#   CONTROLLER_JVM_FLAGS, BROKER_JVM_FLAGS   replace the small-heap defaults
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${CLUSTER_DIR:-$root/cluster-data}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
marker="$dir/cluster.env"
pidfile="$dir/pids"

die() { echo "cluster: $*" >&2; exit 1; }

# running PID: the process exists and has not exited (an exited child not yet
# reaped is a zombie, state Z).
running() {
  kill -0 "$1" 2>/dev/null && ! awk '{ exit ($3 == "Z" ? 0 : 1) }' "/proc/$1/stat" 2>/dev/null
}

# alive PID: running and one this cluster started (its command line names a
# file in the cluster dir), so a recycled pid is never signalled. Only for
# processes past their exec: a child just forked still has this script's.
alive() {
  running "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$dir/"
}

# stop_all: SIGTERM the brokers (their controlled shutdown needs the
# controllers), then the controllers; SIGKILL what outlives the grace period.
# check is alive for pids of an earlier run, running for this run's children.
check=alive
stop_all() {
  [ -f "$pidfile" ] || return 0
  local role name pid kind
  for kind in broker controller; do
    local pids=()
    while read -r name pid; do
      case "$name" in "$kind"*) ;; *) continue ;; esac
      if "$check" "$pid"; then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); fi
    done <"$pidfile"
    local deadline=$((SECONDS + 30))
    for pid in "${pids[@]}"; do
      while "$check" "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
      if "$check" "$pid"; then echo "cluster: pid $pid ignored SIGTERM for 30 s; SIGKILL" >&2; kill -KILL "$pid" 2>/dev/null || true; fi
    done
    for pid in "${pids[@]}"; do
      while running "$pid"; do sleep 0.1; done
    done
  done
  rm -f "$pidfile"
}

if [ "${1:-start}" = stop ]; then
  [ -f "$dir/.kraftd-cluster" ] || die "$dir holds no cluster"
  [ -f "$pidfile" ] || { echo "cluster: nothing running in $dir"; exit 0; }
  echo "cluster: stopping the processes in $pidfile ..."
  stop_all
  echo "cluster: stopped"
  exit 0
fi
[ "${1:-start}" = start ] || die "usage: $0 [start|stop]"

controllers="${CONTROLLERS:-kraftd}"
case "$controllers" in kraftd | kafka) ;; *) die "CONTROLLERS must be kraftd or kafka, not '$controllers'" ;; esac

if [ -f "$pidfile" ]; then
  while read -r name pid; do
    if alive "$pid"; then die "$name (pid $pid) of $dir still runs: make cluster-stop (or CLUSTER_DIR=$dir scripts/cluster.sh stop) first"; fi
  done <"$pidfile"
  rm -f "$pidfile"
fi
# stamp marks a dir this script made, so only such a dir is ever deleted or
# reused; marker (cluster.env) is written once its nodes are formatted.
stamp="$dir/.kraftd-cluster"
if [ "${CLUSTER_RESET:-0}" = 1 ] && [ -f "$stamp" ]; then rm -rf "$dir"; fi
if [ -e "$dir" ] && [ ! -f "$stamp" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
  die "$dir exists and is not a cluster dir; choose another CLUSTER_DIR"
fi
mkdir -p "$dir"
touch "$stamp"

# The jars and java.
lib="${KRAFTD_INTEROP_LIB:-$root/test/interop/lib}"
if [ ! -f "$lib/.complete" ]; then
  # Never refetch through a link: that would replace a directory others share.
  [ -L "$lib" ] && die "$lib is a link to an incomplete jar dir; run make interop-deps where it points"
  [ -z "${KRAFTD_INTEROP_LIB:-}" ] || die "KRAFTD_INTEROP_LIB=$lib has no .complete marker"
  echo "cluster: fetching the Kafka 4.4.0 jars (make interop-deps) ..."
  make -C "$root" --no-print-directory interop-deps
  [ -f "$lib/.complete" ] || die "no jars in $lib (make interop-deps needs mvn)"
fi
java="${KRAFTD_JAVA:-}"
if [ -z "$java" ]; then
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java="$JAVA_HOME/bin/java"; else java="$(command -v java)" || die "java not found (set KRAFTD_JAVA or JAVA_HOME)"; fi
fi
cp="$lib/*"
if [ "$controllers" = kraftd ]; then
  bin="${KRAFTD_BIN:-}"
  if [ -z "$bin" ]; then
    echo "cluster: building kraftd (bin/controller) ..."
    (cd "$root" && go build -o bin/controller ./cmd/controller)
    bin="$root/bin/controller"
  fi
  [ -x "$bin" ] || die "KRAFTD_BIN=$bin is not executable"
fi

free_ports() {
  command -v python3 >/dev/null || die "free ports need python3; give CONTROLLER_PORTS / BROKER_PORTS three ports each"
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
}

# A restart keeps the recorded cluster id, controller kind and ports: the
# formatted dirs and the controllers' voters depend on them.
recorded() { sed -n "s/^$1=//p" "$marker" | tail -n 1; }
if [ -f "$marker" ]; then
  cid="$(recorded CLUSTER_ID)"
  kind="$(recorded CLUSTER_CONTROLLERS)"
  [ "$controllers" = "$kind" ] || die "$dir holds a cluster with '$kind' controllers; CLUSTER_RESET=1 starts a fresh one"
  read -r c1 c2 c3 <<<"$(recorded CLUSTER_CONTROLLER_PORTS)"
  read -r b1 b2 b3 <<<"$(recorded CLUSTER_BROKER_PORTS)"
  fresh=0
else
  # An earlier start that failed before its format completed left part of it.
  rm -rf "$dir"/controller[123] "$dir"/broker[123]
  cports="${CONTROLLER_PORTS:-19093 19193 19293}"
  bports="${BROKER_PORTS:-9092 9192 9292}"
  [ "$cports" = free ] && cports="$(free_ports 3)"
  [ "$bports" = free ] && bports="$(free_ports 3)"
  read -r c1 c2 c3 extra <<<"$cports"
  [ -n "$c3" ] && [ -z "${extra:-}" ] || die "CONTROLLER_PORTS needs three ports"
  read -r b1 b2 b3 extra <<<"$bports"
  [ -n "$b3" ] && [ -z "${extra:-}" ] || die "BROKER_PORTS needs three ports"
  if [ "$controllers" = kraftd ]; then cid="$("$bin" random-uuid)"; else cid="$("$java" -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)"; fi
  [ -n "$cid" ] || die "could not make a cluster id"
  fresh=1
fi
for p in $c1 $c2 $c3 $b1 $b2 $b3; do
  case "$p" in '' | *[!0-9]*) die "bad port '$p'" ;; esac
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then die "port $p is in use (set CONTROLLER_PORTS / BROKER_PORTS, or \"free\")"; fi
done
cports=("" "$c1" "$c2" "$c3")
bports=("" "$b1" "$b2" "$b3")
voters="1@127.0.0.1:$c1,2@127.0.0.1:$c2,3@127.0.0.1:$c3"
bootstrap="127.0.0.1:$b1,127.0.0.1:$b2,127.0.0.1:$b3"

cat >"$dir/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.appinfo.name = org.apache.kafka.common.utils.internals.AppInfoParser
logger.appinfo.level = WARN
EOF

# Controllers 1-3, brokers 4-6; static voters for both.
for i in 1 2 3; do
  {
    echo "process.roles=controller"
    echo "node.id=$i"
    echo "listeners=CONTROLLER://127.0.0.1:${cports[$i]}"
    echo "controller.listener.names=CONTROLLER"
    echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT"
    echo "controller.quorum.voters=$voters"
    echo "log.dirs=$dir/controller$i"
    if [ "$controllers" = kafka ]; then
      echo "num.network.threads=1"
      echo "num.io.threads=2"
      echo "background.threads=2"
    fi
  } >"$dir/controller$i.properties"
  n=$((i + 3))
  cat >"$dir/broker$i.properties" <<EOF
process.roles=broker
node.id=$n
listeners=PLAINTEXT://127.0.0.1:${bports[$i]}
advertised.listeners=PLAINTEXT://127.0.0.1:${bports[$i]}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.quorum.voters=$voters
log.dirs=$dir/broker$i
num.network.threads=2
num.io.threads=4
num.partitions=3
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
EOF
done

# Several JVMs share the machine: small heaps, the serial collector, C1 only.
read -r -a cflags <<<"${CONTROLLER_JVM_FLAGS:--Xmx256m -Xms32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true}"
read -r -a bflags <<<"${BROKER_JVM_FLAGS:--Xmx512m -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true}"
toolflags=(-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$dir/log4j2.properties")

if [ "$fresh" = 1 ]; then
  echo "cluster: formatting (cluster id $cid) ..."
  fmtpids=()
  for i in 1 2 3; do
    if [ "$controllers" = kraftd ]; then
      "$bin" format --config "$dir/controller$i.properties" --cluster-id "$cid" >"$dir/format-controller$i.log" 2>&1 &
    else
      "$java" "${toolflags[@]}" -cp "$cp" kafka.tools.StorageTool format -c "$dir/controller$i.properties" -t "$cid" >"$dir/format-controller$i.log" 2>&1 &
    fi
    fmtpids+=("$!:controller$i")
    "$java" "${toolflags[@]}" -cp "$cp" kafka.tools.StorageTool format -c "$dir/broker$i.properties" -t "$cid" >"$dir/format-broker$i.log" 2>&1 &
    fmtpids+=("$!:broker$i")
  done
  failed=0
  for e in "${fmtpids[@]}"; do
    if ! wait "${e%%:*}"; then echo "cluster: format ${e#*:} failed:" >&2; cat "$dir/format-${e#*:}.log" >&2; failed=1; fi
  done
  [ "$failed" = 0 ] || exit 1
  cat >"$marker" <<EOF
CLUSTER_ID=$cid
CLUSTER_CONTROLLERS=$controllers
CLUSTER_CONTROLLER_PORTS=$c1 $c2 $c3
CLUSTER_BROKER_PORTS=$b1 $b2 $b3
EOF
fi
echo "$bootstrap" >"$dir/bootstrap.servers"

# Job control puts each process in its own process group: Ctrl-C reaches this
# script only, and each process gets exactly one SIGTERM from stop_all.
set -m
: >"$pidfile"
check=running
started=0
on_exit() {
  local rc=$?
  trap - INT TERM EXIT
  if [ "$started" = 0 ] || [ "${CLUSTER_DETACH:-0}" != 1 ]; then
    echo
    echo "cluster: stopping ..."
    stop_all
    echo "cluster: stopped (data and logs kept in $dir)"
  fi
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

for i in 1 2 3; do
  if [ "$controllers" = kraftd ]; then
    "$bin" start --config "$dir/controller$i.properties" \
      </dev/null >"$dir/controller$i.log" 2>&1 &
  else
    "$java" "${cflags[@]}" -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$cp" kafka.Kafka "$dir/controller$i.properties" \
      </dev/null >"$dir/controller$i.log" 2>&1 &
  fi
  echo "controller$i $!" >>"$pidfile"
done
for i in 1 2 3; do
  "$java" "${bflags[@]}" -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$cp" kafka.Kafka "$dir/broker$i.properties" \
    </dev/null >"$dir/broker$i.log" 2>&1 &
  echo "broker$i $!" >>"$pidfile"
done
echo "cluster: $controllers controllers on 127.0.0.1:$c1,$c2,$c3; Kafka brokers on 127.0.0.1:$b1,$b2,$b3 starting (logs in $dir) ..."

# Up when every broker has logged that it started: it caught up with the
# metadata log and the active controller registered it.
deadline=$((SECONDS + ${START_TIMEOUT:-180}))
for i in 1 2 3; do
  while ! grep -q "Kafka Server started" "$dir/broker$i.log" 2>/dev/null; do
    while read -r name pid; do
      if ! running "$pid"; then
        echo "cluster: $name exited; the end of its log ($dir/$name.log):" >&2
        tail -n 30 "$dir/$name.log" >&2
        exit 1
      fi
    done <"$pidfile"
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: broker$i did not start within ${START_TIMEOUT:-180} s; the end of its log:" >&2
      tail -n 30 "$dir/broker$i.log" >&2
      exit 1
    fi
    sleep 0.5
  done
done
started=1

echo
echo "bootstrap servers: $bootstrap"
echo "  scripts/kafka-tool.sh kafka-topics --bootstrap-server $bootstrap --list"
if [ "${CLUSTER_DETACH:-0}" = 1 ]; then
  echo "stop it with: make cluster-stop CLUSTER_DIR=$dir"
  exit 0
fi
echo "Ctrl-C stops the cluster"
while :; do
  while read -r name pid; do
    if ! running "$pid"; then
      echo "cluster: $name exited; the end of its log ($dir/$name.log):" >&2
      tail -n 30 "$dir/$name.log" >&2
      exit 1
    fi
  done <"$pidfile"
  sleep 1
done
