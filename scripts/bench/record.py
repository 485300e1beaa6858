#!/usr/bin/env python3
"""Append one benchmark record to docs/benchmarks/<bench>.jsonl (one JSON object per line, one line per run).

    record.py BENCH FIGURES.json --load "LOADAVG" [--build-dir DIR] [--env NAME ...] -- COMMAND WORDS...

The record holds what a figure needs to be read later: the commit the binary was built from, the date (UTC), the
machine (cores, CPU model), the load average before the runs, the command that ran (with the environment settings
named by --env that were set), and the bench's figures (FIGURES.json, written by the bench's report).

Environment: BENCH_RECORD=0 records nothing; BENCH_RECORD_DIR=DIR writes to DIR/<bench>.jsonl instead of the
repository's docs/benchmarks/; BENCH_COMMIT=REV names the binary's commit when it was not built from this checkout
(e.g. with PERCUSSION_BENCH_NO_BUILD=1 and another BUILD_DIR). Standard library only.
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench")
    parser.add_argument("figures", help="JSON file with the bench's figures")
    parser.add_argument("--load", default="", help="/proc/loadavg before the runs")
    parser.add_argument("--build-dir", default="", help="where the binary came from")
    parser.add_argument("--env", nargs="*", default=[], help="environment settings to put before the command")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    a = parser.parse_args(argv[:split])
    words = argv[split + 1:]
    if os.environ.get("BENCH_RECORD", "1") == "0":
        return 0
    with open(a.figures) as f:
        figures = json.load(f)
    settings = [f"{name}={shlex.quote(os.environ[name])}" for name in a.env if os.environ.get(name, "") != ""]
    commit = os.environ.get("BENCH_COMMIT") or git("rev-parse", "--short=12", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no")) and not os.environ.get("BENCH_COMMIT")
    load = a.load.split()
    record = {
        "bench": a.bench,
        "commit": commit + ("-dirty" if dirty else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"nproc": os.cpu_count(), "cpu": cpu_model()},
        "load": [float(x) for x in load[:3]] if len(load) >= 3 else None,
        "command": " ".join(settings + [shlex.quote(w) for w in words]),
        "build_dir": a.build_dir or None,
        "figures": figures,
    }
    directory = os.environ.get("BENCH_RECORD_DIR") or os.path.join(ROOT, "docs", "benchmarks")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, a.bench + ".jsonl")
    with open(path, "a") as f:
        f.write(json.dumps(record, ensure_ascii=False, separators=(", ", ": ")) + "\n")
    print(f"bench: record appended to {os.path.relpath(path)} (scripts/bench/summarise.py updates "
          f"docs/benchmarks/README.md)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
