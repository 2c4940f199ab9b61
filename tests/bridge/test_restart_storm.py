# SPDX-License-Identifier: BSD-3-Clause
"""The restart storm: every role of the two-SoC path is killed (SIGKILL, from
outside) and started again, in turn, at random instants while traffic flows
both ways, and a checker reads what every process wrote.

Two regions A and B, each: domain "ctl" (the master: a keeper process of
bridge/zenoh/topology.py, the only process of its domain, so that a new one
re-formats the region: generation + 1), "linux" (the bridge, mdcom-zenoh),
"snd" (a sender of tests/bridge/storm_role.py) and "rcv" (a receiver).
FIFOs: "out" snd -> linux, bridged out to the other region's "in" (linux ->
rcv) through Zenoh on loopback, and "loc" snd -> rcv inside the region. So
four streams: A out -> B in, B out -> A in, A loc, B loc.

Restarted in turn (side A or B at random): the sender, the receiver, the
master (SIGKILL, then a new keeper re-formats), the bridge (SIGKILL, then a
new one; its status file's .seq survives). MDCOM_STORM_RESTARTS (default 40:
10 per role) sets the number, MDCOM_STORM_SEED the seed.

The checker (check()) asserts, from the journals (storm_role.py) and the
driver's record of each restart: traffic resumed on every stream within 1 s
of the restarted role being back; no message delivered twice, none out of
order within one sender incarnation; every delivered message was sent (and
its CRC holds); no message sent into a region's "loc" before that region's
new master started is received after it had formatted; every message sent
and not delivered is explained by a restart that could lose it, and the
losses are compared with the counters that exist (the bridges' "lost" and
"region_dropped", the library's "lost" per channel, read with mdcom-stat);
no call overran its timeout by more than 50 ms beyond the worst overrun of a
plain sleep of the same length in the same processes.

Run by ctest (bridge_restart_storm). Outside CI a missing prerequisite skips
with the reason; with CI=true it fails.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# the limits, the journal reader, the counters: shared by the storms
from storm_check import (BRIDGE_ROUND, QUEUED_S, RESUME_S, ROLE, STAT, TIMEOUT_S,  # noqa: E402
                         T, bridge_counts, missing, new_lines, overruns,
                         read_journals, received_stale, stat_lost, wait_drained)
import storm_check as C  # noqa: E402

ROLES = ("sender", "receiver", "master", "bridge")
BLOCKS = 16         # block_count of every FIFO

REGION = """\
# SPDX-License-Identifier: BSD-3-Clause
[region]
name = "{name}"

[[domain]]
name = "ctl"
id = 0
role = "master"

[[domain]]
name = "linux"
id = 1
role = "remote"

[[domain]]
name = "snd"
id = 2
role = "remote"

[[domain]]
name = "rcv"
id = 3
role = "remote"

[[fifo]]
name = "out"
block_size = 256
block_count = {blocks}
senders = ["snd"]
receivers = ["linux"]

[[fifo]]
name = "in"
block_size = 256
block_count = {blocks}
senders = ["linux"]
receivers = ["rcv"]

[[fifo]]
name = "loc"
block_size = 256
block_count = {blocks}
senders = ["snd"]
receivers = ["rcv"]

[[bridge]]
channel = "out"
direction = "out"
key = "{prefix}/{me}{other}"
domain = "linux"
congestion = "block"

