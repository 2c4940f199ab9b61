# SPDX-License-Identifier: BSD-3-Clause
"""The restart storm with the firmware as the region's master: the Cortex-M4
firmware mdcom-fw-resp under qemu-system-arm (mps2-an386) formats the region
of qemu_m4.toml in a file that Linux processes map, and is restarted from
outside at random instants mid-traffic, so that it re-formats the region in
place with a new generation.

The firmware image is MDCOM_M4_FW: the bare-metal mdcom-fw-resp.elf, or the
same responder in an RTOS task (mdcom-fw-freertos-resp.elf,
mdcom-fw-threadx-resp.elf: firmware/common/rtos_resp.c). MDCOM_STORM_KERNEL
names the kernel the image must run ("FreeRTOS", "ThreadX": the start of
its banner on the console; empty for bare metal): a storm that ran another
image than the one it is named for fails.

The stream: a Linux sender (storm_role.py send, domain "linux") sends on
"echo_in", the firmware echoes every message verbatim on "echo_out" (an ECHO
command the sender gives on "ctl" after each attach), a Linux receiver
(storm_role.py recv --poll, domain "linux" too: the firmware cannot wake a
futex) receives it. The messages carry the sender's incarnation, the sequence
number and a CRC (storm_role.py).

Restarted in turn: the firmware by SIGKILL of its QEMU process (then a new
QEMU on the same region file), the firmware by QEMU's `system_reset` through
its monitor (a reset the firmware does not see coming), the sender and the
receiver (SIGKILL). MDCOM_STORM_QEMU_RESTARTS (default 24: 12 firmware
restarts, half of them resets) sets the number, MDCOM_STORM_SEED the seed.

The checker (check_fw) asserts: traffic resumed within 1 s of the restarted
role being back (for the firmware: of its having formatted the region again);
no message delivered twice, none out of order within one sender incarnation;
every delivered message was sent (CRC and magic hold); no message whose send
returned before the firmware was restarted is received from the generation it
formatted after; every message sent and not delivered is put down to a
restart that can lose it, and no more than it can lose (at a firmware
restart: what echo_in and echo_out held, 2 x 16 blocks; at a receiver
restart: the one it had received and not written down); no call overran its
timeout by more than 50 ms beyond a plain sleep's worst overrun.

A bridged variant (test_restart_storm_firmware_master_bridged, by hand with
MDCOM_STORM_QEMU_BRIDGED=1) sends echo_out through bridge A (polling region
A), Zenoh on loopback and bridge B to the receiver on a region B, and restarts
both bridges too; its losses at bridge restarts are checked against bridge
B's counters, as the storm of test_restart_storm.py does.

Run by ctest (bridge_restart_storm_qemu; with the RTOS images
bridge_restart_storm_qemu_freertos, bridge_restart_storm_qemu_threadx).
Outside CI a missing prerequisite skips with the reason; with CI=true it
fails.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import storm_check as C  # noqa: E402  (the limits, journals, counters, QEMU)
from storm_check import T, missing  # noqa: E402

ROLE = C.ROLE
ROLES = ("firmware", "sender", "reset", "receiver")
FW_ROLES = ("firmware", "reset")
BRIDGE_ROLES = ("bridge_a", "bridge_b")
# bridged mode: region A's echo_out is bridged out (as test_bridge_qemu.py
# does) to region B's "rx" (bridge/zenoh/topology.py's region B)
BRIDGE_A = """
[[bridge]]
channel = "echo_out"
direction = "out"
key = "{prefix}/up"
domain = "linux"
congestion = "block"
"""
REGION = "mdcom-m4"               # the region name of qemu_m4.toml
BLOCKS = 16                       # block_count of echo_in and of echo_out
# the kernel of the firmware image (see above); "" for bare metal
KERNEL = os.environ.get("MDCOM_STORM_KERNEL", "")


def qemu_bin() -> str:
    return os.environ.get("MDCOM_QEMU") or shutil.which("qemu-system-arm") or ""


def prerequisites() -> tuple:
    qemu = qemu_bin()
    if not qemu:
        missing("qemu-system-arm not found (or MDCOM_QEMU)")
    fw, toml = os.environ.get("MDCOM_M4_FW", ""), os.environ.get("MDCOM_M4_TOML", "")
    if not (fw and os.path.exists(fw)):
        what = (f"CMake target mdcom_fw_{KERNEL.lower()}, needs arm-none-eabi-gcc and the "
                f"{KERNEL} sources" if KERNEL else "CMake target mdcom_fw_m4, needs arm-none-eabi-gcc")
        missing(f"no firmware image (MDCOM_M4_FW={fw!r}; {what})")
    if not (toml and os.path.exists(toml)):
        missing(f"no region config (MDCOM_M4_TOML={toml!r})")
    if not os.access(C.STAT, os.X_OK):
        missing(f"{C.STAT} not built (CMake target mdcom-stat)")
    try:
        import mdcom
        mdcom.load_library()
    except Exception as e:  # the binding or libmdcom.so (MDCOM_LIB)
        missing(f"the Python binding cannot load libmdcom: {e}")
    return qemu, fw, toml


class FwStorm:
    def __init__(self, d: pathlib.Path, seed: int, qemu: str, fw: str, toml: str,
                 sender_args: list = (), bridged: bool = False) -> None:
        """sender_args: extra arguments of every sender (storm_role.py).
        bridged: echo_out goes through bridge A, Zenoh and bridge B to the
        receiver on region B (see BRIDGE_A)."""
        self.d, self.qemu, self.fw, self.toml = d, qemu, fw, toml
        self.sender_args = list(sender_args)
        self.bridged = bridged
        self.bridges, self.bridge_final = {}, {"a": [], "b": []}
        if bridged:
            uniq = f"{os.getpid()}{time.monotonic_ns() % 100000}"
            self.prefix = f"mdcom/test/fws{uniq}"
            self.name_b = f"mdzFB{uniq}"
            self.toml = str(d / "a.toml")
            pathlib.Path(self.toml).write_text(pathlib.Path(toml).read_text()
                                               + BRIDGE_A.format(prefix=self.prefix))
            self.toml_b = d / "b.toml"
            self.toml_b.write_text(T._REGION_B.format(name=self.name_b, prefix=self.prefix,
                                                      block_b=512, block=512, count=BLOCKS,
                                                      congestion="block"))
            port_a, port_b = T.free_port(), T.free_port()
            self.zcfg = {"a": d / "zenoh-a.json5", "b": d / "zenoh-b.json5"}
            # each bridge listens and connects to the other, so that a
            # restarted one dials its peer at once instead of waiting for the
            # peer's next retry; both retry every 50-200 ms (Zenoh's default
            # starts at 1 s: the resumption limit)
            for side, listen, connect in (("a", port_a, port_b), ("b", port_b, port_a)):
                cfg = json.loads(T.zenoh_config(listen, connect).split("\n", 1)[1])
                cfg["connect"]["retry"] = {"period_init_ms": 50, "period_max_ms": 200,
                                           "period_increase_factor": 1.5}
                self.zcfg[side].write_text("// SPDX-License-Identifier: BSD-3-Clause\n"
                                           + json.dumps(cfg, indent=1) + "\n")
            self.status = {"a": d / "status-a.json", "b": d / "status-b.json"}
        self.rnd = random.Random(seed)
        # the region file lives on across firmware restarts (as the SoC's
        # shared memory does): each new QEMU maps the same file, and the
        # firmware finds the old generation there
        self.shm = d / "shm"
        self.region = self.shm / REGION
        C.region_file(self.region)
        self.q = C.Qemu(d, "", qemu, fw, self.region, console=d / "console.log")
        self.env = T.env()
        self.env["MDCOM_SHM_DIR"] = str(self.shm)
        self.procs = {}
        self.all = []
        self.journals = []
        self.events = []
        self.count = collections.Counter()
        self.stats = []
        self.offsets = {}
        self.fresh = None
        self.generations = []

    # the firmware
    def header(self) -> tuple:
        return C.region_header(self.region)   # magic, generation, state

    def wait_formatted(self, after_gen: int, timeout: float = 30.0) -> float:
        """Until the header says READY with a generation after `after_gen`;
        the time it first did (polled every 0.5 ms)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            magic, gen, st = self.header()
            if magic == C.MAGIC and st == C.READY and gen != after_gen:
                self.generations.append(gen)
                return time.monotonic()
            if self.q.proc.poll() is not None:
                raise RuntimeError(f"QEMU exited ({self.q.proc.returncode}): {self.console()}")
            time.sleep(0.0005)
        raise TimeoutError(f"the firmware did not format the region again: {self.console()}")

    def console(self) -> str:
        try:
            return (self.d / "console.log").read_text()[-400:].replace("\n", "|")
        except OSError:
            return ""

    def start_fw(self) -> float:
        """A new QEMU on the region file; the time the firmware had
        formatted."""
        gen = self.header()[1] if self.header()[0] == C.MAGIC else -1
        self.all.append(self.q.start())
        return self.wait_formatted(gen)

    def kill_fw(self) -> None:
        self.q.kill()

    def reset_fw(self) -> float:
        """QEMU's system_reset through the monitor; the time it was sent."""
        return self.q.reset()

    # the bridges (bridged mode)
    def start_keeper_b(self) -> None:
        p = subprocess.Popen([sys.executable, str(C.REPO / "bridge" / "zenoh" / "topology.py"),
                              "keeper", "--report", "--domain", "linux", str(self.toml_b)],
                             env=T.env(), stdout=subprocess.PIPE, text=True)
        self.all.append(p)
        assert p.stdout.readline(), f"keeper B exited with {p.wait()}"

    def start_bridge(self, side: str) -> None:
        try:  # a killed bridge's last status must not pass for the new one's
            self.status[side].unlink()
        except FileNotFoundError:
            pass
        toml, env = (self.toml, self.env) if side == "a" else (str(self.toml_b), T.env())
        # bridge A polls: the firmware's doorbell (QEMU's UART) is not ours
        extra = ["--poll-us", "200"] if side == "a" else []
        log = open(self.d / f"bridge-{side}.log", "a")
        p = subprocess.Popen([str(T.DAEMON), toml, "-z", str(self.zcfg[side]),
                              "--id", f"bridge-{side}-{self.prefix}", "-s", str(self.status[side]),
                              "--status-key", f"{self.prefix}/status/{side}", *extra],
                             env=env, stderr=log)
        log.close()
        self.all.append(p)
        self.bridges[side] = p

    def bridge_status(self, side: str) -> dict:
        return C.bridge_status(self.status[side])

    def bridge_up(self, side: str, timeout: float = 20.0) -> float:
        return C.bridge_up(self.status[side], self.bridges[side], side, timeout, 0.01)

    # the Linux processes
    def start_role(self, role: str) -> float:
        n = self.count[role]
        path = self.d / f"j-{role}-{n}.log"
        self.journals.append((role, "a", path))
        if role == "sender":
            args = ["send", self.toml, "linux", str(path), "echo_in", "--fw-echo",
                    *self.sender_args]
        elif self.bridged:
            args = ["recv", str(self.toml_b), "app", str(path), "rx"]
        else:
            args = ["recv", self.toml, "linux", str(path), "echo_out", "--poll"]
        env = T.env() if role == "receiver" and self.bridged else self.env
        p = subprocess.Popen([sys.executable, str(ROLE), *args, "--timeout", str(C.TIMEOUT_S)],
                             env=env, stdout=subprocess.PIPE, text=True)
        self.all.append(p)
        self.procs[role] = p
        line = p.stdout.readline().strip()
        assert line == "ready", f"{role}: {line!r} (exit {p.poll()})"
        return time.monotonic()

    def stat(self, when: str) -> None:
        self.stats.append(C.mdcom_stat(REGION, when, self.env))

    def check_kernel(self) -> None:
        """The image runs the kernel the storm is named for: its banner (the
        console's first line) starts with it; bare metal has no kernel."""
        first = (self.d / "console.log").read_text().split("\n", 1)[0]
        want = f"{KERNEL} " if KERNEL else "mdcom-fw-resp "
        if not first.startswith(want):
            raise AssertionError(f"MDCOM_STORM_KERNEL={KERNEL!r}: the firmware says {first!r}")

    def start(self) -> None:
        self.start_fw()
        self.check_kernel()
        if self.bridged:
            self.start_keeper_b()
            self.start_bridge("a")
            self.start_bridge("b")
            self.bridge_up("a")
            self.bridge_up("b")
            time.sleep(0.3)  # subscriptions propagate after the link is up
        self.start_role("receiver")
        self.start_role("sender")
        self.wait_fresh(time.monotonic(), limit=20.0)

    def poll(self, since: float) -> int:
        got = 0
        for role, _, path in self.journals:
            if role != "receiver":
                continue
            for ln in C.new_lines(self.offsets, path):
                f_ = ln.split()
                if f_[0] != "D":
                    continue
                got += 1
                if float(f_[5]) >= since and self.fresh is None:
                    self.fresh = float(f_[7])
        return got

    def wait_fresh(self, since: float, limit: float = 15.0):
        """Until a message sent after `since` was delivered; how long after
        `since` that was (None: not within `limit`)."""
        self.fresh = None
        end = time.monotonic() + limit
        while time.monotonic() < end:
            self.poll(since)
            if self.fresh is not None:
                return self.fresh - since
            time.sleep(0.01)
        return None

    def restart(self, role: str) -> dict:
        ev = {"role": role, "side": "a"}
        if role in ("sender", "receiver"):
            p = self.procs[role]
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.count[role] += 1
            ev["t_spawn"] = time.monotonic()
            ev["t_up"] = self.start_role(role)
        elif role == "firmware":
            ev["t_kill"] = time.monotonic()
            self.kill_fw()
            self.stat("firmware killed")   # the old generation's counters
            ev["t_spawn"] = time.monotonic()
            ev["t_up"] = self.start_fw()
        elif role.startswith("bridge"):
            side = role[-1]
            p = self.bridges[side]
            before = self.bridge_status(side)
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.bridge_final[side].append(before)
            ev["t_spawn"] = time.monotonic()
            self.start_bridge(side)
            ev["t_connected"] = self.bridge_up(side)
            # back when its process is: its start and Zenoh's session are
            # part of the recovery
            ev["t_up"] = ev["t_spawn"]
        else:
            gen = self.header()[1]
            self.stat("before reset")
            ev["t_kill"] = ev["t_spawn"] = self.reset_fw()
            ev["t_up"] = self.wait_formatted(gen)
        ev["resumed"] = self.wait_fresh(ev["t_up"])
        ev["t_end"] = ev["t_up"] + (ev["resumed"] or 0.0) + 0.05
        self.events.append(ev)
        return ev

    def run(self, n: int) -> None:
        roles = ROLES + BRIDGE_ROLES if self.bridged else ROLES
        for k in range(n):
            time.sleep(self.rnd.uniform(0.05, 0.5))  # a random instant, mid-traffic
            self.restart(roles[k % len(roles)])

    def stop(self) -> None:
        p = self.procs["sender"]
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        C.wait_drained(self.poll)
        self.stat("end")
        if self.bridged:
            time.sleep(0.5)  # the bridges' status files (4 per second)
            for side in "ab":
                self.bridge_final[side].append(self.bridge_status(side))
        p = self.procs["receiver"]
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)

    def close(self) -> None:
        for p in reversed(self.all):
            T.end_process(p, group=p is self.q.proc)
        if self.bridged:
            try:
                os.unlink(f"/dev/shm/{self.name_b}")
            except OSError:
                pass

    def dump(self, result: dict) -> None:
        (self.d / "storm.json").write_text(json.dumps(
            {"events": self.events, "stats": self.stats, "generations": self.generations,
             "journals": [(r, s, str(p)) for r, s, p in self.journals], "result": result},
            indent=1))


