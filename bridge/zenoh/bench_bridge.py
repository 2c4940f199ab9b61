# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of mdcom-zenoh: a process on SoC A -> FIFO -> bridge A -> Zenoh
(TCP, 127.0.0.1) -> bridge B -> FIFO -> a process on SoC B, against plain
Zenoh between two processes (publisher -> subscriber, the same Zenoh
configuration: peer to peer, TCP on loopback, scouting off), in the same run.
Every end is native (mdcom-zenoh-bench, Rust, built with the daemon: the
zenoh crate for the plain pair, libmdcom for the FIFO ends).

Per size (64 B, 4 KiB, 64 KiB): one-way latency p50/p99 of paced messages
(1 ms apart; the sender stamps CLOCK_MONOTONIC, the receiver subtracts; one
machine, one clock; first 10 % left out) and throughput of a burst (first
send to last receive), then the ratios bridge / plain Zenoh. Congestion
control "block", reliable, on both paths. Beside the latency, the one-way
p50 of a lone FIFO hop to a sleeping receiver (mdcom-bench, when built:
MDCOM_BENCH_BIN, default build/default/bench/mdcom-bench) and the floor it
sets: the bridge path has two such hops that plain Zenoh has not, so its
latency ratio cannot go below (Zenoh p50 + 2 hops) / Zenoh p50.

    python3 bridge/zenoh/bench_bridge.py [--quick] [--json FILE] [--bridge-arg ARG ...]