[[bridge]]
channel = "in"
direction = "in"
key = "{prefix}/{other}{me}"
domain = "linux"
congestion = "block"
"""


def prerequisites() -> None:
    if not os.access(T.DAEMON, os.X_OK):
        missing(f"{T.DAEMON} not built (CMake target mdcom_zenoh; needs cargo)")
    if not os.access(STAT, os.X_OK):
        missing(f"{STAT} not built (CMake target mdcom-stat)")
    try:
        import mdcom
        mdcom.load_library()
    except Exception as e:  # the binding or libmdcom.so (MDCOM_LIB)
        missing(f"the Python binding cannot load libmdcom: {e}")


# --------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------

def other(side: str) -> str:
    return "b" if side == "a" else "a"


# a stream: (sender's side, stream number); 0 = "out" (bridged), 1 = "loc"
STREAMS = (("a", 0), ("b", 0), ("a", 1), ("b", 1))


def stream_of(rside: str, ch: str) -> tuple:
    """The stream a receiver on `rside` reads on channel `ch`."""
    return (other(rside), 0) if ch == "in" else (rside, 1)


class Storm:
    def __init__(self, d: pathlib.Path, seed: int, sender_args: dict = None) -> None:
        """sender_args: side -> extra arguments of that side's senders."""
        self.d = d
        self.rnd = random.Random(seed)
        self.t = T.Topology(d, tag="s")
        t = self.t
        for side in "ab":
            t.toml[side].write_text(REGION.format(name=t.names[side], blocks=BLOCKS,
                                                  prefix=t.prefix, me=side, other=other(side)))
        t.master = {"a": "ctl", "b": "ctl"}
        # bridge B connects to A; when bridge A is restarted, B retries
        # every 50 ms (Zenoh's default starts at 1 s: longer than the
        # resumption limit by itself)
        for side, connect in (("a", None), ("b", t.port_a)):
            cfg = json.loads(T.zenoh_config(t.port_a if side == "a" else t.port_b,
                                            connect).split("\n", 1)[1])
            if connect is not None:
                cfg["connect"]["retry"] = {"period_init_ms": 50, "period_max_ms": 200,
                                           "period_increase_factor": 1.5}
            t.zcfg[side].write_text("// SPDX-License-Identifier: BSD-3-Clause\n"
                                    + json.dumps(cfg, indent=1) + "\n")
        self.sender_args = sender_args or {}
        self.procs = {}        # (role, side) -> Popen of the current process
        self.journals = []     # (role, side, path)
        self.events = []       # one dict per restart
        self.count = collections.Counter()
        self.bridge_final = {"a": [], "b": []}   # last status of each bridge process
        self.stats = {"a": [], "b": []}          # mdcom-stat snapshots per region
        self.offsets = {}
        self.fresh = {}

    # processes
    def start_role(self, role: str, side: str) -> float:
        """Start the sender or receiver of `side`; the time it was attached."""
        n = self.count[(role, side)]
        path = self.d / f"j-{role}-{side}-{n}.log"
        self.journals.append((role, side, path))
        toml = str(self.t.toml[side])
        if role == "sender":
            args = ["send", toml, "snd", str(path), "out,loc"]
            args += self.sender_args.get(side, [])
        else:
            args = ["recv", toml, "rcv", str(path), "in,loc"]
        p = self.t.spawn(str(ROLE), *args, "--timeout", str(TIMEOUT_S),
                         stdout=subprocess.PIPE, text=True)
        self.procs[(role, side)] = p
        line = p.stdout.readline().strip()
        assert line == "ready", f"{role} {side}: {line!r} (exit {p.poll()})"
        return time.monotonic()

    def stat(self, side: str, when: str) -> None:
        r = subprocess.run([str(STAT), "--json", self.t.names[side]], capture_output=True,
                           text=True, timeout=10)
        try:
            js = json.loads(r.stdout)
        except ValueError:
            js = {"ok": False, "error": r.stderr}
        js["when"] = when
        self.stats[side].append(js)

    def bridge_status(self, side: str) -> dict:
        try:
            return self.t.read_status(side)
        except (OSError, ValueError):
            return {}

    def bridge_up(self, side: str, timeout: float = 20.0) -> float:
        """Until the new bridge's status says attached with a peer."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.bridge_status(side)
            if st.get("region", {}).get("attached") and st.get("zenoh", {}).get("peers", 0) > 0:
                return time.monotonic()
            time.sleep(0.01)
        raise TimeoutError(f"bridge {side} did not come back")

    def start(self) -> None:
        t = self.t
        t.start_keepers()
        t.start_bridge("a")
        t.start_bridge("b")
        t.wait_connected()
        for side in "ab":
            self.start_role("receiver", side)
        for side in "ab":
            self.start_role("sender", side)
        self.wait_fresh(time.monotonic(), limit=20.0)

    # what the receivers delivered, read as it is written
    def poll(self, since: float) -> int:
        """Read the receivers' new lines; the number of deliveries among them."""
        got = 0
        for role, side, path in self.journals:
            if role != "receiver":
                continue
            for ln in new_lines(self.offsets, path):
                f_ = ln.split()
                if f_[0] != "D":
                    continue
                got += 1
                s = stream_of(side, f_[1])
                ts, t1 = float(f_[5]), float(f_[7])
                if ts >= since and s not in self.fresh:
                    self.fresh[s] = t1
        return got

    def wait_fresh(self, since: float, limit: float = 15.0) -> dict:
        """Until every stream has delivered a message sent after `since`;
        per stream, how long after `since` that was."""
        self.fresh = {}
        end = time.monotonic() + limit
        while time.monotonic() < end:
            self.poll(since)
            if len(self.fresh) == len(STREAMS):
                break
            time.sleep(0.02)
        return {f"{s[0]}{s[1]}": self.fresh[s] - since if s in self.fresh else None
                for s in STREAMS}

    def restart(self, role: str, side: str) -> dict:
        ev = {"role": role, "side": side}
        t = self.t
        if role in ("sender", "receiver"):
            p = self.procs[(role, side)]
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.count[(role, side)] += 1
            ev["t_spawn"] = time.monotonic()
            ev["t_up"] = self.start_role(role, side)
        elif role == "master":
            p = t.keepers[side]
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.stat(side, "master killed")  # the old generation's counters
            ev["t_spawn"] = time.monotonic()
            ev["t_up"] = t.start_keeper(side)
        else:
            p = t.bridges[side]
            before = self.bridge_status(side)
            ev["t_kill"] = time.monotonic()
            p.kill()
            p.wait()
            self.bridge_final[side].append(before)
            ev["t_spawn"] = time.monotonic()
            t.start_bridge(side)
            ev["t_connected"] = self.bridge_up(side)
            # the bridge is back when its process is: its start and Zenoh's
            # session are part of the recovery
            ev["t_up"] = ev["t_spawn"]
        ev["resumed"] = self.wait_fresh(ev["t_up"])
        ev["t_end"] = ev["t_up"] + max((g for g in ev["resumed"].values() if g is not None),
                                       default=0.0) + 0.05
        self.events.append(ev)
        return ev

    def run(self, n: int) -> None:
        for k in range(n):
            role = ROLES[k % len(ROLES)]
            side = self.rnd.choice("ab")
            time.sleep(self.rnd.uniform(0.05, 0.5))  # a random instant, mid-traffic
            self.restart(role, side)

    def stop(self) -> None:
        """Senders first, then the queues drain, then the receivers; the
        counters last."""
        for side in "ab":
            p = self.procs[("sender", side)]
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        wait_drained(self.poll)
        time.sleep(0.5)  # the bridges' status files (4 per second)
        for side in "ab":
            self.bridge_final[side].append(self.bridge_status(side))
            self.stat(side, "end")
        for side in "ab":
            p = self.procs[("receiver", side)]
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)

    def dump(self, result: dict) -> None:
        """What the checker read and said, for a look afterwards."""
        (self.d / "storm.json").write_text(json.dumps(
            {"events": self.events, "bridge_final": self.bridge_final, "stats": self.stats,
             "journals": [(r, s, str(p)) for r, s, p in self.journals], "result": result},
            indent=1))

    def close(self) -> None:
        self.t.close()


