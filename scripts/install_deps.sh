#!/usr/bin/env bash
# Installs everything stepscope needs to build and test on a fresh Debian 12
# machine. Runs as root, or through sudo when not root. Safe to run again:
# apt-get skips what is already installed. Every dependency is a Debian
# package (README.md, "Dependencies and why each is there", says why each one).
set -euo pipefail

log() { printf '[install_deps] %s\n' "$*"; }
die() { printf '[install_deps] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  die "not root and sudo is missing: run this script as root"
fi
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script targets Debian 12"
if [[ -r /etc/os-release ]]; then
  . /etc/os-release
  [[ ${ID:-} == debian && ${VERSION_ID:-} == 12 ]] ||
    log "warning: tested on Debian 12, this is ${PRETTY_NAME:-unknown}; trying anyway"
fi

export DEBIAN_FRONTEND=noninteractive

# Build tools and the libraries the C++ code links against.
PACKAGES=(
  cmake ninja-build g++ pkg-config
  libsimdjson-dev      # On-Demand JSON parsing of each trace event
  libisal-dev          # ISA-L igzip: fast streaming gzip
  libdeflate-dev       # measured in the gzip benchmark
  zlib1g-dev           # fallback gzip decoder and benchmark baseline
  libcli11-dev         # command-line parsing
  libfmt-dev           # formatting
  nlohmann-json3-dev   # JSON report writer
  libgtest-dev libgmock-dev   # tests
  libbenchmark-dev     # benchmarks of stepscope itself
  clang libclang-rt-14-dev    # ASan/UBSan test tree and libFuzzer
  python3              # helper scripts
)

# ---------------------------------------------------------------------------
# EXTRA DEPENDENCIES: later features add their packages here (one array per
# feature, with a comment saying why), e.g. chromium for HTML report checks,
# prometheus for the monitor's end-to-end test, python wheels for python/.
# Keep each addition a Debian package where one exists.
EXTRA_PACKAGES=(
  # HTML report test (tests/report/html_report_test.cpp): renders the page in
  # headless Chromium and fails on any script error; skipped when absent. The
  # report itself needs no browser or JavaScript library at build time.
  chromium
  # The Python front (python/, pybind11 module over libstepscope) and its
  # tests; without them the build skips the module.
  pybind11-dev
  python3-dev
  # venvs for the wheel's build tools and for the installed wheel's tests
  # (scripts/build_wheel.sh, scripts/check_wheel.sh; their packages come from PyPI)
  python3-venv
  # `stepscope monitor` (src/monitor/): the /metrics exporter library with
  # its embedded HTTP server (civetweb), and Prometheus itself for
  # `promtool check rules` / `promtool test rules` on the alert rules.
  prometheus-cpp-dev
  prometheus
)
# Python wheels (pip) go here; installed into .venv/ beside the clone, never system-wide.
PYTHON_WHEELS=(
)
# ---------------------------------------------------------------------------

ALL=("${PACKAGES[@]}" "${EXTRA_PACKAGES[@]}")
log "apt-get update"
"${SUDO[@]}" apt-get update -q || die "apt-get update failed"
log "installing ${#ALL[@]} packages: ${ALL[*]}"
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${ALL[@]}" ||
  die "apt-get install failed"

if (( ${#PYTHON_WHEELS[@]} > 0 )); then
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  log "installing python wheels into $root/.venv: ${PYTHON_WHEELS[*]}"
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends python3-venv || die "python3-venv install failed"
  python3 -m venv "$root/.venv" || die "venv creation failed"
  "$root/.venv/bin/pip" install -q "${PYTHON_WHEELS[@]}" || die "pip install failed"
fi

# Check that what the build needs is really there, so a broken mirror fails here
# and not half-way through the build.
for tool in cmake ninja g++ clang++ python3; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool missing after install"
done
for header in simdjson.h isa-l/igzip_lib.h libdeflate.h zlib.h CLI/CLI.hpp fmt/core.h \
              nlohmann/json.hpp gtest/gtest.h gmock/gmock.h benchmark/benchmark.h; do
  [[ -e /usr/include/$header ]] || die "header $header missing after install"
done
[[ -e /usr/include/prometheus/exposer.h ]] || die "header prometheus/exposer.h missing after install"
command -v promtool >/dev/null 2>&1 || die "promtool missing after install (package prometheus)"

log "done: all dependencies present"
