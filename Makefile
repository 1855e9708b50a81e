# kraftd: make run (local 3-node quorum with the test workload), make test.
GO ?= go
BIN := bin/controller
SEEDS ?= 1000
SEED_BASE ?= 1

.PHONY: build test test-race run cluster cluster-stop bench bench-quorum bench-quorum-tls bench-interop bench-report bench-controller bench-controller-cluster fuzz interop-deps interop-long sim sim-controller vet soak-hostile soak-hostile-kafka dist image test-image

build:
	$(GO) build -o $(BIN) ./cmd/controller

# The product module (the binary and its packages) and the harness module in test/ (fault
# suite, interop tests against Kafka, benchmarks and their tools: their own go.mod, so the
# product's lists only what the product needs).
HARNESS := test

vet:
	$(GO) vet ./... && $(GO) vet -tags faultfs ./cmd/controller
	cd $(HARNESS) && $(GO) vet ./... && $(GO) vet -tags interopbench,interophostile,interoplong,faults ./...

# The interop tests (test/interop, against Kafka 4.4.0) run when java is present: interop-deps
# fetches the jars on a fresh clone (with mvn), as CI does; without them they skip, and a
# SKIPPED banner after the run says so (scripts/interop-status.sh). vet runs beside the
# tests (it prints only findings). The harness module's tests run beside the product's,
# its output printed after theirs; ./interop/ is listed first so its tests, the longest,
# start while the other packages still compile; -p 2 each on two cores because most of the
# real-process tests' time is waiting. The raft and controller simulators run a few seeds
# under -race, then their full count without it (raft/sim_test.go: defaultSeeds,
# controller/simbrokers_test.go: defaultBrokerSeeds).
test:
	@$(MAKE) --no-print-directory interop-deps || echo "interop-deps failed: the interop tests will skip"
	@$(MAKE) --no-print-directory -j2 vet test-race
	$(GO) test -count=1 -timeout 3m -run '^TestSim' ./raft ./controller

test-race:
	@echo "$(GO) test -race -count=1 -p 2 -timeout 8m ./... & (cd $(HARNESS) && $(GO) test -race -count=1 -p 2 -timeout 8m ./interop/ ./...)"
	@out=$$(mktemp); \
	(cd $(HARNESS) && $(GO) test -race -count=1 -p 2 -timeout 8m ./interop/ ./... >$$out.log 2>&1; echo $$? >$$out.rc) & harness=$$!; \
	$(GO) test -race -count=1 -p 2 -timeout 8m ./...; product=$$?; \
	wait $$harness; echo "--- $(HARNESS)/ (harness module)"; cat $$out.log; status=$$(cat $$out.rc); rm -f $$out $$out.log $$out.rc; \
	./scripts/interop-status.sh; [ $$product -eq 0 ] && [ $$status -eq 0 ]

# Interop scenarios too long for make test (tests named ...Long, build tag interoplong):
# more mixed dynamic quorums and voter changes, JVM brokers beside kraftd and the
# controller-less windows under kills, against Kafka 4.4.0.
interop-long: interop-deps
	cd $(HARNESS) && $(GO) test -tags interoplong -count=1 -timeout 60m -run 'Long$$' ./interop/

run: build
	./scripts/run-local.sh

# A local Kafka cluster: three kraftd controllers (CONTROLLERS=kafka: Kafka 4.4.0's) and
# three Kafka 4.4.0 brokers from the interop jars, until Ctrl-C; CLUSTER_DETACH=1 returns
# with it running and cluster-stop stops it. Data and logs in CLUSTER_DIR (./cluster-data);
# settings in scripts/cluster.sh. Kafka's tools run from the same jars: scripts/kafka-tool.sh.
CONTROLLERS ?= kraftd
CLUSTER_DIR ?= cluster-data
cluster: build
	CONTROLLERS=$(CONTROLLERS) CLUSTER_DIR=$(CLUSTER_DIR) KRAFTD_BIN=$(CURDIR)/$(BIN) ./scripts/cluster.sh start

cluster-stop:
	CLUSTER_DIR=$(CLUSTER_DIR) ./scripts/cluster.sh stop

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Three local test-kraft-server-start processes, 256 B records, fsync'd logs:
# 20,000 records/s with linger 0 and 25 ms, then unthrottled with at most 1000
# records in flight; median of 3 runs of 30 s. BENCH_QUORUM_FLAGS passes e.g.
# "-runs 1 -seconds 10 -scenarios a0 -cpuprofile-dir /tmp/prof".
BENCH_QUORUM_FLAGS ?=
bench-quorum: build
	cd $(HARNESS) && $(GO) run ./cmd/benchquorum -bin $(CURDIR)/$(BIN) $(BENCH_QUORUM_FLAGS)

