# jetwal Makefile. `make run` and `make test` are the two commands a fresh
# machine needs; everything the tests use is installed here at pinned versions.

GO       ?= go
BIN      := $(CURDIR)/.bin
NATSCLI_VERSION := v0.5.0
NATS     := $(BIN)/nats
FUZZTIME ?= 10s
SHORTFUZZ ?= 3s
STORE_DIR ?=

export PATH := $(BIN):$(PATH)
export JETWAL_NATS_CLI := $(NATS)

.PHONY: licenses build run cluster cluster-chaos bench-cluster bench-cluster-scale test vet race fuzz fuzz-short crash crash-short hardening bench tools clean benchstat bench-engine-compare bench-engine-peer peer bench-tool bench-compare bench-compare-quick bench-smoke bench-core test-raftstore bench-raft compat compat-quick compat-deps

build:
	$(GO) build -o $(BIN)/jetwal ./cmd/jetwal

run: build
	$(BIN)/jetwal serve -js $(if $(STORE_DIR),-sd $(STORE_DIR))

# Three servers on this machine, routed into one cluster: clients on ports
# 4222-4224, routes on 6222-6224, stores under $TMPDIR/jetwal-cluster/nN.
# Ctrl-C stops all three.
CLUSTER_DIR ?= $(or $(TMPDIR),/tmp)/jetwal-cluster
cluster: build
	@mkdir -p $(CLUSTER_DIR)/n1 $(CLUSTER_DIR)/n2 $(CLUSTER_DIR)/n3
	@trap 'kill 0' INT TERM EXIT; \
	for i in 1 2 3; do \
		$(BIN)/jetwal serve -js -n n$$i -p 422$$((i+1)) -sd $(CLUSTER_DIR)/n$$i \
			--cluster_name C --cluster nats://127.0.0.1:622$$((i+1)) \
			--routes nats://127.0.0.1:6222,nats://127.0.0.1:6223,nats://127.0.0.1:6224 & \
	done; wait

tools: $(NATS)

$(NATS):
	GOBIN=$(BIN) $(GO) install github.com/nats-io/natscli/nats@$(NATSCLI_VERSION)

# The license of every module linked into the jetwal binary, from the module
# cache (no network); fails if one has no recognisable license file or is
# missing from NOTICE. `make test` runs the same test with ./... .
licenses:
	$(GO) test -count=1 -run '^TestLicenses$$' -v ./internal/lint

vet:
	$(GO) vet ./...
	$(GO) vet -tags netns ./crashtest
	cd raftstore/bench && $(GO) vet ./...
	cd compat && $(GO) vet ./...

test: tools vet
	$(GO) test -race -timeout 20m ./...
	$(MAKE) fuzz-short
	$(MAKE) bench-smoke
	$(MAKE) compat-quick

race: test

# FUZZ_TARGETS lists "package:FuzzName" pairs.
FUZZ_TARGETS := ./fuzz:FuzzSegmentDecode ./fuzz:FuzzSubjectMatch ./fuzz:FuzzRecover \
	./fuzz:FuzzJetStreamAPI ./server:FuzzProtocolParser \
	./consumerstate:FuzzConsumerStateDecode ./consumerstate:FuzzConsumerLogReplay \
	./subject:FuzzValidLiteral ./jetstream/validate:FuzzStreamConfig ./jetstream:FuzzPubHeaders \
	./raftlog:FuzzRaftlogRecover ./subject/transform:FuzzTransform ./jetstream/internal/archive:FuzzReadArchive \
	./raftstore/stream:FuzzStreamEntryDecode ./raftstore/stream:FuzzSnapshotState ./jetstream:FuzzSchedulePattern ./jetstream:FuzzParseFastReply \
	./server/websocket:FuzzFrames \
	./crypt:FuzzOpenSealed ./raftstore/mux:FuzzBeatRound

# fuzz/run.sh runs each target in turn (and retries once the fuzz engine's
# own spurious "context deadline exceeded" report, see there).
fuzz-short:
	@sh fuzz/run.sh $(GO) $(SHORTFUZZ) $(FUZZ_TARGETS)

# Process-level kill -9 crash tests (crashtest/): 200 cycles, or
# CRASH_CYCLES; `make test` runs the 20-cycle short version with ./... .
CRASH_CYCLES ?= 200

crash:
	JETWAL_CRASH_CYCLES=$(CRASH_CYCLES) $(GO) test -count=1 -v -timeout 60m -run 'TestKill9|TestBitRot|TestDiskFull' ./crashtest

