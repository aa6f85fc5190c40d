#!/usr/bin/env bash
# Packs a built stepscope with the shared libraries it needs beyond libc and
# libstdc++ (fmt, simdjson, ISA-L, prometheus-cpp, civetweb) into one folder,
# for a GPU machine that cannot install Debian packages:
#
#   bash workloads/bundle_monitor.sh [BUILD_DIR] [OUT]   (default build, build/monitor_bundle)
#
# OUT/stepscope is the binary and OUT/lib/ the libraries. workloads/monitor_scrape.sh
# puts OUT/lib on LD_LIBRARY_PATH when STEPSCOPE=OUT/stepscope.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
out=${2:-$build/monitor_bundle}
[[ -x $build/stepscope ]] || { echo "bundle_monitor: $build/stepscope not found" >&2; exit 2; }
mkdir -p "$out/lib"
cp "$build/stepscope" "$out/stepscope"
ldd "$build/stepscope" | awk '/=> \// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|ld-linux*|libpthread.so*|libdl.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
echo "bundle_monitor: $out/stepscope with $(find "$out/lib" -type f | wc -l) libraries in $out/lib"
