# SPDX-License-Identifier: BSD-3-Clause
"""Python <-> firmware: the Python package (bindings/python) against the
mdcom firmware on a Cortex-M4 under QEMU, through the region file both map
(m4_py_client.py, run by the launcher mdcom-qemu). Skipped without
qemu-system-arm or the firmware image. ctest sets MDCOM_M4_FW, MDCOM_QEMU_CMD,
MDCOM_M4_TOML, MDCOM_LIB and PYTHONPATH."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent


def test_python_talks_to_the_firmware():
    fw, launcher = os.environ.get("MDCOM_M4_FW", ""), os.environ.get("MDCOM_QEMU_CMD", "")
    if not (os.environ.get("MDCOM_QEMU") or shutil.which("qemu-system-arm")):
        pytest.skip("qemu-system-arm not found")
    if not (fw and os.path.exists(fw) and launcher and os.path.exists(launcher)):
        pytest.skip(f"no firmware image or launcher (MDCOM_M4_FW={fw!r}, MDCOM_QEMU_CMD={launcher!r})")
    p = subprocess.run([launcher, "--firmware", fw, "--timeout", "240", "--",
                        sys.executable, str(HERE / "m4_py_client.py"), os.environ["MDCOM_M4_TOML"]],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert "2000 echoes" in p.stdout