# Clustered JetStream under kill -9 (crashtest/cluster_test.go): three server
# processes, the R3 stream's leader killed while publishers and a consumer
# run, CLUSTER_CYCLES times; every acknowledged message kept at its
# sequence, no confirmed ack redelivered, replicas identical at the end;
# then 30 s of concurrent KV puts and gets through a leader kill, checked
# for linearizability with porcupine; then 10 network partitions of the
# leader (crashtest/partition_test.go, build tag netns: each server in a
# network namespace of its own; needs root); then a rolling restart in lame
# duck mode of a 3- and a 5-server cluster under load, replica changes and
# a peer-remove under load, and the KV check through a stream move. `make
# test` runs 2 kill cycles, 6 s of each KV check, the 3-server roll and the
# replica changes, not the partitions.
CLUSTER_CYCLES ?= 20
cluster-chaos:
	JETWAL_CLUSTER_CYCLES=$(CLUSTER_CYCLES) JETWAL_LIN_SECONDS=30 JETWAL_PARTITION_CYCLES=10 JETWAL_ROLLING_SIZES=3,5 \
		$(GO) test -tags netns -count=1 -v -timeout 60m -run 'TestClusterKill9|TestClusterLinearizableKV|TestClusterPartition|TestClusterRollingRestart|TestClusterMembershipUnderLoad' ./crashtest

crash-short:
	JETWAL_CRASH_CYCLES=20 $(GO) test -count=1 -v -timeout 10m ./crashtest

# The adversarial suite's long form (a few minutes): the API, wire and
# recovery fuzzers for HARDEN_FUZZTIME each, kill -9 loops over admin
# operations and publishing in every sync mode, and the damage matrix and
# crash-point tests. `make test` runs the short form of each.
HARDEN_FUZZTIME ?= 30s
HARDEN_FUZZ := ./fuzz:FuzzJetStreamAPI ./server:FuzzProtocolParser ./fuzz:FuzzRecover \
	./consumerstate:FuzzConsumerLogReplay ./raftlog:FuzzRaftlogRecover

hardening:
	@sh fuzz/run.sh $(GO) $(HARDEN_FUZZTIME) $(HARDEN_FUZZ)
	JETWAL_ADMIN_CYCLES=60 JETWAL_CRASH_CYCLES=40 $(GO) test -count=1 -timeout 30m -run 'TestKill9' ./crashtest
	$(GO) test -count=3 -run 'TestDamageMatrix|TestAdminCrashPoints|TestHardening|TestBlankFlood|TestSegmentFileDamage' ./cmd/jetwal ./jetstream ./server ./wal ./cluster

fuzz:
	@sh fuzz/run.sh $(GO) $(FUZZTIME) $(FUZZ_TARGETS)

# Engine micro-benchmarks of every package as one suite; each run is saved
# as bench/results/engine-<UTC timestamp>.txt for bench-engine-compare.
BENCHTIME  ?= 100ms
BENCHCOUNT ?= 6
BENCH_RESULTS := $(CURDIR)/bench/results

bench:
	@mkdir -p $(BENCH_RESULTS)
	@out=$(BENCH_RESULTS)/engine-$$(date -u +%Y%m%dT%H%M%SZ).txt; \
	echo "$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./... > $$out"; \
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) ./... > $$out 2>&1; st=$$?; \
	cat $$out; echo "saved $$out"; exit $$st

# benchstat of the two newest engine runs (older first).
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
BENCHSTAT := $(BIN)/benchstat

benchstat: $(BENCHSTAT)

$(BENCHSTAT):
	GOBIN=$(BIN) $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

