#!/usr/bin/env python3
"""Instructions per event of the sink's step (docs/performance.md), the sink's half of make bench-instructions.

Runs `flowmeter-bench sink --only ROW --records-per-step 50 --rounds N` twice under `valgrind --tool=callgrind`
(with SWIFT_DETERMINISTIC_HASHING=1), with N = 2 and N = 6: the difference between the two runs is the
instructions of four rounds of 50 steps' worth of records (4 x 2,500 = 10,000 events, the 512 distinct batches of the
ingest benchmark; set-up, store creation and the first rounds excluded). Prints instructions per event in total and
for each stage (inclusive), and malloc calls per event, and writes them to
.build/bench-instructions/sink-<commit>.json; with BASE=<commit> (or a path to such a file) it prints each figure's
change against that run.

usage: scripts/bench-instructions-sink.py [--binary PATH] [--out-dir DIR] [--only step|recent] [--parse DIR]
  --only ROW   the bench row: step (the distinct batches, a series-minute per event: the default) or recent
  --parse DIR  re-reads the dumps already in DIR (a callgrind-sink-<commit> folder) instead of running anything

Stages are matched as in scripts/bench-instructions.py (whose parser this uses): demangled, simplified names,
matched from their start; a stage's cost is inclusive and stages overlap.
"""

import collections
import datetime
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("bench_instructions", os.path.join(HERE, "bench-instructions.py"))
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)

ROUNDS = (2, 6)
RECORDS_PER_STEP = 50
EVENTS_PER_ROUND = RECORDS_PER_STEP * 50

STAGES = [
    ("step", "the step (PartitionSteps.makeStep + commit)", [r"PartitionSteps\.(makeStep|commit)\("]),
    ("make_step", "  decode, dedupe, aggregate (PartitionSteps.makeStep)", [r"PartitionSteps\.makeStep\("]),
    ("decode", "    record decode (BatchRecordDecoder.decode)", [r"BatchRecordDecoder\.decode\("]),
    ("aggregate", "    aggregator (RollupAggregator.record, drain)", [r"RollupAggregator\.(record|drain)\("]),
    ("commit", "  store transaction (RollupWriter.commit)", [r"RollupWriter\.commit\("]),
    ("window_merge", "    window rows merged (WindowTable.merge, bulk)", [r"WindowTable\.merge\("]),
    ("sqlite_step", "    SQLite's own work (sqlite3_step)", [r"sqlite3_step$"]),
    ("read", "      stored rows read and decoded (WindowTable.read)", [r"WindowTable\.read\("]),
    ("insert", "      new rows inserted (WindowTable.insert)", [r"WindowTable\.insert\("]),
    ("upsert", "      rows that were there written back (WindowTable.upsert)", [r"WindowTable\.upsert\("]),
    ("bind", "      values bound (SQLiteStatement.bind)", [r"SQLiteStatement\.bind\("]),
    ("blobs", "      releases and samples coded (RollupBlobCodec)", [r"RollupBlobCodec\."]),
    ("first_seen", "    type_first_seen (TypeFirstSeenTable.record)", [r"TypeFirstSeenTable\.record\("]),
    ("dedupe", "    counted batches and offset (SinkPartitionsTable)", [r"SinkPartitionsTable\."]),
]


def run(binary, dump_dir, row, rounds):
    path = os.path.join(dump_dir, f"callgrind.out.{row}.rounds{rounds}")
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + path, binary, "sink", "--only", row,
               "--records-per-step", str(RECORDS_PER_STEP), "--rounds", str(rounds)]
    print("running: SWIFT_DETERMINISTIC_HASHING=1 " + " ".join(command), flush=True)
    environment = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1")
    completed = subprocess.run(command, env=environment, capture_output=True, text=True,
                               timeout=common.RUN_TIMEOUT_SECONDS)
    for line in completed.stdout.splitlines():
        if line.strip():
            print("  " + line, flush=True)
    if completed.returncode != 0:
        print(completed.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"error: the benchmark failed (status {completed.returncode})")
    return path


