#!/usr/bin/env python3
"""Instructions per event, per stage, of the collector's ingest path (docs/performance.md).

Runs `flowmeter-bench instructions` (built beforehand: `make release`) under `valgrind --tool=callgrind
--separate-threads=yes`, reads the one dump that holds the measured requests (every thread's counters are zeroed
after the warm-up and dumped once every delivery report is in), and prints instructions per event for each thread
group and each stage, and malloc calls per event. Writes the figures to .build/bench-instructions/<commit>.json; with
BASE=<commit> (or a path to such a JSON file) it prints each figure's change against that run.

usage: scripts/bench-instructions.py [--binary PATH] [--out-dir DIR] [--parse DIR] [bench options...]
  bench options go to `flowmeter-bench instructions`: --requests N --warmup N --connections N --ack delivery|enqueue
  --encoding plain|gzip --ids unique|none --threads N --batches N
  --parse DIR  re-reads the dumps already in DIR (a callgrind-<commit> folder) instead of running anything

Stages are found by function name. Swift names are demangled (`swift demangle --simplified`), stripped of
`specialized`, `static`, `@objc`, `partial apply for` and the like, and matched from their start, so
`closure #3 in IngestHandler.publish(...)` does not count as `IngestHandler.publish`. A stage's cost is the time spent
inside any of its functions: the cost of each call into the stage from outside it. When the code is renamed, edit
STAGES below; a stage that matches nothing prints "-".
"""

import collections
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

# The stages, along the data path: (key, label, patterns). Patterns are regular expressions matched at the start of
# the normalized, demangled function name. A stage's cost is inclusive (its functions and all they call), and stages
# overlap (the handler contains the decode): they do not add up. "entries/req" is how often per request the stage was
# entered from outside it.
STAGES = [
    ("handler", "request handler (IngestHandler.process)", [r"IngestHandler\.(process|handle)\("]),
    ("inflate", "  inflate (gzip bodies)", [r"IngestHandler\.inflate\(", r"Inflater\.", r"inflate$"]),
    ("count_scan", "  event count scan (EventCountScan.count)", [r"EventCountScan\.count\("]),
    ("decode", "  batch decode (FastBatchDecoder.decode)", [r"FastBatchDecoder\.decode\("]),
    ("normalize", "  normalize (Normalizer.normalize)", [r"Normalizer\.normalize\("]),
    ("encode", "  record encoding (BatchRecordWriter, the writers it uses, SpoolBatch.append)",
     [r"BatchRecordWriter\.", r"CompactRecordWriter\.", r"EventRecordBatch\.", r"EventRecordWriter\.",
      r"SeriesKey\.", r"SpoolBatch\.append\("]),
    ("delivery_send", "  delivery path (SpoolingDelivery.send)", [r"SpoolingDelivery\.send\("]),
    ("enqueue", "  enqueue (KafkaProducer.enqueueBatch)", [r"KafkaProducer\.enqueue(Batch|Borrowing)\("]),
    ("produce", "  produce (rd_kafka_produceva, once per batch record)", [r"rd_kafka_produceva$"]),
    ("reports", "delivery reports (our deliveryReportCallback)", [r"deliveryReportCallback\("]),
    ("metrics", "metrics (CollectorMetrics.*)", [r"CollectorMetrics\."]),
    ("batch_ids", "batch-id dedupe (RecentBatchIDs)", [r"RecentBatchIDs\."]),
]

