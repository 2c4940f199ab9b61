# SPDX-License-Identifier: BSD-3-Clause
"""The sender and receiver processes of the restart storm (test_restart_storm.py).

``python3 storm_role.py send TOML DOMAIN JOURNAL CH[,CH...]`` sends, in turns, one
message on each channel (one stream per channel, numbered from 0), every
--delay seconds, until SIGTERM. ``recv TOML DOMAIN JOURNAL CH[,CH...]`` receives
from each channel in a thread of its own (each thread with its own
attachment, so that a re-attach of one never races a call of another).

Every message: magic "MDS1", the sender's incarnation (a random u64 drawn at
start), the stream (u8), the sequence number (u64), the time the send began
(CLOCK_MONOTONIC, f64), a padding of 0..200 bytes derived from the number,
then the CRC-32 of all that.

Each process appends to its journal, one os.write per line, so that a
SIGKILL loses no line that was written (the lines are what the checker reads):

  I inc t                        started (incarnation inc)
  T ch t0 t1 rc                  an attach: mdcom.System() from t0 to t1
  A stream seq t0                about to send (written before the call)
  S stream seq t0 t1 rc          the send returned (rc "ok", "timeout", an errno name)
  D ch inc stream seq ts t0 t1   a message (sent at ts) received by a recv called
                                 at t0 that returned at t1
  W ch t0 t1 rc                  a recv that returned without a message
  C ch t0 t1 len                 a message that failed its CRC or magic
  Z t0 t1                        a plain time.sleep(TIMEOUT) of the control thread

On -ESHUTDOWN / -ECONNRESET / -ENOTCONN a role detaches and attaches again,
as an application following the restart contract does (docs/bridge.md).

For a region whose master is the firmware under QEMU (test_restart_storm_qemu.py):
``recv --poll`` receives by polling (the firmware cannot wake a futex), and
``send --fw-echo`` asks the firmware (mdcom-fw-resp, mdcom_fw/proto.h), after
every attach, to echo echo_in to echo_out (an ECHO command on "ctl").
"""
from __future__ import annotations

import argparse
import errno
import os
import random
import signal
import struct
import sys
import threading
import time
import zlib

MAGIC = b"MDS1"
HEAD = struct.Struct("<4sQBQd")
REGION_ENDED = {errno.ESHUTDOWN, errno.ECONNRESET, errno.ENOTCONN}


def encode(inc: int, stream: int, seq: int, t0: float) -> bytes:
    pad = bytes((seq * 31 + k) & 0xFF for k in range((seq * 7919) % 201))
    body = HEAD.pack(MAGIC, inc, stream, seq, t0) + pad
    return body + struct.pack("<I", zlib.crc32(body))


def decode(m: bytes):
    """(inc, stream, seq, t0) of a message whose magic and CRC hold, else None."""
    if len(m) < HEAD.size + 4 or m[:4] != MAGIC:
        return None
    if struct.unpack_from("<I", m, len(m) - 4)[0] != zlib.crc32(m[:-4]):
        return None
    _, inc, stream, seq, t0 = HEAD.unpack_from(m)
    return inc, stream, seq, t0


class Journal:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.lock = threading.Lock()

    def line(self, *f) -> None:
        s = " ".join(f"{x:.6f}" if isinstance(x, float) else str(x) for x in f) + "\n"
        with self.lock:
            os.write(self.fd, s.encode())


def code(e: Exception) -> str:
    import mdcom
    if isinstance(e, mdcom.MdcomTimeout):
        return "timeout"
    return errno.errorcode.get(getattr(e, "errno", 0) or 0, "E?")


def attach(a, j: Journal, tag: str, stop: threading.Event):
    """An attachment (retried until it works: the master may be away), or
    None once stopped."""
    import mdcom
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            s = mdcom.System(a.toml, a.domain, attach_timeout=a.attach_timeout)
            j.line("T", tag, t0, time.monotonic(), "ok")
            return s
        except mdcom.MdcomError as e:
            j.line("T", tag, t0, time.monotonic(), code(e))
            time.sleep(0.005)
    return None


def control(j: Journal, timeout: float, stop: threading.Event) -> None:
    """A plain sleep of the calls' timeout, for comparison (same process,
    same load, same interpreter)."""
    while not stop.is_set():
        t0 = time.monotonic()
        time.sleep(timeout)
        j.line("Z", t0, time.monotonic())


# FW_OP_ECHO, FW_MODE_POLL, count (as many as fit in a u32), no arg bits:
# the firmware echoes each message verbatim (mdcom_fw/proto.h)
FW_ECHO_CMD = struct.pack("<4I", 2, 0, 0xFFFFFFFF, 0)


