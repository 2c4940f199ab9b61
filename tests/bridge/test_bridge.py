# SPDX-License-Identifier: BSD-3-Clause
"""mdcom-zenoh (bridge/zenoh, the Rust daemon): two regions on one machine standing for two
SoCs, one bridge each, Zenoh peer to peer over TCP on 127.0.0.1 (explicit
endpoints, scouting off). Real processes, real shared memory.

Run by ctest (tests/bridge/CMakeLists.txt sets MDCOM_ZENOH, MDCOM_LIB and PYTHONPATH).
MDCOM_BRIDGE_MESSAGES sets the message count of test (a) (default 100000).
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


def zenoh_py():
    """The eclipse-zenoh Python package, for the tests that play a plain Zenoh
    client next to the bridges."""
    return pytest.importorskip("zenoh", reason="the Python package eclipse-zenoh is not "
                               "installed (scripts/deps.sh: pip install eclipse-zenoh==1.10.2)")

N_A = int(os.environ.get("MDCOM_BRIDGE_MESSAGES", "100000"))


def ends(t: T.Topology, send: tuple, recv: tuple, n: int, recv_args=(), send_args=(),
         size_args=()):
    """Start a receiver and a sender (both given size_args), release the sender."""
    recv_args, send_args = (*size_args, *recv_args), (*size_args, *send_args)
    r = t.role("recv", str(t.toml[recv[0]]), recv[1], recv[2], "-n", str(n), *recv_args,
               stdout=subprocess.PIPE, text=True)
    s = t.role("send", str(t.toml[send[0]]), send[1], send[2], "-n", str(n), *send_args,
               stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    assert r.stdout.readline().strip() == "ready"
    assert s.stdout.readline().strip() == "ready"
    s.stdin.write("go\n")
    s.stdin.flush()
    return s, r


def result(p: subprocess.Popen, timeout: float = 300) -> dict:
    out = json.loads(p.stdout.readline())
    assert p.wait(timeout=timeout) == 0, out
    return out


def settled(t: T.Topology, side: str, channel: str, pred, timeout: float = 10.0) -> dict:
    """The bridge's status entry once pred(entry) holds (the file lags 0.25 s)."""
    end = time.monotonic() + timeout
    while True:
        e = t.entry(side, channel)
        if pred(e) or time.monotonic() > end:
            return e
        time.sleep(0.1)


def test_a_linux_process_to_linux_process(topo):
    """(a) N_A messages of 1 B .. 64 KiB, A 'up' -> bridge A -> bridge B -> B 'rx':
    every message in order with its exact content (length + CRC-32)."""
    t = topo()
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), N_A, recv_args=("--exact",))
    sent, got = result(s), result(r)
    assert got == {**got, "received": N_A, "errors": []}
    a = settled(t, "a", "up", lambda e: e["messages"] == N_A)
    b = settled(t, "b", "rx", lambda e: e["messages"] == N_A)
    assert (a["messages"], a["seq"], a["errors"]) == (N_A, N_A, 0)
    assert (b["messages"], b["lost"], b["duplicates"], b["oversize"], b["errors"]) == \
        (N_A, 0, 0, 0, 0)
    assert b["bytes"] == a["bytes"] == sum(T.sizes(N_A))
    print(f"\n(a) {N_A} messages, {a['bytes'] / 1e6:.1f} MB in {sent['seconds']:.2f} s")


def test_b_firmware_standin_both_directions(topo):
    """(b) the firmware of SoC A (a Linux process standing for it, domain 'fw')
    -> bridge A -> bridge B -> 'app' on SoC B, and at the same time app -> B ->
    A -> fw; both checked exactly."""
    t = topo()
    n = 3000
    s1, r1 = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n, recv_args=("--exact",))
    s2, r2 = ends(t, ("b", "app", "tx"), ("a", "fw", "down"), n, recv_args=("--exact",))
    for p in (s1, s2):
        result(p)
    for p in (r1, r2):
        assert result(p)["received"] == n
    for side, ch in (("a", "down"), ("b", "rx")):
        e = settled(t, side, ch, lambda e: e["messages"] == n)
        assert (e["messages"], e["lost"], e["duplicates"], e["echo_dropped"]) == (n, 0, 0, 0)


