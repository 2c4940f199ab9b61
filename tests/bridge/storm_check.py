# SPDX-License-Identifier: BSD-3-Clause
"""What the restart storms share (test_restart_storm.py, test_restart_storm_qemu.py,
test_restart_storm_two_soc.py): the limits, the reading of storm_role.py's
journals, the counters (mdcom-stat, the bridges' status), the checks every
storm makes the same way (stale messages, call overruns against the control
sleep), and the Cortex-M4 under QEMU on a region file that outlives it.
"""
from __future__ import annotations

import collections
import json
import mmap
import os
import pathlib
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
TOOLS_ZENOH = REPO / "bridge" / "zenoh"   # topology.py: the daemon's path, Zenoh configs, keepers
sys.path.insert(0, str(TOOLS_ZENOH))
import topology as T  # noqa: E402

ROLE = HERE / "storm_role.py"
STAT = pathlib.Path(os.environ.get("MDCOM_STAT") or T.DAEMON.parent.parent / "mdcom-stat")
RESUME_S = 1.0      # traffic resumes within this after a restart
OVERRUN_S = 0.050   # beyond the control sleep's worst overrun
TIMEOUT_S = 0.1     # of every send and recv, and the control sleep
# what an "out" bridge holds at most when killed: one round (docs/bridge.md,
# "The hot path"), copied out of the FIFO and not yet published
BRIDGE_ROUND = 64
# how long before a restart a message it lost may have been sent (it was
# queued meanwhile)
QUEUED_S = 0.5
REGION_ENDED = ("ESHUTDOWN", "ECONNRESET", "ENOTCONN")