def measure(path, names):
    thread = common.parse_callgrind(path)
    costs = {"total": thread.total}
    for key, _, patterns in STAGES:
        compiled = [re.compile(pattern) for pattern in patterns]
        members = {raw for raw, name in names.items() if any(p.match(name) for p in compiled)}
        costs[key] = common.inclusive([thread], members)[0] if members else None
    costs["mallocs"] = sum(calls for (caller, callee), calls in thread.calls.items()
                           if common.ALLOCATING.match(names.get(callee[1], callee[1]))
                           and not common.ALLOCATING.match(names.get(caller[1], caller[1])))
    return costs


def main(argv):
    binary = ".build/release/flowmeter-bench"
    out_dir = ".build/bench-instructions"
    parse_dir = None
    row = "step"
    index = 0
    while index < len(argv):
        flag = argv[index]
        if flag in ("-h", "--help"):
            print(__doc__)
            return 0
        if flag in ("--binary", "--out-dir", "--parse", "--only") and index + 1 < len(argv):
            value = argv[index + 1]
            if flag == "--binary":
                binary = value
            elif flag == "--out-dir":
                out_dir = value
            elif flag == "--only":
                row = value
            else:
                parse_dir = value
            index += 2
            continue
        print(__doc__, file=sys.stderr)
        return 2

    commit, dirty = common.git_commit()
    name = "sink-" + row + "-" + commit + ("-dirty" if dirty else "")
    if parse_dir is None:
        if shutil.which("valgrind") is None:
            print("error: valgrind is not installed (scripts/install-deps.sh bench installs it)", file=sys.stderr)
            return 1
        if not os.access(binary, os.X_OK):
            print(f"error: {binary} is not built (make release)", file=sys.stderr)
            return 1
        dump_dir = os.path.join(out_dir, "callgrind-" + name)
        shutil.rmtree(dump_dir, ignore_errors=True)
        os.makedirs(dump_dir)
        paths = [run(binary, dump_dir, row, rounds) for rounds in ROUNDS]
    else:
        dump_dir = parse_dir
        paths = [os.path.join(dump_dir, f"callgrind.out.{row}.rounds{rounds}") for rounds in ROUNDS]

    raw = set()
    threads = [common.parse_callgrind(path) for path in paths]
    for thread in threads:
        raw.update(name for _, name in thread.self_cost)
        raw.update(name for edge in thread.edges for _, name in edge)
    names = common.demangle(sorted(raw))
    low, high = (measure(path, names) for path in paths)
    events = (ROUNDS[1] - ROUNDS[0]) * EVENTS_PER_ROUND
    rows = []
    for key, label in [("total", "sink bench process, total")] + [(key, label) for key, label, _ in STAGES] + [
            ("mallocs", "malloc calls (not Ir)")]:
        if low[key] is None or high[key] is None:
            rows.append({"key": key, "label": label, "perEvent": None})
            continue
        rows.append({"key": key, "label": label, "perEvent": (high[key] - low[key]) / events,
                     "low": low[key], "high": high[key]})
    report = {"commit": commit, "dirty": dirty, "row": row, "rounds": list(ROUNDS), "events": events,
              "measuredAt": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "rows": rows}
    base = None
    base_spec = os.environ.get("BASE", "")
    if base_spec:
        candidate = base_spec if os.path.exists(base_spec) else os.path.join(out_dir, f"sink-{row}-{base_spec}.json")
        if os.path.exists(candidate):
            with open(candidate) as file:
                base = {entry["key"]: entry for entry in json.load(file)["rows"]}
    print(f"\nsink {row}: runs of {ROUNDS[0]} and {ROUNDS[1]} rounds, {events} events apart "
          f"({commit}{'-dirty' if dirty else ''})")
    print(f"{'':72} {'Ir/event':>10}" + (f" {'base':>10} {'change':>8}" if base else ""))
    for entry in rows:
        value = entry["perEvent"]
        text = "-" if value is None else f"{value:,.0f}" if entry["key"] != "mallocs" else f"{value:.2f}"
        line = f"{entry['label']:72} {text:>10}"
        if base and entry["key"] in base and base[entry["key"]]["perEvent"] and value is not None:
            before = base[entry["key"]]["perEvent"]
            line += f" {before:>10,.0f} {100 * (value - before) / before:>+7.1f}%"
        print(line)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name + ".json")
    with open(path, "w") as file:
        json.dump(report, file, indent=1, sort_keys=True)
    print(f"\nwritten: {path} (dumps in {dump_dir})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