# The cost of listener security: the unthrottled scenario over PLAINTEXT, SSL (mutual TLS)
# and SASL_SSL (PLAIN), runs interleaved, certificates made for the run.
bench-quorum-tls: build
	cd $(HARNESS) && $(GO) run ./cmd/benchquorum -bin $(CURDIR)/$(BIN) -scenarios b -security PLAINTEXT,SSL,SASL_SSL $(BENCH_QUORUM_FLAGS)

# Short fuzzing of every fuzz target (the seed corpora also run under make test).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done
	@cd $(HARNESS) && for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Apache Kafka 4.4.0 jars for interop tests, fetched into test/interop/lib (git-ignored) when
# it is missing, incomplete (no marker: an interrupted copy) or older than test/interop/pom.xml
# (the marker holds the pom's hash).
interop-deps:
	@cd $(HARNESS)/interop && sum=$$(sha256sum pom.xml | cut -d' ' -f1); \
	if [ -f lib/.complete ] && [ "$$(cat lib/.complete)" = "$$sum" ]; then echo "test/interop/lib up to date"; \
	elif ! command -v mvn >/dev/null 2>&1; then echo "mvn not found: interop tests will skip (and fail under KRAFTD_INTEROP=required)"; \
	else rm -rf lib && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib && echo "$$sum" > lib/.complete && echo "test/interop/lib: $$(ls lib | wc -l) jars"; fi

# One report with plots: kraftd, Kafka 4.4.0 TestRaftServer and etcd raft (bench/peers, its
# own module) at linger 0 and 25: a sweep of offered rates, a search for each system's highest
# sustained rate, overload at 1.25x and 1.5x of it; writes docs/bench/README.md, results.csv
# and SVG plots (about 80 minutes; BENCH_REPORT_QUICK=1 is a smoke run of about 12 minutes).
# Settings: test/interop/bench_report_test.go.
bench-report: interop-deps
	cd $(HARNESS) && $(GO) test -tags interopbench -count=1 -timeout 120m -run '^TestBenchReport$$' -v ./interop/

# kraftd as the active controller against three Kafka 4.4.0 controllers, driven over the wire
# by test/controllerload (simulated brokers, CreateTopics straight to the active controller):
# topic creation, image scale, failover, heartbeat load and broker failure storms, the
# systems' runs interleaved; writes docs/bench/controller/README.md, a CSV per scenario and
# SVG plots (hours at full scale). BENCH_CONTROLLER_QUICK=1 is a smoke run at small scale
# into a temporary directory. Settings: test/interop/bench_controller_test.go.
bench-controller: interop-deps
	cd $(HARNESS) && $(GO) test -tags interopbench -count=1 -timeout 600m -run '^TestBenchController$$' -v ./interop/

# The active controller in a cluster, side by side: three kraftd or three Kafka controllers,
# each with three Kafka 4.4.0 brokers and a producer and consumer group: start to a created
# topic, controller CPU and RSS, broker fencing, controller failover; writes
# docs/bench/controller/cluster.md (about 15 minutes). Settings: BENCH_CLUSTER_ROUNDS,
# BENCH_CLUSTER_SECONDS (test/interop/controller_cluster_bench_test.go).
bench-controller-cluster: interop-deps
	cd $(HARNESS) && $(GO) test -tags interopbench,interoplong -count=1 -timeout 60m -run '^TestControllerClusterBench$$' -v ./interop/

# Seeds SEED_BASE..SEED_BASE+SEEDS-1 of every simulator mix; prints a summary per mix and
# the replay command of any failing seed; exits non-zero on any violation. The test binary
# runs directly so the summaries show without -v.
sim:
	$(GO) test -c -o bin/raft-sim.test ./raft
	cd raft && ../bin/raft-sim.test -test.run 'TestSimSeeds' -test.timeout 0 -sim.seeds=$(SEEDS) -sim.base=$(SEED_BASE)

# The same for the controller's broker simulator (controller/simbrokers_test.go): seeds
# SEED_BASE..SEED_BASE+SEEDS-1 of three controllers driven by simulated brokers and an admin
# under crashes, partitions and failovers; a summary, and the replay command of a failing seed.
sim-controller:
	$(GO) test -c -o bin/controller-sim.test ./controller
	cd controller && ../bin/controller-sim.test -test.run '^TestSimBrokers$$' -test.timeout 0 -sim.seeds=$(SEEDS) -sim.base=$(SEED_BASE)

