# SPDX-License-Identifier: BSD-3-Clause
"""The restart storm on the whole path two SoCs use, firmware at both ends.

Region A (SoC A): firmware/qemu-m4/qemu_m4.toml, its master the firmware
mdcom-fw-resp under qemu-system-arm (MDCOM_M4_FW), in a 16 MiB file QEMU maps;
bridge A and a Linux sender attach as domain "linux". Region B (SoC B):
firmware/qemu-m4/qemu_m4_remote.toml, formatted by a Linux keeper (domain
"ctl", the only process of the master domain, so that a new one re-formats:
generation + 1) in a 16 MiB file that a second QEMU maps, where the firmware
mdcom-fw-remote (MDCOM_M4_REMOTE_FW) is the remote domain "m4"; bridge B, a
Linux sender and a Linux receiver attach as "linux". Zenoh on loopback.

The path (keys PREFIX/ab and PREFIX/ba; both firmwares poll, so both bridges
poll their regions and the receiver polls):

  sender A -> echo_in(A) -> firmware A (ECHO) -> echo_out(A) -> bridge A -ab->
      bridge B -> echo_in(B) -> firmware B (RELAY) -> echo_out(B) -> receiver B
  sender B -> fwd_in(B) -> firmware B -> fwd_out(B) -> bridge B -ba-> bridge A
      -> echo_in(A) -> firmware A -> echo_out(A) -> bridge A -ab-> bridge B
      -> echo_in(B) -> firmware B -> echo_out(B) -> receiver B
  sender B -> loc(B) -> receiver B (the in-region stream of the stale check)

so every hop (firmware <-> bridge on both SoCs, both bridges, both Zenoh
directions) carries traffic both ways. Streams: ("a", 0), ("b", 0), ("b", 1).

Restarted in turn (ROLES), at random instants mid-traffic: the firmware
master (SIGKILL of its QEMU and a new QEMU on the same file, or QEMU's
`system_reset` through its monitor, alternately), the firmware remote (the
same two ways), a Linux sender (A or B), the Linux receiver, region B's
Linux master (SIGKILL, a new keeper re-formats), bridge A, bridge B.
MDCOM_STORM_TWO_SOC_RESTARTS (default 70: 10 per role) and MDCOM_STORM_SEED
set the count and the seed.

The checker (check_two_soc, over storm_role.py's journals, with the journal
reader and counters of storm_check.py): traffic resumed on every
stream within 1 s of the restarted role being back (a firmware master: it had
formatted again; a firmware remote: its console says ATTACHED again; a
bridge: its status says attached with a peer; a process: it said ready); no
duplicate, none out of order within one sender incarnation; every delivered
message was sent; nothing sent into loc(B) before region B's new master
started is received from the generation it formatted; every loss is put down
to a restart that can lose it, and the losses add up with the library's
counters (mdcom-stat: lost + discarded per generation, both regions) and the
bridges' (the "in" entries' lost + region_dropped), within what no counter
can see; no call overran its timeout by more than 50 ms beyond a plain
sleep's worst overrun in the same run.

Run by ctest (bridge_restart_storm_two_soc). Outside CI a missing
prerequisite skips with the reason; with CI=true it fails.
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
REPO = HERE.parents[1]
FW_DIR = REPO / "firmware" / "qemu-m4"   # the two regions' TOML
sys.path.insert(0, str(HERE))
import storm_check as C  # noqa: E402  (the limits, journals, counters, QEMU)
from storm_check import T, missing  # noqa: E402

ROLES = ("fw_master", "fw_remote", "sender", "receiver", "master", "bridge_a", "bridge_b")
FW_ROLES = ("fw_master", "fw_remote")
STREAMS = (("a", 0), ("b", 0), ("b", 1))
NAMES = {"a": "mdcom-m4", "b": "mdcom-m4r"}   # [region].name of the two TOML
BRIDGES = {
    "a": """
[[bridge]]
channel = "echo_out"
direction = "out"
key = "{prefix}/ab"
domain = "linux"
congestion = "block"

