#!/usr/bin/env bash
# Checks the wheel of scripts/build_wheel.sh the way a user meets it
# (docs/python.md): installed alone (--no-deps) into a fresh venv, its
# extension module and CLI must link only the system's C and C++ runtime and
# what the wheel carries; `stepscope.analyze` and the `stepscope` command run
# on a bundled example; then the Python tests run in that venv with their
# test-only packages (python/requirements-test.txt: pandas, CPU torch,
# transformers, lightning, nbclient) and the example notebook is executed.
#   SKIP_TEST_DEPS=1  only the install, link and example checks
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${WHEEL_TEST_VENV:-$root/.venv-wheel-test}
start=$SECONDS
wheel=$(ls "$root"/wheelhouse/stepscope-*.whl 2>/dev/null | head -1)
[[ -n $wheel ]] || { echo "[check-wheel] no wheel in wheelhouse/ (run scripts/build_wheel.sh)" >&2; exit 1; }

rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$wheel"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

echo "[check-wheel] shared libraries of the module and the CLI"
bad=0
for f in "$site"/stepscope/_stepscope*.so "$site"/stepscope/bin/stepscope; do
  while read -r name _ path _; do
    case "$name" in
      linux-vdso.so.*|libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|/lib64/ld-linux-*|ld-linux-*) continue ;;
      # zlib: on the manylinux policy list, present on every Linux the tag admits.
      libz.so.1) continue ;;
    esac
    # Anything else must come from the wheel itself (auditwheel's stepscope.libs/).
    if [[ $path != "$site"/* ]]; then
      echo "[check-wheel] $(basename "$f") links $name from ${path:-nowhere}, outside the wheel" >&2
      bad=1
    fi
  done < <(ldd "$f")
done
(( bad == 0 )) || exit 1

echo "[check-wheel] the example through Python and through the CLI"
(cd /tmp && "$venv/bin/python" -c "import stepscope; print(stepscope.analyze('$root/examples/eager_bf16_baseline').primary_bottleneck)")
"$venv/bin/stepscope" analyze "$root/examples/eager_bf16_baseline" >/dev/null
"$venv/bin/stepscope" --version

if [[ ${SKIP_TEST_DEPS:-0} == 1 ]]; then
  echo "[check-wheel] done in $((SECONDS - start)) s (test dependencies skipped)"
  exit 0
fi
echo "[check-wheel] test dependencies (python/requirements-test.txt)"
# PyTorch's CPU-only wheel is about 0.2 GB against about 3 GB for PyPI's
# (which carries the CUDA libraries): taken from PyTorch's own index when that
# answers within 5 s, else PyPI's comes with the other requirements.
cpu_index=https://download.pytorch.org/whl/cpu
if "$venv/bin/python" -c "import urllib.request; urllib.request.urlopen('$cpu_index/torch/', timeout=5)" 2>/dev/null; then
  echo "[check-wheel] torch from $cpu_index"
  "$venv/bin/pip" install -q --disable-pip-version-check --index-url "$cpu_index" torch torchvision ||
    echo "[check-wheel] the CPU index failed; torch comes from PyPI"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$root/python/requirements-test.txt"
echo "[check-wheel] Python tests"
# test_monitor needs the fake NVML of the C++ test tree: ctest runs it there.
log=$(mktemp)
rc=0
(cd "$root/tests/python" && STEPSCOPE_CLI="$venv/bin/stepscope" "$venv/bin/python" -m unittest -v \
  $(cd "$root/tests/python" && ls test_*.py | grep -v '^test_monitor.py$' | sed 's/\.py$//')) >"$log" 2>&1 || rc=$?
# The block-sparse attention front's reference path and the augmentation
# front's JPEG decode (torch on CPU; their kernel tests skip without the
# extension and a GPU).
(cd "$root/tests/kernels_torch" && PYTHONPATH="$root/python/stepscope_kernels" \
  "$venv/bin/python" -m unittest -v test_block_sparse_attention test_image_augment) >>"$log" 2>&1 || rc=$?
tail -n 60 "$log"
rm -f "$log"
echo "[check-wheel] done in $((SECONDS - start)) s (Python tests: exit $rc)"
exit "$rc"