# Cross-cutting costs in the collector's own threads (libmicrohttpd's and the others, not librdkafka's, whose share
# depends on how the clock batched the messages): (key, label, patterns, how). "inclusive" counts the allocator's
# entry points with everything they call (its internals are unnamed in a stripped libc); "self" counts only the
# functions' own instructions.
CROSS_CUTTING = [
    ("allocator", "malloc/free/realloc (libc allocator, with its internals)",
     [r"malloc$", r"free$", r"cfree$", r"calloc$", r"realloc$", r"posix_memalign$", r"aligned_alloc$", r"memalign$"],
     "inclusive"),
    ("refcount", "swift_retain/release (their own instructions)",
     [r"swift_(retain|release|bridgeObjectRetain|bridgeObjectRelease|unknownObjectRetain|unknownObjectRelease)"
      r"(_n)?$"], "self"),
    ("memcpy", "memcpy/memmove/memset (their own instructions)", [r"__(memcpy|memmove|memset)\w*$",
                                                               r"(memcpy|memmove|memset)$"], "self"),
]

# The functions whose calls count as allocations (callgrind records every call's count).
ALLOCATING = re.compile(r"(malloc|calloc|realloc|posix_memalign|aligned_alloc|memalign)$")

# The thread groups. A thread is the load client's when it runs PipelinedClient, the benchmark's main thread when it is
# thread 1, librdkafka's or libmicrohttpd's when its start routine (what start_thread calls) is in that library, and
# the collector's otherwise (the delivery-report poll loop, the spool's timer, Swift tasks).
THREAD_GROUPS = [
    ("http", "libmicrohttpd threads (HTTP in, our handler, the 202 out)"),
    ("collector", "other collector threads (delivery-report poll loop, spool timer, tasks)"),
    ("librdkafka", "librdkafka's threads (brokers: batching, lz4, sockets)"),
]
COLLECTOR_GROUPS = [key for key, _ in THREAD_GROUPS]
DUMP_LABEL = "flowmeter-bench-instructions-measured"
RUN_TIMEOUT_SECONDS = 900

PREFIXES = re.compile(
    r"^(specialized |static |@objc |@nonobjc |partial apply for |merged |outlined |reabstraction thunk helper for |"
    r"thunk for |dynamic |generic specialization <[^>]*> of )+")


def main(argv):
    binary = ".build/release/flowmeter-bench"
    out_dir = ".build/bench-instructions"
    parse_dir = None
    bench_args = []
    index = 0
    while index < len(argv):
        flag = argv[index]
        if flag in ("-h", "--help"):
            print(__doc__)
            return 0
        if flag in ("--binary", "--out-dir", "--parse") and index + 1 < len(argv):
            value = argv[index + 1]
            if flag == "--binary":
                binary = value
            elif flag == "--out-dir":
                out_dir = value
            else:
                parse_dir = value
            index += 2
            continue
        bench_args.append(flag)
        index += 1

    commit, dirty = git_commit()
    name = commit + ("-dirty" if dirty else "")
    if parse_dir is None:
        for tool in ("valgrind", "vgdb"):
            if shutil.which(tool) is None:
                print(f"error: {tool} is not installed (scripts/install-deps.sh bench installs it)", file=sys.stderr)
                return 1
        if not os.access(binary, os.X_OK):
            print(f"error: {binary} is not built (make release)", file=sys.stderr)
            return 1
        dump_dir = os.path.join(out_dir, "callgrind-" + name)
        shutil.rmtree(dump_dir, ignore_errors=True)
        os.makedirs(dump_dir)
        command = [
            "valgrind", "--tool=callgrind", "--separate-threads=yes", "--vgdb=yes",
            "--callgrind-out-file=" + os.path.join(dump_dir, "callgrind.out"), binary, "instructions"] + bench_args
        status, result = run_bench(command)
        if status != 0 or result is None:
            print(f"error: the benchmark failed (status {status}); dumps in {dump_dir}", file=sys.stderr)
            return 1
        with open(os.path.join(dump_dir, "result.json"), "w") as file:
            json.dump({"command": command, "result": result, "commit": commit, "dirty": dirty}, file)
    else:
        dump_dir = parse_dir
        with open(os.path.join(dump_dir, "result.json")) as file:
            saved = json.load(file)
        command, result = saved["command"], saved["result"]
        # The figures are the measured commit's, not the checkout's now.
        commit, dirty = saved.get("commit", "unknown"), saved.get("dirty", False)
        name = commit + ("-dirty" if dirty else "")

    profile = Profile.load(dump_dir)
    report = analyse(profile, result)
    report.update({
        "commit": commit, "dirty": dirty, "measuredAt": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"), "command": " ".join(command), "result": result})
    base = load_base(os.environ.get("BASE", ""), out_dir)
    print_report(report, base)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name + ".json")
    with open(path, "w") as file:
        json.dump(report, file, indent=1, sort_keys=True)
    print(f"\nwritten: {path} (dumps in {dump_dir}; browse one thread with callgrind_annotate --inclusive=yes FILE)")
    return 0


def git_commit():
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True).stdout.strip() != ""
        return commit, dirty
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False


