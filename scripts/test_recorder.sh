#!/usr/bin/env bash
# The recorder's and callbacks' Python tests with the real libraries on CPU:
# makes (once) a venv with python/requirements-test.txt and runs
# tests/python/test_recorder.py, test_hf_callback.py and
# test_lightning_callback.py in it. The venv is large (torch), so it lives
# outside build trees and is reused: RECORDER_VENV=DIR (default .venv/, which
# git ignores). PYTHONPATH is python/ (the recorder is pure Python; set
# STEPSCOPE_PYTHONPATH to test an assembled package instead).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${RECORDER_VENV:-$root/.venv}
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q -r "$root/python/requirements-test.txt"

cd "$root/tests/python"
export PYTHONPATH=${STEPSCOPE_PYTHONPATH:-$root/python}
"$venv/bin/python" -m unittest -v test_recorder test_hf_callback test_lightning_callback
