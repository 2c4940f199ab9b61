# SPDX-License-Identifier: BSD-3-Clause
"""mdcom-zenoh when its region ends: region A's master (the keeper process of
bridge/zenoh/topology.py, the process that formatted the region) exits
normally and starts again while traffic flows both ways. Bridge A must
attach to the new region by itself and carry traffic again within 1 s of the
new master's format, or, with --exit-on-detach, exit with status 3.

Run by ctest (bridge_zenoh_restart; tests/bridge/CMakeLists.txt sets
MDCOM_ZENOH, MDCOM_LIB and PYTHONPATH). The contract: docs/bridge.md, "When
the region ends".
"""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bridge" / "zenoh"))
import topology as T  # noqa: E402

if not os.access(T.DAEMON, os.X_OK):
    pytest.skip(f"{T.DAEMON} not built (CMake target mdcom_zenoh; needs cargo)",
                allow_module_level=True)

# the new sender's numbers start here, so that the receiver on B can tell the
# messages of the two senders apart (and a duplicate from either)
SECOND = 1_000_000
SIZES = ("--lo", "8", "--hi", "1024")


def role(t: T.Topology, *args: str, go: bool = False) -> subprocess.Popen:
    """A sender or receiver of topology.py; `go` releases a sender at once
    (its 'go' waits in the pipe while it attaches)."""
    p = t.role(*args, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    if go:
        p.stdin.write("go\n")
        p.stdin.flush()
    return p


def ready(p: subprocess.Popen, what: str) -> None:
    line = p.stdout.readline().strip()
    assert line == "ready", f"{what}: {line!r} (exit {p.poll()})"


def result(p: subprocess.Popen, what: str, timeout: float = 60) -> dict:
    """The JSON summary of a role, which must have exited with 0."""
    line = p.stdout.readline()
    rc = p.wait(timeout=timeout)
    assert line and rc == 0, f"{what} exited with {rc}: {line!r}"
    return json.loads(line)


def settled(t: T.Topology, side: str, pred, timeout: float = 10.0) -> dict:
    """Bridge `side`'s status once pred(status) holds (the file lags 0.25 s)."""
    end = time.monotonic() + timeout
    while True:
        try:
            st = t.read_status(side)
            if pred(st) or time.monotonic() > end:
                return st
        except (OSError, ValueError, KeyError):
            if time.monotonic() > end:
                raise
        time.sleep(0.1)


def entry(st: dict, channel: str) -> dict:
    return next(e for e in st["entries"] if e["channel"] == channel)


def test_master_restart_bridge_reattaches(topo):
    """Region A's master exits normally (mdcom_term: the region is terminated,
    its file removed) while messages flow A -> B ('up') and B -> A ('down'),
    then starts again and formats a new region. Bridge A logs the end and the
    re-attach (one line each, no error loop), counts the re-attach and what it
    could not deliver, counts no error, and carries both directions again
    within 1 s of the new master's format; no message is delivered twice and
    what was queued in 'up' when the region ended is still published."""
    t = topo()
    # B <- A: one receiver on B across the whole test (region B lives on)
    rb = role(t, "recv", str(t.toml["b"]), "app", "rx", "-n", "100000", "--idle", "5",
              "--mark", str(SECOND), *SIZES)
    ready(rb, "receiver on B")
    # A -> B, first sender: stops at the region's end
    s1 = role(t, "send", str(t.toml["a"]), "fw", "up", "-n", "100000", "--delay", "0.002",
              "--timeout", "5", "--stop-on-end", *SIZES, go=True)
    ready(s1, "first sender on A")
    # B -> A: one sender on B across the whole test, a receiver on A per region
    ra1 = role(t, "recv", str(t.toml["a"]), "fw", "down", "-n", "100000", "--idle", "10",
               "--stop-on-end", *SIZES)
    ready(ra1, "first receiver on A")
    n_down = 2500  # 2 ms apart: about 6 s, across the restart
    sb = role(t, "send", str(t.toml["b"]), "app", "tx", "-n", str(n_down), "--delay", "0.002",
              "--timeout", "10", "--times", *SIZES, go=True)
    ready(sb, "sender on B")
    time.sleep(1.0)  # traffic flows both ways

    # the master's normal exit: mdcom_term ends the region
    keeper = t.keepers["a"]
    keeper.send_signal(signal.SIGTERM)
    assert keeper.wait(timeout=10) == 0
    sent1, got_a1 = result(s1, "first sender on A"), result(ra1, "first receiver on A")
    assert sent1["ended"] == "ESHUTDOWN" and got_a1["ended"] == "ESHUTDOWN", (sent1, got_a1)
    # the new ends attach when the new master has formatted the region
    n2 = 300
    s2 = role(t, "send", str(t.toml["a"]), "fw", "up", "-n", str(n2), "--first", str(SECOND),
              "--delay", "0.002", "--timeout", "5", *SIZES, go=True)
    ra2 = role(t, "recv", str(t.toml["a"]), "fw", "down", "-n", "100000", "--idle", "3",
               *SIZES)
    time.sleep(0.5)  # an outage: what bridge B publishes meanwhile cannot be delivered
    formatted = t.start_keeper("a")
    ready(s2, "second sender on A")
    ready(ra2, "second receiver on A")

    sent2 = result(s2, "second sender on A")
    sent_b = result(sb, "sender on B")
    got_a2 = result(ra2, "second receiver on A")
    got_b = result(rb, "receiver on B")
    log = t.log("a")
    st = settled(t, "a", lambda s: entry(s, "up")["messages"] == sent1["sent"] + n2 and
                 entry(s, "down")["messages"] + entry(s, "down")["region_dropped"] == n_down)
    up, down = entry(st, "up"), entry(st, "down")
    times = sent_b.pop("times")
    print(f"\nsender on B: {sent_b}; sent: {[(i, times[i]) for i in range(0, n_down, 100)]}")
    print(f"\nbridge A: {st['region']}\nup: {up}\ndown: {down}\n"
          f"first sender {sent1}\nreceiver on B {got_b}\n"
          f"receivers on A {got_a1} {got_a2}\nlog of bridge A:\n{log}")

    # the bridge said so, once each, and counted it; the exit was no error
    assert log.count("ended (ESHUTDOWN") == 1, log
    assert log.count("attached again") == 1, log
    assert "wait:" not in log and "send:" not in log and "receive:" not in log, log
    assert (st["region"]["reattaches"], st["region"]["attached"]) == (1, True), st["region"]
    assert st["region"]["last_end"].startswith("ESHUTDOWN"), st["region"]
    assert (up["errors"], down["errors"]) == (0, 0)

    # A -> B: every message of both senders, in order, none twice; what the
    # first one had queued when the region ended was published from the
    # terminated region
    assert got_b["errors"] == [], got_b
    assert sent2["sent"] == n2
    assert got_b["received"] == sent1["sent"] + n2, (got_b, sent1)
    assert up["messages"] == sent1["sent"] + n2
    # B -> A: none twice, in order across the two regions; what arrived
    # while the bridge was detached is counted, what was still queued in the
    # old region (at most its 32 blocks) went with it
    assert got_a1["errors"] == [] and got_a2["errors"] == [], (got_a1, got_a2)
    assert got_a2["received"] > 0 and got_a2["first"] > got_a1["last"], (got_a1, got_a2)
    assert sent_b["sent"] == n_down
    assert down["region_dropped"] > 0, down  # the outage had traffic
    assert down["messages"] + down["region_dropped"] == n_down, down
    delivered = got_a1["received"] + got_a2["received"]
    assert down["messages"] - 32 <= delivered <= down["messages"], (delivered, down)
    assert (down["lost"], down["duplicates"]) == (0, 0), down

    # traffic resumed within 1 s of the new master's format, both ways: from
    # the moment the region and the new end on A are there (a Python process
    # on a busy machine may attach after the format) to the first message of
    # the new sender at B / the first message at the new receiver on A
    assert got_b["mark_at"] is not None and got_a2["started"] is not None
    up_gap = got_b["mark_at"] - max(formatted, sent2["attached"])
    down_gap = got_a2["started"] - max(formatted, got_a2["attached"])
    # and B -> A from bridge A's side: every message from the first one the
    # new receiver got on was delivered, and that one was sent by B less
    # than 1 s after the format (what B sent later was never dropped)
    assert got_a2["received"] == n_down - got_a2["first"], got_a2
    down_resumed = times[got_a2["first"]] - formatted
    print(f"resumed after the format: up {up_gap * 1000:.0f} ms, down {down_gap * 1000:.0f} ms "
          f"(new sender attached {(sent2['attached'] - formatted) * 1000:.0f} ms, new "
          f"receiver {(got_a2['attached'] - formatted) * 1000:.0f} ms after the format); "
          f"the first message delivered into the new region was sent by B "
          f"{down_resumed * 1000:.0f} ms after the format")
    assert up_gap < 1.0 and down_gap < 1.0 and down_resumed < 1.0, \
        (up_gap, down_gap, down_resumed)
    assert t.bridges["a"].poll() is None  # still the same process


def test_exit_on_detach(topo):
    """With --exit-on-detach, bridge A exits with status 3 when its region
    ends (for a supervisor that restarts it), saying why; a bridge started
    again (as systemd would) carries traffic in the master's new region."""
    t = topo(bridge_args=("--exit-on-detach",))
    help_text = subprocess.run([str(T.DAEMON), "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    assert "--exit-on-detach" in help_text
    keeper = t.keepers["a"]
    keeper.send_signal(signal.SIGTERM)
    assert keeper.wait(timeout=10) == 0
    assert t.bridges["a"].wait(timeout=5) == 3
    log = t.log("a")
    assert "ended (ESHUTDOWN" in log and "exiting with status 3 (--exit-on-detach)" in log, log
    assert t.bridges["b"].poll() is None  # region B did not end
    # what the supervisor does next: the master back, the bridge started again
    t.start_keeper("a")
    t.start_bridge("a")
    t.wait_connected()
    n = 200
    rb = role(t, "recv", str(t.toml["b"]), "app", "rx", "-n", str(n), "--idle", "5", *SIZES)
    ready(rb, "receiver on B")
    s = role(t, "send", str(t.toml["a"]), "fw", "up", "-n", str(n), *SIZES, go=True)
    ready(s, "sender on A")
    assert result(s, "sender on A")["sent"] == n
    got = result(rb, "receiver on B")
    assert (got["received"], got["errors"]) == (n, []), got


def test_master_not_back_within_attach_timeout(topo):
    """The region ends and no master comes back: the bridge waits
    --attach-timeout, says so, and exits with status 1 (nothing waits for
    ever unless asked to with a negative timeout)."""
    t = topo(bridge_args=("--attach-timeout", "1"))
    keeper = t.keepers["a"]
    t0 = time.monotonic()  # the bridge's wait starts after this
    keeper.send_signal(signal.SIGTERM)
    assert keeper.wait(timeout=10) == 0
    assert t.bridges["a"].wait(timeout=10) == 1
    waited = time.monotonic() - t0
    log = t.log("a")
    assert "did not format it again within --attach-timeout (1 s)" in log, log
    assert 1.0 <= waited < 4, waited


def test_firmware_master_restart_reformats_in_place(topo):
    """Region A's master is its firmware ('fw': keeper, sender and receiver
    stand for it); the bridge is a remote. The firmware dies at once (SIGKILL
    of every fw process, as a remoteproc stop) and boots again: its new keeper
    finds the stale region and formats it in place (generation + 1), so the
    bridge sees -ECONNRESET, not -ESHUTDOWN. Bridge A attaches again by
    itself; the new firmware's messages reach B within 1 s of the format,
    none twice."""
    t = topo(master_a="fw")
    rb = role(t, "recv", str(t.toml["b"]), "app", "rx", "-n", "100000", "--idle", "4",
              "--mark", str(SECOND), *SIZES)
    ready(rb, "receiver on B")
    s1 = role(t, "send", str(t.toml["a"]), "fw", "up", "-n", "100000", "--delay", "0.002",
              *SIZES, go=True)
    ready(s1, "first firmware sender")
    time.sleep(1.0)
    for p in (s1, t.keepers["a"]):  # the whole firmware at once
        p.send_signal(signal.SIGKILL)
        p.wait()
    time.sleep(0.3)
    # the new keeper formats; the new sender, of the master domain too, must
    # join after it (the first of the domain formats, and ends the region
    # when it exits)
    formatted = t.start_keeper("a")
    n2 = 300
    s2 = role(t, "send", str(t.toml["a"]), "fw", "up", "-n", str(n2), "--first", str(SECOND),
              "--delay", "0.002", "--timeout", "5", *SIZES, go=True)
    ready(s2, "second firmware sender")
    sent2 = result(s2, "second firmware sender")
    got_b = result(rb, "receiver on B")
    st = settled(t, "a", lambda s: s.get("region", {}).get("reattaches") == 1)
    log = t.log("a")
    print(f"\nbridge A: {st.get('region')}\nup: {entry(st, 'up')}\nreceiver on B {got_b}\n"
          f"log of bridge A:\n{log}")
    assert log.count("ended (ECONNRESET") == 1 and log.count("attached again") == 1, log
    assert "wait:" not in log and "receive:" not in log, log
    assert entry(st, "up")["errors"] == 0, entry(st, "up")
    assert (st["region"]["reattaches"], st["region"]["attached"]) == (1, True), st["region"]
    assert got_b["errors"] == [], got_b  # in order, none twice, CRCs hold
    assert sent2["sent"] == n2 and got_b["last"] == SECOND + n2 - 1, (sent2, got_b)
    up_gap = got_b["mark_at"] - max(formatted, sent2["attached"])
    print(f"resumed {up_gap * 1000:.0f} ms after the format")
    assert up_gap < 1.0, up_gap
