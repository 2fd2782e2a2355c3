"""`make bench`: every speed target of the project, measured on the real `iac-code` process
from outside, printed as one table (figures for docs/benchmarks.md).

Run:  .venv/bin/python bench/targets.py [--runs 3] [--only streaming,...]
Each module named in BENCHMARKS offers `measure(runs) -> list[Row]`.
"""

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import Row, load_average, print_table

# One module per area; each adds its rows to the table.
BENCHMARKS = [
    "streaming",
    "start",
    "replay",
    "memory",
    "postgres_list",
    "peers",  # side by side with claude-code-acp, when it is installed
    "web",  # the web client in headless Chromium; skipped (said so) when it is not built
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated benchmark modules")
    args = parser.parse_args()
    chosen = [name for name in args.only.split(",") if name] or BENCHMARKS
    rows: list[Row] = []
    before = load_average()
    for name in chosen:
        print(f"measuring {name} …", file=sys.stderr, flush=True)
        rows.extend(importlib.import_module(f"bench.{name}").measure(args.runs))
    print(f"iac-code targets (load average when the run began: {before})")
    if rows:  # a benchmark that cannot run here says so on stderr and adds none
        print_table(rows)


if __name__ == "__main__":
    main()
