# SPDX-License-Identifier: BSD-3-Clause
"""Two SoCs on one machine for the bridge's tests and benchmark.

Region A (SoC A): domains "linux" (master) and "fw" (the firmware, here a
Linux process standing for it); FIFO "up" fw -> linux is bridged out on
``<prefix>/up``, FIFO "down" linux -> fw is bridged in from ``<prefix>/down``.
Region B (SoC B): domains "linux" (master) and "app"; FIFO "rx" linux -> app is
bridged in from ``<prefix>/up``, FIFO "tx" app -> linux out on ``<prefix>/down``.

Zenoh: peer to peer over TCP on 127.0.0.1, explicit endpoints, scouting off:
A listens; B listens and connects to A (and keeps retrying).

Also the stand-in processes (``python3 topology.py ROLE ...``): ``keeper`` (a
process of the master domain that keeps the region formatted while bridges
come and go), ``send``/``recv`` (numbered messages with a CRC, checked for
order, content, duplicates) and the benchmark's ends.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import pathlib
import random
import signal
import socket
import struct
import subprocess
import sys
import time
import zlib
from typing import Optional

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
# the bridge daemon (Rust, bridge/zenoh/rs): as ctest passes it, else the
# default preset's build
DAEMON = pathlib.Path(os.environ.get("MDCOM_ZENOH")
                      or REPO / "build" / "default" / "bridge" / "zenoh" / "mdcom-zenoh")
# the benchmark's native ends (built beside the daemon)
BENCH = DAEMON.with_name("mdcom-zenoh-bench")

# The two regions' TOML, from three parts. Region A stands for SoC A: the
# firmware ("fw") sends on "up" and receives on "down", bridge A maps them to
# PREFIX/up (out) and PREFIX/down (in). Region B stands for SoC B: its
# application ("app") receives on "rx" (fed from PREFIX/up) and sends on "tx"
# (to PREFIX/down). Placeholders left for str.format: name, block, block_b,
# count, prefix, congestion, rate_limit.
_HEAD = """\
# SPDX-License-Identifier: BSD-3-Clause
[region]
name = "{{name}}"

[[domain]]
name = "linux"
id = 0
role = "master"