def stat_lost(stats: list, channel: str) -> int:
    return C.stat_lost(stats, channel)


def check_fw(journals, events, stats, bridge_final=None) -> dict:
    """The invariants over one stream: sender -> echo_in -> firmware ->
    echo_out -> receiver, all on region A; with bridge_final (bridged mode:
    the last status of each bridge process per side) echo_out -> bridge A
    -> Zenoh -> bridge B -> rx on region B -> receiver."""
    bridged = bridge_final is not None
    sends, attempts, owner, deliveries, calls, controls, attaches, corrupt = \
        C.read_journals(journals, stream_of=lambda side, ch: ("a", 0))
    v = collections.defaultdict(list)
    for _, ln in corrupt:
        v["corrupt"].append(ln)
    fws = [e for e in events if e["role"] in FW_ROLES]
    delivered, last = set(), {}
    for inc, st, seq, ts, t0, t1, att_t0, att_after in deliveries.get(("a", 0), []):
        key = (inc, st, seq)
        if key not in attempts or st != 0:
            v["invented"].append(f"{key} was never sent")
            continue
        if key in delivered:
            v["duplicate"].append(f"{key} delivered twice")
        elif seq < last.get(inc, -1):
            v["order"].append(f"{seq} after {last[inc]} (inc {inc})")
        delivered.add(key)
        last[inc] = max(seq, last.get(inc, -1))
        sent = sends.get((inc, st), {}).get(seq)
        if bridged:
            # region B is never re-formatted, and what bridge A had taken
            # from region A before a re-format may still arrive: nothing
            # here is stale (region A's own case is the unbridged run's)
            continue
        # sent into the old generation (its send returned before the firmware
        # was killed or reset), received from the new one (the receiver's
        # attachment began after the new format, or it had seen the old
        # generation end after the restart)
        for e in fws:
            if C.received_stale(sent, att_t0, att_after, e):
                v["stale"].append(f"{key} sent {e['t_spawn'] - sent[1]:.3f} s before the "
                                  f"firmware's {e['role']}, received {t0 - e['t_up']:+.3f} s "
                                  f"after it had formatted again")
    # losses: each put down to a restart that can have lost it. The queues
    # are FIFO, so a message was still queued (or held by the receiver) at a
    # restart only when no later message of its incarnation had been
    # delivered before that restart's kill. A firmware restart loses what
    # its region held: messages whose send returned before the new format;
    # a receiver killed loses the message it had taken (sent before the
    # kill).
    got_at = collections.defaultdict(list)   # inc -> [(seq, delivery time)]
    for inc, st, seq, ts, t0, t1, _, _ in deliveries.get(("a", 0), []):
        got_at[inc].append((seq, t1))
    candidates = sorted(fws + [e for e in events if e["role"] in ("receiver",) + BRIDGE_ROLES],
                        key=lambda e: e["t_kill"])
    def after_of(e) -> float:
        """A message whose send returned before this can be lost by e: a
        firmware restart's new format, a receiver's kill, the end of a
        restarted bridge's recovery (a new bridge A publishes before bridge
        B has its route; bridge B counts those)."""
        return (e["t_up"] if e["role"] in FW_ROLES else e["t_end"] if e["role"] in BRIDGE_ROLES
                else e["t_kill"])

    losses = collections.Counter()
    for (inc, st), seqs in sends.items():
        for seq, (t0, t1, rc) in seqs.items():
            if rc != "ok" or (inc, st, seq) in delivered:
                continue
            # the restarts after the send and before a later message of the
            # incarnation was delivered; a firmware restart first (it can
            # lose many), else a receiver's
            later = min((td for q, td in got_at[inc] if q > seq), default=float("inf"))
            window = [e for e in candidates if e["t_kill"] < later and t1 < after_of(e)]
            cause = next((e for e in window if e["role"] in FW_ROLES),
                         next((e for e in window if e["role"] in BRIDGE_ROLES),
                              window[0] if window else None))
            if cause is None:
                v["unexplained loss"].append(f"{(inc, st, seq)} sent at {t1:.3f}")
                continue
            losses[id(cause)] += 1
    by_role, most = collections.Counter(), collections.Counter()
    for e in events:
        k = losses.get(id(e), 0)
        by_role[e["role"]] += k
        most[e["role"]] = max(most[e["role"]], k)
        # what a restart can lose: a firmware restart what both queues held
        # (the firmware enqueues the echo before it frees the request); a
        # receiver restart the message it had and did not write down
        # (a bridge's losses are checked against its counters, below)
        bound = 2 * BLOCKS if e["role"] in FW_ROLES else 1
        if e["role"] not in BRIDGE_ROLES and k > bound:
            v["counts"].append(f"{e['role']} at {e['t_kill']:.3f}: {k} lost, more than {bound}")
    lost = sum(losses.values())
    lib = stat_lost(stats, "echo_in") + stat_lost(stats, "echo_out")
    br = C.bridge_counts(bridge_final["b"], "rx") if bridged else collections.Counter()
    counted = lib + br["lost"] + br["region_dropped"]
    n_of = collections.Counter(e["role"] for e in events)
    # a bridge B killed between delivering a message and recording its
    # number counts it lost although it was delivered (docs/bridge.md)
    if counted > lost + n_of["bridge_b"]:
        v["counts"].append(f"the counters say {counted} lost (library {lib}, bridge B {br}), "
                           f"the checker saw {lost}")
    # what no counter sees: the request the firmware held when it was
    # restarted (its queues are counted by the re-format: 'discarded'), a
    # killed bridge A's round (copied out, not published), a killed
    # receiver's message
    unseen = (sum(n_of[r] for r in FW_ROLES) + n_of["receiver"]
              + C.BRIDGE_ROUND * n_of["bridge_a"])
    if lost - counted > unseen:
        v["counts"].append(f"{lost} lost, {counted} counted: more than the {unseen} no counter "
                           f"can see")
    if br["duplicates"]:
        v["bridge duplicates"].append(str(br["duplicates"]))
    # recovery
    longest = collections.defaultdict(float)
    for e in events:
        g = e["resumed"]
        if g is None:
            v["no recovery"].append(f"{e['role']} at {e['t_kill']:.3f}")
            continue
        longest[e["role"]] = max(longest[e["role"]], g)
        if g > C.RESUME_S:
            v["slow recovery"].append(f"{e['role']}: {g:.3f} s")
    bad, worst_ctl, worst_call = C.overruns(calls, controls)
    if bad:
        v["overrun"] = bad
    boot = [e["t_up"] - e["t_spawn"] for e in fws]
    return {"violations": dict(v), "restarts": dict(collections.Counter(e["role"] for e in events)),
            "longest_recovery_s": dict(longest), "lost": lost, "lost_by_restart": dict(by_role),
            "most_lost_at_one_restart": dict(most),
            "library_lost": lib, "bridge_b_counted": dict(br), "delivered": len(delivered),
            "sent": sum(1 for s in sends.values() for x in s.values() if x[2] == "ok"),
            "worst_call_overrun_s": worst_call[0], "worst_call": worst_call[1:],
            "worst_control_overrun_s": worst_ctl, "calls": len(calls),
            "longest_attach_s": max(attaches, default=0.0),
            "longest_format_s": max(boot, default=0.0)}


