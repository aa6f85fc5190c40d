"""The console command `stepscope`: runs the native CLI the wheel installs
beside this package (stepscope/bin/stepscope), in this process's place, so
its exit status, output and signals are the CLI's own. `stepscope analyze
--dask ADDRESS ...` is the one form run here instead: it needs a Dask client
(stepscope.distributed)."""

import os
import sys


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "analyze" and any(a == "--dask" or a.startswith("--dask=")
                                                             for a in sys.argv[2:]):
        from .distributed import cli_main

        sys.exit(cli_main(sys.argv[2:]))
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "stepscope")
    if not os.access(exe, os.X_OK):
        sys.exit(f"stepscope: error: the native CLI is missing from this installation ({exe})")
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