[[domain]]
name = "{remote}"
id = 1
role = "remote"
"""
_FIFO = """
[[fifo]]
name = "{ch}"
block_size = {block}
block_count = {{count}}
senders = ["{src}"]
receivers = ["{dst}"]
"""
_BRIDGE = """
[[bridge]]
channel = "{ch}"
direction = "{way}"
key = "{{prefix}}/{topic}"
domain = "linux"
congestion = "{{congestion}}"
{extra}"""
_REGION_A = (_HEAD.format(remote="fw")
             + _FIFO.format(ch="up", block="{block}", src="fw", dst="linux")
             + _FIFO.format(ch="down", block="{block}", src="linux", dst="fw")
             + _BRIDGE.format(ch="up", way="out", topic="up", extra="rate_limit = {rate_limit}\n")
             + _BRIDGE.format(ch="down", way="in", topic="down", extra=""))
_REGION_B = (_HEAD.format(remote="app")
             + _FIFO.format(ch="rx", block="{block_b}", src="linux", dst="app")
             + _FIFO.format(ch="tx", block="{block}", src="app", dst="linux")
             + _BRIDGE.format(ch="rx", way="in", topic="up", extra="")
             + _BRIDGE.format(ch="tx", way="out", topic="down", extra=""))


def end_process(p: subprocess.Popen, group: bool = False) -> None:
    """Teardown: SIGTERM to p (SIGKILL to its process group with group),
    then SIGKILL if it has not exited within 10 s."""
    if p.poll() is None:
        if group:
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def zenoh_config(listen: int, connect: Optional[int] = None) -> str:
    """A Zenoh JSON5 config: peer, TCP on loopback, no scouting."""
    cfg = {
        "mode": "peer",
        "listen": {"endpoints": [f"tcp/127.0.0.1:{listen}"]},
        "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
    }
    if connect is not None:
        cfg["connect"] = {"endpoints": [f"tcp/127.0.0.1:{connect}"],
                          "timeout_ms": -1, "exit_on_failure": False}
    return "// SPDX-License-Identifier: BSD-3-Clause\n" + json.dumps(cfg, indent=1) + "\n"


def env() -> dict[str, str]:
    """The environment of every process: PYTHONPATH to the binding (MDCOM_LIB
    comes from the caller: ctest sets it)."""
    e = dict(os.environ)
    paths = [str(REPO / "bindings" / "python"), str(HERE)]
    if e.get("PYTHONPATH"):
        paths.append(e["PYTHONPATH"])
    e["PYTHONPATH"] = os.pathsep.join(paths)
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    return e


class Topology:
    """Files and processes of the two-SoC setup in directory `d`."""

    def __init__(self, d: pathlib.Path, congestion: str = "block", block: int = 65536,
                 block_b: Optional[int] = None, count: int = 32, tag: str = "",
                 same_key: bool = False, rate_limit: int = 0,
                 bridge_args: tuple = (), master_a: str = "linux") -> None:
        self.d = d
        self.bridge_args = tuple(bridge_args)  # extra options of both bridges
        uniq = f"{os.getpid()}{tag}{time.monotonic_ns() % 100000}"
        self.names = {"a": f"mdzA{uniq}", "b": f"mdzB{uniq}"}
        self.prefix = f"mdcom/test/{uniq}"
        self.port_a, self.port_b = free_port(), free_port()
        fields = dict(block=block, block_b=block_b or block, count=count, prefix=self.prefix,
                      congestion=congestion, rate_limit=rate_limit)
        self.toml = {"a": d / "a.toml", "b": d / "b.toml"}
        a = _REGION_A.format(name=self.names["a"], **fields)
        # master_a = "fw": region A's firmware is its master (as on a SoC whose
        # remote processor formats the region); the bridge is then a remote
        self.master = {"a": master_a, "b": "linux"}
        if master_a == "fw":
            a = (a.replace('name = "linux"\nid = 0\nrole = "master"', 'name = "linux"\nid = 0\nrole = "remote"')
                 .replace('name = "fw"\nid = 1\nrole = "remote"', 'name = "fw"\nid = 1\nrole = "master"'))
            assert 'name = "fw"\nid = 1\nrole = "master"' in a
        elif master_a != "linux":
            raise ValueError(f"master_a: 'linux' or 'fw', got {master_a!r}")
        b = _REGION_B.format(name=self.names["b"], **fields)
        if same_key:  # every channel on one key: each bridge publishes and subscribes it
            a, b = (t.replace(f'"{self.prefix}/up"', f'"{self.prefix}/both"')
                    .replace(f'"{self.prefix}/down"', f'"{self.prefix}/both"') for t in (a, b))
        self.toml["a"].write_text(a)
        self.toml["b"].write_text(b)
        self.zcfg = {"a": d / "zenoh-a.json5", "b": d / "zenoh-b.json5"}
        self.zcfg["a"].write_text(zenoh_config(self.port_a))
        self.zcfg["b"].write_text(zenoh_config(self.port_b, connect=self.port_a))
        self.status = {"a": d / "status-a.json", "b": d / "status-b.json"}
        self.procs: list[subprocess.Popen] = []
        self.bridges: dict[str, subprocess.Popen] = {}
        self.keepers: dict[str, subprocess.Popen] = {}
        self.logs = {"a": d / "bridge-a.log", "b": d / "bridge-b.log"}

    def spawn(self, *args: str, **kw) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, *args], env=env(), **kw)
        self.procs.append(p)
        return p

    def role(self, *args: str, **kw) -> subprocess.Popen:
        return self.spawn(str(HERE / "topology.py"), *args, **kw)

    def start_keepers(self) -> None:
        for side in "ab":
            self.start_keeper(side)

    def start_keeper(self, side: str) -> float:
        """Start the keeper (the master) of region `side`; returns the
        CLOCK_MONOTONIC time at which it had formatted (or joined) the region."""
        p = self.role("keeper", "--report", "--domain", self.master[side], str(self.toml[side]),
                      stdout=subprocess.PIPE, text=True)
        self.keepers[side] = p
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"keeper {side} exited with {p.wait()} before attaching")
        return json.loads(line)["ready"]

    def start_bridge(self, side: str, *extra: str) -> subprocess.Popen:
        try:  # a killed bridge's last status must not pass for the new one's
            self.status[side].unlink()
        except FileNotFoundError:
            pass
        # stderr (the bridge's log) is kept in a file and copied to the
        # test's stderr when the topology closes
        log = open(self.logs[side], "a")
        p = subprocess.Popen([str(DAEMON), str(self.toml[side]), "-z", str(self.zcfg[side]),
                              "--id", f"bridge-{side}-{self.names[side]}",
                              "-s", str(self.status[side]),
                              "--status-key", f"{self.prefix}/status/{side}",
                              *self.bridge_args, *extra], env=env(), stderr=log)
        log.close()
        self.procs.append(p)
        self.bridges[side] = p
        return p

    def read_status(self, side: str) -> dict:
        return json.loads(self.status[side].read_text())

    def entry(self, side: str, channel: str) -> dict:
        st = self.read_status(side)
        return next(e for e in st["entries"] if e["channel"] == channel)

    def wait_connected(self, timeout: float = 20.0) -> None:
        """Until both bridges see a peer (their status files say so)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if all(self.read_status(s)["zenoh"]["peers"] > 0 for s in "ab"):
                    time.sleep(0.3)  # subscriptions propagate after the link is up
                    return
            except (OSError, ValueError, KeyError):
                pass
            for s, p in self.bridges.items():
                if p.poll() is not None:
                    raise RuntimeError(f"bridge {s} exited with {p.returncode}")
            time.sleep(0.1)
        raise TimeoutError("the bridges did not connect")

    def close(self) -> None:
        # bridges and ends before the keepers (a keeper may have been started
        # again after them)
        keepers = [p for p in self.procs if p in self.keepers.values()]
        for p in [p for p in reversed(self.procs) if p not in keepers] + keepers:
            end_process(p)
        for n in self.names.values():
            try:
                os.unlink(f"/dev/shm/{n}")
            except OSError:
                pass
        for side, path in self.logs.items():
            if path.exists() and path.stat().st_size:
                sys.stderr.write(f"--- bridge {side} log ---\n{path.read_text()}")

    def log(self, side: str) -> str:
        """What bridge `side` has logged so far."""
        return self.logs[side].read_text() if self.logs[side].exists() else ""