# --------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------

def read_journals(journals, stream_of=stream_of):
    """storm_check.read_journals with this storm's channels."""
    return C.read_journals(journals, stream_of)


# the restarts that can lose a message of a stream sent from `side`:
# (role, side) pairs
def losers(stream: tuple) -> set:
    side, n = stream
    if n == 1:
        return {("master", side), ("receiver", side)}
    return {("master", side), ("bridge", side), ("bridge", other(side)),
            ("master", other(side)), ("receiver", other(side))}


def check(journals, events, bridge_final, stats) -> dict:
    sends, attempts, owner, deliveries, calls, controls, attaches, corrupt = \
        read_journals(journals)
    v = collections.defaultdict(list)   # kind -> descriptions
    for side, ln in corrupt:
        v["corrupt"].append(f"receiver {side}: {ln}")
    masters = {s: [e for e in events if e["role"] == "master" and e["side"] == s] for s in "ab"}
    delivered = set()
    for stream, ds in deliveries.items():
        last = {}
        for inc, st, seq, ts, t0, t1, att_t0, att_after in ds:
            key = (inc, st, seq)
            if key not in attempts or owner.get(inc) != stream[0] or st != stream[1]:
                v["invented"].append(f"stream {stream}: {key} was never sent there")
                continue
            if key in delivered:
                v["duplicate"].append(f"stream {stream}: {key} delivered twice")
            elif seq < last.get((inc, st), -1):
                v["order"].append(f"stream {stream}: {seq} after {last[(inc, st)]} (inc {inc})")
            delivered.add(key)
            last[(inc, st)] = max(seq, last.get((inc, st), -1))
            if stream[1] == 1:  # sent and received in the same region
                sent = sends.get((inc, st), {}).get(seq)
                # the receiver dequeued it from a generation after restart
                # e's re-format when its attachment began after the new
                # master had formatted, or after the receiver saw the old
                # generation end once the new master had started (the only
                # end it can have seen then is that re-format)
                for e in masters[stream[0]]:
                    if received_stale(sent, att_t0, att_after, e):
                        v["stale"].append(
                            f"stream {stream}: {key} sent {e['t_spawn'] - sent[1]:.3f} s before "
                            f"the new master started, received from the new generation "
                            f"{t0 - e['t_up']:+.3f} s after it had formatted")
    # losses: sent (the send returned 0) and not delivered, each put down to
    # the first restart after the send that can lose a message of its stream
    losses = collections.defaultdict(collections.Counter)  # stream -> (role, side) -> n
    for (inc, st), seqs in sends.items():
        stream = (owner[inc], st)
        can = losers(stream)
        for seq, (t0, t1, rc) in seqs.items():
            if rc != "ok" or (inc, st, seq) in delivered:
                continue
            # the restart that lost it: the last one of those that can,
            # killed before the message was sent or shortly after (what was
            # queued when it was killed), and whose effect (until traffic
            # resumed on every stream, a detached bridge dropping meanwhile)
            # had not ended when it was sent
            cause = None
            for e in events:
                if (e["role"], e["side"]) in can and e["t_kill"] <= t1 + QUEUED_S:
                    cause = e
            if cause is not None and t0 > cause["t_end"]:
                cause = None
            if cause is None:
                v["unexplained loss"].append(f"stream {stream}: {(inc, st, seq)} sent at {t1:.3f}")
                continue
            losses[stream][(cause["role"], cause["side"])] += 1
    # the counters, per stream
    accounts = {}
    for stream in STREAMS:
        side, n = stream
        lost = sum(losses[stream].values())
        if n == 1:
            lib = stat_lost(stats[side], "loc")
            br = collections.Counter()
        else:
            lib = stat_lost(stats[side], "out") + stat_lost(stats[other(side)], "in")
            br = bridge_counts(bridge_final[other(side)], "in")
        counted = lib + br["lost"] + br["region_dropped"]
        # what no counter can see: an "out" bridge's round when it is
        # killed, and a message a receiver got and was killed before writing
        # it down (a re-format counts what it discards: nothing for masters).
        # Summed over every such restart of the stream, not only over those
        # the attribution above chose: a message lost in an out bridge's
        # round is put down to a later restart of the stream when one came
        # within QUEUED_S, and would then be taken for a loss the counters
        # should have seen.
        kinds = losses[stream]
        bound = 0
        for role, s in losers(stream):
            if role == "bridge" and s == side:
                bound += BRIDGE_ROUND * sum(1 for e in events if (e["role"], e["side"]) == (role, s))
            elif role == "receiver":
                bound += sum(1 for e in events if (e["role"], e["side"]) == (role, s))
        # a bridge killed between delivering a message and recording its
        # number counts it lost although it was delivered (docs/bridge.md)
        over = sum(1 for e in events if (e["role"], e["side"]) == ("bridge", other(side))) \
            if n == 0 else 0
        accounts[f"{side}{n}"] = {"lost": lost, "counted": counted, "library_lost": lib,
                                  "bridge_lost": br["lost"],
                                  "bridge_region_dropped": br["region_dropped"],
                                  "uncounted": lost - counted, "uncounted_bound": bound,
                                  "by_restart": {f"{r}-{s}": k for (r, s), k in kinds.items()}}
        if counted > lost + over:
            v["counts"].append(f"stream {stream}: counters say {counted} lost, "
                               f"the checker saw {lost}")
        if lost - counted > bound:
            v["counts"].append(f"stream {stream}: {lost} lost, {counted} counted, more than the "
                               f"{bound} no counter can see")
        if br["duplicates"]:
            v["bridge duplicates"].append(f"stream {stream}: {br['duplicates']}")
    # recovery
    longest = 0.0
    for e in events:
        gaps = e["resumed"]
        if any(g is None for g in gaps.values()):
            v["no recovery"].append(f"{e['role']} {e['side']}: {gaps}")
            continue
        worst = max(gaps.values())
        longest = max(longest, worst)
        if worst > RESUME_S:
            v["slow recovery"].append(f"{e['role']} {e['side']}: {worst:.3f} s {gaps}")
    # overruns against the control sleep
    bad, worst_ctl, worst_call = overruns(calls, controls)
    if bad:
        v["overrun"] = bad
    restarts = collections.Counter(e["role"] for e in events)
    return {"violations": {k: x for k, x in v.items()}, "restarts": dict(restarts),
            "longest_recovery_s": longest, "worst_call_overrun_s": worst_call[0],
            "worst_call": worst_call[1:], "worst_control_overrun_s": worst_ctl,
            "calls": len(calls), "control_sleeps": len(controls),
            "longest_attach_s": max(attaches, default=0.0),
            "delivered": len(delivered),
            "sent": sum(1 for s in sends.values() for x in s.values() if x[2] == "ok"),
            "accounts": accounts}


