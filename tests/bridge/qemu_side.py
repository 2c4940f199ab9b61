# SPDX-License-Identifier: BSD-3-Clause
"""The processes of test (b) with the real firmware (test_bridge_qemu.py).

``feed TOML_A ZCFG_A STATUS_A PREFIX N`` runs under mdcom-qemu, next to the
Cortex-M4 firmware (mdcom-fw-resp, master of region A = qemu_m4.toml plus a
[[bridge]] entry): it starts bridge A (domain "linux", polling: the region's
doorbell is QEMU's UART socket, which this process tree does not hold), waits
until bridge A sees bridge B, then has the firmware echo N messages
(fw_echo_hdr{seq, len, crc} + payload) from echo_in to echo_out with
FW_ARG_CHECK. The firmware is the sender of echo_out; bridge A publishes what
it sends. Prints one JSON line: the firmware's response and bridge A's status.

``check TOML_B N`` is the receiver on region B ("app", FIFO "rx"): every
message must be fw_echo_hdr with seq = its index, len = the payload's length
and crc = its CRC-32. Prints one JSON line.
"""
from __future__ import annotations

import json
import os
import pathlib
import signal
import struct
import subprocess
import sys
import time
import zlib

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "bridge" / "zenoh"))
import topology as T  # noqa: E402

import mdcom  # noqa: E402

FW_OP_PING, FW_OP_ECHO = 1, 2
FW_MODE_POLL, FW_ARG_CHECK = 0, 1
RSP = struct.Struct("<IiIIII")  # fw_rsp: op, status, count, value, value2, elapsed_us
HDR = struct.Struct("<III")     # fw_echo_hdr: seq, len, crc


def body(i: int) -> bytes:
    """Payload of message i: 0..484 bytes (echo_in's blocks are 512 B)."""
    return bytes((i * 7 + k) & 0xFF for k in range((i * 37) % 485))


def feed(toml: str, zcfg: str, status: str, prefix: str, n: int) -> int:
    bridge = subprocess.Popen([str(T.DAEMON), toml, "-z", zcfg, "--id", "bridge-a-qemu",
                               "-s", status, "--status-key", f"{prefix}/status/a",
                               "--poll-us", "200"], env=T.env())
    out: dict = {}
    try:
        end = time.monotonic() + 30
        while True:  # bridge B (outside) connects to us: the subscription follows
            try:
                if json.loads(pathlib.Path(status).read_text())["zenoh"]["peers"] > 0:
                    break
            except (OSError, ValueError, KeyError):
                pass
            if time.monotonic() > end or bridge.poll() is not None:
                raise RuntimeError("bridge A did not connect")
            time.sleep(0.1)
        time.sleep(1.0)
        s = mdcom.System(toml, "linux", attach_timeout=10)
        ctl, rsp, ein = (s.fifo(c) for c in ("ctl", "rsp", "echo_in"))
        assert ctl.send(struct.pack("<4I", FW_OP_PING, FW_MODE_POLL, 0, 0), timeout=10)
        assert RSP.unpack(rsp.poll_recv(30, 0.0005))[:2] == (FW_OP_PING, 0)
        assert ctl.send(struct.pack("<4I", FW_OP_ECHO, FW_MODE_POLL, n, FW_ARG_CHECK), timeout=10)
        for i in range(n):
            b = body(i)
            while not ein.send(HDR.pack(i, len(b), zlib.crc32(b)) + b, timeout=10):
                pass  # filtered: never (no filter set)
        op, st, count, bad, _, us = RSP.unpack(rsp.poll_recv(60, 0.0005))
        out["firmware"] = {"op": op, "status": st, "count": count, "bad": bad, "elapsed_us": us}
        s.close()
        end = time.monotonic() + 10  # bridge A publishes what is still in echo_out
        while time.monotonic() < end:
            e = next(e for e in json.loads(pathlib.Path(status).read_text())["entries"]
                     if e["channel"] == "echo_out")
            if e["messages"] >= n:
                break
            time.sleep(0.1)
    finally:
        bridge.send_signal(signal.SIGTERM)
        bridge.wait(timeout=20)
    out["bridge_a"] = next(e for e in json.loads(pathlib.Path(status).read_text())["entries"]
                           if e["channel"] == "echo_out")
    out["bridge_a_exit"] = bridge.returncode
    print(json.dumps(out), flush=True)
    return 0


def check(toml: str, n: int) -> int:
    s = mdcom.System(toml, "app", attach_timeout=20)
    ch = s.fifo("rx")
    print("ready", flush=True)
    got, errors = 0, []
    while got < n:
        try:
            m = ch.recv(timeout=60)
        except mdcom.MdcomTimeout:
            break
        seq, ln, crc = HDR.unpack_from(m)
        b = m[HDR.size:]
        if seq != got or ln != len(b) or crc != zlib.crc32(b) or b != body(got):
            errors.append(f"message {got}: seq {seq} len {ln}/{len(b)} crc {crc:08x}/{zlib.crc32(b):08x}")
            break
        got += 1
    print(json.dumps({"received": got, "errors": errors}), flush=True)
    s.close()
    return 1 if errors else 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "feed":
        sys.exit(feed(a[1], a[2], a[3], a[4], int(a[5])))
    sys.exit(check(a[1], int(a[2])))