# --------------------------------------------------------------------------
# Messages: message i has a size from `sizes()`, starts with its number and
# the CRC-32 of the rest when it has room (>= 8 bytes); shorter ones are a
# pattern derived from i. The receiver rebuilds what it expects.
# --------------------------------------------------------------------------

_POOL = random.Random(1).randbytes(1 << 17)


def sizes(n: int, lo: int = 1, hi: int = 65536, seed: int = 2) -> list[int]:
    """n sizes log-uniform in lo..hi, the first two lo and hi."""
    r = random.Random(seed)
    out = [min(hi, max(lo, int(round(2 ** r.uniform(lo.bit_length() - 1, hi.bit_length() - 1)))))
           for _ in range(n)]
    out[:2] = [lo, hi][:n]
    return out


def message(i: int, size: int) -> bytes:
    if size < 8:
        return bytes((i + k) & 0xFF for k in range(size))
    off = (i * 7919) % (1 << 16)
    body = _POOL[off:off + size - 8]
    return struct.pack("<II", i & 0xFFFFFFFF, zlib.crc32(body)) + body


def check(msg: bytes) -> Optional[int]:
    """The number in a message of >= 8 bytes whose CRC holds, else None."""
    if len(msg) < 8:
        return None
    i, crc = struct.unpack_from("<II", msg)
    return i if zlib.crc32(msg[8:]) == crc else None


# --------------------------------------------------------------------------
# Roles
# --------------------------------------------------------------------------


def _system(toml: str, domain: str):
    import mdcom
    return mdcom.System(toml, domain, attach_timeout=20)


def role_keeper(a: argparse.Namespace) -> int:
    sigs = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    s = _system(a.toml, a.domain)
    if a.report:  # when the region was formatted (or joined)
        print(json.dumps({"ready": time.monotonic()}), flush=True)
    signal.sigwait(sigs)
    s.close()
    return 0


# what a call raises when the region ended (its master terminated or
# re-formatted it, or this process was reaped)
_REGION_ENDED = {errno.ESHUTDOWN, errno.ECONNRESET, errno.ENOTCONN}


def role_send(a: argparse.Namespace) -> int:
    """Send messages first..first+n-1 (sizes a.lo..a.hi) on a channel; a.delay
    seconds between messages; prints a JSON line with the time it took.
    --stop-on-end: the region's end stops the sender (counted, exit 0)."""
    import mdcom
    s = _system(a.toml, a.domain)
    ch = s.fifo(a.channel)
    sz = sizes(a.n, a.lo, a.hi)
    attached = time.monotonic()  # attached and ready to send
    print("ready", flush=True)
    sys.stdin.readline()  # go
    t0 = time.monotonic()
    sent, ended, times = 0, None, []
    for k in range(a.n):
        if k == a.pause_at:  # hold until told (the tests restart a bridge meanwhile)
            print("paused", flush=True)
            sys.stdin.readline()
        try:
            ch.send(message(a.first + k, sz[k]), timeout=a.timeout)
        except mdcom.MdcomError as e:
            if not (a.stop_on_end and e.errno in _REGION_ENDED):
                raise
            ended = errno.errorcode[e.errno]
            break
        sent += 1
        if a.times:
            times.append(time.monotonic())
        if a.delay:
            time.sleep(a.delay)
    out = {"sent": sent, "seconds": time.monotonic() - t0, "ended": ended, "attached": attached}
    if a.times:
        out["times"] = times
    print(json.dumps(out), flush=True)
    s.close()
    return 0


