# SPDX-License-Identifier: BSD-3-Clause
"""The ctypes Structures of bindings/python against the C headers: a C
program, generated from the Structures' own field names and compiled against
include/ with the build's C compiler ($MDCOM_CC, set by
tests/python/CMakeLists.txt; else $CC, else cc), prints sizeof, _Alignof and
every field's offsetof and size. Each must equal what ctypes computes, so a
field of the wrong type, order or name, or a missing trailing field, fails.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import shutil
import subprocess

import pytest

import mdcom

HERE = pathlib.Path(__file__).parent
INCLUDE = pathlib.Path(os.environ.get("MDCOM_INCLUDE_DIR", HERE.parent.parent / "include"))

# Each Structure the binding mirrors, and the C type it mirrors.
MIRRORS = {
    "_DomainCfg": "mdcom_domain_cfg",
    "_ChannelCfg": "mdcom_channel_cfg",
    "_Config": "mdcom_config",
    "_InitOpts": "mdcom_init_opts",
}


def structures() -> dict[str, type]:
    return {n: v for n, v in vars(mdcom).items()
            if isinstance(v, type) and issubclass(v, (ctypes.Structure, ctypes.Union))
            and v.__module__ == mdcom.__name__}


def test_every_structure_is_checked() -> None:
    """A new Structure in the binding needs its C type in MIRRORS."""
    assert sorted(structures()) == sorted(MIRRORS)


def c_layout(tmp_path: pathlib.Path) -> dict[str, int]:
    """What the C compiler says: "T size N", "T align N", "T.f N", "T.f size N"."""
    cc = os.environ.get("MDCOM_CC") or os.environ.get("CC") or "cc"
    if not os.environ.get("MDCOM_CC") and not shutil.which(cc.split()[0]):
        pytest.skip(f"no C compiler ({cc}); set MDCOM_CC")
    src = ["#include <stddef.h>", "#include <stdio.h>", '#include "mdcom/mdcom.h"',
           "int main(void)", "{"]
    for py, c in MIRRORS.items():
        src.append(f'    printf("{c} size %zu\\n", sizeof({c}));')
        src.append(f'    printf("{c} align %zu\\n", _Alignof({c}));')
        for f, *_ in structures()[py]._fields_:
            src.append(f'    printf("{c}.{f} %zu\\n", offsetof({c}, {f}));')
            src.append(f'    printf("{c}.{f} size %zu\\n", sizeof((({c} *)0)->{f}));')
    src += ["    return 0;", "}", ""]
    (tmp_path / "layout.c").write_text("\n".join(src))
    exe = tmp_path / "layout"
    r = subprocess.run([*cc.split(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE),
                        "-o", str(exe), str(tmp_path / "layout.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{cc} (a field the headers do not have?):\n{r.stderr}"
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.rsplit(" ", 1) for line in out.splitlines())}


def py_layout() -> dict[str, int]:
    got: dict[str, int] = {}
    for py, c in MIRRORS.items():
        s = structures()[py]
        got[f"{c} size"] = ctypes.sizeof(s)
        got[f"{c} align"] = ctypes.alignment(s)
        for f, *_ in s._fields_:
            d = getattr(s, f)
            got[f"{c}.{f}"] = d.offset
            got[f"{c}.{f} size"] = d.size
    return got


def test_structures_match_c_headers(tmp_path: pathlib.Path) -> None:
    want, got = c_layout(tmp_path), py_layout()
    diff = {k: (got[k], want[k]) for k in want if got.get(k) != want[k]}
    assert not diff, f"ctypes (binding) vs C (headers): {diff}"