def summary(r: dict, events: list) -> str:
    out = [f"restarts per role: {r['restarts']}",
           f"sent {r['sent']}, delivered {r['delivered']}",
           f"longest recovery {r['longest_recovery_s'] * 1000:.0f} ms; worst call overrun "
           f"{r['worst_call_overrun_s'] * 1000:.1f} ms {r['worst_call']} vs control sleep "
           f"{r['worst_control_overrun_s'] * 1000:.1f} ms ({r['calls']} calls, "
           f"{r['control_sleeps']} sleeps); longest attach {r['longest_attach_s'] * 1000:.0f} ms"]
    per = collections.defaultdict(float)
    for e in events:
        w = max((g for g in e["resumed"].values() if g is not None), default=0.0)
        per[e["role"]] = max(per[e["role"]], w)
    out.append("longest recovery per role: " +
               ", ".join(f"{k} {x * 1000:.0f} ms" for k, x in per.items()))
    br = [e["t_connected"] - e["t_spawn"] for e in events if "t_connected" in e]
    if br:
        out.append(f"bridge start to connected: max {max(br) * 1000:.0f} ms")
    out.extend(C.report_tail(r))
    return "\n".join(out)


@pytest.fixture
def storm(tmp_path):
    prerequisites()
    made = []

    def make(**kw) -> Storm:
        s = Storm(tmp_path, **kw)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()


