#!/usr/bin/env bash
# Kafka's command-line tools from the interop jars (test/interop/lib, make
# interop-deps), without a Kafka distribution:
#
#   scripts/kafka-tool.sh kafka-topics --bootstrap-server 127.0.0.1:9092 --list
#   scripts/kafka-tool.sh org.apache.kafka.tools.GetOffsetShell --bootstrap-server ...
#
# The first argument is a tool's script name as in Kafka's bin/ (kafka-topics,
# kafka-console-producer, ...) or a main class. Tools log warnings to stderr,
# so stdout is exactly what the tool prints.
# Env: KRAFTD_INTEROP_LIB (the jars' dir), KRAFTD_JAVA (the java binary; else $JAVA_HOME/bin/java
# or java on PATH), TOOL_JVM_FLAGS (replace the small-heap defaults).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lib="${KRAFTD_INTEROP_LIB:-$root/test/interop/lib}"

usage() {
  cat >&2 <<'EOF'
usage: scripts/kafka-tool.sh TOOL [ARGS...]
TOOL is a main class or one of:
  kafka-topics kafka-console-producer kafka-console-consumer kafka-consumer-groups
  kafka-configs kafka-metadata-quorum kafka-features kafka-cluster kafka-acls
  kafka-get-offsets kafka-log-dirs kafka-leader-election kafka-reassign-partitions
  kafka-broker-api-versions kafka-producer-perf-test kafka-consumer-perf-test
  kafka-dump-log kafka-storage
EOF
  exit 2
}
[ $# -ge 1 ] || usage
tool="$1"
shift
# Main classes of Kafka 4.4.0's bin/ scripts, as found in its jars.
case "${tool%.sh}" in
  kafka-topics) class=org.apache.kafka.tools.TopicCommand ;;
  kafka-console-producer) class=org.apache.kafka.tools.ConsoleProducer ;;
  kafka-console-consumer) class=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
  kafka-consumer-groups) class=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
  kafka-configs) class=org.apache.kafka.tools.ConfigCommand ;;
  kafka-metadata-quorum) class=org.apache.kafka.tools.MetadataQuorumCommand ;;
  kafka-features) class=org.apache.kafka.tools.FeatureCommand ;;
  kafka-cluster) class=org.apache.kafka.tools.ClusterTool ;;
  kafka-acls) class=org.apache.kafka.tools.AclCommand ;;
  kafka-get-offsets) class=org.apache.kafka.tools.GetOffsetShell ;;
  kafka-log-dirs) class=org.apache.kafka.tools.LogDirsCommand ;;
  kafka-leader-election) class=org.apache.kafka.tools.LeaderElectionCommand ;;
  kafka-reassign-partitions) class=org.apache.kafka.tools.reassign.ReassignPartitionsCommand ;;
  kafka-broker-api-versions) class=org.apache.kafka.tools.BrokerApiVersionsCommand ;;
  kafka-producer-perf-test) class=org.apache.kafka.tools.ProducerPerformance ;;
  kafka-consumer-perf-test) class=org.apache.kafka.tools.ConsumerPerformance ;;
  kafka-dump-log) class=org.apache.kafka.tools.DumpLogSegments ;;
  kafka-storage) class=kafka.tools.StorageTool ;;
  -h | --help) usage ;;
  kafka-*) echo "kafka-tool: unknown tool $tool (pass its main class instead)" >&2; usage ;;
  *) class="$tool" ;;
esac

[ -f "$lib/.complete" ] || { echo "kafka-tool: no Kafka jars in $lib: run make interop-deps (or set KRAFTD_INTEROP_LIB)" >&2; exit 1; }
java="${KRAFTD_JAVA:-}"
if [ -z "$java" ]; then
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    java="$JAVA_HOME/bin/java"
  else
    java="$(command -v java)" || { echo "kafka-tool: java not found (set KRAFTD_JAVA or JAVA_HOME)" >&2; exit 1; }
  fi
fi

# One log4j2 file per user, rewritten aside and renamed (tools may run at
# once), so the tool can be exec'd: signals reach the JVM itself.
scratch="${TMPDIR:-/tmp}/kraftd-kafka-tool-$(id -u)"
mkdir -p "$scratch"
log4j="$scratch/log4j2.properties"
tmp="$(mktemp "$scratch/log4j2.XXXXXX")"
cat >"$tmp" <<'EOF'
status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
EOF
mv -f "$tmp" "$log4j"
read -r -a flags <<<"${TOOL_JVM_FLAGS:--Xmx256m -Xms16m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true}"
exec "$java" "${flags[@]}" -Dlog4j2.configurationFile="$log4j" -cp "$lib/*" "$class" "$@"
