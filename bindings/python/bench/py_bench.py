#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""py_bench.py - Python <-> Python benchmarks of the mdcom package, side by side with
PyPI iceoryx2's Python package (same run) when it is importable:

  pingpong 64 B   round trip between two processes, p50 / p99 in us; mdcom blocking
                  (Fifo.send / Fifo.recv: adaptive spin, then futex) and polled
                  (try_recv); iceoryx2: send_copy / receive polled (its Python API has
                  no blocking receive without a WaitSet)
  zero-copy 1 MiB one-way stream, GB/s: the sender loans a block, writes a sequence
                  number at each end, sends; the receiver checks them and frees

Targets: mdcom poll 64 B p50 <= iceoryx2's; mdcom 1 MiB >= 5 GB/s. Usage:
  MDCOM_LIB=build/default/libmdcom.so PYTHONPATH=bindings/python \\
  python3 bindings/python/bench/py_bench.py [--iters N] [--blocks N] [--quick] [--json FILE]
`mdcom-bench suite` runs it (--json DIR/python.json) and reports its rows.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[3]  # the repository (bindings/python/bench/)
MiB = 1 << 20


def toml_file(tag: str) -> pathlib.Path:
    name = f"mdpyb{os.getpid()}{tag}"
    p = pathlib.Path(f"/tmp/{name}.toml")
    p.write_text((ROOT / "tests/python/pair.toml.in").read_text().replace("@REGION@", name))
    return p


def peer(role: str, *args: str, **kw) -> subprocess.Popen:
    """This script in another process, as the peer `role`."""
    return subprocess.Popen([sys.executable, __file__, "--role", role, *args], **kw)


# ---------------------------------------------------------------- mdcom ---
def mdcom_pong(toml: str, iters: int, poll: bool = False) -> None:
    import mdcom
    with mdcom.System(toml, "b", attach_timeout=10) as s:
        a2b, b2a = s.fifo("a2b"), s.fifo("b2a")
        for _ in range(iters):
            if poll:
                while (m := a2b.try_recv()) is None:
                    pass
            else:
                m = a2b.recv()
            b2a.send(m, timeout=10)


def mdcom_ping(iters: int, poll: bool = False) -> list[float]:
    import mdcom
    toml = toml_file("p")
    with mdcom.System(toml, "a") as s:
        p = peer("mdcom-pong-poll" if poll else "mdcom-pong", "--toml", str(toml),
                 "--iters", str(iters))
        a2b, b2a = s.fifo("a2b"), s.fifo("b2a")
        msg = bytes(64)
        lat = []
        for _ in range(iters):
            t = time.perf_counter_ns()
            a2b.send(msg, timeout=10)
            if poll:
                while b2a.try_recv() is None:
                    pass
            else:
                b2a.recv(timeout=10)
            lat.append((time.perf_counter_ns() - t) / 1000)
        p.wait(timeout=60)
    toml.unlink()
    return lat[iters // 10:]


def mdcom_zc_rx(toml: str, n: int) -> None:
    import mdcom
    with mdcom.System(toml, "b", attach_timeout=10) as s:
        big, ack = s.fifo("big"), s.fifo("bigack")
        ack.send(b"r", timeout=10)
        for i in range(n):
            b = big.dequeue(timeout=10)
            v = b.data
            if (int.from_bytes(v[0:8], "little") != i
                    or int.from_bytes(v[MiB - 8:MiB], "little") != i):
                sys.exit(f"block {i}: bad sequence numbers")
            big.free(b)
        ack.send(b"d", timeout=10)


def mdcom_zc(n: int) -> float:
    import mdcom
    toml = toml_file("z")
    with mdcom.System(toml, "a") as s:
        p = peer("mdcom-zc-rx", "--toml", str(toml), "--iters", str(n))
        big, ack = s.fifo("big"), s.fifo("bigack")
        ack.recv(timeout=10)
        t = time.perf_counter()
        for i in range(n):
            while True:
                try:
                    b = big.alloc()
                    break
                except mdcom.MdcomError:
                    big.wait(mdcom.EV_TX, timeout=10)
            v = b.data
            seq = i.to_bytes(8, "little")
            v[0:8] = seq
            v[MiB - 8:MiB] = seq
            big.enqueue(b, MiB)
        ack.recv(timeout=30)
        dt = time.perf_counter() - t
        p.wait(timeout=60)
    toml.unlink()
    return n * MiB / dt / 1e9


# -------------------------------------------------------------- iceoryx2 ---
class Msg(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint8 * 64)]


