#!/usr/bin/env bash
# Says, after make test, whether the interop tests could run: they skip
# (test/interop/kafkatest.Require) without java or a complete test/interop/lib, and a
# skip is easy to miss among passing packages. Same detection as Require:
# java from KRAFTD_JAVA, $JAVA_HOME/bin/java or PATH; the jars in
# KRAFTD_INTEROP_LIB or test/interop/lib with the .complete marker make
# interop-deps writes. Prints one line; exits 0 either way.
set -u
cd "$(dirname "$0")/.."

version=$(sed -n 's/^const KafkaVersion = "\(.*\)"$/\1/p' test/interop/kafkatest/env.go)
# Tests of the interop package in a default build (files without build tags).
count=0
for f in test/interop/*_test.go; do
	grep -q '^//go:build' "$f" && continue
	count=$((count + $(grep -c '^func Test' "$f")))
done

java=${KRAFTD_JAVA:-}
if [ -z "$java" ] && [ -n "${JAVA_HOME:-}" ] && [ -f "$JAVA_HOME/bin/java" ]; then
	java=$JAVA_HOME/bin/java
fi
[ -z "$java" ] && java=$(command -v java || true)
lib=${KRAFTD_INTEROP_LIB:-test/interop/lib}

reason=""
if [ -z "$java" ]; then
	reason="no java"
elif [ ! -f "$lib/.complete" ]; then
	reason="no Kafka jars in $lib"
	command -v mvn >/dev/null 2>&1 || reason="$reason (no mvn to fetch them)"
else
	for jar in kafka_2.13 kafka-tools kafka-raft kafka-clients; do
		[ -f "$lib/$jar-$version.jar" ] || reason="missing $jar-$version.jar in $lib"
	done
fi

if [ -n "$reason" ]; then
	echo "################################################################################"
	echo "SKIPPED: interop tests ($reason): $count tests against Kafka $version did not run"
	echo "################################################################################"
else
	echo "interop: $count tests against Kafka $version were run ($java, $lib)"
fi
