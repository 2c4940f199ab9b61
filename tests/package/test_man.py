# SPDX-License-Identifier: BSD-3-Clause
"""Every exported function and every installed command has a man page (pytest,
run by ctest as man_pages).

Installs the build tree (cmake --install) into a temporary prefix, then asks
man(1) with MANPATH=<prefix>/share/man only: `man -w 3 <function>` for each
function libmdcom.so exports (nm -D --defined-only) and `man -w 1 <command>`
for each file of <prefix>/bin. A page that is a ".so man3/<page>" link must
point at a page that is installed. Fails listing everything missing.
Environment (tests/package/CMakeLists.txt): MDCOM_BUILD_DIR, MDCOM_CMAKE.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD = Path(os.environ["MDCOM_BUILD_DIR"])
CMAKE = os.environ.get("MDCOM_CMAKE", "cmake")


def missing(reason: str) -> None:
    """A prerequisite is missing: fail in CI, skip elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    for tool, pkg in (("man", "man-db"), ("scdoc", "scdoc"), ("nm", "binutils")):
        if not shutil.which(tool):
            missing(f"{tool} not found (Debian package {pkg}; scripts/deps.sh installs it)")
    p = tmp_path_factory.mktemp("prefix")
    subprocess.run([CMAKE, "--install", str(BUILD), "--prefix", str(p)], check=True,
                   capture_output=True, text=True)
    return p


def exported_functions(prefix: Path) -> list[str]:
    libs = sorted(prefix.glob("lib*/**/libmdcom.so"))
    assert libs, f"no libmdcom.so under {prefix}"
    out = subprocess.run(["nm", "-D", "--defined-only", str(libs[0])], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[-2] in "TW":
            names.add(parts[-1].partition("@")[0])
    assert len(names) > 40, names  # nm found the API
    return sorted(names)


def man_page(prefix: Path, section: str, name: str) -> Path | None:
    """The file man -w finds for name in section, looking in the prefix only."""
    env = dict(os.environ, MANPATH=str(prefix / "share" / "man"), LC_ALL="C")
    r = subprocess.run(["man", "-w", section, name], env=env, capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return None
    return Path(r.stdout.split()[0])


def broken_link(prefix: Path, page: Path) -> str:
    """'' when page is a page or a .so link to an installed page."""
    first = page.read_text(errors="replace").split("\n", 1)[0]
    if not first.startswith(".so "):
        return ""
    target = prefix / "share" / "man" / first[4:].strip()
    return "" if target.is_file() else f"{page.name} -> {first[4:].strip()} (not installed)"


def test_every_exported_function_has_a_man_page(prefix):
    absent, broken = [], []
    for fn in exported_functions(prefix):
        page = man_page(prefix, "3", fn)
        if page is None:
            absent.append(fn)
        elif broken_link(prefix, page):
            broken.append(broken_link(prefix, page))
    assert not absent and not broken, (
        f"exported functions without a man page ({len(absent)}): {' '.join(absent)}; "
        f"links to pages that are not installed: {broken} "
        "(list the function in the NAME section of its header's docs/man/*.3.scd)")


def test_every_installed_command_has_a_man_page(prefix):
    cmds = sorted(p.name for p in (prefix / "bin").iterdir())
    assert "mdcom-cfg" in cmds and "mdcom-stat" in cmds, cmds
    absent = [c for c in cmds if man_page(prefix, "1", c) is None]
    assert not absent, f"installed commands without a man page: {' '.join(absent)} (docs/man/<command>.1.scd)"
