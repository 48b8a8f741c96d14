# Flowmeter: the two commands are `make demo` and `make test`; both install what is missing first.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
RELEASE_BIN = .build/release
# The Swift driver leaves a TemporaryDirectory.* folder in TMPDIR for every compile; builds keep theirs in .build.
BUILD_TMP = $(CURDIR)/.build/tmp
SWIFT_BUILD = mkdir -p $(BUILD_TMP) && TMPDIR=$(BUILD_TMP) $(SWIFT) build
CLEAN_BUILD_TMP = rm -rf $(BUILD_TMP)

.PHONY: all deps deps-test deps-bench build release test fuzz fuzz-corpus demo bench bench-decode bench-rollups bench-sink bench-store \
	bench-reporter bench-instructions bench-detector bench-compatibility lint clean help test-soak

help:
	@echo "make demo          run the pipeline end to end on the embedded default (installs what is missing)"
	@echo "make test          build and run every test, then swift format lint --strict (installs what is missing)"
	@echo "make test-soak     the whole suite SOAK_RUNS times (default 5), SOAK_BUSY=1 with every core kept busy;"
	@echo "                   prints each test that failed in any run, with its failure (scripts/test-soak.sh)"
	@echo "make fuzz          every libFuzzer target for FUZZ_SECONDS each (default 60), ASan build in .build-fuzz"
	@echo "make bench-decode  fast decode path vs Foundation Codable, events/s per core, same batches, same run"
	@echo "make bench         collector vs the Python peer per CPU-second: ack mode x connections x encoding x batch"
	@echo "                   set, 3 rounds of 8 s each, medians, ratios and the issue-15 verdict (about 17 min);"
	@echo "                   one row: make bench BENCH_ARGS=\"--ack delivered --connections 32 --encodings plain\""
	@echo "                   (also --batches distinct,repeated --rounds N --seconds N --skip-peer --skip-spool"
	@echo "                   --markdown PATH; Markdown summary in .build/bench/ingest-<commit>.md)"
	@echo "make bench-sink    the sink's step (decode, dedupe, aggregate, SQLite commit) per CPU-second, one core,"
	@echo "                   worst case and recent traffic; then a real flowmeter sink process's peak RSS under load"
	@echo "make bench-store   the detector's queries over 30 days of minute rollups, SQLite and PostgreSQL"
	@echo "make bench-detector  the spike detector over weeks of seeded noisy traffic with planted incidents: false"
	@echo "                   incidents per app per week, detection delay (BENCH_ARGS=\"--days 56 --seeds 10\")"
	@echo "make bench-reporter  the client SDK: ns per record, bytes on disk per event, upload bytes per 1,000 events"
	@echo "make bench-instructions  instructions per event per ingest stage under callgrind (BASE=<commit> compares)"
	@echo "make lint          swift format lint --strict"

all: build

deps:
	@scripts/install-deps.sh build

deps-test:
	@scripts/install-deps.sh test

deps-bench:
	@scripts/install-deps.sh bench

build: deps
	$(SWIFT_BUILD) $(SWIFT_BUILD_FLAGS)
	@$(CLEAN_BUILD_TMP)

release: deps
	$(SWIFT_BUILD) -c release $(SWIFT_BUILD_FLAGS)
	@$(CLEAN_BUILD_TMP)

# Swift Testing runs every test in parallel by default; many tests start servers (the mock cluster, PostgreSQL,
# Prometheus, Alertmanager, Chromium, the collector itself), so on 2 cores at most TEST_PARALLELISM run at once.
TEST_PARALLELISM ?= 4

test: deps-test
	@# What an app compiles, held to what builds on iOS 15 and macOS 12 (docs/reporter.md, "What Linux proves").
	scripts/portability-gate.py
	$(SWIFT_BUILD) --build-tests $(SWIFT_BUILD_FLAGS)
	@$(CLEAN_BUILD_TMP)
	@# swift test's driver queries leave TemporaryDirectory.* folders in TMPDIR, which the tests themselves must keep
	@# (their temporary folders live there): remove the driver's, the ones made during the run, whatever its outcome.
	@marker=$$(mktemp); status=0; \
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_PARALLELISM) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) \
		|| status=$$?; \
	find "$${TMPDIR:-/tmp}" -maxdepth 1 -name 'TemporaryDirectory.*' -newer "$$marker" -user "$$(id -u)" \
		-exec rm -rf {} +; \
	rm -f "$$marker"; exit $$status
	scripts/fuzz.sh corpus
	$(SWIFT) format lint --strict --recursive Sources Tests Examples Package.swift

# The whole suite SOAK_RUNS times, optionally with every core kept busy by a CPU hog (SOAK_BUSY=1); prints each test
# that failed in any run with its failure. A test that fails once in a soak is a bug (docs/testing.md).
SOAK_RUNS ?= 5
SOAK_BUSY ?= 0

