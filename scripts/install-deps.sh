#!/usr/bin/env bash
# Installs the Debian packages Flowmeter needs, but only those that are missing.
# usage: scripts/install-deps.sh build|test|demo|bench
#   build  the C libraries the package links (librdkafka, libmicrohttpd, SQLite, zlib, libdeflate,
#          libpq, OpenSSL, mimalloc), pkg-config,
#          and libcurl, which FoundationNetworking loads
#   test   build, plus what the tests start: PostgreSQL (initdb, pg_ctl), Prometheus and promtool, Alertmanager,
#          headless Chromium (renders the HTML report), python3-yaml, binutils (readelf) and systemd (systemd-analyze)
#          for the operations tests; python3-pip and sarif-tools (PyPI) for the check tests' SARIF
#   demo   build
#   bench  build, plus Valgrind (callgrind and vgdb) for make bench-instructions
set -euo pipefail

build_packages=(pkg-config librdkafka-dev libmicrohttpd-dev libsqlite3-dev zlib1g-dev libdeflate-dev libpq-dev libssl-dev libmimalloc-dev libcurl4)
test_packages=(postgresql prometheus prometheus-alertmanager chromium python3-yaml python3-pip binutils systemd)
bench_packages=(valgrind)

case "${1:-build}" in
  build|demo) wanted=("${build_packages[@]}") ;;
  test) wanted=("${build_packages[@]}" "${test_packages[@]}") ;;
  bench) wanted=("${build_packages[@]}" "${bench_packages[@]}") ;;
  *) echo "usage: $0 build|test|demo|bench" >&2; exit 2 ;;
esac

# The SARIF library the check tests read flowmeter's SARIF back with: sarif-tools, from PyPI (Debian has none).
python_test_packages() {
  if [ "${1:-build}" = test ] && ! python3 -c "import sarif.loader" 2>/dev/null; then
    echo "==> installing sarif-tools from PyPI"
    python3 -m pip install -q sarif-tools 2>/dev/null || python3 -m pip install -q --break-system-packages sarif-tools
  fi
}

missing=()
for package in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  python_test_packages "${1:-build}"
  exit 0
fi

echo "==> installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "error: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
# The packaged Prometheus and Alertmanager services must not start on install: tests run their own on loopback.
if [ ! -e /usr/sbin/policy-rc.d ] && [ "$(id -u)" -eq 0 ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
python_test_packages "${1:-build}"
