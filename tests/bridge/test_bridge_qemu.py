# SPDX-License-Identifier: BSD-3-Clause
"""(b) with the real firmware: the Cortex-M4 firmware of region A (mdcom-fw-resp
under QEMU mps2-an386, run by mdcom-qemu) sends on its FIFO "echo_out" ->
bridge A -> Zenoh (TCP, 127.0.0.1) -> bridge B -> FIFO "rx" of region B -> a
Linux receiver, checked by sequence number, length and CRC-32 (qemu_side.py).

Skipped without qemu-system-arm, the firmware image or the launcher. ctest
sets MDCOM_M4_FW, MDCOM_QEMU_CMD, MDCOM_M4_TOML, MDCOM_ZENOH, MDCOM_LIB and
PYTHONPATH.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "bridge" / "zenoh"))
import topology as T  # noqa: E402

N = int(os.environ.get("MDCOM_BRIDGE_QEMU_MESSAGES", "2000"))

_BRIDGE_A = """
[[bridge]]
channel = "echo_out"
direction = "out"
key = "{prefix}/up"
domain = "linux"
"""



def test_b_qemu_firmware_to_linux_process(tmp_path):
    fw, launcher = os.environ.get("MDCOM_M4_FW", ""), os.environ.get("MDCOM_QEMU_CMD", "")
    if not (os.environ.get("MDCOM_QEMU") or shutil.which("qemu-system-arm")):
        pytest.skip("qemu-system-arm not found")
    if not (fw and os.path.exists(fw) and launcher and os.path.exists(launcher)):
        pytest.skip(f"no firmware image or launcher (MDCOM_M4_FW={fw!r}, MDCOM_QEMU_CMD={launcher!r})")
    if not os.access(T.DAEMON, os.X_OK):
        pytest.skip(f"{T.DAEMON} not built")
    uniq = f"{os.getpid()}"
    prefix = f"mdcom/test/qemu{uniq}"
    toml_a = tmp_path / "a.toml"
    toml_a.write_text(pathlib.Path(os.environ["MDCOM_M4_TOML"]).read_text()
                      + _BRIDGE_A.format(prefix=prefix))
    name_b = f"mdzQB{uniq}"
    toml_b = tmp_path / "b.toml"
    # region B: the bridge tests' own (its "rx" FIFO of 512-B blocks fed by
    # bridge B from {prefix}/up; the "tx" direction stays idle here)
    toml_b.write_text(T._REGION_B.format(name=name_b, prefix=prefix, block_b=512, block=512,
                                         count=16, congestion="block"))
    port_a, port_b = T.free_port(), T.free_port()
    za, zb = tmp_path / "zenoh-a.json5", tmp_path / "zenoh-b.json5"
    za.write_text(T.zenoh_config(port_a))
    zb.write_text(T.zenoh_config(port_b, connect=port_a))
    procs: list[subprocess.Popen] = []
    try:
        keeper = subprocess.Popen([sys.executable, str(REPO / "bridge" / "zenoh" / "topology.py"),
                                   "keeper", str(toml_b)], env=T.env())
        procs.append(keeper)
        bridge_b = subprocess.Popen([str(T.DAEMON), str(toml_b), "-z", str(zb), "--id",
                                     "bridge-b-qemu", "-s", str(tmp_path / "status-b.json")],
                                    env=T.env())
        procs.append(bridge_b)
        rx = subprocess.Popen([sys.executable, str(HERE / "qemu_side.py"), "check", str(toml_b),
                               str(N)], env=T.env(), stdout=subprocess.PIPE, text=True)
        procs.append(rx)
        assert rx.stdout.readline().strip() == "ready"
        feed = subprocess.run([launcher, "--firmware", fw, "--timeout", "200", "--",
                               sys.executable, str(HERE / "qemu_side.py"), "feed", str(toml_a),
                               str(za), str(tmp_path / "status-a.json"), prefix, str(N)],
                              env=T.env(), capture_output=True, text=True, timeout=240)
        assert feed.returncode == 0, f"exit {feed.returncode}\n{feed.stdout}\n{feed.stderr}"
        a = json.loads(feed.stdout.strip().splitlines()[-1])
        got = json.loads(rx.stdout.readline())
        assert rx.wait(timeout=30) == 0, got
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    # the firmware received every message intact (its own seq + CRC check) and echoed it
    assert (a["firmware"]["status"], a["firmware"]["count"], a["firmware"]["bad"]) == (0, N, 0), a
    # bridge A published every message the firmware sent, bridge B delivered them all
    assert (a["bridge_a"]["messages"], a["bridge_a"]["errors"]) == (N, 0), a
    assert got == {"received": N, "errors": []}
    st = json.loads((tmp_path / "status-b.json").read_text())["entries"][0]
    assert (st["messages"], st["lost"], st["duplicates"]) == (N, 0, 0), st
    print(f"\n(b, QEMU) {N} messages firmware -> bridge A -> bridge B -> Linux, "
          f"firmware time {a['firmware']['elapsed_us'] / 1e6:.1f} s")