test-soak: deps-test
	scripts/test-soak.sh $(SOAK_RUNS) $(if $(filter 1,$(SOAK_BUSY)),--busy)

# The fuzz targets (docs/fuzzing.md), built with -sanitize=fuzzer,address into .build-fuzz, apart from .build.
FUZZ_SECONDS ?= 60

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh run

# Each fuzz target once over its checked-in corpus, under the sanitizers (also part of make test).
fuzz-corpus: deps
	scripts/fuzz.sh corpus

demo: release
	$(RELEASE_BIN)/flowmeter demo $(if $(filter true,$(CI)),--exit,)

bench-decode: release
	$(RELEASE_BIN)/flowmeter-bench decode

# The sink's step on the ingest benchmark's batches as batch records, one core: records and events per CPU-second of
# decode, aggregation and the whole step on SQLite, beside the collector's decode+write (flowmeter-bench sink --help).
bench-sink: release
	$(RELEASE_BIN)/flowmeter-bench sink $(BENCH_ARGS)
	$(RELEASE_BIN)/flowmeter-bench sink --only process --recent --rounds 60
	$(RELEASE_BIN)/flowmeter-bench sink --only process --rounds 60
	$(RELEASE_BIN)/flowmeter-bench sink --only process --backlog --recent --rounds 40
	$(RELEASE_BIN)/flowmeter-bench sink --only process --backlog --rounds 40

# The collector's rollup aggregator alone, one core: nanoseconds per event on the ingest benchmark's 512 distinct
# batches against its one repeated batch, drained as under make bench's load (flowmeter-bench rollups --help).
bench-rollups: release
	$(RELEASE_BIN)/flowmeter-bench rollups $(BENCH_ARGS)

# 30 days of minute rollups in SQLite and PostgreSQL, the detector's queries timed.
bench-store: release
	$(RELEASE_BIN)/flowmeter-bench store --postgres $(BENCH_ARGS)

# Flowmeter's collector and the Python peer in bench/peer_python under the same load, the matrix of
# docs/performance.md; BENCH_ARGS narrows it (flowmeter-bench ingest --help lists the options). Then a real
# flowmeter sink on the same machine, on recent traffic and on the ingest benchmark's own batches (spread over a day:
# the sink's worst case), for its events per CPU-second beside the collector's: fed as fast as it counts, then from a
# backlog written before it started (a sink behind, whose steps span polls: its capacity per core).
bench: release
	$(RELEASE_BIN)/flowmeter-bench ingest $(BENCH_ARGS)
	$(RELEASE_BIN)/flowmeter-bench sink --only process --recent --rounds 60
	$(RELEASE_BIN)/flowmeter-bench sink --only process --rounds 60
	$(RELEASE_BIN)/flowmeter-bench sink --only process --backlog --recent --rounds 40
	$(RELEASE_BIN)/flowmeter-bench sink --only process --backlog --rounds 40
	$(RELEASE_BIN)/flowmeter-bench compatibility --connections 128 --requests 100000 --seconds 60

# GET /v1/compatibility alone: p99 latency and requests per CPU-second of serve at 128 connections
# (docs/compatibility.md); BENCH_ARGS changes it (flowmeter-bench compatibility --help).
bench-compatibility: release
	$(RELEASE_BIN)/flowmeter-bench compatibility $(BENCH_ARGS)

# The spike detector over weeks of seeded synthetic traffic (DetectorBenchmarks.LongTraffic) with issue 39's planted
# causes: each found once with its deploy, false incidents per app per week, detection delay (docs/detector.md).
bench-detector: release
	$(RELEASE_BIN)/flowmeter-bench detector $(BENCH_ARGS)

# FlowmeterReporter: record cost and bytes written per event, upload bytes per 1,000 events with and without
# pre-aggregation, side by side (in process, no network).
bench-reporter: release
	$(RELEASE_BIN)/flowmeter-bench reporter $(BENCH_ARGS)

# A fixed number of requests through the collector in one process under callgrind: instructions per event per stage,
# which repeat where timings do not (docs/performance.md). BASE=<commit> compares with that commit's run; BENCH_ARGS
# adds options (--requests N, --ack enqueue, --encoding gzip, --ids none). Then the sink's step the same way
# (scripts/bench-instructions-sink.py: two runs of flowmeter-bench sink that differ only in rounds, per event).
bench-instructions: release deps-bench
	BASE=$(BASE) scripts/bench-instructions.py $(BENCH_ARGS)
	BASE=$(BASE) scripts/bench-instructions-sink.py

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Examples Package.swift

clean:
	rm -rf .build .build-fuzz