def run_bench(command):
    """Runs the benchmark under Valgrind, echoing its progress; returns (status, its instructions-result)."""
    print("running: " + " ".join(command), flush=True)
    result = None
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    timer = None
    try:
        def kill():
            print(f"error: gave up after {RUN_TIMEOUT_SECONDS} s", file=sys.stderr, flush=True)
            os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(RUN_TIMEOUT_SECONDS, kill)
        timer.start()
        for line in process.stdout:
            if line.startswith("instructions-result "):
                result = json.loads(line[len("instructions-result "):])
                continue
            # Valgrind 3.19 does not read the toolchain's DWARF 5 fully; the warnings say nothing about the run.
            if "unhandled dwarf2" in line or line.startswith("==") or not line.strip():
                continue
            print("  " + line.rstrip(), flush=True)
        status = process.wait()
    finally:
        if timer is not None:
            timer.cancel()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return status, result


class Thread:
    """One thread's part of the dump: self cost and calls of each function, cost and count of each call edge."""

    def __init__(self):
        self.number = 0
        self.self_cost = collections.Counter()  # (object, name) -> Ir
        self.edges = collections.Counter()  # ((object, name), (object, name)) -> inclusive Ir of the calls
        self.calls = collections.Counter()  # same keys -> number of calls
        self.total = 0
        self.group = ""


class Profile:
    """Every thread's part of the measured dump, with demangled, normalized names."""

    def __init__(self):
        self.threads = []
        self.names = {}  # raw name -> normalized demangled name
        self.program = ""

    @staticmethod
    def load(directory):
        profile = Profile()
        for entry in sorted(os.listdir(directory)):
            if not entry.startswith("callgrind.out"):
                continue
            path = os.path.join(directory, entry)
            with open(path, errors="replace") as file:
                head = file.read(4096)
            if "Trigger: dump " + DUMP_LABEL not in head:
                continue
            thread = parse_callgrind(path)
            if thread is not None:
                profile.threads.append(thread)
                match = re.search(r"^cmd:\s+(\S+)", head, re.M)
                if match:
                    profile.program = os.path.basename(match.group(1))
        if not profile.threads:
            raise SystemExit(f"error: no dump labelled {DUMP_LABEL} in {directory}")
        raw = set()
        for thread in profile.threads:
            raw.update(name for _, name in thread.self_cost)
            raw.update(name for edge in thread.edges for _, name in edge)
        profile.names = demangle(sorted(raw))
        for thread in profile.threads:
            thread.group = profile.classify(thread)
        return profile

    def classify(self, thread):
        if any("PipelinedClient" in self.names[name] for _, name in thread.self_cost):
            return "client"
        if thread.number == 1:
            return "main"
        for (caller, callee), _ in thread.edges.items():
            if caller[1] == "start_thread":
                library = os.path.basename(callee[0])
                if library.startswith("librdkafka"):
                    return "librdkafka"
                if library.startswith("libmicrohttpd"):
                    return "http"
        return "collector"

    def matches(self, patterns):
        compiled = [re.compile(pattern) for pattern in patterns]
        return {raw for raw, name in self.names.items() if any(p.match(name) for p in compiled)}


