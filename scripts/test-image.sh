#!/usr/bin/env bash
# make test-image: builds the image (make image) and runs a 3-node quorum of
# its containers on a private network, each configured only by environment
# variables as with the apache/kafka image; checks that they elect a leader
# (controller describe-quorum inside a container), that the containers run
# as the image's non-root user, and that a restarted leader finds its volume
# formatted and the quorum elects again. Where no container runtime can run
# containers (podman info and docker info fail) it prints SKIPPED and exits 0.
#
# CONTAINER_RUNTIME picks the runtime, with global flags if needed
# ("podman --runtime runc"); RUN_FLAGS are added to every run (in a sandbox
# that cannot raise rlimits: "--ulimit nofile=20000:20000 --ulimit
# nproc=4096:4096"); SUBNET (default 10.89.77) is the test network's /24.
set -euo pipefail
cd "$(dirname "$0")/.."

runtime() {
	if [ -n "${CONTAINER_RUNTIME:-}" ]; then echo "$CONTAINER_RUNTIME"; return; fi
	for r in podman docker; do
		command -v "$r" >/dev/null 2>&1 && "$r" info >/dev/null 2>&1 && { echo "$r"; return; }
	done
	return 1
}

if ! runtime_cmd=$(runtime); then
	echo "SKIPPED: no container runtime (podman or buildah) can run containers here: make test-image did not run"
	exit 0
fi
read -ra rt <<<"$runtime_cmd"
read -ra run_flags <<<"${RUN_FLAGS:-}"

IMAGE=${IMAGE:-localhost/kraftd:dev}
make --no-print-directory image IMAGE="$IMAGE" CONTAINER_BUILDER="$runtime_cmd"

prefix=kraftd-test
net=$prefix-net
subnet=${SUBNET:-10.89.77}
ip() { echo "$subnet.1$1"; }
# Voters by address: name resolution between containers differs between
# runtimes and network backends.
voters="1@$(ip 1):9093,2@$(ip 2):9093,3@$(ip 3):9093"

cleanup() {
	for i in 1 2 3; do "${rt[@]}" rm -f -v "$prefix-$i" >/dev/null 2>&1 || true; done
	"${rt[@]}" network rm "$net" >/dev/null 2>&1 || true
}
logs() {
	for i in 1 2 3; do echo "==== $prefix-$i"; "${rt[@]}" logs --tail 40 "$prefix-$i" 2>&1 || true; done
}
fail() {
	echo "FAIL: $*" >&2
	logs >&2
	exit 1
}
trap cleanup EXIT
cleanup
"${rt[@]}" network create --subnet "$subnet.0/24" "$net" >/dev/null

cluster_id=$("${rt[@]}" run --rm "${run_flags[@]}" --entrypoint /usr/local/bin/controller "$IMAGE" random-uuid)
for i in 1 2 3; do
	"${rt[@]}" run -d "${run_flags[@]}" --name "$prefix-$i" --network "$net" --ip "$(ip $i)" \
		-e KAFKA_NODE_ID=$i \
		-e KAFKA_PROCESS_ROLES=controller \
		-e KAFKA_CONTROLLER_QUORUM_VOTERS="$voters" \
		-e KAFKA_LISTENERS=CONTROLLER://:9093 \
		-e KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER \
		-e KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=CONTROLLER:PLAINTEXT \
		-e KAFKA_LOG_DIRS=/var/lib/kraftd/data \
		-e CLUSTER_ID="$cluster_id" \
		"$IMAGE" >/dev/null
done

# status NODE: describe-quorum --status asked inside NODE's container.
status() {
	"${rt[@]}" exec "$prefix-$1" /usr/local/bin/controller describe-quorum \
		--bootstrap-controller "$(ip "$1"):9093" --status --timeout 3s 2>/dev/null
}
# wait_leader NODE: waits until NODE reports a leader of this cluster; prints its status.
wait_leader() {
	local out
	for _ in $(seq 60); do
		if out=$(status "$1") && grep -q "^ClusterId: *$cluster_id\$" <<<"$out" &&
			grep -Eq '^LeaderId: *[1-3]$' <<<"$out"; then
			echo "$out"
			return 0
		fi
		sleep 1
	done
	return 1
}

out=$(wait_leader 1) || fail "no leader within 60 s"
echo "$out"
leader=$(sed -n 's/^LeaderId: *//p' <<<"$out")
epoch=$(sed -n 's/^LeaderEpoch: *//p' <<<"$out")
echo "elected: leader $leader, epoch $epoch"

user=$("${rt[@]}" inspect --format '{{.Config.User}}' "$prefix-1")
[ "$user" = "65532:65532" ] || fail "containers run as '$user', want 65532:65532"

# The leader restarts on its volume: formatted already, it rejoins, and the
# quorum elects again at a later epoch.
"${rt[@]}" restart -t 10 "$prefix-$leader" >/dev/null
now=$epoch
for _ in $(seq 60); do
	out=$(wait_leader "$leader") || fail "no leader after restarting node $leader"
	now=$(sed -n 's/^LeaderEpoch: *//p' <<<"$out")
	[ "$now" -gt "$epoch" ] && break
	sleep 1
done
[ "$now" -gt "$epoch" ] || fail "epoch still $now after restarting the leader"
# Runtimes keep a restarted container's earlier output or not: at most the
# first start formatted.
formats=$("${rt[@]}" logs "$prefix-$leader" 2>&1 | grep -c 'formatted the log dirs from CLUSTER_ID' || true)
[ "$formats" -le 1 ] || fail "node $leader formatted its volume $formats times"
echo "PASS: 3-node quorum of $IMAGE containers with ${rt[0]}: leader $leader at epoch $epoch; restarted, epoch $now"
