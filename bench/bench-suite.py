#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench-suite.py - the benchmark suite: every scenario of mdcom-bench, then the report.

usage: bench/bench-suite.py [--bench PATH] [--out DIR] [--quick] [--scenarios LIST]
                            [--timeout S] [--period S] [--no-report] [--report-script PATH]

Makes DIR/<timestamp>/ (DIR default bench-results) and runs each step in a process of
its own, one scenario per mdcom-bench invocation: latency, blocks, throughput, api,
thread-metric, reap, then the Python package (bindings/python/bench/py_bench.py). A
step's stdout goes to the terminal and to <step>.txt, its results to <step>.json and
<step>.csv. suite.json says what ran, how long, at what load and how it ended (counts
read from each scenario's JSON); then bench/bench-report.py DIR writes report.md,
results.json, results.csv and plots/. `mdcom-bench suite` runs this script.

Only the cells to run are chosen here (sizes, transports, channel counts); how a cell
is measured is each scenario's default, as when it runs alone (docs/benchmarks.md).

Exit status: 0 ok (also with a few cells that timed out on a busy machine), 1 an
integrity or API error in any step (the report is still written), 4 more than 5 % of
the cells timed out, 2 usage, 130 interrupted.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT = os.path.join(ROOT, "bench", "bench-report.py")
PY_BENCH = os.path.join(ROOT, "bindings", "python", "bench", "py_bench.py")
STEPS = ["latency", "blocks", "throughput", "api", "thread-metric", "reap", "python"]
# mdcom-bench's exit statuses (bench/bench.h)
EXIT_ERROR, EXIT_USAGE, EXIT_MISSED, EXIT_TIMEOUT, EXIT_INTERRUPTED = 1, 2, 3, 4, 130
TIMEOUT_PCT = 5
# blocks and throughput: every message transport but iceoryx (a peer whose per-cell
# set-up waits for its daemon's discovery loop): it is measured in latency only, keeping
# the suite within its time; throughput also streams through the peer programs
MSG_TRS = "all,-iceoryx"
TM_TRS = "mdcom-zc-poll,mdcom-copy-poll,mdcom-zc-block,raw-spin,raw-futex,pipe,mq"


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return -1.0


def sanitized(path):
    """1 when the executable was built with ASan or TSan: a sanitized libmdcom.so cannot
    be loaded into an uninstrumented python."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__asan_init" in data or b"__tsan_init" in data


def commands(a, d):
    """Each step: (name, argv, shown command line)."""
    q = a.quick
    out = []
    for name in STEPS[:-1]:
        argv = [name, "--json", f"{d}/{name}.json", "--csv", f"{d}/{name}.csv"]
        if q and name != "api":
            argv.append("--quick")
        if a.timeout and name in ("latency", "blocks", "throughput"):
            argv += ["--timeout", a.timeout]
        if name == "latency":
            argv += ["--sizes", "1,64,4K,64K,1M" if q else "1,64,1K,4K,64K,1M,16M"]
        elif name == "blocks":
            if not q:
                argv += ["--blocks", "512,1K,2K,4K,8K,16K,32K,256K", "--counts", "1,8"]
            argv += ["--transports", MSG_TRS]
        elif name == "throughput":
            argv += ["--channels", "1,8,32", "--sizes", "64,4K"] if q else ["--sizes", "16,64,496,4K"]
            argv += ["--transports", MSG_TRS]
        elif name == "api" and q:
            argv += ["--calls", "64k", "--no-instr"]
        elif name == "thread-metric":
            argv += ["--period", a.period or ("0.2" if q else "2"), "--transports", TM_TRS]
        out.append((name, [a.bench] + argv, " ".join(["mdcom-bench"] + argv)))
    argv = ["python3", PY_BENCH, "--json", f"{d}/python.json"] + (["--quick"] if q else [])
    out.append(("python", argv, " ".join(argv)))
    return out


def tee(argv, path, env):
    """Run argv, its stdout copied to ours and to path. Its exit status (128 + the
    signal when one killed it, -1 when it could not be started)."""
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
    except OSError as e:
        print(f"mdcom-bench suite: cannot run {argv[0]}: {e}", file=sys.stderr)
        return -1
    with open(path, "wb") as txt:
        try:
            while True:
                chunk = p.stdout.read1(65536)
                if not chunk:
                    break
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
                txt.write(chunk)
        except KeyboardInterrupt:  # the child got the SIGINT too: it tears down and exits
            p.wait()
            return EXIT_INTERRUPTED
    rc = p.wait()
    return 128 - rc if rc < 0 else rc


def tally(path):
    """What a scenario's run ended with, from its JSON (zeros when it wrote none)."""
    t = {"cells": 0, "timeouts": 0, "integrity_errors": 0, "failures": 0, "loadavg_end_1m": -1.0}
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return t, None
    for k in t:
        if isinstance(d.get(k), (int, float)):
            t[k] = d[k]
    return t, d.get("host")


def summary_line(s):
    line = f"{s['scenario']:<14} exit {s['exit']}  {s['seconds']:6.1f} s"
    if s["exit"] < 0:
        return line + "  (skipped)"
    line += f"  load {s['loadavg_start_1m']:.2f}"
    if s["loadavg_end_1m"] >= 0:  # a scenario's; the python step does not say
        line += f"..{s['loadavg_end_1m']:.2f}"
    if s["timeouts"]:
        line += f"  {s['timeouts']} of {s['cells']} cells TIMEOUT (busy machine; see the report)"
    if s["integrity_errors"]:
        line += (f"  <- INTEGRITY ERROR: {s['integrity_errors']} (a message lost, damaged or "
                 "repeated: see its output)")
    elif s["failures"] or s["exit"] not in (0, EXIT_MISSED, EXIT_TIMEOUT):
        line += "  <- API ERROR: a call failed (see its output)"
    return line


def main():
    ap = argparse.ArgumentParser(prog="mdcom-bench suite", description=__doc__.split("\n\n")[1])
    ap.add_argument("--bench", default=os.environ.get("MDCOM_BENCH")
                    or os.path.join(ROOT, "build", "default", "bench", "mdcom-bench"),
                    help="the mdcom-bench executable (default $MDCOM_BENCH, else build/default's)")
    ap.add_argument("--lib", default=os.environ.get("MDCOM_LIB"),
                    help="libmdcom.so for the python step (default $MDCOM_LIB, else the one of "
                         "--bench's build tree)")
    ap.add_argument("--out", default="bench-results", help="parent directory of the results")
    ap.add_argument("--quick", action="store_true", help="every scenario in its --quick form")
    ap.add_argument("--period", help="thread-metric reporting period (default 2 s; --quick 0.2)")
    ap.add_argument("--scenarios", help="only these steps (" + ", ".join(STEPS) + "; default all)")
    ap.add_argument("--timeout", help="latency, blocks, throughput: a wait longer than S s times "
                                      "out (default theirs, 5; retried once with twice S)")
    ap.add_argument("--no-report", action="store_true", help="do not run the report script")
    ap.add_argument("--report-script", default=REPORT, help="default %(default)s")
    a = ap.parse_args()
    if not os.access(a.bench, os.X_OK):
        print(f"mdcom-bench suite: {a.bench}: not an executable (build it: cmake --build --preset "
              "default --target mdcom-bench; or --bench PATH)", file=sys.stderr)
        return EXIT_USAGE
    a.bench = os.path.abspath(a.bench)
    chosen = a.scenarios.split(",") if a.scenarios else STEPS
    unknown = [s for s in chosen if s not in STEPS]
    if unknown:
        print(f"mdcom-bench suite: unknown step '{unknown[0]}' (" + ", ".join(STEPS) + ")",
              file=sys.stderr)
        return EXIT_USAGE
    lib = a.lib or os.path.join(os.path.dirname(os.path.dirname(a.bench)), "libmdcom.so")

    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime())
    d = os.path.join(a.out, stamp)
    for k in range(1, 100):
        if not os.path.exists(d):
            break
        d = os.path.join(a.out, f"{stamp}-{k}")
    try:
        os.makedirs(d)
    except OSError as e:
        print(f"mdcom-bench suite: cannot create {d}: {e.strerror}", file=sys.stderr)
        return EXIT_USAGE
    print(f"mdcom-bench suite: results in {d}/", flush=True)

    env = dict(os.environ)
    have_py = os.access(PY_BENCH, os.R_OK) and os.access(lib, os.R_OK)
    if have_py:
        env.update(MDCOM_LIB=lib, PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
    steps, host, worst = [], {}, 0
    t0 = time.monotonic()
    for name, argv, shown in commands(a, d):
        s = {"scenario": name, "command": shown, "exit": -1, "seconds": 0.0,
             "loadavg_start_1m": None, "loadavg_end_1m": -1.0, "cells": 0, "timeouts": 0,
             "integrity_errors": 0, "failures": 0}
        steps.append(s)
        print(f"\n######## {name} ########")
        if name not in chosen:
            print(f"skipped: not in --scenarios {a.scenarios}")
            continue
        if name == "python" and not have_py:
            print(f"skipped: {PY_BENCH} or {lib} not found (shared library build)")
            continue
        if name == "python" and sanitized(a.bench):
            print("skipped: a sanitizer build (its libmdcom.so needs the sanitizer's runtime first "
                  "in the process)")
            continue
        print(f"$ {shown}", flush=True)
        t1 = time.monotonic()
        s["loadavg_start_1m"] = loadavg()
        rc = tee(argv, os.path.join(d, name + ".txt"), env)
        s["seconds"] = time.monotonic() - t1
        if rc < 0:
            rc = EXIT_ERROR
        s["exit"] = rc
        if rc == EXIT_INTERRUPTED or rc >= 128:
            print("mdcom-bench suite: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if name != "python":
            t, h = tally(os.path.join(d, name + ".json"))
            s.update(t)
            host = host or h or {}
        # timeouts: counted over all the steps below; a missed target: never a failure
        if rc not in (0, EXIT_MISSED, EXIT_TIMEOUT):
            worst = EXIT_ERROR
    total = time.monotonic() - t0
    cells = sum(s["cells"] for s in steps)
    timeouts = sum(s["timeouts"] for s in steps)
    too_many = timeouts * 100 > cells * TIMEOUT_PCT
    if too_many and not worst:
        worst = EXIT_TIMEOUT

    with open(os.path.join(d, "suite.json"), "w") as f:
        json.dump({"benchmark": "suite", "timestamp": stamp, "quick": a.quick, "host": host,
                   "steps": steps, "cells": cells, "timeouts": timeouts,
                   "timeout_limit_pct": TIMEOUT_PCT, "exit": worst, "seconds": total}, f, indent=2)
        f.write("\n")
    print("\n######## summary ########")
    for s in steps:
        print(summary_line(s))
    print(f"total {total:.1f} s; {timeouts} of {cells} cells timed out (after a retry)"
          + (": more than 5 %, the machine was too busy to measure: exit 4" if too_many
             else ": within the 5 % allowed, not a failure" if timeouts else ""), flush=True)
    if a.no_report:
        return worst
    if not os.access(a.report_script, os.R_OK):
        print(f"mdcom-bench suite: report script {a.report_script} not found: no report.md/plots "
              "(use --report-script)", file=sys.stderr)
        return EXIT_ERROR
    # Debian's interpreter first: python3-matplotlib is installed for it, whatever
    # python3 comes first on PATH
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else shutil.which("python3")
    r = subprocess.run([py or sys.executable, a.report_script, d])
    if r.returncode != 0:
        print(f"mdcom-bench suite: {a.report_script} failed (exit {r.returncode})", file=sys.stderr)
        return EXIT_ERROR
    print(f"report: {d}/report.md")
    return worst


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("mdcom-bench suite: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