def parse_callgrind(path):
    """Reads one callgrind.out file (name compression, calls= lines) into a Thread."""
    thread = Thread()
    names = {"ob": {}, "fl": {}, "fn": {}}
    kinds = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl", "fn": "fn",
             "cfn": "fn"}
    obj = ""
    function = None
    called_object = None
    called = None
    pending = None
    with open(path, errors="replace") as file:
        for line in file:
            if not line or line == "\n":
                continue
            first = line[0]
            if first.isdigit() or first in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending is not None:
                    thread.edges[(function, pending)] += cost
                    pending = None
                else:
                    thread.self_cost[function] += cost
                continue
            key, separator, value = line.rstrip("\n").partition("=")
            if separator and key in kinds:
                table = names[kinds[key]]
                match = re.match(r"\((\d+)\)(?: (.*))?$", value)
                if match:
                    if match.group(2) is not None:
                        table[match.group(1)] = match.group(2)
                    name = table.get(match.group(1), "?")
                else:
                    name = value
                if key == "ob":
                    obj = name
                elif key == "fn":
                    # Callgrind marks recursion levels as name'2; they are the same function.
                    function = (obj, re.sub(r"'\d+$", "", name))
                    called_object = None
                elif key == "cob":
                    called_object = name
                elif key == "cfn":
                    called = (called_object or obj, re.sub(r"'\d+$", "", name))
            elif separator and key == "calls":
                pending = called
                thread.calls[(function, called)] += int(value.split()[0])
                called_object = None
            elif line.startswith("thread:"):
                thread.number = int(line.split(":")[1])
    thread.total = sum(thread.self_cost.values())
    # A call from a function to itself (once recursion levels are merged) is already in its own cost.
    for edge in [edge for edge in thread.edges if edge[0] == edge[1]]:
        del thread.edges[edge]
    return thread


def demangle(raw_names):
    """Raw name -> demangled (swift demangle --simplified), stripped of specialization and thunk prefixes."""
    demangled = raw_names
    swift = shutil.which("swift")
    if swift is not None:
        try:
            output = subprocess.run([swift, "demangle", "--simplified", "--compact"], input="\n".join(raw_names),
                                    capture_output=True, text=True, check=True, timeout=120).stdout.split("\n")
            if len(output) >= len(raw_names):
                demangled = output[:len(raw_names)]
        except (OSError, subprocess.SubprocessError):
            pass
    return {raw: PREFIXES.sub("", name) for raw, name in zip(raw_names, demangled)}


def inclusive(threads, members):
    """Instructions spent inside any function named in `members`, and how many times the set was entered.

    A call counts when it enters the set from outside it: from a caller that is neither a member nor (in that thread)
    reachable from one. Its recorded cost is everything below it, so nothing is counted twice, even when a member calls
    another member through functions outside the set (IngestHandler.inflate → Gzip.inflate → Inflater.inflate).
    """
    cost = 0
    entries = 0
    for thread in threads:
        callees = collections.defaultdict(list)
        for caller, callee in thread.edges:
            callees[caller].append(callee)
        inside = set()
        frontier = [callee for caller in callees if caller[1] in members for callee in callees[caller]]
        while frontier:
            function = frontier.pop()
            if function in inside:
                continue
            inside.add(function)
            frontier.extend(callees.get(function, []))
        for (caller, callee), value in thread.edges.items():
            if callee[1] in members and caller[1] not in members and caller not in inside:
                cost += value
                entries += thread.calls[(caller, callee)]
        # A member that is a thread's root (nothing calls it) is entered once, with its whole cost.
        called = {callee for _, callee in thread.edges}
        for function, value in thread.self_cost.items():
            if function[1] in members and function not in called:
                cost += value + sum(thread.edges[(function, callee)] for callee in callees.get(function, []))
    return cost, entries


