# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of mdcom-zenoh: one process on SoC A -> FIFO -> bridge A ->
Zenoh (TCP, 127.0.0.1) -> bridge B -> FIFO -> one process on SoC B, against
plain Zenoh between two processes (publisher -> subscriber, the same Zenoh
configuration: peer to peer, TCP on loopback, scouting off), in the same run.

Per size (64 B, 4 KiB, 64 KiB): one-way latency p50/p99 of paced messages
(the sender stamps CLOCK_MONOTONIC, the receiver subtracts; one machine, one
clock) and throughput of a burst (first send to last receive), then the
ratios bridge / plain Zenoh. All ends are Python processes (the mdcom binding
or eclipse-zenoh); congestion control "block", reliable.

    MDCOM_LIB=build/default/libmdcom.so PYTHONPATH=bindings/python \\
        python3 tools/zenoh/bench_bridge.py [--quick] [--json FILE]

Results and the targets (bridge <= 1.2 x Zenoh's latency, >= 0.8 x its
throughput): docs/bridge.md.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import topology as T  # noqa: E402

SIZES = (64, 4096, 65536)
STAMP = struct.Struct("<QI")  # send time (ns), index


# --------------------------------------------------------------------------
# the ends (run as: bench_bridge.py _send/_recv KIND ...)
# --------------------------------------------------------------------------

def _end_send(kind: str, where: str, size: int, n: int, gap: float) -> None:
    if kind == "zenoh":
        import zenoh
        z = zenoh.open(zenoh.Config.from_file(where))
        pub = z.declare_publisher("mdcom/bench/plain", congestion_control=zenoh.CongestionControl.BLOCK)
        send = pub.put
    else:
        import mdcom
        s = mdcom.System(where, "fw", attach_timeout=20)
        ch = s.fifo("up")
        send = ch.send
    pad = bytes(size - STAMP.size)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        send(STAMP.pack(time.monotonic_ns(), i) + pad)
        if gap:
            t = time.monotonic() + gap
            while time.monotonic() < t:  # spin: sleep() would add its own jitter
                pass
    print(json.dumps({"done": n}), flush=True)
    sys.stdin.readline()  # keep the session/attachment until the receiver is done


def _end_recv(kind: str, where: str, n: int) -> None:
    lat: list[int] = []
    if kind == "zenoh":
        import zenoh
        z = zenoh.open(zenoh.Config.from_file(where))
        sub = z.declare_subscriber("mdcom/bench/plain", zenoh.handlers.FifoChannel(16))

        def recv() -> bytes:
            return sub.handler.recv().payload.to_bytes()
    else:
        import mdcom
        s = mdcom.System(where, "app", attach_timeout=20)
        ch = s.fifo("rx")

        def recv() -> bytes:
            return ch.recv(timeout=30)
    print("ready", flush=True)
    first = None
    for _ in range(n):
        m = recv()
        now = time.monotonic_ns()
        t, _i = STAMP.unpack_from(m)
        if first is None:
            first = t
        lat.append(now - t)
    print(json.dumps({"lat_ns": lat, "first_send": first, "last_recv": now}), flush=True)


# --------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------

def _run(kind: str, where_send: str, where_recv: str, size: int, n: int, gap: float,
         settle: float) -> dict:
    py = [sys.executable, str(pathlib.Path(__file__).resolve())]
    r = subprocess.Popen(py + ["_recv", kind, where_recv, str(n)], env=T.env(),
                         stdout=subprocess.PIPE, text=True)
    s = subprocess.Popen(py + ["_send", kind, where_send, str(size), str(n), str(gap)],
                         env=T.env(), stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    try:
        assert r.stdout.readline().strip() == "ready"
        assert s.stdout.readline().strip() == "ready"
        time.sleep(settle)  # Zenoh: the subscription reaches the publisher
        s.stdin.write("go\n")
        s.stdin.flush()
        s.stdout.readline()
        out = json.loads(r.stdout.readline())
        s.stdin.write("bye\n")
        s.stdin.flush()
    finally:
        for p in (s, r):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    return out


def _lat(kind, ws, wr, size, n, gap, settle) -> tuple[float, float]:
    lat = sorted(_run(kind, ws, wr, size, n, gap, settle)["lat_ns"][n // 10:])  # no warm-up
    return (statistics.median(lat) / 1e3, lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1e3)


def _thr(kind, ws, wr, size, n, settle) -> float:
    out = _run(kind, ws, wr, size, n, 0.0, settle)
    return n / ((out["last_recv"] - out["first_send"]) / 1e9)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer messages (a smoke run)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("_args", nargs="*", help=argparse.SUPPRESS)
    if argv is None and len(sys.argv) > 1 and sys.argv[1] in ("_send", "_recv"):
        a = sys.argv[2:]
        if sys.argv[1] == "_send":
            _end_send(a[0], a[1], int(a[2]), int(a[3]), float(a[4]))
        else:
            _end_recv(a[0], a[1], int(a[2]))
        return 0
    args = ap.parse_args(argv)
    lat_n = 300 if args.quick else 2000
    thr_n = {64: 5000, 4096: 4000, 65536: 1500}
    if args.quick:
        thr_n = {k: v // 5 for k, v in thr_n.items()}
    rows = []
    with tempfile.TemporaryDirectory() as d:
        t = T.Topology(pathlib.Path(d), congestion="block", count=64)
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
                row["zenoh_lat"] = _lat("zenoh", str(za), str(zb), size, lat_n, 0.001, 1.0)
                row["bridge_lat"] = _lat("bridge", str(t.toml["a"]), str(t.toml["b"]), size,
                                         lat_n, 0.001, 0.2)
                row["zenoh_thr"] = _thr("zenoh", str(za), str(zb), size, thr_n[size], 1.0)
                row["bridge_thr"] = _thr("bridge", str(t.toml["a"]), str(t.toml["b"]), size,
                                         thr_n[size], 0.2)
                rows.append(row)
                _print_row(row)
        finally:
            t.close()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


def _print_row(r: dict) -> None:
    if r["size"] == SIZES[0]:
        print("| size | Zenoh p50/p99 us | bridge p50/p99 us | latency ratio p50 (p99) | "
              "Zenoh msg/s | bridge msg/s | throughput ratio | bridge MB/s |")
        print("|---|---|---|---|---|---|---|---|")
    zl, bl = r["zenoh_lat"], r["bridge_lat"]
    print(f"| {r['size']} B | {zl[0]:.0f} / {zl[1]:.0f} | {bl[0]:.0f} / {bl[1]:.0f} | "
          f"{bl[0] / zl[0]:.2f} ({bl[1] / zl[1]:.2f}) | {r['zenoh_thr']:.0f} | "
          f"{r['bridge_thr']:.0f} | {r['bridge_thr'] / r['zenoh_thr']:.2f} | "
          f"{r['bridge_thr'] * r['size'] / 1e6:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