bench-engine-compare: $(BENCHSTAT)
	@set -- $$(ls -1 $(BENCH_RESULTS)/engine-*.txt 2>/dev/null | sort | tail -n 2); \
	if [ $$# -lt 2 ]; then echo "bench-engine-compare: need two runs of 'make bench' in bench/results, found $$#"; exit 1; fi; \
	echo "benchstat old=$$1 new=$$2"; $(BENCHSTAT) old=$$1 new=$$2

# jetwal's stream store against nats-server v2.15.2's file store, the same
# workloads in one run (bench/enginepeer, in the bench module): appends
# without fsync, random loads, an ordered scan. benchstat puts the stores
# side by side, nats-server as the base.
PEER_BENCHTIME ?= 2s
PEER_COUNT     ?= 6

bench-engine-peer: $(BENCHSTAT)
	@mkdir -p $(BENCH_RESULTS)
	cd bench && $(GO) test -run '^$$' -bench . -benchtime $(PEER_BENCHTIME) -count $(PEER_COUNT) ./enginepeer > $(BENCH_RESULTS)/engine-peer.txt
	$(BENCHSTAT) -col '/store@(nats-server jetwal)' $(BENCH_RESULTS)/engine-peer.txt

# The reference server the comparison runs against, built from its module.
NATS_SERVER_VERSION := v2.15.2
NATS_SERVER := $(BIN)/nats-server

peer: $(NATS_SERVER)

$(NATS_SERVER):
	GOBIN=$(BIN) $(GO) install github.com/nats-io/nats-server/v2@$(NATS_SERVER_VERSION)

# Client compatibility (compat/): the nats.js v3 programs in compat/programs,
# pinned by compat/package-lock.json, and the nats.go programs in
# compat/goclient run against jetwal and nats-server side by side by the
# driver (nested module compat/, nats.go v1.55.0 as the root's), which prints a
# feature | jetwal | nats-server | same? table and fails on a difference not
# in compat/allow.txt. npm ci is the only step that needs the network; the
# runs themselves use loopback only. compat-quick is the subset `make test`
# runs. COMPAT_FLAGS passes driver flags, e.g. COMPAT_FLAGS='-v' or
# COMPAT_FLAGS='-features kv,go_kv'.
COMPAT_QUICK := core_pubsub,publish_ack,kv,direct_get,purge,consumer_pause,websocket,go_kv,go_pull,go_msgtrace,version_gates_214
COMPAT_FLAGS ?=
COMPAT_DEPS := compat/node_modules/.package-lock.json

compat-deps: $(COMPAT_DEPS)

$(COMPAT_DEPS): compat/package.json compat/package-lock.json
	@command -v node >/dev/null 2>&1 || { echo "compat: node (Node.js, tested with v20) is required to run the client programs; install it, e.g. apt-get install nodejs npm" >&2; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "compat: npm is required to install the pinned nats.js packages; install it, e.g. apt-get install npm" >&2; exit 1; }
	cd compat && npm ci --no-audit --no-fund

compat: build peer compat-deps
	cd compat && $(GO) run ./driver -go-tool $(GO) -jetwal $(BIN)/jetwal -nats-server $(NATS_SERVER) $(COMPAT_FLAGS)

compat-quick: build peer compat-deps
	cd compat && $(GO) test -count=1 ./...
	cd compat && $(GO) run ./driver -go-tool $(GO) -jetwal $(BIN)/jetwal -nats-server $(NATS_SERVER) -features $(COMPAT_QUICK) $(COMPAT_FLAGS)

# jetwal vs nats-server through nats.go (nested module bench/, its own go.mod).
# Full mode writes bench/results and the README's Performance section; quick
# mode writes bench/results/quick. BENCH_FLAGS passes extra flags, e.g.
# BENCH_FLAGS='-growth 1M,10M' (growth sizes; the default full run grows each
# server to 1M,10M,100M, about 11 minutes for both on a quiet 2-core machine,
# and stops appending when its 24-minute growth budget ends) or
# BENCH_FLAGS='-growth-only' (the growth test alone, against jetwal alone).
JETWAL_BENCH := $(BIN)/jetwal-bench
BENCH_FLAGS ?=

bench-tool:
	cd bench && $(GO) build -o $(JETWAL_BENCH) ./cmd/jetwal-bench

bench-compare: build peer bench-tool
	$(JETWAL_BENCH) -out bench/results -jetwal $(BIN)/jetwal -nats-server $(NATS_SERVER) -readme README.md $(BENCH_FLAGS)

# R3 side by side: three clustered jetwal servers and three clustered
# nats-server v2.15.2, `nats bench js pub async` and `js fetch` on an R3
# stream and the failover time (SIGKILL of the leader to the next
# successful publish); ROUNDS alternating runs; bench/results/cluster.txt.
# SYNC=always gives nats-server sync_interval: always (jetwal acknowledges
# after a quorum's fsync either way; bench/results/cluster-sync-always.txt);
# FETCH_EACH=1 adds fetches with the client on each server in turn,
# PUB_EACH=1 publishes likewise; TESTS
# picks tests (pub fetch failover).
CLUSTER_OUT = bench/results/cluster$(if $(SYNC),-sync-$(SYNC)).txt
bench-cluster: build peer tools
	MSGS=$${MSGS:-200000} sh bench/cluster/r3-compare.sh $(BIN)/jetwal $(NATS_SERVER) $(NATS) $(ROUNDS) > $(CLUSTER_OUT); \
		st=$$?; cat $(CLUSTER_OUT); exit $$st

# Many R3 streams (issue 49): SCALE_STREAMS R3 file streams with a durable
# each, on three jetwal servers, then on three nats-server v2.15.2 (one
# cluster at a time): create time, idle CPU, memory, descriptors and
# goroutines per server, restart of one server until every replica is
# current, SIGKILL of the meta leader until every group leads again. The
# table goes to bench/results/cluster-scale-$(SCALE_STREAMS).txt and .csv.
SCALE_STREAMS ?= 100

bench-cluster-scale: build peer
	cd bench && $(GO) build -o $(BIN)/jetwal-cluster-scale ./cmd/jetwal-cluster-scale
	@mkdir -p $(BENCH_RESULTS)
	$(BIN)/jetwal-cluster-scale -jetwal $(BIN)/jetwal -nats-server $(NATS_SERVER) -streams $(SCALE_STREAMS) \
		-csv $(BENCH_RESULTS)/cluster-scale-$(SCALE_STREAMS).csv > $(BENCH_RESULTS)/cluster-scale-$(SCALE_STREAMS).txt; \
		st=$$?; cat $(BENCH_RESULTS)/cluster-scale-$(SCALE_STREAMS).txt; exit $$st

# What grows with a deployment rather than its message rate, jetwal then
# nats-server on fresh stores: 2000 streams (create, idle CPU, memory,
# descriptors, stop, restart), 2000 durables on one stream (create, fetch
# and ack, descriptors, restart), and a durable filtered on one of two
# interleaved subjects of 1M messages (fetch rate). About 4 minutes. The
# figures are also written to bench/results/scale.txt, headed by the commit
# and the flags of the run.
SCALE_FLAGS ?=

bench-scale: build peer
	cd bench && $(GO) build -o $(BIN)/jetwal-scale ./cmd/jetwal-scale
	@mkdir -p $(BENCH_RESULTS)
	@{ echo "# make bench-scale SCALE_FLAGS='$(SCALE_FLAGS)' at $$(git rev-parse --short HEAD 2>/dev/null || echo unknown), $$(date -u +%Y-%m-%dT%H:%M:%SZ)"; \
	  $(BIN)/jetwal-scale -jetwal $(BIN)/jetwal -nats-server $(NATS_SERVER) $(SCALE_FLAGS); } > $(BENCH_RESULTS)/scale.txt 2>&1; \
	st=$$?; cat $(BENCH_RESULTS)/scale.txt; exit $$st

bench-compare-quick: build peer bench-tool
	$(JETWAL_BENCH) -quick -out bench/results/quick -jetwal $(BIN)/jetwal -nats-server $(NATS_SERVER) $(BENCH_FLAGS)

# Core NATS side by side with nats-server through `nats bench` (pub with no
# subscriber, pub+sub, request/reply latency); ROUNDS alternating runs each.
ROUNDS ?= 3

bench-core: build peer tools
	sh server/bench/nats-bench-compare.sh $(BIN)/jetwal $(NATS_SERVER) $(NATS) $(ROUNDS)

# The bench module's own tests, including a few-second smoke run of the
# comparison against nats-server and jetwal. Without -race: the tests pass
# under it, but gonum's chart rendering then takes ~20s instead of 0.3s.
bench-smoke: build peer
	cd bench && $(GO) test -short -count=1 -timeout 5m ./...

# The raft adapter alone (raftstore/, in the root module since the binary
# replicates; `make test` runs it with everything else): behaviour tests,
# the 3-node raft cluster tests over InmemTransport and TCP, the Example.
test-raftstore:
	$(GO) test -race -count=1 -timeout 5m ./raftstore/...

# jetwal's raft store against raft-wal and raft-boltdb/v2 in one run (nested
# module raftstore/bench): durable StoreLogs batches of 1/16/256 x 128 B/4 KiB,
# GetLog sequential and random, DeleteRange of a prefix, raft's own bench
# helpers, and reopening a 10M-entry store. Raw output goes to
# bench/results/raftstore-raw.txt, the table to bench/results/raftstore.md.
RAFT_BENCHTIME ?= 2s

bench-raft:
	@mkdir -p $(BENCH_RESULTS)
	cd raftstore/bench && $(GO) test -run '^$$' -bench . -benchmem -benchtime $(RAFT_BENCHTIME) -timeout 60m . > $(BENCH_RESULTS)/raftstore-raw.txt 2>&1; st=$$?; \
		cat $(BENCH_RESULTS)/raftstore-raw.txt; exit $$st
	cd raftstore/bench && $(GO) run ./cmd/raftbench-table -o $(BENCH_RESULTS)/raftstore.md < $(BENCH_RESULTS)/raftstore-raw.txt
	@echo "wrote $(BENCH_RESULTS)/raftstore.md"

clean:
	rm -rf $(BIN)
