#!/usr/bin/env bash
# Runs the whole test suite N times and prints every test that failed in any run, with its failure.
#
# usage: scripts/test-soak.sh [N] [--busy] [--filter PATTERN]
#   N                how many runs (default 5)
#   --busy           keep every core busy with a CPU hog (one spinning process per core) for the whole soak,
#                    as a loaded CI machine would be
#   --filter PATTERN pass --filter to `swift test` (a suite or test name), to soak one part
#
# Builds once (debug, with the tests, as `make test` does), then runs `swift test --skip-build` N times with the
# same parallelism as `make test`. Each run's output is kept in .build/soak/<stamp>/run-<i>.log; the summary lists
# per run its wall time, the 1-minute load average at its end and its outcome, then every failed test with the
# failure lines it printed. Exit status: 0 when every run passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=5
busy=0
filter=()
while [ $# -gt 0 ]; do
  case "$1" in
    --busy) busy=1 ;;
    --filter) shift; filter=(--filter "$1") ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *[!0-9]*|'') echo "test-soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) runs=$1 ;;
  esac
  shift
done

SWIFT=${SWIFT:-swift}
parallelism=${TEST_PARALLELISM:-4}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=".build/soak/$stamp"
mkdir -p "$out" .build/tmp

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null; done
  hogs=()
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM

echo "==> building the tests once"
if ! TMPDIR="$PWD/.build/tmp" "$SWIFT" build --build-tests >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "test-soak: the build failed; see $out/build.log" >&2
  exit 1
fi
rm -rf .build/tmp/*

if [ "$busy" -eq 1 ]; then
  cores=$(nproc)
  for _ in $(seq "$cores"); do
    # A shell loop that never sleeps: one core each, at normal priority, like any other busy process.
    bash -c 'while :; do :; done' &
    hogs+=($!)
  done
  echo "==> $cores CPU hogs running (pids ${hogs[*]})"
fi

summary="$out/summary.txt"
: >"$summary"
failed_runs=0
for i in $(seq "$runs"); do
  log="$out/run-$i.log"
  echo "==> run $i of $runs (log: $log)"
  marker=$(mktemp)
  started=$(date +%s)
  SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$parallelism "$SWIFT" test --skip-build "${filter[@]}" >"$log" 2>&1
  status=$?
  ended=$(date +%s)
  # swift test's driver leaves TemporaryDirectory.* folders in TMPDIR, as make test notes; remove this run's.
  find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'TemporaryDirectory.*' -newer "$marker" -user "$(id -u)" -exec rm -rf {} + 2>/dev/null
  rm -f "$marker"
  load=$(cut -d' ' -f1 /proc/loadavg)
  passed_line=$(grep -E '^(✔|􁁛) Test run with [0-9]+ tests' "$log" | tail -1)
  failed_line=$(grep -E '^(✘|􀢄) Test run with [0-9]+ tests' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    outcome="passed"
  else
    outcome="FAILED (exit $status)"
    failed_runs=$((failed_runs + 1))
  fi
  printf 'run %d: %s in %d s, load %s; %s\n' "$i" "$outcome" $((ended - started)) "$load" \
    "$(echo "${failed_line:-$passed_line}" | sed -E 's/^[^ ]+ //')" | tee -a "$summary"
  if [ "$status" -ne 0 ]; then
    # Swift Testing: "✘ Test name() recorded an issue at File.swift:12:3: Expectation failed: …" and
    # "✘ Test name() failed after …"; XCTest: "File.swift:12: error: -[Suite test] : …"; crashes: "Fatal error".
    # librdkafka's own log lines (%0|…|FATAL|…) come from tests that inject faults and are not failures.
    grep -E 'recorded an issue|^(✘|􀢄) Test .* failed|: error: |Fatal error|Exited with signal|error: Exited' "$log" \
      | grep -v -e 'Test run with' -e '^%[0-9]|' | sed "s/^/    run $i: /" | tee -a "$summary"
  fi
done

echo
echo "==> soak: $runs runs, $failed_runs failed$([ "$busy" -eq 1 ] && echo ", with every core kept busy")"
if [ "$failed_runs" -gt 0 ]; then
  echo "failed tests, with the number of runs each failed in:"
  grep -E '^    run [0-9]+: (✘|􀢄) Test .* failed after' "$summary" \
    | sed -E 's/^    run [0-9]+: [^ ]+ Test (.+\)) failed after.*/\1/' | sort | uniq -c | sort -rn
fi
echo "summary: $summary"
[ "$failed_runs" -eq 0 ]
