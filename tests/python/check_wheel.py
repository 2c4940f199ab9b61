# SPDX-License-Identifier: BSD-3-Clause
"""The Python wheel of bindings/python (ctest python_wheel): built, installed, used.

1. `python -m build --wheel --no-isolation` (PyPI's build, with the
   interpreter's setuptools and wheel: no network at test time) of a copy of
   bindings/python (so the source tree gets no build/ or .egg-info, and the
   _cfg.py symlink is resolved into a file), outside the source tree.
2. The wheel is pure (mdcom-<VERSION>-py3-none-any.whl: ctypes, no compiled
   code, no bundled libmdcom.so: the library comes from the system, libmdcom0,
   found by its soname, docs/python.md) and holds the package, mdcom/_cfg.py
   as a copy of tools/mdcom_cfg.py, py.typed, the LICENSE and the version.
3. A fresh venv (python -m venv, pip from ensurepip), `pip install --no-index
   --no-deps` of the wheel, then two processes of that venv's python, started
   in a directory away from the source tree with neither PYTHONPATH nor
   MDCOM_LIB, attach to one region as domains "a" (master) and "b" and
   exchange a message each way. libmdcom is found by the dynamic loader by
   its soname, libmdcom.so.0 (LD_LIBRARY_PATH: the build tree's, standing for
   an installed libmdcom0); each process checks that it imported mdcom from
   the venv's site-packages.

Missing build/wheel/setuptools/venv: skipped (exit 77) with the reason, a
failure under CI=true. Environment (tests/python/CMakeLists.txt):
MDCOM_SOURCE_DIR, MDCOM_LIB_DIR (the directory of libmdcom.so.0), MDCOM_VERSION.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

SRC = Path(os.environ["MDCOM_SOURCE_DIR"])
LIB_DIR = Path(os.environ["MDCOM_LIB_DIR"])
VERSION = os.environ["MDCOM_VERSION"]


def missing(reason):
    """A prerequisite is missing: fail in CI, skip (77) elsewhere."""
    if os.environ.get("CI") == "true":
        sys.exit(f"FAIL (CI=true): {reason}")
    print(f"SKIP: {reason}")
    sys.exit(77)


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    r = subprocess.run([str(c) for c in cmd], **kw)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


TOML = """[region]
name = "%s"

[[domain]]
name = "a"
id = 0
role = "master"

[[domain]]
name = "b"
id = 1
role = "remote"

[[fifo]]
name = "a2b"
block_size = 64
block_count = 4
senders = ["a"]
receivers = ["b"]

[[fifo]]
name = "b2a"
block_size = 64
block_count = 4
senders = ["b"]
receivers = ["a"]
"""
# one program for both ends: argv = toml domain site-packages
ROLE = textwrap.dedent("""
    import sys, importlib.metadata
    import mdcom
    toml, dom, site = sys.argv[1:]
    assert mdcom.__file__.startswith(site), f"mdcom imported from {mdcom.__file__}, not {site}"
    assert importlib.metadata.version("mdcom") == "%s", importlib.metadata.version("mdcom")
    with mdcom.System(toml, dom, attach_timeout=20) as s:
        if dom == "a":
            assert s.fifo("a2b").send(b"ping from a", timeout=20)
            got = s.fifo("b2a").recv(timeout=20)
        else:
            got = s.fifo("a2b").recv(timeout=20)
            assert s.fifo("b2a").send(got.replace(b"ping", b"pong").replace(b"a", b"b"), timeout=20)
    print(dom, got.decode(), mdcom.__file__)