def test_no_echo_when_both_bridges_map_one_key_both_ways(topo):
    """Each bridge publishes and subscribes the same key: a bridge drops its
    own samples (counted as echo_dropped), the other delivers them once."""
    t = topo(same_key=True)
    n = 500
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n, recv_args=("--exact",))
    result(s)
    assert result(r)["received"] == n
    echo = settled(t, "a", "down", lambda e: e["echo_dropped"] == n)
    assert (echo["echo_dropped"], echo["messages"]) == (n, 0)
    # nothing came back to the firmware on A
    r = t.role("recv", str(t.toml["a"]), "fw", "down", "-n", "1", "--idle", "1",
               stdout=subprocess.PIPE, text=True)
    assert r.stdout.readline().strip() == "ready"
    assert result(r)["received"] == 0
    # and the other way
    s, r = ends(t, ("b", "app", "tx"), ("a", "fw", "down"), n, recv_args=("--exact",))
    result(s)
    assert result(r)["received"] == n
    echo = settled(t, "b", "rx", lambda e: e["echo_dropped"] == n)
    assert (echo["echo_dropped"], echo["messages"]) == (n, n)


def test_c_restart_bridge_b_mid_stream(topo):
    """(c) SIGKILL bridge B mid-stream, restart it: the stream goes on (A and
    the processes are not restarted), no duplicate, no reordering, every CRC
    holds, and B counts what was lost (its sequence numbers survive the crash)."""
    t = topo()
    n = 12000
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n, recv_args=("--idle", "8"),
                size_args=("--lo", "8", "--hi", "4096"),
                send_args=("--delay", "0.0003", "--pause-at", str(n * 7 // 10)))
    time.sleep(1.0)  # >= 0.3 ms a message: the sender is at most at 3300 of 8400
    t.bridges["b"].send_signal(signal.SIGKILL)
    t.bridges["b"].wait()
    time.sleep(0.5)  # the sender goes on into the void
    t.start_bridge("b")
    t.wait_connected()
    assert s.stdout.readline().strip() == "paused"
    s.stdin.write("go\n")  # the rest of the stream reaches the restarted bridge
    s.stdin.flush()
    sent = result(s)
    got = result(r)
    assert got["errors"] == []  # no duplicate, order kept, CRCs hold
    missing = n - got["received"]
    assert missing > 0, "the outage lost nothing: the test did not test"
    a = settled(t, "a", "up", lambda e: e["messages"] == n)
    b = settled(t, "b", "rx", lambda e: e["lost"] >= missing)
    assert a["messages"] == n
    # a crash between handing a message to the FIFO and recording its
    # number can count that one message as lost although it was delivered
    assert missing <= b["lost"] <= missing + 1, (missing, b)
    assert b["duplicates"] == 0
    assert t.read_status("a")["zenoh"]["connects"] >= 2  # A saw B go and come back
    print(f"\n(c) {n} sent in {sent['seconds']:.1f} s, {missing} lost during the "
          f"restart, bridge B counted {b['lost']}")


def test_d_slow_receiver_block_is_backpressure(topo):
    """(d) congestion "block": a slow receiver slows the sender down through
    bridge B, Zenoh/TCP, bridge A and FIFO 'up'; nothing is lost."""
    t = topo(congestion="block", count=8)
    # n large enough that what the FIFOs, Zenoh's queues and the loopback
    # sockets can buffer (over 20 MB seen under load) is well below it
    n, slow = 1000, 0.005
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n,
                recv_args=("--exact", "--slow", str(slow)), size_args=("--lo", "65536"))
    sent, got = result(s), result(r)
    assert got["received"] == n
    b = settled(t, "b", "rx", lambda e: e["messages"] == n)
    assert (b["lost"], b["congestion_dropped"]) == (0, 0)
    # 64 MB cannot all sit in the FIFOs and the sockets: the sender waited
    assert sent["seconds"] > 0.4 * n * slow, (sent, got)


def test_d_slow_receiver_drop_counts_drops(topo):
    """(d) congestion "drop": the sender is never held up; what the slow
    receiver misses is counted by bridge B (dropped at the full FIFO, or lost
    on the way), and what it gets is in order and intact."""
    t = topo(congestion="drop", count=8)
    # n large enough that what the FIFOs, Zenoh's queues and the loopback
    # sockets can buffer (over 20 MB seen under load) is well below it
    n, slow, pause = 1000, 0.005, 1.0
    # the last message goes after a pause: a loss is counted when the stream's
    # next message shows the gap, so a burst whose tail Zenoh dropped at bridge
    # A shows its losses only with a message after it
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n,
                recv_args=("--slow", str(slow), "--idle", "3"), size_args=("--lo", "65536"),
                send_args=("--pause-at", str(n - 1)))
    assert s.stdout.readline().strip() == "paused"
    time.sleep(pause)
    s.stdin.write("go\n")
    s.stdin.flush()
    sent, got = result(s), result(r)
    assert got["errors"] == []
    assert got["received"] < n
    assert sent["seconds"] - pause < 0.5 * n * slow, (sent, got)
    b = settled(t, "b", "rx", lambda e: e["messages"] + e["congestion_dropped"] + e["lost"] == n)
    assert b["congestion_dropped"] > 0
    assert b["messages"] == got["received"]
    assert b["messages"] + b["congestion_dropped"] + b["lost"] == n, b