[[bridge]]
channel = "echo_in"
direction = "in"
key = "{prefix}/ba"
domain = "linux"
congestion = "block"
""",
    "b": """
[[bridge]]
channel = "echo_in"
direction = "in"
key = "{prefix}/ab"
domain = "linux"
congestion = "block"

[[bridge]]
channel = "fwd_out"
direction = "out"
key = "{prefix}/ba"
domain = "linux"
congestion = "block"
"""}
# the channels whose library counters (lost + discarded) count losses of the
# bridged streams, per region, and the bridges' "in" entries
LIB_CHANNELS = {"a": ("echo_in", "echo_out"), "b": ("echo_in", "echo_out", "fwd_in", "fwd_out")}
BRIDGE_IN = "echo_in"
DELAY_S = 0.01   # between two rounds of a sender


def prerequisites() -> dict:
    qemu = os.environ.get("MDCOM_QEMU") or shutil.which("qemu-system-arm") or ""
    if not qemu:
        missing("qemu-system-arm not found (or MDCOM_QEMU)")
    fw = {"a": os.environ.get("MDCOM_M4_FW", ""), "b": os.environ.get("MDCOM_M4_REMOTE_FW", "")}
    for side, var in (("a", "MDCOM_M4_FW"), ("b", "MDCOM_M4_REMOTE_FW")):
        if not (fw[side] and os.path.exists(fw[side])):
            missing(f"no firmware image ({var}={fw[side]!r}; CMake target mdcom_fw_m4, "
                    f"needs arm-none-eabi-gcc)")
    if not os.access(T.DAEMON, os.X_OK):
        missing(f"{T.DAEMON} not built (CMake target mdcom_zenoh; needs cargo)")
    if not os.access(C.STAT, os.X_OK):
        missing(f"{C.STAT} not built (CMake target mdcom-stat)")
    try:
        import mdcom
        mdcom.load_library()
    except Exception as e:
        missing(f"the Python binding cannot load libmdcom: {e}")
    return {"qemu": qemu, "fw": fw}


class TwoSoc:
    def __init__(self, d: pathlib.Path, seed: int, qemu: str, fw: dict,
                 sender_args: dict = None) -> None:
        self.d = d
        self.rnd = random.Random(seed)
        uniq = f"{os.getpid()}{time.monotonic_ns() % 100000}"
        self.prefix = f"mdcom/test/two{uniq}"
        self.toml, self.shm, self.env, self.region = {}, {}, {}, {}
        for side, src in (("a", "qemu_m4.toml"), ("b", "qemu_m4_remote.toml")):
            self.toml[side] = d / f"{side}.toml"
            self.toml[side].write_text((FW_DIR / src).read_text()
                                       + BRIDGES[side].format(prefix=self.prefix))
            # the region file of each SoC (QEMU's RAM), in a private directory
            self.shm[side] = d / f"shm-{side}"
            self.region[side] = self.shm[side] / NAMES[side]
            C.region_file(self.region[side])
            self.env[side] = T.env()
            self.env[side]["MDCOM_SHM_DIR"] = str(self.shm[side])
        self.fw = {"a": C.Qemu(d, "-a", qemu, fw["a"], self.region["a"]),
                   "b": C.Qemu(d, "-b", qemu, fw["b"], self.region["b"])}
        port_a, port_b = T.free_port(), T.free_port()
        self.zcfg, self.status = {}, {}
        # each bridge listens and dials the other, retrying every 50-200 ms
        for side, listen, connect in (("a", port_a, port_b), ("b", port_b, port_a)):
            cfg = json.loads(T.zenoh_config(listen, connect).split("\n", 1)[1])
            cfg["connect"]["retry"] = {"period_init_ms": 50, "period_max_ms": 200,
                                       "period_increase_factor": 1.5}
            self.zcfg[side] = d / f"zenoh-{side}.json5"
            self.zcfg[side].write_text("// SPDX-License-Identifier: BSD-3-Clause\n"
                                       + json.dumps(cfg, indent=1) + "\n")
            self.status[side] = d / f"status-{side}.json"
        self.sender_args = sender_args or {}
        self.all, self.procs, self.bridges = [], {}, {}
        self.keeper = None
        self.journals, self.events = [], []
        self.count = collections.Counter()
        self.bridge_final = {"a": [], "b": []}
        self.stats = {"a": [], "b": []}
        self.generations = {"a": [], "b": []}
        self.offsets, self.fresh = {}, {}
        self.kind = collections.Counter()   # fw role -> restarts so far (kill / reset)

    # ---- the regions and the firmware
    def header(self, side: str) -> tuple:
        return C.region_header(self.region[side])

    def wait_formatted(self, side: str, after_gen: int, timeout: float = 30.0) -> float:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            magic, gen, st = self.header(side)
            if magic == C.MAGIC and st == C.READY and gen != after_gen:
                self.generations[side].append(gen)
                return time.monotonic()
            time.sleep(0.0005)
        raise TimeoutError(f"region {side} not formatted again: {self.fw['a'].text()[-300:]}")

    def wait_attached(self, n: int, timeout: float = 30.0) -> float:
        """Until firmware B's console has said ATTACHED n times (this QEMU)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.fw["b"].text().count("ATTACHED\n") >= n:
                return time.monotonic()
            time.sleep(0.002)
        raise TimeoutError(f"firmware B did not attach: {self.fw['b'].text()[-300:]}")

    def gen(self, side: str) -> int:
        magic, gen, _ = self.header(side)
        return gen if magic == C.MAGIC else -1

    def start_keeper(self) -> float:
        p = subprocess.Popen([sys.executable, str(C.TOOLS_ZENOH / "topology.py"), "keeper",
                              "--report", "--domain", "ctl", str(self.toml["b"])],
                             env=self.env["b"], stdout=subprocess.PIPE, text=True)
        self.all.append(p)
        self.keeper = p
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"keeper B exited with {p.wait()}")
        self.generations["b"].append(self.gen("b"))
        return json.loads(line)["ready"]

    def stat(self, side: str, when: str) -> None:
        self.stats[side].append(C.mdcom_stat(NAMES[side], when, self.env[side]))

    # ---- the bridges
    def start_bridge(self, side: str) -> None:
        try:
            self.status[side].unlink()
        except FileNotFoundError:
            pass
        log = open(self.d / f"bridge-{side}.log", "a")
        # both poll: neither firmware can wake a futex
        p = subprocess.Popen([str(T.DAEMON), str(self.toml[side]), "-z", str(self.zcfg[side]),
                              "--id", f"bridge-{side}-{self.prefix}", "-s", str(self.status[side]),
                              "--status-key", f"{self.prefix}/status/{side}", "--poll-us", "200"],
                             env=self.env[side], stderr=log)
        log.close()
        self.all.append(p)
        self.bridges[side] = p

    def bridge_status(self, side: str) -> dict:
        return C.bridge_status(self.status[side])

    def bridge_up(self, side: str, timeout: float = 20.0) -> float:
        return C.bridge_up(self.status[side], self.bridges[side], side, timeout, 0.005)

    # ---- the Linux processes
    def start_role(self, role: str, side: str) -> float:
        n = self.count[(role, side)]
        path = self.d / f"j-{role}-{side}-{n}.log"
        self.journals.append((role, side, path))
        toml = str(self.toml[side])
        if role == "sender" and side == "a":
            args = ["send", toml, "linux", str(path), "echo_in", "--fw-echo"]
        elif role == "sender":
            args = ["send", toml, "linux", str(path), "fwd_in,loc"]
        else:
            args = ["recv", toml, "linux", str(path), "echo_out,loc", "--poll"]
        if role == "sender":
            args += ["--delay", str(DELAY_S), *self.sender_args.get(side, [])]
        p = subprocess.Popen([sys.executable, str(C.ROLE), *args, "--timeout", str(C.TIMEOUT_S)],
                             env=self.env[side], stdout=subprocess.PIPE, text=True)
        self.all.append(p)
        self.procs[(role, side)] = p
        line = p.stdout.readline().strip()
        assert line == "ready", f"{role} {side}: {line!r} (exit {p.poll()})"
        return time.monotonic()

    def start(self) -> None:
        self.fw["a"].start()
        self.wait_formatted("a", -1)
        self.start_keeper()
        self.fw["b"].start()
        self.wait_attached(1)
        for side in "ab":
            self.start_bridge(side)
        for side in "ab":
            self.bridge_up(side)
        time.sleep(0.3)  # subscriptions propagate after the link is up
        self.start_role("receiver", "b")
        self.start_role("sender", "a")
        self.start_role("sender", "b")
        got = self.wait_fresh(time.monotonic(), limit=30.0)
        assert all(g is not None for g in got.values()), f"no traffic at the start: {got}"

    # ---- what the receiver delivered
    def poll(self, since: float) -> int:
        got = 0
        for role, side, path in self.journals:
            if role != "receiver":
                continue
            for ln in C.new_lines(self.offsets, path):
                f = ln.split()
                if f[0] != "D":
                    continue
                got += 1
                s = self.stream_of_inc(int(f[2]), int(f[3]))
                if s is not None and float(f[5]) >= since and s not in self.fresh:
                    self.fresh[s] = float(f[7])
        return got

    def stream_of_inc(self, inc: int, st: int):
        """(sender's side, stream) of an incarnation: from the senders'
        journals' first line."""
        if not hasattr(self, "_owner"):
            self._owner = {}
        if inc not in self._owner:
            for role, side, path in self.journals:
                if role == "sender" and path.exists():
                    first = path.read_text().split("\n", 1)[0].split()
                    if first and first[0] == "I":
                        self._owner[int(first[1])] = side
        side = self._owner.get(inc)
        return None if side is None else (side, st)

    def wait_fresh(self, since: float, limit: float = 15.0) -> dict:
        self.fresh = {}
        end = time.monotonic() + limit
        while time.monotonic() < end:
            self.poll(since)
            if len(self.fresh) == len(STREAMS):
                break
            time.sleep(0.01)
        return {f"{s[0]}{s[1]}": self.fresh[s] - since if s in self.fresh else None
                for s in STREAMS}

    # ---- restarts
    def restart(self, role: str, side: str = None) -> dict:
        ev = {"role": role}
        if role in FW_ROLES:
            fside = "a" if role == "fw_master" else "b"
            q = self.fw[fside]
            how = "kill" if self.kind[role] % 2 == 0 else "reset"
            self.kind[role] += 1
            ev.update(side=fside, how=how)
            gen = self.gen("a")
            attached = q.text().count("ATTACHED\n")
            if how == "kill":
                ev["t_kill"] = time.monotonic()
                q.kill()
                if fside == "a":
                    self.stat("a", "firmware master killed")
                ev["t_spawn"] = time.monotonic()
                q.start()
                attached = 0
            else:
                if fside == "a":
                    self.stat("a", "before reset")
                ev["t_kill"] = ev["t_spawn"] = q.reset()
            ev["t_up"] = (self.wait_formatted("a", gen) if fside == "a"
                          else self.wait_attached(attached + 1))
        elif role in ("sender", "receiver"):
            side = side or "b"
            ev["side"] = side
            p = self.procs[(role, side)]
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.count[(role, side)] += 1
            ev["t_spawn"] = time.monotonic()
            ev["t_up"] = self.start_role(role, side)
        elif role == "master":
            ev["side"] = "b"
            ev["t_kill"] = time.monotonic()
            self.keeper.kill()
            self.keeper.wait()
            self.stat("b", "master killed")   # the old generation's counters
            ev["t_spawn"] = time.monotonic()
            ev["t_up"] = self.start_keeper()
        else:
            side = role[-1]
            ev["side"] = side
            p = self.bridges[side]
            before = self.bridge_status(side)
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.bridge_final[side].append(before)
            ev["t_spawn"] = time.monotonic()
            self.start_bridge(side)
            # back once attached with a peer (the start of mdcom-zenoh and of
            # its Zenoh session is reported apart: "bridge start to connected")
            ev["t_up"] = ev["t_connected"] = self.bridge_up(side)
        ev["resumed"] = self.wait_fresh(ev["t_up"])
        ev["t_end"] = ev["t_up"] + max((g for g in ev["resumed"].values() if g is not None),
                                       default=0.0) + 0.05
        self.events.append(ev)
        return ev

    def run(self, n: int) -> None:
        for k in range(n):
            role = ROLES[k % len(ROLES)]
            side = ("a" if (k // len(ROLES)) % 2 == 0 else "b") if role == "sender" else None
            time.sleep(self.rnd.uniform(0.05, 0.3))  # a random instant, mid-traffic
            self.restart(role, side)

    def stop(self) -> None:
        for side in "ab":
            p = self.procs[("sender", side)]
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        C.wait_drained(self.poll)
        time.sleep(0.5)  # the bridges' status files (4 per second)
        for side in "ab":
            self.bridge_final[side].append(self.bridge_status(side))
            self.stat(side, "end")
        p = self.procs[("receiver", "b")]
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)

    def dump(self, result: dict) -> None:
        (self.d / "storm.json").write_text(json.dumps(
            {"events": self.events, "bridge_final": self.bridge_final, "stats": self.stats,
             "generations": self.generations,
             "journals": [(r, s, str(p)) for r, s, p in self.journals], "result": result},
            indent=1))

    def close(self) -> None:
        for q in self.fw.values():
            q.close()
        for p in reversed(self.all):
            T.end_process(p)


# --------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------

def losers(stream: tuple) -> set:
    """The restarts that can lose a message of the stream: every role on its
    path (the in-region stream: region B's master and the receiver)."""
    if stream == ("b", 1):
        return {"master", "receiver"}
    return {"fw_master", "fw_remote", "master", "receiver", "bridge_a", "bridge_b"}


def check_two_soc(journals, events, bridge_final, stats) -> dict:
    sends, attempts, owner, deliveries, calls, controls, attaches, corrupt = \
        C.read_journals(journals, stream_of=lambda side, ch: ch)
    v = collections.defaultdict(list)
    for _, ln in corrupt:
        v["corrupt"].append(ln)
    masters = [e for e in events if e["role"] == "master"]
    delivered, last = set(), {}
    got_at = collections.defaultdict(list)   # (inc, stream) -> [(seq, delivery time)]
    for ch, ds in deliveries.items():
        for inc, st, seq, ts, t0, t1, att_t0, att_after in ds:
            key = (inc, st, seq)
            stream = (owner.get(inc), st)
            want = [("b", 1)] if ch == "loc" else [("a", 0), ("b", 0)]
            if key not in attempts or stream not in want:
                v["invented"].append(f"{ch}: {key} was never sent there")
                continue
            if key in delivered:
                v["duplicate"].append(f"stream {stream}: {key} delivered twice")
            elif seq < last.get((inc, st), -1):
                v["order"].append(f"stream {stream}: {seq} after {last[(inc, st)]} (inc {inc})")
            delivered.add(key)
            last[(inc, st)] = max(seq, last.get((inc, st), -1))
            got_at[(inc, st)].append((seq, t1))
            if stream != ("b", 1):
                continue
            # sent into region B before its new master started, dequeued
            # from the generation that master formatted (as test_restart_storm)
            sent = sends.get((inc, st), {}).get(seq)
            for e in masters:
                if C.received_stale(sent, att_t0, att_after, e):
                    v["stale"].append(f"{key} sent {e['t_spawn'] - sent[1]:.3f} s before the new "
                                      f"master started, received {t0 - e['t_up']:+.3f} s after "
                                      f"it had formatted")
    # losses: sent, not delivered, put down to the first restart that can
    # lose it after its send and before a later message of its incarnation
    # was delivered (every hop keeps order: FIFOs and one Zenoh link)
    losses = collections.defaultdict(collections.Counter)   # stream -> role -> n
    for (inc, st), seqs in sends.items():
        stream = (owner[inc], st)
        can = losers(stream)
        cands = sorted((e for e in events if e["role"] in can), key=lambda e: e["t_kill"])
        for seq, (t0, t1, rc) in seqs.items():
            if rc != "ok" or (inc, st, seq) in delivered:
                continue
            later = min((td for q, td in got_at[(inc, st)] if q > seq), default=float("inf"))
            # e can have lost it when the send returned before e's effect
            # ended (traffic flowed again) and e was killed before a later
            # message arrived
            window = [e for e in cands if e["t_kill"] < later and t1 < e["t_end"]]
            cause = window[0] if window else None
            if cause is None:
                v["unexplained loss"].append(f"stream {stream}: {(inc, st, seq)} sent at {t1:.3f}")
                continue
            losses[stream][cause["role"]] += 1
    n_of = collections.Counter(e["role"] for e in events)
    accounts = {}
    # the in-region stream: loc's counters alone
    lost_l = sum(losses[("b", 1)].values())
    lib_l = C.stat_lost(stats["b"], "loc")
    accounts["b1"] = {"lost": lost_l, "library_lost": lib_l,
                      "by_restart": dict(losses[("b", 1)])}
    if lib_l > lost_l:
        v["counts"].append(f"loc: counters say {lib_l} lost, the checker saw {lost_l}")
    if lost_l - lib_l > n_of["receiver"]:
        v["counts"].append(f"loc: {lost_l} lost, {lib_l} counted, more than the "
                           f"{n_of['receiver']} no counter can see")
    # the bridged streams share their channels: their losses together
    lost = sum(losses[("a", 0)].values()) + sum(losses[("b", 0)].values())
    lib = sum(C.stat_lost(stats[side], ch) for side, chs in LIB_CHANNELS.items() for ch in chs)
    br = {side: C.bridge_counts(bridge_final[side], BRIDGE_IN) for side in "ab"}
    counted = lib + sum(br[s]["lost"] + br[s]["region_dropped"] for s in "ab")
    # what no counter sees: a killed "out" bridge's round (copied out, not
    # published), the message a firmware or a re-formatted region's remote
    # held between its dequeue and its enqueue, a killed receiver's message
    unseen = (C.BRIDGE_ROUND * (n_of["bridge_a"] + n_of["bridge_b"]) + n_of["fw_master"]
              + n_of["fw_remote"] + n_of["master"] + n_of["receiver"])
    # a bridge killed between delivering a message and recording its number
    # counts it lost although it was delivered (docs/bridge.md)
    over = n_of["bridge_a"] + n_of["bridge_b"]
    accounts["bridged"] = {"lost": lost, "counted": counted, "library_lost": lib,
                           "bridge_a_in": {k: br["a"][k] for k in ("lost", "region_dropped")},
                           "bridge_b_in": {k: br["b"][k] for k in ("lost", "region_dropped")},
                           "uncounted_bound": unseen,
                           "by_restart": {f"{s[0]}{s[1]} {r}": k for s in (("a", 0), ("b", 0))
                                          for r, k in losses[s].items()}}
    if counted > lost + over:
        v["counts"].append(f"bridged: the counters say {counted} lost, the checker saw {lost}")
    if lost - counted > unseen:
        v["counts"].append(f"bridged: {lost} lost, {counted} counted, more than the {unseen} "
                           f"no counter can see")
    for s in "ab":
        if br[s]["duplicates"]:
            v["bridge duplicates"].append(f"bridge {s}: {br[s]['duplicates']}")
    # recovery
    longest = collections.defaultdict(float)
    for e in events:
        gaps = e["resumed"]
        if any(g is None for g in gaps.values()):
            v["no recovery"].append(f"{e['role']} {e.get('how', e['side'])}: {gaps}")
            continue
        w = max(gaps.values())
        longest[e["role"]] = max(longest[e["role"]], w)
        if w > C.RESUME_S:
            v["slow recovery"].append(f"{e['role']} {e.get('how', e['side'])}: {w:.3f} s {gaps}")
    bad, worst_ctl, worst_call = C.overruns(calls, controls)
    if bad:
        v["overrun"] = bad
    return {"violations": dict(v), "restarts": dict(n_of),
            "restarts_how": dict(collections.Counter(f"{e['role']}-{e['how']}" for e in events
                                                     if "how" in e)),
            "longest_recovery_s": dict(longest), "accounts": accounts,
            "delivered": len(delivered),
            "sent": sum(1 for s in sends.values() for x in s.values() if x[2] == "ok"),
            "worst_call_overrun_s": worst_call[0], "worst_call": worst_call[1:],
            "worst_control_overrun_s": worst_ctl, "calls": len(calls),
            "longest_attach_s": max(attaches, default=0.0)}


def summary(r: dict, events: list) -> str:
    out = [f"restarts per role: {r['restarts']} ({r['restarts_how']})",
           f"sent {r['sent']}, delivered {r['delivered']}",
           "longest recovery per role: " + ", ".join(
               f"{k} {x * 1000:.0f} ms" for k, x in r["longest_recovery_s"].items()),
           f"worst call overrun {r['worst_call_overrun_s'] * 1000:.1f} ms {r['worst_call']} vs "
           f"control sleep {r['worst_control_overrun_s'] * 1000:.1f} ms ({r['calls']} calls); "
           f"longest attach {r['longest_attach_s'] * 1000:.0f} ms"]
    br = [e["t_connected"] - e["t_spawn"] for e in events if "t_connected" in e]
    if br:
        out.append(f"bridge start to connected: max {max(br) * 1000:.0f} ms")
    fw = [e["t_up"] - e["t_spawn"] for e in events if e["role"] in FW_ROLES]
    if fw:
        out.append(f"firmware restart to formatted / attached: max {max(fw) * 1000:.0f} ms")
    out.extend(C.report_tail(r))
    return "\n".join(out)


@pytest.fixture
def two_soc(tmp_path):
    pre = prerequisites()
    made = []

    def make(**kw) -> TwoSoc:
        s = TwoSoc(tmp_path, qemu=pre["qemu"], fw=pre["fw"], **kw)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


def test_restart_storm_two_soc(two_soc):
    n = int(os.environ.get("MDCOM_STORM_TWO_SOC_RESTARTS", str(10 * len(ROLES))))
    seed = int(os.environ.get("MDCOM_STORM_SEED", str(random.SystemRandom().randrange(1 << 30))))
    print(f"\nrestart storm, two SoCs, firmware at both ends: {n} restarts, seed {seed} "
          f"(MDCOM_STORM_SEED)")
    t0 = time.monotonic()
    s = two_soc(seed=seed)
    s.start()
    s.run(n)
    s.stop()
    r = check_two_soc(s.journals, s.events, s.bridge_final, s.stats)
    s.dump(r)
    print(summary(r, s.events))
    print(f"storm duration {time.monotonic() - t0:.1f} s")
    assert sum(r["restarts"].values()) == n
    # every firmware-master restart and every new keeper formatted a new generation
    assert len(set(s.generations["a"])) == len(s.generations["a"]) == 1 + r["restarts"].get(
        "fw_master", 0), s.generations
    assert len(set(s.generations["b"])) == len(s.generations["b"]) == 1 + r["restarts"].get(
        "master", 0), s.generations
    assert r["delivered"] > 0
    assert r["violations"] == {}, summary(r, s.events)


def test_checker_catches_injected_duplicate_and_stale(two_soc):
    """Negative control: sender B sends message 50 of loc twice, and after
    region B's master was killed and a new one re-formatted the region, a
    message from before that into the new generation. The checker must
    report both."""
    s = two_soc(seed=1, sender_args={"b": ["--inject-dup", "50", "--inject-stale",
                                           "--inject-stream", "1"]})
    s.start()
    time.sleep(1.5)  # more than the second the stale copy is taken from
    s.restart("master")
    time.sleep(0.5)
    s.stop()
    r = check_two_soc(s.journals, s.events, s.bridge_final, s.stats)
    print("\n" + summary(r, s.events))
    assert r["violations"].get("duplicate"), r["violations"]
    assert r["violations"].get("stale"), r["violations"]