def summary(r: dict) -> str:
    out = [f"restarts per role: {r['restarts']}",
           f"sent {r['sent']}, delivered {r['delivered']}, lost {r['lost']} "
           f"{r['lost_by_restart']}, at most {r['most_lost_at_one_restart']} at one restart "
           f"(library counted {r['library_lost']}, bridge B {r['bridge_b_counted']})",
           "longest recovery per role: " + ", ".join(
               f"{k} {x * 1000:.0f} ms" for k, x in r["longest_recovery_s"].items()),
           f"firmware restart to formatted: max {r['longest_format_s'] * 1000:.0f} ms; "
           f"longest attach {r['longest_attach_s'] * 1000:.0f} ms",
           f"worst call overrun {r['worst_call_overrun_s'] * 1000:.1f} ms {r['worst_call']} vs "
           f"control sleep {r['worst_control_overrun_s'] * 1000:.1f} ms ({r['calls']} calls)",
           f"violations: { {k: len(x) for k, x in r['violations'].items()} }"]
    for k, x in r["violations"].items():
        out.extend(f"  {k}: {d}" for d in x[:10])
    return "\n".join(out)


@pytest.fixture
def fwstorm(tmp_path):
    qemu, fw, toml = prerequisites()
    made = []

    def make(**kw) -> FwStorm:
        s = FwStorm(tmp_path, qemu=qemu, fw=fw, toml=toml, **kw)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