def analyse(profile, result):
    events = result.get("accepted") or result.get("events") or 1
    requests = result.get("requests") or 1
    groups = collections.defaultdict(list)
    for thread in profile.threads:
        groups[thread.group].append(thread)
    collector = [thread for key in COLLECTOR_GROUPS for thread in groups[key]]
    own = [thread for key in COLLECTOR_GROUPS if key != "librdkafka" for thread in groups[key]]
    rows = []

    def row(key, label, ir, section, calls=None):
        rows.append({"key": key, "label": label, "ir": ir, "perEvent": None if ir is None else ir / events,
                     "section": section, "calls": calls})

    total = sum(thread.total for thread in collector)
    row("collector_total", "collector total (libmicrohttpd, other collector and librdkafka threads)", total, "threads")
    row("collector_own", "collector without librdkafka's threads (the steadier figure)",
        sum(thread.total for thread in own), "threads")
    for key, label in THREAD_GROUPS:
        row(key, label, sum(thread.total for thread in groups[key]), "threads")
        if key == "http":
            program = profile.program
            callbacks = sum(
                value for thread in groups["http"] for (caller, callee), value in thread.edges.items()
                if os.path.basename(caller[0]).startswith("libmicrohttpd")
                and os.path.basename(callee[0]) == program)
            row("http_mhd", "  libmicrohttpd itself: parsing, sockets (minus our callbacks)",
                sum(thread.total for thread in groups["http"]) - callbacks, "threads")
            row("http_callbacks", "  our callbacks from libmicrohttpd", callbacks, "threads")
    for key, label, patterns in STAGES:
        members = profile.matches(patterns)
        if not members:
            row(key, label, None, "stages")
            continue
        cost, entries = inclusive(collector, members)
        row(key, label, cost, "stages", entries)
    for key, label, patterns, how in CROSS_CUTTING:
        members = profile.matches(patterns)
        if not members:
            row(key, label, None, "cross")
        elif how == "self":
            row(key, label, sum(value for thread in own for function, value in thread.self_cost.items()
                                if function[1] in members), "cross")
        else:
            row(key, label, inclusive(own, members)[0], "cross")
    for key, label in (("client", "load client thread (PipelinedClient)"), ("main", "benchmark main thread")):
        row(key, label, sum(thread.total for thread in groups[key]), "outside")

    allocations = {}
    for key in COLLECTOR_GROUPS:
        count = 0
        for thread in groups[key]:
            for (caller, callee), calls in thread.calls.items():
                if ALLOCATING.match(profile.names.get(callee[1], callee[1])) and not ALLOCATING.match(
                        profile.names.get(caller[1], caller[1])):
                    count += calls
        allocations[key] = count
    allocations["collector_total"] = sum(allocations[key] for key in COLLECTOR_GROUPS)

    by_self = collections.Counter()
    for thread in collector:
        for function, value in thread.self_cost.items():
            name = profile.names.get(function[1], function[1])
            if name.startswith("0x"):
                name += " in " + os.path.basename(function[0])
            by_self[name] += value
    top = [[name, value / events] for name, value in by_self.most_common(20)]
    return {"events": events, "requests": requests, "rows": rows,
            "allocationsPerEvent": {key: value / events for key, value in allocations.items()},
            "allocationsPerRequest": {key: value / requests for key, value in allocations.items()},
            "topSelfPerEvent": top,
            "mockClusterCPUMillisecondsPer1000Events": 1e6 * result.get("mockClusterCPUSeconds", 0) / events,
            "threadCounts": {key: len(groups[key]) for key in COLLECTOR_GROUPS + ["client", "main"]}}


def load_base(base, out_dir):
    if not base:
        return None
    path = base if base.endswith(".json") else os.path.join(out_dir, base + ".json")
    if not os.path.exists(path):
        print(f"note: no base at {path}; run the benchmark at {base} first", file=sys.stderr)
        return None
    with open(path) as file:
        return json.load(file)


