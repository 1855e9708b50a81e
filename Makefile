# kraftd: make run (local 3-node quorum with the test workload), make test.
GO ?= go
BIN := bin/controller
SEEDS ?= 1000
SEED_BASE ?= 1

.PHONY: build test run bench fuzz interop-deps sim vet

build:
	$(GO) build -o $(BIN) ./cmd/controller

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 -timeout 9m ./...

run: build
	./scripts/run-local.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Short fuzzing of every fuzz target (the seed corpora also run under make test).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Apache Kafka 4.4.0 jars for interop tests, fetched once into interop/lib.
interop-deps:
	@if [ -f interop/lib/.complete ]; then echo "interop/lib present"; \
	elif ! command -v mvn >/dev/null 2>&1; then echo "mvn not found: interop tests will skip"; \
	else cd interop && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib && touch lib/.complete; fi

sim:
	$(GO) test -count=1 -timeout 0 -run 'TestSimSeeds' ./raft -sim.seeds=$(SEEDS) -sim.base=$(SEED_BASE)
