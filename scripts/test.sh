#!/usr/bin/env bash
# The project's whole test run (what CI runs through .ci/run):
#   1. installs the Debian dependencies (skip with SKIP_INSTALL=1),
#   2. builds the Release tree build/ through the wheel build
#      (scripts/build_wheel.sh WITH_TESTS=1: scikit-build-core over the
#      project's CMake, x86-64-v2, no profile-guided optimisation, tests and
#      benchmarks included), so the library is compiled once for the wheel
#      and the tests; runs every test there; the wheel is then repaired
#      (auditwheel) into wheelhouse/,
#   3. installs that wheel alone into a fresh venv and checks it
#      (scripts/check_wheel.sh: only system C/C++ runtimes linked, the
#      example through Python and the CLI), then runs the Python tests there
#      with their libraries (pandas, CPU-capable torch, transformers,
#      lightning, nbclient: python/requirements-test.txt), the notebook included,
#   4. builds build-asan/ with clang, AddressSanitizer + UndefinedBehaviorSanitizer
#      (-DSTEPSCOPE_SANITIZE=ON) and the libFuzzer target (-DSTEPSCOPE_FUZZ=ON,
#      which adds a short fuzz run over fuzz/corpus/ as a test), and runs every
#      test there too. Debug info is line tables only (-gline-tables-only):
#      enough for the sanitizers' symbolized stacks, and quicker to compile
#      and link than full -g.
# Benchmarks are not built in the sanitizer tree: they measure, they do not test.
# A failed install or build stops at once; failed tests are reported, the other
# tree still runs (both results in one CI log), and the exit status is non-zero.
# JOBS=N sets the compile parallelism, CTEST_JOBS=N the test parallelism.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${JOBS:-$(nproc)}
ctest_jobs=${CTEST_JOBS:-$jobs}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$SECONDS

step() { printf '\n[test] ==== %s (%ds elapsed)\n' "$*" $((SECONDS - start)); }

failed=()
run_ctest() {  # $1 = build dir, $2 = label; keeps ctest's own summary lines
  local dir=$1 label=$2
  set +e
  ctest --test-dir "$dir" --output-on-failure -j "$ctest_jobs" 2>&1 | tee "$logs/$label.log"
  local rc=${PIPESTATUS[0]}
  set -e
  if (( rc != 0 )); then
    printf '[test] FAILED: tests in %s\n' "$dir" >&2
    failed+=("$label")
  fi
}

if [[ ${SKIP_INSTALL:-0} != 1 ]]; then
  step "install dependencies"
  bash scripts/install_deps.sh
fi

step "Release build with the wheel (build/)"
WITH_TESTS=1 BUILD_DIR="$root/build" JOBS=$jobs bash scripts/build_wheel.sh
step "tests, Release"
run_ctest build release

step "the wheel installed alone, and the Python tests with their libraries"
set +e
bash scripts/check_wheel.sh 2>&1 | tee "$logs/wheel.log"
wheel_rc=${PIPESTATUS[0]}
set -e
if (( wheel_rc != 0 )); then
  printf '[test] FAILED: the wheel check or the Python tests\n' >&2
  failed+=("wheel")
fi

step "sanitizer build (build-asan/: clang, ASan + UBSan, libFuzzer target)"
# halt_on_error: the first finding fails the test. LeakSanitizer needs ptrace,
# which some containers forbid; it is probed below and turned off only then.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
CC=clang CXX=clang++ cmake -S "$root" -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" -DSTEPSCOPE_SANITIZE=ON -DSTEPSCOPE_FUZZ=ON -DSTEPSCOPE_BENCH=OFF
# The CLI first, to probe LeakSanitizer before the test binaries run under it
# (gtest test discovery runs them at build time).
cmake --build build-asan -j "$jobs" --target stepscope_cli
if ! ./build-asan/stepscope --version >"$logs/lsan_probe" 2>&1; then
  if grep -q "LeakSanitizer has encountered a fatal error" "$logs/lsan_probe"; then
    echo "[test] LeakSanitizer cannot run here (ptrace not permitted): detect_leaks=0"
    export ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}
  else
    cat "$logs/lsan_probe" >&2
    echo "[test] FAILED: the sanitizer build's binary does not start" >&2
    exit 1
  fi
fi
echo "[test] ASAN_OPTIONS=$ASAN_OPTIONS"
echo "[test] UBSAN_OPTIONS=$UBSAN_OPTIONS"
cmake --build build-asan -j "$jobs"
step "tests, ASan + UBSan"
run_ctest build-asan asan

step "summary ($((SECONDS - start))s)"
for label in release asan; do
  printf '%-8s ' "$label:"
  grep -E "tests passed|tests failed" "$logs/$label.log" | tail -n 1
done
printf '%-8s ' "wheel:"
grep -E "^\[check-wheel\] done" "$logs/wheel.log" | tail -n 1
if (( ${#failed[@]} > 0 )); then
  echo "[test] FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "[test] all tests passed"
