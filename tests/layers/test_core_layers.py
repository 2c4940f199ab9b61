# SPDX-License-Identifier: BSD-3-Clause
"""scripts/core-layers on this build's core, and on small objects that break it.

  - the full core (mdcom_core) and the remote-only profile (mdcom_core_remote)
    of this build call only downward in the layers of src/core/internal.h,
    with exactly the up-calls listed there;
  - the check fails on a two-way pair, on a call to a higher layer that is
    not listed, and on a listed up-call that nothing makes (a stale list):
    objects compiled here from a few lines of C, with a header of their own.
Environment (tests/layers/CMakeLists.txt): MDCOM_SOURCE_DIR, MDCOM_CC,
MDCOM_NM, MDCOM_CORE_FULL, MDCOM_CORE_REMOTE.
"""
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(os.environ["MDCOM_SOURCE_DIR"])
CC = os.environ.get("MDCOM_CC", "cc")
NM = os.environ.get("MDCOM_NM") or "nm"
CHECK = SRC / "scripts" / "core-layers"


def run_check(*args):
    return subprocess.run([sys.executable, str(CHECK), "--nm", NM, *map(str, args)],
                          capture_output=True, text=True)


def test_this_build_is_layered():
    r = run_check(os.environ["MDCOM_CORE_FULL"], os.environ["MDCOM_CORE_REMOTE"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 builds" in r.stdout


HEADER = """/*
 * Layers of the core.
 *   layer 1: low
 *   layer 2: mid
 *   layer 3: top
 *%s
 */
"""
# each file defines f_<name>; calls: name -> [names it calls]
def build(tmp: Path, calls, upcalls=""):
    core = tmp / "core"
    core.mkdir()
    (core / "internal.h").write_text(HEADER % upcalls)
    objs = tmp / "objs"
    objs.mkdir()
    for name in ("low", "mid", "top"):
        callees = calls.get(name, [])
        decls = "".join(f"int f_{c}(void);\n" for c in callees)
        body = " + ".join([f"f_{c}()" for c in callees] or ["0"])
        src = core / f"{name}.c"
        src.write_text(f"{decls}int f_{name}(void);\nint f_{name}(void) {{ return {body}; }}\n")
        subprocess.run([CC, "-c", "-o", objs / f"{name}.c.o", src], check=True)
    return core / "internal.h", objs


def test_downward_calls_pass(tmp_path):
    header, objs = build(tmp_path, {"top": ["mid", "low"], "mid": ["low"]})
    r = run_check("--header", header, objs)
    assert r.returncode == 0, r.stdout + r.stderr


def test_two_way_pair_fails(tmp_path):
    header, objs = build(tmp_path, {"top": ["mid"], "mid": ["low", "top"]})
    r = run_check("--header", header, objs)
    assert r.returncode == 1
    assert "two-way pair mid <-> top" in r.stderr


def test_call_up_a_cycle_fails(tmp_path):
    # no two-way pair, but low -> top goes up: a cycle of three
    header, objs = build(tmp_path, {"top": ["mid"], "mid": ["low"], "low": ["top"]})
    r = run_check("--header", header, objs)
    assert r.returncode == 1
    assert "low (layer 1) calls top (layer 3)" in r.stderr


def test_listed_up_call_passes_and_others_fail(tmp_path):
    header, objs = build(tmp_path, {"top": ["mid"], "mid": ["low", "top"]},
                         "\n *   up-call: mid -> top: f_top")
    r = run_check("--header", header, objs)
    assert r.returncode == 0, r.stdout + r.stderr


def test_stale_up_call_fails(tmp_path):
    header, objs = build(tmp_path, {"top": ["mid"], "mid": ["low"]},
                         "\n *   up-call: mid -> top: f_top")
    r = run_check("--header", header, objs)
    assert r.returncode == 1
    assert "up-call mid -> top is listed, but mid does not call top" in r.stderr


def test_unlisted_symbol_of_an_up_call_fails(tmp_path):
    header, objs = build(tmp_path, {"top": ["mid"], "mid": ["low", "top"]},
                         "\n *   up-call: mid -> top: f_other")
    r = run_check("--header", header, objs)
    assert r.returncode == 1
    assert "also takes f_top" in r.stderr
