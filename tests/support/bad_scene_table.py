"""Runs every generated bad scene (bad_scene_cases.py) through `percussion check` and `percussion run` and checks
the promises of docs/scenes.md: exit 2 with `<file>: <JSON pointer>: ...` and nothing written for a bad scene,
exit 0 for a valid one, never a crash (exit 1 or a signal) and never a hang.

usage: bad_scene_table.py PERCUSSION SOURCE_DIR SCRATCH
"""
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys

from bad_scene_cases import Generator

TIMEOUT = 60  # seconds per command; a hang fails its case instead of the whole test
# A one-rank run needs none of Open MPI's network transports: probing them is most of a small command's start-up.
QUICK_MPI = {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self", "OMPI_MCA_ess_singleton_isolated": "1"}


STARTUP_FAILURES = []  # commands whose MPI_Init failed (the machine, not the program): tried once more


def execute(command):
    for attempt in range(2):
        try:
            p = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=TIMEOUT, env={**os.environ, **QUICK_MPI})
            output = p.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            return "timeout", (e.stdout or b"").decode(errors="replace")
        if attempt == 0 and p.returncode == 1 and "before MPI_INIT completed" in output:
            STARTUP_FAILURES.append((command, output))
            continue
        return p.returncode, output


def names_pointer(output, path, pointer):
    """The message names `path` and `pointer` (or a pointer below it), as `<path>: <pointer>[/...]: `."""
    return re.search(re.escape(f"{path}: {pointer}") + r"(/[^ :]*)?: ", output) is not None or \
        (pointer == "/" and f"{path}: /: " in output)


def judge(case, check, run, out_dir):
    """The broken promises of one case, as text (empty when it keeps them all)."""
    problems = []
    # Exit 3 (numerical failure) is documented for a run, e.g. of a body thrown at 1e308 m/s; never for check.
    for what, (code, output), allowed in (("check", check, (0, 2)), ("run", run, (0, 2, 3))):
        if code == "timeout":
            problems.append(f"{what}: no answer in {TIMEOUT} s")
        elif code < 0 or code >= 128:
            problems.append(f"{what}: crashed (exit {code}): {output.strip()[-300:]}")
        elif code not in allowed:
            problems.append(f"{what}: exit {code}, expected one of {allowed}: {output.strip()[-300:]}")
    if problems:
        return problems
    (check_code, check_out), (run_code, run_out) = check, run
    expect = case.expect
    if expect == "either":  # the schema accepts it; the program's own checks decide, the same way for both commands
        expect = "bad" if check_code == 2 else "valid"
    if expect == "valid":
        if check_code != 0:
            problems.append(f"check: exit {check_code}, expected 0 (a valid scene): {check_out.strip()[-300:]}")
        if run_code == 3 and case.expect == "either":
            summary = os.path.join(out_dir, "summary.json")
            if not os.path.isfile(summary):
                problems.append(f"run: exit 3 and no summary.json: {run_out.strip()[-300:]}")
            elif json.load(open(summary))["exit"] != "numerical failure":
                problems.append("run: exit 3 but summary.json does not say numerical failure")
        elif run_code != 0:
            problems.append(f"run: exit {run_code}, expected 0 (a valid scene): {run_out.strip()[-300:]}")
        elif not os.path.isfile(os.path.join(out_dir, "summary.json")):
            problems.append("run: no summary.json")
        return problems
    for what, code, output in (("check", check_code, check_out), ("run", run_code, run_out)):
        if code != 2:
            problems.append(f"{what}: exit {code}, expected 2")
            continue
        if f"{case.path}: " not in output:
            problems.append(f"{what}: message does not name the file: {output.strip()[:300]}")
        if case.pointer and not names_pointer(output, case.path, case.pointer):
            problems.append(f"{what}: message does not name {case.pointer}: {output.strip()[:300]}")
        if case.expect == "either" and not re.search(re.escape(f"{case.path}: /"), output):
            problems.append(f"{what}: message names no JSON pointer: {output.strip()[:300]}")
        if case.message and case.message not in output:
            problems.append(f"{what}: message lacks '{case.message}': {output.strip()[:300]}")
    if os.path.lexists(out_dir):
        problems.append(f"run: exit 2 but {out_dir} was written")
    return problems


def run_case(percussion, scratch, case):
    out_dir = os.path.join(scratch, "out", case.name)
    check = execute([percussion, "check", case.path])
    run = execute([percussion, "run", case.path, "--out", out_dir, "--steps", "1"])
    return case, check, run, judge(case, check, run, out_dir)


def main():
    percussion, source_dir, scratch = sys.argv[1:4]
    cases_dir = os.path.join(scratch, "cases")
    os.makedirs(cases_dir)
    os.makedirs(os.path.join(scratch, "out"))
    cases = Generator(source_dir, cases_dir).generate()
    assert len(cases) >= 150, len(cases)
    tally = collections.Counter()
    failures = []
    workers = max(2, 2 * (os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for case, check, run, problems in pool.map(lambda c: run_case(percussion, scratch, c), cases):
            tally[(case.expect, check[0], run[0])] += 1
            if problems:
                failures.append((case, problems))
    for case, problems in failures:
        print(f"FAIL {case.name} ({case.path}, expected {case.expect}):")
        for p in problems:
            print("   ", p)
    for command, output in STARTUP_FAILURES:
        print(f"note: MPI_Init failed, tried again: {' '.join(command)}: {output.strip()[:400]}")
    print(f"bad_scenes: {len(cases)} cases, {len(failures)} failed; (expected, check exit, run exit): count")
    for key, count in sorted(tally.items(), key=str):
        print(f"    {key}: {count}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
