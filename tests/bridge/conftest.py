# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures shared by the bridge tests of this folder."""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bridge" / "zenoh"))
import topology as T  # noqa: E402


@pytest.fixture
def topo(tmp_path):
    """topo(**kw): a two-region topology (bridge/zenoh/topology.py) with both
    keepers and both bridges running and connected; closed at the end."""
    made = []

    def make(**kw) -> T.Topology:
        t = T.Topology(tmp_path, tag=str(len(made)), **kw)
        made.append(t)
        t.start_keepers()
        t.start_bridge("a")
        t.start_bridge("b")
        t.wait_connected()
        return t
    yield make
    for t in made:
        t.close()
