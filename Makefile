# Salience. `make run` builds and starts the server on $(ADDR) (127.0.0.1:7700) with ./data;
# `make test` is the one test command (CI runs it, `make cross` and `make lint`, then
# `make test-neo4j` and `make test-neo4j-latest`, installing Java and Maven when missing and
# failing when they cannot run, then the fault suites: `make fuzz-api`, `make test-diskfull`,
# `make soak`, and `make test-browser`).

GO        ?= go
BIN       ?= bin/salience
BENCH_BIN ?= bin/salience-bench
ADDR      ?= $(or $(SALIENCE_ADDR),127.0.0.1:7700)
BENCHTIME ?= 1s
FUZZTIME  ?= 10s
# A new input's minimization is bounded by runs, not time, so a slow minimization cannot
# outlast FUZZTIME.
FUZZMINIMIZE ?= 1000x
# Packages on the recall and ingest hot paths.
BENCH_PKGS ?= ./index/... ./nlp/... ./embed/... ./recall/... ./store/... ./server/... ./internal/app/...

.PHONY: build build-bench run test test-neo4j test-neo4j-latest cross bench lint smoke fuzz fuzz-api soak soak-long test-diskfull test-browser clean

build:
	$(GO) build -o $(BIN) ./cmd/salience

# The developer tools (benchmarks, soak, evaluations), kept out of the server binary.
build-bench:
	$(GO) build -o $(BENCH_BIN) ./cmd/salience-bench

run: build
	./$(BIN) serve --addr $(ADDR)

# -race also turns on checkptr, which checks every unsafe.Pointer conversion at run time. In
# modernc.org's SQLite — C translated to Go, pointer arithmetic on its own allocator's memory
# throughout — that check made the SQLite-heavy packages two to three times slower under
# -race (store/sqlite 118 s → 76 s without it). The race detector still instruments those
# packages, and checkptr stays on for ours.
RACE_GCFLAGS ?= modernc.org/...=-d=checkptr=0

test:
	$(GO) test -race -gcflags=$(RACE_GCFLAGS) ./...
	$(GO) test -tags purego ./index/ # the kernels' portable fallbacks (dot_other.go), on amd64 too
	GOARCH=arm64 $(GO) vet ./index # and they build where they are the only kernels
	@[ -n "$$SALIENCE_NEO4J_URI" ] || echo "make test: the Neo4j store tests were skipped (no SALIENCE_NEO4J_URI); run make test-neo4j (needs Java 17 and mvn)"

# The tests that need a real Neo4j (store/storetest on the Neo4j store, two servers on one
# Neo4j): scripts/neo4j/run.sh fetches Neo4j 5 Community through Maven (cached in
# ~/.m2/repository, or SALIENCE_M2), starts it on a free loopback port, runs them with
# SALIENCE_NEO4J_URI set and stops it. Needs Java 17 and mvn; `make test` needs neither.
# The two run one after the other: they share the one database and wipe it.
test-neo4j:
	scripts/neo4j/run.sh sh -c '$(GO) test -race -gcflags=$(RACE_GCFLAGS) -count=1 ./store/neo4j/... && $(GO) test -race -gcflags=$(RACE_GCFLAGS) -count=1 -run Neo4j ./internal/app/ ./cmd/salience-bench/'

# The Neo4j store's tests against the newest Neo4j as well (NEO4J_LATEST, a calendar
# version: Java 21 or later, found under /usr/lib/jvm or named by NEO4J_JAVA), where vector
# search filters by namespace inside the index (store/neo4j/schema.go), a path Neo4j 5 lacks.
NEO4J_LATEST ?= 2026.08.1
test-neo4j-latest:
	NEO4J_VERSION=$(NEO4J_LATEST) scripts/neo4j/run.sh $(GO) test -race -gcflags=$(RACE_GCFLAGS) -count=1 ./store/neo4j/...

# The platforms the server builds for besides this one (build only; CI runs it): file locks
# and CPU time are per platform (lock_*.go, journal_lock_*.go, cputime_*.go).
CROSS_TARGETS ?= linux/arm64 darwin/arm64 windows/amd64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		echo "GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./..."; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./...; \
	done

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(BENCH_PKGS)

# deadcode lists functions no build reaches (tests included); the list must stay empty.
DEADCODE ?= golang.org/x/tools/cmd/deadcode@v0.52.0
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -l reports:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@out=$$($(GO) run $(DEADCODE) -test ./...); if [ -n "$$out" ]; then echo "deadcode reports:"; echo "$$out"; exit 1; fi

smoke:
	@if [ -f ../shared/bin/smoke ]; then bash ../shared/bin/smoke; else echo "smoke: ../shared/bin/smoke not found, skipped"; fi

# Runs every fuzz target for FUZZTIME each (go test fuzzes one target at a time); a run that
# stops on Go 1.26's fuzztime deadline race with no failing input is retried once
# (scripts/fuzz.sh says why).
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZE=$(FUZZMINIMIZE) bash scripts/fuzz.sh

# Schemathesis against a live server's /openapi.yaml: every operation, with an admin key and
# without keys; no 5xx, every response valid against the document. A few minutes; installs
# Schemathesis into a virtualenv under ~/.cache/salience on first use.
fuzz-api:
	bash scripts/schemathesis.sh

# A full disk: the data directory on an 8 MB tmpfs, filled. Needs root or unprivileged user
# namespaces (it re-runs itself under unshare); with neither it fails (SALIENCE_DISKFULL_REQUIRED=1),
# so CI cannot pass it by skipping. Run by hand without the variable, it skips instead.
test-diskfull:
	SALIENCE_DISKFULL=1 SALIENCE_DISKFULL_REQUIRED=1 $(GO) test -race -gcflags=$(RACE_GCFLAGS) -count=1 -v -run '^TestDiskFull$$' ./internal/app

# The experiment report's HTML page in headless Chromium (tables, plots, no console errors,
# a screenshot). scripts/chromium/install installs Debian's chromium when none is on PATH.
# SCREENSHOT=docs/experiment-report.png also saves the screenshot (docs/reference.md shows it).
test-browser:
	scripts/chromium/install
	SALIENCE_BROWSER=1 SALIENCE_SCREENSHOT=$(SCREENSHOT) $(GO) test -count=1 -v -run '^TestExperimentReportInBrowser$$' ./internal/app

# Mixed ingest, recall and engagement from several clients against a spawned server; fails on
# any 5xx, a WAL over 64 MB, or RSS at the end over 1.1 × RSS after the first third.
# soak is the short setting CI runs; soak-long is the 60 s, 4-client one of issue 8.
SOAK_DURATION ?= 20s
SOAK_CLIENTS  ?= 4
soak: build build-bench
	./$(BENCH_BIN) soak --salience $(BIN) --duration $(SOAK_DURATION) --clients $(SOAK_CLIENTS)

soak-long: build build-bench
	./$(BENCH_BIN) soak --salience $(BIN) --duration 60s --clients 4

clean:
	rm -rf bin