def test_restart_storm_firmware_master(fwstorm):
    n = int(os.environ.get("MDCOM_STORM_QEMU_RESTARTS", "24"))
    seed = int(os.environ.get("MDCOM_STORM_SEED", str(random.SystemRandom().randrange(1 << 30))))
    image = os.path.basename(os.environ.get("MDCOM_M4_FW", ""))
    print(f"\nrestart storm, firmware master ({KERNEL or 'bare metal'}, {image}): {n} restarts, "
          f"seed {seed} (MDCOM_STORM_SEED)")
    t0 = time.monotonic()
    s = fwstorm(seed=seed)
    s.start()
    s.run(n)
    s.stop()
    r = check_fw(s.journals, s.events, s.stats)
    s.dump(r)
    print(summary(r))
    print(f"storm duration {time.monotonic() - t0:.1f} s")
    assert sum(r["restarts"].values()) == n
    # every firmware restart formatted a new generation
    assert len(set(s.generations)) == len(s.generations) == 1 + sum(
        r["restarts"].get(k, 0) for k in FW_ROLES), s.generations
    assert r["delivered"] > 0
    assert r["violations"] == {}, summary(r)


def test_checker_catches_injected_duplicate_and_stale(fwstorm):
    """Negative control: the sender sends message 50 twice, and after the
    firmware was killed and had formatted the region again, sends a message
    from before that into the new generation. The checker must report both."""
    s = fwstorm(seed=1, sender_args=["--inject-dup", "50", "--inject-stale",
                                     "--inject-stream", "0"])
    s.start()
    time.sleep(1.5)  # more than the second the stale copy is taken from
    s.restart("firmware")
    time.sleep(0.5)
    s.stop()
    r = check_fw(s.journals, s.events, s.stats)
    print("\n" + summary(r))
    assert r["violations"].get("duplicate"), r["violations"]
    assert r["violations"].get("stale"), r["violations"]