def fw_echo(a, s) -> None:
    """Ask the firmware of this new attachment to echo. Queued behind a
    service still running (one command per attach of a restarted sender):
    a full "ctl" is no error, the echo it holds is running."""
    import mdcom
    if not a.fw_echo:
        return
    try:
        s.fifo("ctl").send(FW_ECHO_CMD, timeout=0.05)
    except mdcom.MdcomError:
        pass


def role_send(a, j: Journal, inc: int, stop: threading.Event) -> None:
    import mdcom
    chans = a.channels.split(",")
    s = attach(a, j, "all", stop)
    if s is None:
        return
    fw_echo(a, s)
    fifos = [s.fifo(c) for c in chans]
    seq = [0] * len(chans)
    print("ready", flush=True)
    # --inject-stale: copies of the messages sent lately, for one sent a
    # second before the region's end (before its new master was started)
    recent, stale = [], None
    while not stop.is_set():
        for k, f in enumerate(fifos):
            n = seq[k]
            seq[k] += 1
            t0 = time.monotonic()
            m = encode(inc, k, n, t0)
            j.line("A", k, n, t0)
            try:
                f.send(m, timeout=a.timeout)
                rc = "ok"
            except mdcom.MdcomError as e:
                rc = code(e)
            j.line("S", k, n, t0, time.monotonic(), rc)
            if rc == "ok" and a.inject_dup == n and k == a.inject_stream:
                # negative control: the same message once more (a duplicate)
                f.send(m, timeout=a.timeout)
            if rc == "ok" and a.inject_stale and k == a.inject_stream:
                recent.append((time.monotonic(), m))
                del recent[:-2000]
            if rc in ("ESHUTDOWN", "ECONNRESET", "ENOTCONN"):
                s.close()
                s = attach(a, j, "all", stop)
                if s is None:
                    return
                fw_echo(a, s)
                fifos = [s.fifo(c) for c in chans]
                old = [m for t, m in recent if t < time.monotonic() - 1.0]
                if old and a.inject_stale:
                    # negative control: a message sent before the re-format,
                    # sent again into the new region (a stale one) once the
                    # receivers have attached to it
                    stale = (time.monotonic() + 0.3, old[-1])
                    a.inject_stale = False
                break
            if stale is not None and time.monotonic() > stale[0] and k == a.inject_stream:
                f.send(stale[1], timeout=a.timeout)
                stale = None
        if a.delay:
            time.sleep(a.delay)
    s.close()


def recv_loop(a, j: Journal, ch: str, stop: threading.Event, ready: threading.Barrier) -> None:
    import mdcom
    s = attach(a, j, ch, stop)
    ready.wait()
    if s is None:
        return
    f = s.fifo(ch)
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            m = f.poll_recv(a.timeout, 0.0005) if a.poll else f.recv(timeout=a.timeout)
        except (mdcom.MdcomError, TimeoutError) as e:
            rc = "timeout" if isinstance(e, TimeoutError) else code(e)
            j.line("W", ch, t0, time.monotonic(), rc)
            if rc in ("ESHUTDOWN", "ECONNRESET", "ENOTCONN"):
                s.close()
                s = attach(a, j, ch, stop)
                if s is None:
                    return
                f = s.fifo(ch)
            continue
        t1 = time.monotonic()
        d = decode(m)
        if d is None:
            j.line("C", ch, t0, t1, len(m))
        else:
            j.line("D", ch, d[0], d[1], d[2], d[3], t0, t1)
    s.close()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=("send", "recv"))
    p.add_argument("toml")
    p.add_argument("domain")
    p.add_argument("journal")
    p.add_argument("channels", help="comma-separated FIFO names")
    p.add_argument("--delay", type=float, default=0.004)
    p.add_argument("--timeout", type=float, default=0.1, help="of every send and recv")
    p.add_argument("--attach-timeout", type=float, default=2.0)
    p.add_argument("--inject-dup", type=int, default=-1,
                   help="send: send message N of --inject-stream twice")
    p.add_argument("--inject-stale", action="store_true",
                   help="send: after the first re-attach, send a message of "
                        "--inject-stream sent a second before it again")
    p.add_argument("--inject-stream", type=int, default=1)
    p.add_argument("--poll", action="store_true",
                   help="recv: poll (a peer that cannot wake this process)")
    p.add_argument("--fw-echo", action="store_true",
                   help="send: after every attach, ask the firmware to echo")
    a = p.parse_args()
    inc = random.SystemRandom().getrandbits(63)
    j = Journal(a.journal)
    j.line("I", inc, time.monotonic())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=control, args=(j, a.timeout, stop), daemon=True).start()
    if a.role == "send":
        role_send(a, j, inc, stop)
    else:
        chans = a.channels.split(",")
        ready = threading.Barrier(len(chans) + 1)
        th = [threading.Thread(target=recv_loop, args=(a, j, c, stop, ready)) for c in chans]
        for t in th:
            t.start()
        ready.wait()
        print("ready", flush=True)
        for t in th:
            t.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