def test_restart_storm(storm):
    n = int(os.environ.get("MDCOM_STORM_RESTARTS", "40"))
    seed = int(os.environ.get("MDCOM_STORM_SEED", str(random.SystemRandom().randrange(1 << 30))))
    print(f"\nrestart storm: {n} restarts, seed {seed} (MDCOM_STORM_SEED)")
    s = storm(seed=seed)
    s.start()
    s.run(n)
    s.stop()
    r = check(s.journals, s.events, s.bridge_final, s.stats)
    s.dump(r)
    print(summary(r, s.events))
    assert sum(r["restarts"].values()) == n
    assert r["delivered"] > 0
    assert r["violations"] == {}, summary(r, s.events)


def test_checker_catches_injected_duplicate_and_stale(storm):
    """Negative control: sender A sends message 50 of its "loc" stream twice,
    and after region A's master was killed and re-formatted the region, sends
    a message from before that into the new region. The checker must report
    both (and the storm's own assertions would then fail)."""
    s = storm(seed=1, sender_args={"a": ["--inject-dup", "50", "--inject-stale",
                                         "--inject-stream", "1"]})
    s.start()
    time.sleep(1.5)  # more than the second the stale copy is taken from
    s.restart("master", "a")
    time.sleep(0.5)
    s.stop()
    r = check(s.journals, s.events, s.bridge_final, s.stats)
    print("\n" + summary(r, s.events))
    assert r["violations"].get("duplicate"), r["violations"]
    assert r["violations"].get("stale"), r["violations"]
