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

.PHONY: build run test vet race fuzz fuzz-short bench tools clean

build:
	$(GO) build -o $(BIN)/jetwal ./cmd/jetwal

run: build
	$(BIN)/jetwal serve -js $(if $(STORE_DIR),-sd $(STORE_DIR))

tools: $(NATS)

$(NATS):
	GOBIN=$(BIN) $(GO) install github.com/nats-io/natscli/nats@$(NATSCLI_VERSION)

vet:
	$(GO) vet ./...

test: tools vet
	$(GO) test -race -timeout 20m ./...
	$(MAKE) fuzz-short

race: test

# FUZZ_TARGETS lists "package:FuzzName" pairs.
FUZZ_TARGETS :=

fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($(SHORTFUZZ))"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(SHORTFUZZ) $$pkg || exit 1; \
	done

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN)
