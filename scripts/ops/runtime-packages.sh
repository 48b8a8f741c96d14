#!/usr/bin/env bash
# Prints, one a line and sorted, the Debian packages that provide the shared libraries BINARY links directly
# (its ELF NEEDED entries), leaving out the Swift runtime (linked statically in the container image) and the C
# runtime every Debian image has. OperationsTests compares them with the Dockerfile's runtime stage.
# usage: scripts/ops/runtime-packages.sh BINARY
set -euo pipefail
binary=${1:?usage: $0 BINARY}
readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r library; do
  case "$library" in
    libswift*|libFoundation*|lib_Foundation*|libdispatch*|libBlocksRuntime*|libTesting*) continue ;;
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*|ld-linux*|libgcc_s.so.*|libstdc++.so.*) continue ;;
  esac
  package=$(dpkg -S "*/$library" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
  echo "${package:-unknown($library)}"
done | sort -u