# Side by side: three Kafka 4.4.0 TestRaftServer nodes, then three kraftd nodes, same record
# size and offered rate, then each at its highest rate (needs make interop-deps; minutes).
# Settings: BENCH_INTEROP_RATE, BENCH_INTEROP_SECONDS, BENCH_INTEROP_WARMUP,
# BENCH_INTEROP_SCENARIOS=rate,max ... (see test/interop/bench_interop_test.go).
bench-interop: interop-deps
	cd $(HARNESS) && $(GO) test -tags interopbench -count=1 -timeout 60m -run '^TestBenchInterop$$' -v ./interop/

# The hostile-client suite (cmd/controller/hostile_test.go), each attack for
# HOSTILE_DURATION against a running 3-node quorum; prints a table of each
# attack's peak RSS and commit rate next to the rate without it, and fails when
# an attack leaves less than half of that rate (make test only reports it).
HOSTILE_DURATION ?= 2m
soak-hostile:
	KRAFTD_HOSTILE_DURATION=$(HOSTILE_DURATION) $(GO) test -count=1 -timeout 0 -run 'Hostile' -v ./cmd/controller/

# The same attacks against Apache Kafka 4.4.0's TestRaftServer quorum (needs make
# interop-deps): the reference table to read beside soak-hostile's; then every
# controller api with hostile bodies against an active kraftd controller, judged, and
# against an active Kafka controller, logged (test/interop/hostile_controller_test.go).
soak-hostile-kafka: interop-deps
	cd $(HARNESS) && KRAFTD_HOSTILE_DURATION=$(HOSTILE_DURATION) $(GO) test -tags interophostile -count=1 -timeout 0 -run '^(TestHostileAgainstKafka|TestHostileControllerApisActive)$$' -v ./interop/

# Release binaries: static (no cgo), trimmed paths, version and commit stamped (controller
# version), for each of DIST_PLATFORMS, with their SHA-256 sums in dist/SHA256SUMS.
DIST_PLATFORMS ?= linux/amd64 linux/arm64
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
VERSION_PKG := github.com/kraftd/kraftd/internal/version
DIST_LDFLAGS := -s -w -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT)
dist:
	@rm -rf dist && mkdir -p dist
	@for p in $(DIST_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; out=dist/controller-$$os-$$arch; echo "build $$out ($(VERSION))"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false -ldflags '$(DIST_LDFLAGS)' -o $$out ./cmd/controller || exit 1; \
	done
	@cd dist && sha256sum controller-* > SHA256SUMS && cat SHA256SUMS

# An OCI image FROM scratch (Containerfile): the binary, Debian's CA bundle, a non-root user
# and the /var/lib/kraftd volume, built with podman, buildah or docker; nothing is pulled.
IMAGE ?= localhost/kraftd:$(VERSION)
image: dist
	IMAGE=$(IMAGE) VERSION=$(VERSION) ./scripts/build-image.sh

# Builds the image and runs a 3-node quorum of its containers configured by environment
# variables (scripts/test-image.sh; CONTAINER_RUNTIME and RUN_FLAGS adapt it to a sandbox);
# prints SKIPPED and succeeds where no runtime can run containers. Not part of make test.
test-image:
	IMAGE=$(IMAGE) VERSION=$(VERSION) ./scripts/test-image.sh

# The real-process fault suite (test/faults/, see its doc.go for the fault-matrix rows): every
# scenario once, then the seeded nemesis run on three kraftd processes for FAULT_MINUTES and
# on the two mixed quorums with Kafka 4.4.0 (2+1, 1+2) for FAULT_MIXED_MINUTES each, checked
# after every round. The seed is printed with a replay command; FAULT_SEED=N replays a
# schedule. Needs root for the tmpfs disk-full test. A short subset runs in make test.
FAULT_MINUTES ?= 10
FAULT_MIXED_MINUTES ?= 2
FAULT_SEED ?=
FAULT_TIMEOUT ?= 0
.PHONY: faults faults-ci
faults:
	cd $(HARNESS) && $(GO) vet -tags faults ./faults/
	cd $(HARNESS) && FAULT_MINUTES=$(FAULT_MINUTES) FAULT_MIXED_MINUTES=$(FAULT_MIXED_MINUTES) FAULT_SEED=$(FAULT_SEED) $(GO) test -tags faults -count=1 -timeout $(FAULT_TIMEOUT) -v ./faults/

# CI's fault run (.ci/run): every fault scenario once, then the nemesis for a minute on
# three kraftd processes and on each mixed quorum (about 10 minutes on two cores).
faults-ci:
	@$(MAKE) --no-print-directory faults FAULT_MINUTES=1 FAULT_MIXED_MINUTES=1 FAULT_TIMEOUT=30m
