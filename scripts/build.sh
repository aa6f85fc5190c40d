#!/usr/bin/env bash
# Configures and builds stepscope (Release) into build/ beside this script's
# folder. The binary lands at build/stepscope.
#   JOBS=N         parallel compile jobs (default: number of cores)
#   BUILD_DIR=dir  another build folder (default: build)
#   extra arguments are passed to cmake's configure step (e.g. -DSTEPSCOPE_BENCH=OFF)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

echo "[build] configure $build_dir (Release)"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
echo "[build] compile with $jobs jobs"
cmake --build "$build_dir" -j "$jobs"
echo "[build] done: $build_dir/stepscope"