def test_rate_limit_drop(topo):
    """rate_limit with "drop": bridge A publishes at most about rate_limit
    messages a second and counts the rest as rate_dropped."""
    t = topo(congestion="drop", rate_limit=50)
    n = 400
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n, recv_args=("--idle", "3"),
                size_args=("--lo", "8", "--hi", "64"), send_args=("--delay", "0.002"))
    sent, got = result(s), result(r)
    assert got["errors"] == []
    a = settled(t, "a", "up", lambda e: e["messages"] + e["rate_dropped"] == n)
    assert a["messages"] + a["rate_dropped"] == n
    assert a["rate_dropped"] > 0
    assert a["messages"] <= 50 * (sent["seconds"] + 0.5) + 2, (a, sent)
    assert got["received"] == a["messages"]


def test_oversize_is_counted_never_truncated(topo):
    """A message larger than the destination channel's block size is not
    delivered (no truncation) and is counted."""
    t = topo(block=4096, block_b=1024)
    n = 2000
    s, r = ends(t, ("a", "fw", "up"), ("b", "app", "rx"), n, recv_args=("--idle", "3"),
                size_args=("--lo", "8", "--hi", "4096"))
    result(s)
    got = result(r)
    assert got["errors"] == []  # every delivered message is whole (CRC)
    big = sum(1 for x in T.sizes(n, 8, 4096) if x > 1024)
    assert 0 < big < n
    b = settled(t, "b", "rx", lambda e: e["oversize"] == big)
    assert (b["oversize"], b["messages"], got["received"]) == (big, n - big, n - big)


def test_status_queryable_and_config_errors(topo, tmp_path):
    """The status is also answered on a Zenoh key; a bad [[bridge]] table is
    refused with mdcom-cfg's message and exit status 2."""
    zenoh = zenoh_py()
    t = topo()
    conf = zenoh.Config.from_json5(T.zenoh_config(T.free_port(), connect=t.port_a))
    with zenoh.open(conf) as z:
        replies = []
        for _ in range(50):
            replies = [rep.ok for rep in z.get(f"{t.prefix}/status/a") if rep.ok]
            if replies:
                break
            time.sleep(0.1)
        st = json.loads(replies[0].payload.to_string())
    assert st["id"].startswith("bridge-a-") and {e["channel"] for e in st["entries"]} == \
        {"up", "down"}
    bad = tmp_path / "bad.toml"
    bad.write_text(t.toml["a"].read_text().replace('direction = "out"', 'direction = "tx"'))
    p = subprocess.run([str(T.DAEMON), str(bad)], env=T.env(),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "bridge[0] 'up'.direction: must be \"out\" (channel -> Zenoh) or \"in\"" in p.stderr


def test_plain_zenoh_publisher_is_delivered_as_foreign(topo):
    """Samples without the bridge's attachment (a plain Zenoh or ROS 2
    publisher) are delivered as they are, counted as foreign."""
    zenoh = zenoh_py()
    t = topo()
    r = t.role("recv", str(t.toml["b"]), "app", "rx", "-n", "20", "--idle", "5",
               "--lo", "8", "--hi", "512", stdout=subprocess.PIPE, text=True)
    assert r.stdout.readline().strip() == "ready"
    conf = zenoh.Config.from_json5(T.zenoh_config(T.free_port(), connect=t.port_b))
    with zenoh.open(conf) as z:
        pub = z.declare_publisher(f"{t.prefix}/up")
        time.sleep(1.0)  # the bridge's subscription reaches this session
        for i, size in enumerate(T.sizes(20, 8, 512)):
            pub.put(T.message(i, size))
        got = result(r)
    assert (got["received"], got["errors"]) == (20, [])
    b = settled(t, "b", "rx", lambda e: e["foreign"] == 20)
    assert (b["foreign"], b["messages"], b["lost"]) == (20, 20, 0)


def test_bad_option_values_are_refused(topo):
    """A malformed numeric option is refused with exit status 2 and names the
    option and the value (nothing starts with a default instead)."""
    t = topo()
    for opt, val in (("--spin-us", "abc"), ("--spin-us", "-5"), ("--poll-us", "1.5")):
        p = subprocess.run([str(T.DAEMON), opt, val, str(t.toml["a"])], env=T.env(),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (opt, val, p.returncode, p.stderr)
        assert f"argument {opt}: invalid int value: '{val}'" in p.stderr, p.stderr
