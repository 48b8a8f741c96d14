#!/usr/bin/env bash
# Installs the Debian packages Flowmeter needs, but only those that are missing.
# usage: scripts/install-deps.sh build|test|demo|bench
#   build  the C libraries the package links (librdkafka, libmicrohttpd, SQLite, zlib, libdeflate,
#          libpq, OpenSSL, mimalloc), pkg-config,
#          and libcurl, which FoundationNetworking loads
#   test   build, plus what the tests start: PostgreSQL (initdb, pg_ctl), Prometheus and promtool, Alertmanager,
#          headless Chromium (renders the HTML report) and chromium-driver, python3-yaml, binutils (readelf) and
#          systemd (systemd-analyze) for the operations tests, socat, openssl and iproute2 (the Kafka TLS tests'
#          endpoint and network namespace); and from PyPI, selenium and axe-selenium-python for the console's browser
#          test (Tests/Console/console_test.py), sarif-tools for the check tests' SARIF, and kubernetes-validate, which checks the Kubernetes
#          manifests offline against the schemas it bundles
#   demo   build
#   bench  build, plus Valgrind (callgrind and vgdb) for make bench-instructions
set -euo pipefail

build_packages=(pkg-config librdkafka-dev libmicrohttpd-dev libsqlite3-dev zlib1g-dev libdeflate-dev libpq-dev libssl-dev libmimalloc-dev libcurl4)
test_packages=(postgresql prometheus prometheus-alertmanager chromium chromium-driver python3-yaml python3-pip binutils systemd socat openssl iproute2 util-linux)
# PyPI packages of the test set, pinned, for the system python3 the tests run (/usr/bin/python3): the Kubernetes
# manifests' offline check, and the console's browser test (Selenium driving Chromium,
# axe-core), the check tests' SARIF reader.
test_python_packages=(kubernetes-validate==1.31.0 selenium==4.51.0 axe-selenium-python==2.1.6 sarif-tools==3.0.5)
bench_packages=(valgrind)

case "${1:-build}" in
  build|demo) wanted=("${build_packages[@]}") ;;
  test) wanted=("${build_packages[@]}" "${test_packages[@]}") ;;
  bench) wanted=("${build_packages[@]}" "${bench_packages[@]}") ;;
  *) echo "usage: $0 build|test|demo|bench" >&2; exit 2 ;;
esac

# The SARIF library the check tests read flowmeter's SARIF back with: sarif-tools, from PyPI (Debian has none).

missing=()
for package in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

install_python_packages() {
  [ "${1:-build}" = test ] || return 0
  for requirement in "${test_python_packages[@]}"; do
    # Captured first: under pipefail, grep -q leaving early would fail pip show with SIGPIPE.
    local shown
    shown=$(/usr/bin/python3 -m pip show "${requirement%%==*}" 2>/dev/null || true)
    if ! grep -qx "Version: ${requirement##*==}" <<<"$shown"; then
      echo "==> installing $requirement from PyPI"
      local as_root=()
      if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then as_root=(sudo); fi
      "${as_root[@]}" /usr/bin/python3 -m pip install --quiet --break-system-packages "$requirement"
    fi
  done
}

if [ ${#missing[@]} -eq 0 ]; then
  install_python_packages "${1:-build}"
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
install_python_packages "${1:-build}"