def test_restart_storm_firmware_master_bridged(fwstorm):
    """The same storm with echo_out bridged to region B (bridge A polling
    region A, Zenoh on loopback, bridge B, the receiver on region B), the
    bridges restarted too. By hand only (MDCOM_STORM_QEMU_BRIDGED=1): on a
    2-vCPU machine shared with other jobs, where QEMU spins one vCPU (the
    firmware polls), a restarted mdcom-zenoh took 0.2-1.3 s from its start
    to a Zenoh session, over the 1 s resumption limit in 2 of 4 runs."""
    if os.environ.get("MDCOM_STORM_QEMU_BRIDGED") != "1":
        pytest.skip("the bridged firmware storm runs with MDCOM_STORM_QEMU_BRIDGED=1 "
                    "(a restarted bridge's start can exceed 1 s on a loaded machine)")
    if not os.access(T.DAEMON, os.X_OK):
        missing(f"{T.DAEMON} not built (CMake target mdcom_zenoh; needs cargo)")
    n = int(os.environ.get("MDCOM_STORM_QEMU_RESTARTS", "24"))
    seed = int(os.environ.get("MDCOM_STORM_SEED", str(random.SystemRandom().randrange(1 << 30))))
    print(f"\nrestart storm, firmware master, bridged: {n} restarts, seed {seed}")
    s = fwstorm(seed=seed, bridged=True)
    s.start()
    s.run(n)
    s.stop()
    r = check_fw(s.journals, s.events, s.stats, s.bridge_final)
    s.dump(r)
    print(summary(r))
    br = [e["t_connected"] - e["t_spawn"] for e in s.events if "t_connected" in e]
    print(f"bridge start to connected: max {max(br, default=0) * 1000:.0f} ms")
    assert sum(r["restarts"].values()) == n
    assert len(set(s.generations)) == len(s.generations) == 1 + sum(
        r["restarts"].get(k, 0) for k in FW_ROLES), s.generations
    assert r["delivered"] > 0
    assert r["violations"] == {}, summary(r)
