#!/usr/bin/env bash
# Configures and builds stepscope (Release) into build/ beside this script's
# folder. The binary lands at build/stepscope.
#
# With GCC the build is profile-guided (cmake/pgo.cmake): an instrumented
# stepscope is built first in <build>-pgo/ (the tool and the trace generator
# only), run on the project's example traces (scripts/pgo_train.sh), and the
# release build is compiled with that profile: `analyze` uses about 11% less
# CPU and maps less code (docs/performance.md). The training reruns only when the
# instrumented binary changed; a new profile recompiles the library.
#   PGO=0          one plain Release build, no training
#   TARGET=name    build only that target (e.g. stepscope_cli: the quick start),
#                  configured without tests and benchmarks; unset: everything,
#                  tests and benchmarks included
#   JOBS=N         parallel compile jobs (default: number of cores)
#   BUILD_DIR=dir  another build folder (default: build)
#   extra arguments are passed to cmake's configure step (e.g. -DSTEPSCOPE_BENCH=OFF)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
pgo=${PGO:-1}

if [[ $pgo == 1 ]] && ! ${CXX:-c++} -v 2>&1 | grep -q "^gcc version"; then
  echo "[build] profile-guided build needs GCC; building without it"
  pgo=0
fi

pgo_args=(-DSTEPSCOPE_PGO=OFF)
label=Release
if [[ $pgo == 1 ]]; then
  gen_dir=$build_dir-pgo
  profile=$gen_dir/profile
  echo "[build] configure $gen_dir (instrumented, for the training run)"
  cmake -S "$root" -B "$gen_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTEPSCOPE_PGO=GENERATE \
    -DSTEPSCOPE_PGO_DIR="$profile" -DSTEPSCOPE_TESTS=OFF -DSTEPSCOPE_BENCH=OFF -DSTEPSCOPE_CUDA=OFF
  echo "[build] compile the instrumented tool with $jobs jobs"
  cmake --build "$gen_dir" -j "$jobs" --target stepscope_cli stepscope-gen-trace
  if [[ ! -f $profile/stamp || $gen_dir/stepscope -nt $profile/stamp ]]; then
    echo "[build] training run (scripts/pgo_train.sh)"
    rm -rf "$profile"
    mkdir -p "$profile"
    bash "$root/scripts/pgo_train.sh" "$gen_dir"
    date -u +%FT%TZ >"$profile/stamp"
  fi
  pgo_args=(-DSTEPSCOPE_PGO=USE -DSTEPSCOPE_PGO_DIR="$profile")
  label="Release, profile-guided"
fi

# Said every time: a tree configured once for one target keeps its cache.
scope_args=(-DSTEPSCOPE_TESTS=ON -DSTEPSCOPE_BENCH=ON)
target_args=()
if [[ -n ${TARGET:-} ]]; then
  scope_args=(-DSTEPSCOPE_TESTS=OFF -DSTEPSCOPE_BENCH=OFF)
  target_args=(--target "$TARGET")
fi
echo "[build] configure $build_dir ($label)"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${pgo_args[@]}" "${scope_args[@]}" "$@"
echo "[build] compile ${TARGET:-everything} with $jobs jobs"
cmake --build "$build_dir" -j "$jobs" "${target_args[@]}"
echo "[build] done in ${SECONDS} s: $build_dir/stepscope"