""")


def main():
    py = sys.executable
    for mod, pkg in (("build", "build (PyPI; scripts/deps.sh installs it)"),
                     ("wheel", "wheel (PyPI; scripts/deps.sh installs it)"),
                     ("setuptools", "setuptools"), ("venv", "python3-venv"),
                     ("ensurepip", "python3-venv")):
        if subprocess.run([py, "-c", f"import {mod}"], capture_output=True).returncode:
            missing(f"python module {mod} not found for {py} ({pkg})")
    if not (LIB_DIR / "libmdcom.so.0").exists():
        sys.exit(f"FAIL: {LIB_DIR}/libmdcom.so.0 not built")
    tmp = Path(tempfile.mkdtemp(prefix="wheel-", dir=os.environ.get("MDCOM_TEST_TMP")))
    ok = False
    try:
        # 1. build from a copy (symlinks resolved: _cfg.py becomes a file)
        copy = tmp / "src"
        shutil.copytree(SRC / "bindings" / "python", copy, symlinks=False)
        dist = tmp / "dist"
        run([py, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, copy])
        wheels = list(dist.glob("*.whl"))
        want = f"mdcom-{VERSION}-py3-none-any.whl"
        if [w.name for w in wheels] != [want]:
            sys.exit(f"FAIL: wheels {[w.name for w in wheels]}, want [{want}]")
        whl = wheels[0]
        # 2. its contents
        with zipfile.ZipFile(whl) as z:
            names = z.namelist()
            cfg = z.read("mdcom/_cfg.py")
            meta = z.read(f"mdcom-{VERSION}.dist-info/METADATA").decode()
        for f in ("mdcom/__init__.py", "mdcom/_cfg.py", "mdcom/py.typed",
                  f"mdcom-{VERSION}.dist-info/LICENSE"):
            if f not in names:
                sys.exit(f"FAIL: {f} not in the wheel: {names}")
        if cfg != (SRC / "tools" / "mdcom_cfg.py").read_bytes():
            sys.exit("FAIL: the wheel's mdcom/_cfg.py is not tools/mdcom_cfg.py")
        if [n for n in names if ".so" in n]:
            sys.exit(f"FAIL: the pure wheel holds a shared library: {names}")
        if f"Version: {VERSION}\n" not in meta:
            sys.exit(f"FAIL: METADATA version is not {VERSION}")
        print(f"ok   {whl.name} ({whl.stat().st_size} bytes): {sorted(names)}")
        # 3. a fresh venv, the wheel installed into it, two processes
        venv = tmp / "venv"
        run([py, "-m", "venv", venv])
        vpy = venv / "bin" / "python"
        run([vpy, "-m", "pip", "install", "-q", "--no-index", "--no-deps", whl])
        site = run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
        work = tmp / "work"  # away from the source tree: no ./mdcom to import by accident
        shm = work / "shm"
        shm.mkdir(parents=True)
        toml = work / "pair.toml"
        toml.write_text(TOML % f"whl{os.getpid()}")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MDCOM_LIB", "PYTHONHOME")}
        env.update(MDCOM_SHM_DIR=str(shm), PYTHONNOUSERSITE="1",
                   LD_LIBRARY_PATH=f"{LIB_DIR}:{os.environ.get('LD_LIBRARY_PATH', '')}".rstrip(":"))
        role = ROLE % VERSION
        procs = {d: subprocess.Popen([vpy, "-c", role, toml, d, site], cwd=work, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for d in ("a", "b")}
        outs = {}
        for d, p in procs.items():
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                for q in procs.values():
                    q.kill()
                sys.exit(f"FAIL: process {d} hung")
            if p.returncode != 0:
                sys.exit(f"FAIL: process {d} exit {p.returncode}\n{out}\n{err}")
            outs[d] = out.strip()
            print(f"ok   process {d}: {outs[d]}")
        if not (outs["a"].startswith("a pong from b ") and outs["b"].startswith("b ping from a ")):
            sys.exit(f"FAIL: messages {outs}")
        if list(shm.iterdir()):
            sys.exit(f"FAIL: the region was left behind: {list(shm.iterdir())}")
        ok = True
    finally:
        if ok and not os.environ.get("MDCOM_KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    print("python_wheel: ok")


if __name__ == "__main__":
    main()