def missing(reason: str) -> None:
    """A prerequisite is missing: fail in CI, skip elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {reason}", pytrace=False)
    pytest.skip(reason)


# --------------------------------------------------------------------------
# Reading the journals as they are written
# --------------------------------------------------------------------------

def new_lines(offsets: dict, path) -> list[str]:
    """The complete lines written to the journal at path since the last call
    (offsets keeps each file's read position; a line still being written
    waits for the next call)."""
    off = offsets.get(path, 0)
    try:
        with open(path, "rb") as f:
            f.seek(off)
            data = f.read()
    except FileNotFoundError:
        return []
    end = data.rfind(b"\n") + 1
    offsets[path] = off + end
    return data[:end].decode().splitlines()


def wait_drained(poll) -> None:
    """Returns once poll(0.0) (the receivers' new deliveries) has read none
    for 1.5 s: what was queued has been delivered."""
    quiet = time.monotonic()
    while time.monotonic() - quiet < 1.5:
        time.sleep(0.1)
        if poll(0.0):
            quiet = time.monotonic()


def read_journals(journals, stream_of):
    """Sends, attempts, deliveries (in the order of each receiver's
    incarnations), call times. stream_of(receiver's side, channel): the key
    a delivery is filed under (each storm maps its own channels)."""
    sends = {}        # (inc, stream) -> {seq: (t0, t1, rc)}
    attempts = set()  # (inc, stream, seq)
    owner = {}        # inc -> side of its sender
    deliveries = collections.defaultdict(list)  # stream -> [(inc, seq, ts, t0, t1)]
    calls, controls, attaches, corrupt = [], [], [], []
    for role, side, path in journals:
        if not path.exists():
            continue
        inc = None
        # per channel of a receiver: when its current attachment began, and
        # when it last saw its region end (before that attachment)
        att, ended, seen_end = {}, {}, {}
        for ln in path.read_text().splitlines():
            f = ln.split()
            if not f:
                continue
            k = f[0]
            if k == "I":
                inc = int(f[1])
                owner[inc] = side
            elif k == "A":
                attempts.add((inc, int(f[1]), int(f[2])))
            elif k == "S" and len(f) == 6:
                t0, t1 = float(f[3]), float(f[4])
                sends.setdefault((inc, int(f[1])), {})[int(f[2])] = (t0, t1, f[5])
                calls.append((t1 - t0 - TIMEOUT_S, "send", side, f[5]))
            elif k == "D" and len(f) == 8:
                t0, t1 = float(f[6]), float(f[7])
                deliveries[stream_of(side, f[1])].append(
                    (int(f[2]), int(f[3]), int(f[4]), float(f[5]), t0, t1,
                     att.get(f[1], 0.0), ended.get(f[1])))
                calls.append((t1 - t0 - TIMEOUT_S, "recv", side, "ok"))
            elif k == "W" and len(f) == 5:
                t0, t1 = float(f[2]), float(f[3])
                calls.append((t1 - t0 - TIMEOUT_S, "recv", side, f[4]))
                if f[4] in REGION_ENDED:
                    seen_end[f[1]] = t1
            elif k == "T" and len(f) == 5:
                attaches.append(float(f[3]) - float(f[2]))
                if f[4] == "ok":
                    att[f[1]] = float(f[2])
                    ended[f[1]] = seen_end.get(f[1])
            elif k == "Z" and len(f) == 3:
                controls.append(float(f[2]) - float(f[1]) - TIMEOUT_S)
            elif k == "C":
                corrupt.append((side, ln))
    return sends, attempts, owner, deliveries, calls, controls, attaches, corrupt


# --------------------------------------------------------------------------
# The checks every storm makes the same way
# --------------------------------------------------------------------------

def received_stale(sent, att_t0: float, att_after, e: dict) -> bool:
    """A message (sent: its (t0, t1, rc)) sent into the generation before the
    re-format of restart e (the send returned before e's new master
    started), dequeued from the generation e formatted: the receiver's
    attachment began after the format, or after it saw the old generation
    end once the new master had started (the only end it can have seen
    then is that re-format)."""
    after = att_t0 > e["t_up"] or (att_after is not None and att_after > e["t_spawn"])
    return bool(sent) and sent[2] == "ok" and sent[1] < e["t_spawn"] and after


def overruns(calls, controls) -> tuple:
    """The calls that overran their timeout by more than OVERRUN_S beyond
    the control sleep's worst overrun (descriptions), that worst overrun,
    and the worst call."""
    worst_ctl = max(controls, default=0.0)
    bad = [f"{c[1]} on {c[2]} ({c[3]}): {c[0] * 1000:.1f} ms over its timeout, control sleep "
           f"{worst_ctl * 1000:.1f} ms" for c in calls if c[0] > worst_ctl + OVERRUN_S]
    return bad, worst_ctl, max(calls, default=(0.0, "", "", ""))


# --------------------------------------------------------------------------
# The counters
# --------------------------------------------------------------------------

def mdcom_stat(name: str, when: str, env=None) -> dict:
    """mdcom-stat --json of region `name` (env: MDCOM_SHM_DIR), tagged."""
    import json
    r = subprocess.run([str(STAT), "--json", name], capture_output=True, text=True, timeout=10,
                       env=env)
    try:
        js = json.loads(r.stdout)
    except ValueError:
        js = {"ok": False, "error": r.stderr}
    js["when"] = when
    return js


def stat_lost(stats: list, channel: str) -> int:
    """What the library counted lost on a channel, summed over the region's
    generations (the last snapshot of each generation): 'lost' (with a
    receiver that died holding it) and 'discarded' (queued when the
    re-format that began the generation came)."""
    last = {}
    for js in stats:
        if not js.get("ok"):
            continue
        g = js["header"]["generation"]
        for c in js.get("channels", []):
            if c["name"] == channel:
                last[g] = c["lost"] + c["discarded"]
    return sum(last.values())


def report_tail(r: dict) -> list[str]:
    """The end of a storm's report: each stream's loss account, the count of
    violations per kind and the first ten of each."""
    out = [f"stream {k}: {a}" for k, a in r["accounts"].items()]
    out.append(f"violations: { {k: len(x) for k, x in r['violations'].items()} }")
    for k, x in r["violations"].items():
        out.extend(f"  {k}: {d}" for d in x[:10])
    return out


def bridge_status(path: pathlib.Path) -> dict:
    """A bridge's status file (mdcom-zenoh -s), or {} while it is absent
    or half written."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def bridge_up(path: pathlib.Path, proc: subprocess.Popen, side: str, timeout: float = 20.0,
              step: float = 0.01) -> float:
    """When the bridge of status file `path` is attached to its region and
    has a Zenoh peer (time.monotonic()); raises if it exits or times out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = bridge_status(path)
        if st.get("region", {}).get("attached") and st.get("zenoh", {}).get("peers", 0) > 0:
            return time.monotonic()
        if proc.poll() is not None:
            raise RuntimeError(f"bridge {side} exited with {proc.returncode}")
        time.sleep(step)
    raise TimeoutError(f"bridge {side} did not come up")


def bridge_counts(finals: list, channel: str) -> dict:
    """A channel's bridge counters summed over the bridge's processes (the
    last status of each)."""
    out = collections.Counter()
    for st in finals:
        for e in st.get("entries", []):
            if e["channel"] == channel:
                for k in ("lost", "region_dropped", "duplicates", "errors"):
                    out[k] += e.get(k, 0)
    return out


# --------------------------------------------------------------------------
# The Cortex-M4 under QEMU
# --------------------------------------------------------------------------

REGION_SIZE = 16 << 20            # the launcher's region file (harness/qemu-m4/qemu_m4.h)
# the header words (mdcom/wire.h: mdcom_wire_hdr)
HDR = struct.Struct("<IIIII II")  # magic, version, hdr_size, region_size, layout_hash, generation, state
MAGIC, READY = 0x4D43444D, 0x59444552


def region_file(path: pathlib.Path) -> None:
    """A new region file of REGION_SIZE (QEMU's RAM) at path, in a directory
    of mode 0700 made here, the file 0600 (the Linux port refuses a region
    file that others can open)."""
    path.parent.mkdir(mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.ftruncate(fd, REGION_SIZE)
    os.close(fd)


def region_header(path) -> tuple:
    """(magic, generation, state) of the region header in the file."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), HDR.size, prot=mmap.PROT_READ)
        try:
            h = HDR.unpack(m[:HDR.size])
        finally:
            m.close()
    return h[0], h[5], h[6]


class Qemu:
    """One Cortex-M4 (mps2-an386) under qemu-system-arm whose RAM at
    0x21000000 is a region file that outlives it, as a SoC's shared memory
    outlives its core's restarts: each start is a new QEMU on the same file.
    console: the console file of every start (None: one per start)."""

    def __init__(self, d: pathlib.Path, tag: str, qemu: str, image: str, region,
                 console=None) -> None:
        self.d, self.tag, self.qemu, self.image, self.region = d, tag, qemu, image, region
        self.monitor = d / f"monitor{tag}.sock"
        self.fixed_console = console
        self.console = console
        self.proc = None
        self.starts = 0

    def start(self) -> subprocess.Popen:
        """A new QEMU (the arguments of mdcom_qemu_launch, harness/qemu-m4,
        with a monitor socket), in its own process group."""
        if self.monitor.exists():
            self.monitor.unlink()
        self.starts += 1
        self.console = self.fixed_console or self.d / f"console{self.tag}-{self.starts}.log"
        log = open(self.d / f"qemu{self.tag}-{self.starts}.log", "wb")
        self.proc = subprocess.Popen(
            [self.qemu, "-machine", "mps2-an386,memory-backend=m",
             "-object", f"memory-backend-file,id=m,size={REGION_SIZE},mem-path={self.region},"
                        f"share=on",
             "-kernel", self.image, "-nographic",
             "-monitor", f"unix:{self.monitor},server=on,wait=off",
             "-serial", f"file:{self.console}",
             "-semihosting-config", "enable=on,target=native", "-accel", "tcg,thread=multi"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        log.close()
        return self.proc

    def kill(self) -> None:
        """SIGKILL of QEMU's process group."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def reset(self) -> float:
        """QEMU's system_reset through the monitor (HMP); the time it was
        sent (a reset the firmware does not see coming)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            end = time.monotonic() + 5
            while True:  # a QEMU just started may not listen yet
                try:
                    s.connect(str(self.monitor))
                    break
                except (FileNotFoundError, ConnectionRefusedError):
                    if time.monotonic() > end:
                        raise
                    time.sleep(0.01)
            buf = b""
            while b"(qemu)" not in buf:
                buf += s.recv(4096)
            t = time.monotonic()
            s.sendall(b"system_reset\n")
            buf = b""
            while b"(qemu)" not in buf:   # the command's echo and the next prompt
                buf += s.recv(4096)
        return t

    def text(self) -> str:
        """The console of the current start."""
        try:
            return pathlib.Path(self.console).read_text(errors="replace")
        except (OSError, TypeError):
            return ""

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill()