def role_recv(a: argparse.Namespace) -> int:
    """Receive until a.n messages or a.idle seconds without one. --exact:
    message k must be message(k) (no loss allowed); otherwise numbers must
    strictly increase (no duplicate, no reordering) and CRCs hold. Prints a
    JSON summary; exit 1 on a violation."""
    import mdcom
    s = _system(a.toml, a.domain)
    ch = s.fifo(a.channel)
    sz = sizes(a.n, a.lo, a.hi)
    attached = time.monotonic()  # attached and ready to receive
    got, last, bad, seen = 0, -1, [], []
    first, mark_at, ended = None, None, None
    print("ready", flush=True)
    t0 = None
    while got < a.n:
        try:
            m = ch.recv(timeout=a.idle)
        except mdcom.MdcomTimeout:
            break
        except mdcom.MdcomError as e:
            if not (a.stop_on_end and e.errno in _REGION_ENDED):
                raise
            ended = errno.errorcode[e.errno]
            break
        if t0 is None:
            t0 = time.monotonic()
        if not a.exact:
            i = check(m)
            if i is not None and first is None:
                first = i
            if i is not None and i >= a.mark and mark_at is None:
                mark_at = time.monotonic()  # the first message numbered >= mark
        if a.exact:
            want = message(got, sz[got])
            if len(m) != len(want) or zlib.crc32(m) != zlib.crc32(want):
                bad.append(f"message {got}: {len(m)} B, expected {len(want)} B "
                           f"crc {zlib.crc32(want):08x}, got {zlib.crc32(m):08x}")
                break
        else:
            i = check(m)
            if i is None:
                bad.append(f"message after {last}: bad CRC ({len(m)} B)")
            elif i <= last:
                bad.append(f"message {i} after {last}: duplicate or out of order")
            else:
                last = i
                if len(seen) < 100000:
                    seen.append(i)
        got += 1
        if a.slow:
            time.sleep(a.slow)
    out = {"received": got, "first": first, "last": last, "errors": bad[:10],
           "seconds": (time.monotonic() - t0) if t0 else 0.0, "started": t0,
           "mark_at": mark_at, "ended": ended, "attached": attached}
    print(json.dumps(out), flush=True)
    s.close()
    return 1 if bad else 0


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="role", required=True)
    k = sub.add_parser("keeper")
    k.add_argument("--report", action="store_true",
                   help="print a JSON line with the monotonic time of the attach")
    k.add_argument("--domain", default="linux", help="the master domain (default linux)")
    k.add_argument("toml")
    for name in ("send", "recv"):
        q = sub.add_parser(name)
        q.add_argument("toml")
        q.add_argument("domain")
        q.add_argument("channel")
        q.add_argument("-n", type=int, default=1000)
        q.add_argument("--lo", type=int, default=1)
        q.add_argument("--hi", type=int, default=65536)
        q.add_argument("--delay", type=float, default=0.0)
        q.add_argument("--timeout", type=float, default=60.0)
        q.add_argument("--idle", type=float, default=10.0)
        q.add_argument("--slow", type=float, default=0.0)
        q.add_argument("--exact", action="store_true")
        q.add_argument("--pause-at", type=int, default=-1)
        q.add_argument("--first", type=int, default=0, help="send: number of the first message")
        q.add_argument("--mark", type=int, default=1 << 40,
                       help="recv: report when the first message numbered >= MARK arrived")
        q.add_argument("--times", action="store_true",
                       help="send: report when each message was sent (monotonic)")
        q.add_argument("--stop-on-end", action="store_true",
                       help="the region's end (ESHUTDOWN, ECONNRESET, ENOTCONN) ends the role")
    a = p.parse_args(argv)
    return {"keeper": role_keeper, "send": role_send, "recv": role_recv}[a.role](a)


if __name__ == "__main__":
    sys.exit(main())
