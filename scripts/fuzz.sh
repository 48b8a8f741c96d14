#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer into their own scratch path and runs them
# (docs/fuzzing.md).
# usage: scripts/fuzz.sh build|run|corpus [TARGET...]
#   build   only build the Fuzz* executables (swiftc -sanitize=fuzzer,address) into $FUZZ_SCRATCH
#   run     fuzz each target for FUZZ_SECONDS seconds (default 60): new inputs go to $FUZZ_SCRATCH/corpus/TARGET,
#           a crash or failed invariant stops that target and is saved to $FUZZ_SCRATCH/artifacts/TARGET/
#   corpus  run each target once over its checked-in corpus, Tests/Fuzz/TARGET (libFuzzer -runs=0)
#   build and run use a release build, corpus a debug one (quicker to build); FUZZ_CONFIGURATION overrides.
# TARGET is a corpus folder name (batch-decoder, inflate, deploy-marker, blob-codec, ingest-request, page-walker,
# batch-record);
# none means all. Exits non-zero when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_SCRATCH=${FUZZ_SCRATCH:-.build-fuzz}
# Extra libFuzzer flags for every target, such as -jobs=2 or -max_len=8192.
FUZZ_FLAGS=${FUZZ_FLAGS:-}

declare -A products=(
  [batch-decoder]=FuzzBatchDecoder [inflate]=FuzzInflate [deploy-marker]=FuzzDeployMarker
  [blob-codec]=FuzzBlobCodec [ingest-request]=FuzzIngestRequest [page-walker]=FuzzPageWalker
  [batch-record]=FuzzBatchRecord
)
all_targets=(batch-decoder inflate deploy-marker blob-codec ingest-request page-walker batch-record)

mode=${1:-}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  [ -n "${products[$target]:-}" ] || { echo "unknown fuzz target '$target' (${all_targets[*]})" >&2; exit 2; }
done
case "$mode" in build|run|corpus) ;; *) sed -n 2,12p "$0" >&2; exit 2 ;; esac
# Fuzzing wants speed (release); one pass over the corpus wants a short build (debug builds in under half the time).
default_configuration=release
[ "$mode" = corpus ] && default_configuration=debug
FUZZ_CONFIGURATION=${FUZZ_CONFIGURATION:-$default_configuration}

# The Swift driver leaves a TemporaryDirectory.* folder in TMPDIR for every compile; keep them in the scratch path.
case "$FUZZ_SCRATCH" in /*) build_tmp="$FUZZ_SCRATCH/tmp" ;; *) build_tmp="$PWD/$FUZZ_SCRATCH/tmp" ;; esac
mkdir -p "$build_tmp"
# -DFUZZING makes each executable's main hand over to libFuzzer; lld links libFuzzer next to SwiftPM's entry point.
for target in "${targets[@]}"; do
  set +e
  TMPDIR="$build_tmp" "$SWIFT" build --scratch-path "$FUZZ_SCRATCH" -c "$FUZZ_CONFIGURATION" \
    --product "${products[$target]}" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld 2>&1 |
    grep -v "Cannot export local symbol '__asan"
  status=${PIPESTATUS[0]}
  set -e
  [ "$status" = 0 ] || { echo "fuzz build of ${products[$target]} failed" >&2; exit 1; }
done
rm -rf "$build_tmp"
[ "$mode" = build ] && exit 0

# Crashes are libFuzzer's and ASan's to report: the Swift backtracer would stall each one for seconds.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
failed=()
for target in "${targets[@]}"; do
  binary="$FUZZ_SCRATCH/$FUZZ_CONFIGURATION/${products[$target]}"
  dictionary=()
  [ -f "Tests/Fuzz/$target.dict" ] && dictionary=("-dict=Tests/Fuzz/$target.dict")
  if [ "$mode" = corpus ]; then
    echo "==> $target: the checked-in corpus, once"
    log="$FUZZ_SCRATCH/corpus-$target.log"
    # shellcheck disable=SC2086
    if "$binary" -runs=0 -timeout=30 $FUZZ_FLAGS "Tests/Fuzz/$target" > "$log" 2>&1; then
      tail -n 1 "$log"
    else
      cat "$log"
      failed+=("$target")
    fi
  else
    echo "==> $target: fuzzing for ${FUZZ_SECONDS} s"
    mkdir -p "$FUZZ_SCRATCH/corpus/$target" "$FUZZ_SCRATCH/artifacts/$target"
    # New inputs go to the first folder (scratch), never into the checked-in corpus.
    # shellcheck disable=SC2086
    "$binary" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$FUZZ_SCRATCH/artifacts/$target/" "${dictionary[@]}" $FUZZ_FLAGS \
      "$FUZZ_SCRATCH/corpus/$target" "Tests/Fuzz/$target" 2>&1 |
      grep -v "^#[0-9]*	\(NEW\|REDUCE\|pulse\)" || true
    # libFuzzer's own exit status is lost in the pipe; a saved artifact is the finding.
    if compgen -G "$FUZZ_SCRATCH/artifacts/$target/*" > /dev/null; then failed+=("$target"); fi
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (artifacts in $FUZZ_SCRATCH/artifacts/)" >&2
  exit 1
fi
echo "fuzz targets passed: ${targets[*]}"