(MDCOM_ZENOH: the daemon, default build/default/bridge/zenoh/mdcom-zenoh;
MDCOM_LIB/PYTHONPATH as for the tests: the keepers use the Python binding.)
Targets (bridge <= 1.2 x Zenoh's latency, >= 0.8 x its throughput) and
results: docs/bridge.md.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import topology as T  # noqa: E402

SIZES = (64, 4096, 65536)
KEY = "mdcom/bench/plain"


def _cpu_s(pid: int) -> float:
    """The cpu time of process pid so far (all its threads, from schedstat)."""
    ns = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                ns += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return ns / 1e9


def _pair(recv: list[str], send: list[str], go: bool, watch: tuple = ()) -> dict:
    """Start the receiver, then the sender; the receiver's JSON line, with
    the sender's cpu time (send_cpu_s) and that of the processes in watch
    (the bridges, watch_cpu_s) from the sender's start to the last receive."""
    b = str(T.BENCH)
    r = subprocess.Popen([b, *recv], env=T.env(), stdout=subprocess.PIPE, text=True)
    s = None
    try:
        assert r.stdout.readline().strip() == "ready"
        c0 = [_cpu_s(p.pid) for p in watch]
        s = subprocess.Popen([b, *send], env=T.env(), stdout=subprocess.PIPE,
                             stdin=subprocess.PIPE if go else None, text=True)
        if go:
            assert s.stdout.readline().strip() == "ready"
            c0 = [_cpu_s(p.pid) for p in watch]
            s.stdin.write("go\n")
            s.stdin.flush()
        out = json.loads(r.stdout.readline())
        out["watch_cpu_s"] = [_cpu_s(p.pid) - c for p, c in zip(watch, c0)]
    finally:
        for p in (s, r):
            if p is None:
                continue
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    # the sender's last line (once it has ended: a stuck sender was killed above)
    out["send_cpu_s"] = 0.0
    for line in s.stdout.read().splitlines():
        if line.startswith("{"):
            out["send_cpu_s"] = json.loads(line)["cpu_s"]
    return out


def _zenoh(za, zb, size: int, n: int, period_us: int) -> dict:
    return _pair(["zsub", str(za), KEY, str(n)],
                 ["zpub", str(zb), KEY, str(size), str(n), str(period_us)], go=False)


def _bridge(t: T.Topology, size: int, n: int, period_us: int) -> dict:
    return _pair(["frecv", str(t.toml["b"]), "app", "rx", str(n)],
                 ["fsend", str(t.toml["a"]), "fw", "up", str(size), str(n), str(period_us)],
                 go=True, watch=(t.bridges["a"], t.bridges["b"]))


def _fifo_hop_us(size: int, n: int) -> float | None:
    """The one-way p50 (us) of a lone FIFO hop to a receiver asleep in its
    wait (mdcom-bench's mdcom-copy-block: the adaptive spin off, so every
    message wakes it, as a 1 ms pace does on the bridge path), or None when
    mdcom-bench is not built. The bridge path has two such hops more than
    plain Zenoh: its latency cannot go below Zenoh's + twice this."""
    exe = pathlib.Path(os.environ.get("MDCOM_BENCH_BIN") or T.REPO / "build/default/bench/mdcom-bench")
    if not os.access(exe, os.X_OK):
        print(f"{exe} not built: no FIFO-hop floor in this run", file=sys.stderr)
        return None
    r = subprocess.run([str(exe), "latency", "--sizes", str(size), "--transports", "mdcom-copy-block",
                        "--no-api", "--iters", str(n), "--rounds", "1", "--csv", "-"],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        print(f"{exe} latency failed (exit {r.returncode}): no FIFO-hop floor for {size} B\n{r.stderr}",
              file=sys.stderr)
        return None
    for line in r.stdout.splitlines():
        f = line.split(",")
        if len(f) >= 9 and f[4] == "oneway" and f[7] == "p50" and f[8]:
            return float(f[8]) / 1e3
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer messages (a smoke run)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--bridge-arg", action="append", default=[], metavar="ARG",
                    help="an extra option of both bridges (repeat for several: "
                         "--bridge-arg=--spin-us --bridge-arg=200)")
    args = ap.parse_args(argv)
    if not os.access(T.BENCH, os.X_OK):
        print(f"{T.BENCH} not built (CMake target mdcom_zenoh)", file=sys.stderr)
        return 2
    lat_n = 300 if args.quick else 3000
    thr_n = {64: 200000, 4096: 50000, 65536: 8000}
    if args.quick:
        thr_n = {k: v // 10 for k, v in thr_n.items()}
    rows = []
    short = 0  # runs where the receiver did not get every message
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    with tempfile.TemporaryDirectory() as d:
        t = T.Topology(pathlib.Path(d), congestion="block", count=128,
                       bridge_args=args.bridge_arg)
        pa, pb = T.free_port(), T.free_port()
        za, zb = pathlib.Path(d) / "plain-a.json5", pathlib.Path(d) / "plain-b.json5"
        za.write_text(T.zenoh_config(pa))
        zb.write_text(T.zenoh_config(pb, connect=pa))
        try:
            t.start_keepers()
            t.start_bridge("a")
            t.start_bridge("b")
            t.wait_connected()
            for size in SIZES:
                row = {"size": size}
                zl = _zenoh(za, zb, size, lat_n, 1000)
                bl = _bridge(t, size, lat_n, 1000)
                zt = _zenoh(za, zb, size, thr_n[size], 0)
                bt = _bridge(t, size, thr_n[size], 0)
                hop = _fifo_hop_us(size, lat_n)
                for name, v, n in (("zenoh lat", zl, lat_n), ("bridge lat", bl, lat_n),
                                   ("zenoh thr", zt, thr_n[size]), ("bridge thr", bt, thr_n[size])):
                    if v["received"] != n:
                        short += 1
                        print(f"{size} B {name}: {v['received']} of {n} received", file=sys.stderr)
                n = thr_n[size]
                row.update(zenoh_lat=(zl["p50_us"], zl["p99_us"]), bridge_lat=(bl["p50_us"], bl["p99_us"]),
                           zenoh_thr=zt["msg_per_s"], bridge_thr=bt["msg_per_s"], fifo_hop_us=hop,
                           # cpu us per message of the throughput runs, per process
                           zenoh_cpu=[zt["send_cpu_s"] * 1e6 / n, zt["cpu_s"] * 1e6 / n],
                           bridge_cpu=[bt["send_cpu_s"] * 1e6 / n,
                                       *(c * 1e6 / n for c in bt["watch_cpu_s"]),
                                       bt["cpu_s"] * 1e6 / n])
                rows.append(row)
                _print_row(row)
        finally:
            t.close()
    _print_cpu(rows)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]
    print(f"load average before: {' '.join(load0)}, after: {' '.join(load1)} "
          f"({os.cpu_count()} cpus)" + (f"; bridge options: {' '.join(args.bridge_arg)}"
                                        if args.bridge_arg else ""))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if short else 0


def _print_row(r: dict) -> None:
    if r["size"] == SIZES[0]:
        print("| size | Zenoh p50/p99 us | bridge p50/p99 us | latency ratio p50 (p99) | "
              "FIFO hop p50 us: floor ratio | Zenoh msg/s | bridge msg/s | throughput ratio | "
              "bridge MB/s |")
        print("|---|---|---|---|---|---|---|---|---|")
    zl, bl, hop = r["zenoh_lat"], r["bridge_lat"], r.get("fifo_hop_us")
    # the floor: plain Zenoh's p50 plus the two sleeping FIFO hops of the
    # bridge path, over plain Zenoh's p50
    floor = f"{hop:.1f}: {(zl[0] + 2 * hop) / zl[0]:.2f}" if hop else "-"
    print(f"| {r['size']} B | {zl[0]:.0f} / {zl[1]:.0f} | {bl[0]:.0f} / {bl[1]:.0f} | "
          f"{bl[0] / zl[0]:.2f} ({bl[1] / zl[1]:.2f}) | {floor} | {r['zenoh_thr']:.0f} | "
          f"{r['bridge_thr']:.0f} | {r['bridge_thr'] / r['zenoh_thr']:.2f} | "
          f"{r['bridge_thr'] * r['size'] / 1e6:.0f} |", flush=True)


def _print_cpu(rows: list) -> None:
    """cpu time per message of the throughput runs: what the path costs,
    whatever else runs on the machine."""
    print("\ncpu time per message, throughput runs (us; from the first message to the last):\n")
    print("| size | Zenoh: pub + sub = total | bridge path: send + bridge A + bridge B + recv = total "
          "| bridge / Zenoh |")
    print("|---|---|---|---|")
    for r in rows:
        z, b = r["zenoh_cpu"], r["bridge_cpu"]
        print(f"| {r['size']} B | {' + '.join(f'{v:.2f}' for v in z)} = {sum(z):.2f} | "
              f"{' + '.join(f'{v:.2f}' for v in b)} = {sum(b):.2f} | "
              f"{sum(b) / sum(z) if sum(z) else 0:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