def iox_services(tag: str):
    """The node and the services mdb/<tag>/ping and mdb/<tag>/pong."""
    import iceoryx2 as iox2
    iox2.set_log_level_from_env_or(iox2.LogLevel.Error)
    node = iox2.NodeBuilder.new().create(iox2.ServiceType.Ipc)
    return node, *(node.service_builder(iox2.ServiceName.new(f"mdb/{tag}/{d}"))
                   .publish_subscribe(Msg).open_or_create() for d in ("ping", "pong"))


def iox_pong(tag: str, iters: int) -> None:
    node, ping, pong = iox_services(tag)
    sub = ping.subscriber_builder().create()
    pub = pong.publisher_builder().create()
    print("ready", flush=True)
    for _ in range(iters):
        while (smp := sub.receive()) is None:
            pass
        m = Msg()
        ctypes.memmove(ctypes.byref(m), smp.payload(), 64)
        del smp
        pub.send_copy(m)


def iox_ping(iters: int) -> list[float]:
    tag = f"p{os.getpid()}"
    node, ping, pong = iox_services(tag)
    pub = ping.publisher_builder().create()
    sub = pong.subscriber_builder().create()
    p = peer("iox-pong", "--tag", tag, "--iters", str(iters), stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    time.sleep(0.2)  # the subscriber is connected
    m = Msg()
    lat = []
    for _ in range(iters):
        t = time.perf_counter_ns()
        pub.send_copy(m)
        while (smp := sub.receive()) is None:
            pass
        del smp
        lat.append((time.perf_counter_ns() - t) / 1000)
    p.wait(timeout=60)
    return lat[iters // 10:]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", default="")
    ap.add_argument("--toml", default="")
    ap.add_argument("--tag", default="")
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--blocks", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="2000 round trips, 200 blocks")
    ap.add_argument("--json", default="", help="also write the rows and targets as JSON")
    a = ap.parse_args()
    if a.quick and not a.role:
        a.iters, a.blocks = min(a.iters, 2000), min(a.blocks, 200)
    roles = {"mdcom-pong": lambda: mdcom_pong(a.toml, a.iters),
             "mdcom-pong-poll": lambda: mdcom_pong(a.toml, a.iters, True),
             "mdcom-zc-rx": lambda: mdcom_zc_rx(a.toml, a.iters),
             "iox-pong": lambda: iox_pong(a.tag, a.iters)}
    if a.role:
        roles[a.role]()
        return 0
    try:
        import iceoryx2  # noqa: F401
        have_iox = True
    except ImportError:
        have_iox = False
    print(f"mdcom-bench python: {a.iters} round trips, {a.blocks} blocks of 1 MiB "
          f"(Python {sys.version.split()[0]})", flush=True)
    rows, targets = [], []

    def lat_row(name, lat):
        p50, p99 = statistics.median(lat), statistics.quantiles(lat, n=100)[98]
        print(f"  {name:<26} p50 {p50:.2f} us  p99 {p99:.2f} us", flush=True)
        rows.append({"name": name, "kind": "rtt", "size": 64, "p50_us": p50, "p99_us": p99,
                     "n": len(lat)})
        return p50

    def target(name, value, limit, at_least):
        """A target: MET when value >= limit (at_least) or <= limit; need says which."""
        met = value >= limit if at_least else value <= limit
        targets.append({"name": "python: " + name, "value": value, "limit": limit,
                        "need": ">=" if at_least else "<=", "state": "MET" if met else "MISSED"})

    lat_row("mdcom pingpong 64 B block", mdcom_ping(a.iters))
    m50 = lat_row("mdcom pingpong 64 B poll", mdcom_ping(a.iters, poll=True))
    i50 = lat_row("iceoryx2 pingpong 64 B", iox_ping(a.iters)) if have_iox else None
    mz = mdcom_zc(a.blocks)
    print(f"  {'mdcom zero-copy 1 MiB':<26} {mz:.1f} GB/s", flush=True)
    rows.append({"name": "mdcom zero-copy 1 MiB", "kind": "stream", "size": MiB, "gb_per_s": mz})
    if i50 is not None:
        target("mdcom poll p50 64 B / iceoryx2 p50 64 B", m50 / i50, 1.0, False)
    else:
        print("  iceoryx2 (PyPI) not importable: no peer rows")
    target("mdcom zero-copy 1 MiB GB/s", mz, 5.0, True)
    for t in targets:
        print(f"  target {t['name']}: {t['value']:.2f} (needs {t['need']} {t['limit']:g}) {t['state']}")
    if a.json:
        import json
        with open(a.json, "w") as f:
            json.dump({"benchmark": "python", "python": sys.version.split()[0], "iters": a.iters,
                       "blocks": a.blocks, "quick": a.quick, "iceoryx2": have_iox,
                       "rows": rows, "targets": targets}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