def print_report(report, base):
    result = report["result"]
    events = report["events"]
    base_rows = {row["key"]: row for row in base["rows"]} if base else {}
    print()
    print(f"commit {report['commit']}{' (uncommitted changes)' if report['dirty'] else ''}: "
          f"{report['requests']} requests, {events} events, ack={result.get('ack')}, encoding={result.get('encoding')}, "
          f"ids={result.get('ids')}, {result.get('connections')} connections, "
          f"{result.get('httpThreads')} HTTP threads; statuses {result.get('statuses')}")
    if base:
        print(f"compared with base {base['commit']}{' (uncommitted changes)' if base.get('dirty') else ''} "
              f"({base['result'].get('ack')}, {base['result'].get('encoding')}, {base['events']} events)")
    headers = {"threads": "by thread (adds up to the total)",
               "stages": "by stage (inclusive, every collector thread; stages overlap)",
               "cross": "cross-cutting (collector threads but librdkafka's)",
               "outside": "not the collector (not in the total)"}
    total = next(row["ir"] for row in report["rows"] if row["key"] == "collector_total") or 1
    section = None
    for row in report["rows"]:
        if row["section"] != section:
            section = row["section"]
            print(f"\n{headers[section]:<72} {'Ir/event':>10} {'share':>6}" + (f" {'vs base':>8}" if base else "")
                  + (" entries/req" if section == "stages" else ""))
        if row["ir"] is None:
            line = f"{row['label']:<72} {'-':>10} {'':>6}"
        else:
            share = f"{100 * row['ir'] / total:5.1f}%" if section != "outside" else ""
            line = f"{row['label']:<72} {row['perEvent']:>10,.0f} {share:>6}"
        if base:
            line += " " + delta(row, base_rows.get(row["key"]))
        if section == "stages" and row["calls"] is not None:
            line += f" {row['calls'] / report['requests']:11.2f}"
        print(line)
    print(f"{'mock cluster (child process, not instrumented): CPU ms per 1,000 events':<72} "
          f"{report['mockClusterCPUMillisecondsPer1000Events']:>10.2f}")
    print(f"\n{'allocations (calls to malloc, calloc, realloc, posix_memalign)':<72} {'per event':>10} "
          f"{'per req':>8}" + (f" {'vs base':>8}" if base else ""))
    labels = {"collector_total": "collector total", "http": "  libmicrohttpd threads",
              "collector": "  other collector threads", "librdkafka": "  librdkafka's threads"}
    for key in ["collector_total"] + COLLECTOR_GROUPS:
        per_event = report["allocationsPerEvent"][key]
        line = f"{labels[key]:<72} {per_event:>10.2f} {report['allocationsPerRequest'][key]:>8.1f}"
        if base:
            previous = base["allocationsPerEvent"].get(key)
            line += " " + delta({"perEvent": per_event}, {"perEvent": previous} if previous is not None else None)
        print(line)
    print("\ntop functions by own instructions (collector threads), Ir/event:")
    for name, value in report["topSelfPerEvent"][:12]:
        print(f"  {value:>9,.0f}  {name[:110]}")
    counts = report["threadCounts"]
    print(f"\nthreads: {counts['http']} libmicrohttpd, {counts['collector']} other collector, "
          f"{counts['librdkafka']} librdkafka, {counts['client']} client, {counts['main']} main; context switches "
          f"per request (under valgrind, indicative only): {result.get('voluntaryContextSwitches', 0) / max(1, report['requests']):.1f} voluntary")


def delta(row, base_row):
    if base_row is None or base_row.get("perEvent") in (None, 0) or row.get("perEvent") is None:
        return f"{'-':>8}"
    return f"{100 * (row['perEvent'] - base_row['perEvent']) / base_row['perEvent']:+7.1f}%"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
