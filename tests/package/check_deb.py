# SPDX-License-Identifier: BSD-3-Clause
"""The split .deb packages (ctest deb_packages): built, checked, installed, used.

1. `cpack -G DEB` of the build tree gives one package per install component
   (cmake/install.cmake): libmdcom0, libmdcom-dev, mdcom-tools, mdcom-bench
   (when the benchmark was built), mdcom-zenoh (only when the bridge was).
2. Each package's control fields (one Version for all, the project's; the
   Depends between them; Multi-Arch; libmdcom0's shlibs) and its file list
   (dpkg-deb -c) against its role: no header or .so link in the runtime
   package, no runtime library in -dev, no command outside the tools, bench
   and bridge packages, no file in two packages.
3. libmdcom0 + libmdcom-dev + mdcom-tools installed with a real `dpkg -i`
   into a private root (dpkg --root=<dir> --force-not-root
   --force-script-chrootless): not dpkg-deb -x, so that dpkg itself checks
   what unpacking cannot: the Depends between our packages (libmdcom-dev
   alone must be refused), file conflicts between them, the control files,
   the maintainer scripts (libmdcom0's postinst runs ldconfig). The private
   root's dpkg database holds, besides ours, only the stanzas of the host
   packages that ours depend on (libc6, python3, copied from the host's
   database: there they are installed), so those are satisfied as on the
   host and no dependency is forced. Chrootless because the root has no
   /bin/sh and a non-root dpkg cannot chroot; the scripts then run with a
   recording ldconfig stub first on PATH, so the host's is never run. Works
   as root (CI) and as a user alike.
4. Two small consumer projects, written here (not examples/consumer), built
   against the installed files only and run: CMake find_package(mdcom) +
   mdcom_generate_config, and pkg-config (PKG_CONFIG_SYSROOT_DIR=<root>, as a
   sysroot build does) + the installed mdcom-cfg.

Missing dpkg-deb/dpkg/pkg-config/cc: skipped (exit 77) with the reason, a
failure under CI=true. Environment (tests/package/CMakeLists.txt):
MDCOM_BUILD_DIR, MDCOM_CMAKE, MDCOM_CPACK, MDCOM_VERSION, MDCOM_LIBDIR,
MDCOM_WITH_BENCH (1/0), MDCOM_WITH_ZENOH (1/0).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BUILD = Path(os.environ["MDCOM_BUILD_DIR"])
CMAKE = os.environ.get("MDCOM_CMAKE", "cmake")
CPACK = os.environ.get("MDCOM_CPACK", "cpack")
VERSION = os.environ["MDCOM_VERSION"]
LIBDIR = "usr/" + os.environ.get("MDCOM_LIBDIR", "lib")  # usr/lib/x86_64-linux-gnu
MULTIARCH = LIBDIR.count("/") == 2  # an arch-qualified libdir: Multi-Arch: same
WITH_BENCH = os.environ.get("MDCOM_WITH_BENCH") == "1"
WITH_ZENOH = os.environ.get("MDCOM_WITH_ZENOH") == "1"
failures = []


def run(cmd, **kw):
    kw.setdefault("check", True)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    try:
        return subprocess.run([str(c) for c in cmd], **kw)
    except subprocess.CalledProcessError as e:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))}: exit {e.returncode}\n{e.stdout}\n{e.stderr}")


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def missing(reason):
    """A prerequisite is missing: fail in CI, skip (77) elsewhere."""
    if os.environ.get("CI") == "true":
        sys.exit(f"FAIL (CI=true): {reason}")
    print(f"SKIP: {reason}")
    sys.exit(77)


def fields(deb):
    out = run(["dpkg-deb", "-f", deb]).stdout
    return dict(re.findall(r"^([\w-]+): (.*)$", out, re.M))


def files(deb):
    """{path: target or None} of the regular files and links of deb."""
    got = {}
    for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines():
        perm, rest = line[0], line.split(None, 5)[5]
        if perm == "d":
            continue
        path, _, target = rest.partition(" -> ")
        got[path.removeprefix("./")] = target or None
    return got


def pages(fl, sec):
    return [p for p in fl if p.startswith(f"usr/share/man/man{sec}/")]


def check_roles(debs):
    rt, dev, tools = (files(debs[p]) for p in ("libmdcom0", "libmdcom-dev", "mdcom-tools"))
    soname, real = f"{LIBDIR}/libmdcom.so.0", f"{LIBDIR}/libmdcom.so.{VERSION}"
    # runtime: the shared library (real file + soname link) and the copyright
    check(set(rt) == {soname, real, "usr/share/doc/libmdcom0/copyright"},
          f"libmdcom0 holds the .so.N and nothing else: {sorted(rt)}")
    check(rt.get(soname) == f"libmdcom.so.{VERSION}", f"libmdcom0: {soname} -> {rt.get(soname)}")
    # dev: headers, .so link, archives, CMake package, .pc, man3
    for f in ["usr/include/mdcom/mdcom.h", "usr/include/mdcom/wire.h", f"{LIBDIR}/libmdcom.so",
              f"{LIBDIR}/libmdcom.a", f"{LIBDIR}/pkgconfig/mdcom.pc",
              f"{LIBDIR}/cmake/mdcom/mdcomConfig.cmake", f"{LIBDIR}/cmake/mdcom/mdcomTargets.cmake",
              "usr/share/mdcom/layout-src/src/core/layout.c",
              "usr/share/doc/libmdcom-dev/copyright"]:
        check(f in dev, f"libmdcom-dev has {f}")
    check(dev.get(f"{LIBDIR}/libmdcom.so") == "libmdcom.so.0", "libmdcom-dev: libmdcom.so -> libmdcom.so.0")
    check(len(pages(dev, 3)) > 20 and "usr/share/man/man3/mdcom_init.3" in dev,
          f"libmdcom-dev has the section 3 pages ({len(pages(dev, 3))})")
    check(not [f for f in dev if re.search(r"\.so\.\d", f) or f.startswith("usr/bin/")
               or "/man1/" in f], "libmdcom-dev has no runtime library, command or section 1 page")
    check(not [f for f in rt if f.startswith("usr/include/")], "libmdcom0 has no header")
    # tools: the commands and their pages, nothing to build with
    for f in ["usr/bin/mdcom-cfg", "usr/bin/mdcom-stat", "usr/bin/mdcom-qemu",
              "usr/share/mdcom/mdcom-cfg", "usr/share/mdcom/mdcom_cfg.py",
              "usr/share/man/man1/mdcom-cfg.1", "usr/share/man/man1/mdcom-stat.1",
              "usr/share/man/man1/mdcom-qemu.1", "usr/share/doc/mdcom-tools/copyright"]:
        check(f in tools, f"mdcom-tools has {f}")
    check(not [f for f in tools if f.startswith(("usr/include/", "usr/lib/")) or "/man3/" in f
               or f.endswith(("/mdcom-bench", "/mdcom-zenoh"))],
          f"mdcom-tools has no header, library, section 3 page, benchmark or bridge")
    bin_of = {"mdcom-bench": "usr/bin/mdcom-bench", "mdcom-zenoh": "usr/bin/mdcom-zenoh"}
    for p, exe in bin_of.items():
        if p in debs:
            fl = files(debs[p])
            name = exe.rsplit("/", 1)[1]
            want = {exe, f"usr/share/man/man1/{name}.1", f"usr/share/doc/{p}/copyright"}
            check(set(fl) == want, f"{p} holds {sorted(want)}: {sorted(fl)}")
    # every file in one package only (dpkg -i would refuse the second)
    seen, twice = {}, []
    for p, deb in debs.items():
        for f in files(deb):
            if f in seen:
                twice.append(f"{f} ({seen[f]}, {p})")
            seen.setdefault(f, p)
    check(not twice, f"every file in one package only: {twice}")


def check_fields(debs):
    f = {p: fields(d) for p, d in debs.items()}
    for p, c in f.items():
        check(c.get("Version") == VERSION, f"{p}: Version {c.get('Version')} == {VERSION}")
        check(c.get("Package") == p, f"{p}: Package {c.get('Package')}")
    if MULTIARCH:
        check(f["libmdcom0"].get("Multi-Arch") == "same", "libmdcom0: Multi-Arch: same")
        check(f["libmdcom-dev"].get("Multi-Arch") == "same", "libmdcom-dev: Multi-Arch: same")
    check(f["mdcom-tools"].get("Multi-Arch") == "foreign", "mdcom-tools: Multi-Arch: foreign")
    check(f["libmdcom0"].get("Section") == "libs" and f["libmdcom-dev"].get("Section") == "libdevel",
          "sections libs / libdevel")
    dev_dep = f["libmdcom-dev"].get("Depends", "")
    check(f"libmdcom0 (= {VERSION})" in dev_dep, f"libmdcom-dev Depends on libmdcom0 (= {VERSION}): {dev_dep}")
    check(f"mdcom-tools (= {VERSION})" in dev_dep, f"libmdcom-dev Depends on mdcom-tools (= {VERSION})")
    check("libc6" in f["libmdcom0"].get("Depends", ""), "libmdcom0 Depends on libc6")
    check("python3" in f["mdcom-tools"].get("Depends", ""), "mdcom-tools Depends on python3")
    check("libmdcom0" not in f["mdcom-tools"].get("Depends", ""),
          "mdcom-tools does not depend on libmdcom0 (mdcom-stat links the static library)")
    shlibs = run(["dpkg-deb", "-I", debs["libmdcom0"], "shlibs"]).stdout.strip()
    check(shlibs == f"libmdcom 0 libmdcom0 (>= {VERSION})", f"libmdcom0 shlibs: {shlibs!r}")
    post = run(["dpkg-deb", "-I", debs["libmdcom0"], "postinst"], check=False).stdout
    check("ldconfig" in post, "libmdcom0's postinst runs ldconfig")
    for p in ("libmdcom-dev", "mdcom-tools"):
        check(run(["dpkg-deb", "-I", debs[p], "postinst"], check=False).returncode != 0,
              f"{p} has no maintainer script")


def host_stanzas(debs):
    """The host's dpkg status stanzas of the packages ours depend on (not ours)."""
    names = set()
    for d in debs:
        for alt in re.split(r"[,|]", fields(d).get("Depends", "")):
            n = alt.strip().split(" ")[0].split(":")[0]
            if n and not n.startswith(("libmdcom", "mdcom-")):
                names.add(n)
    status = Path("/var/lib/dpkg/status").read_text()
    out = []
    for st in status.split("\n\n"):
        m = re.search(r"^Package: (\S+)$", st, re.M)
        if m and m.group(1) in names and "Status: install ok installed" in st:
            out.append(st.strip())
            names.discard(m.group(1))
    if names:
        missing(f"host dpkg database lacks {sorted(names)}, which the packages depend on")
    return "\n\n".join(out) + "\n\n"


def dpkg_root(root, debs, *, ok=True):
    cmd = ["dpkg", f"--root={root}", f"--log={root}/dpkg.log", "--force-not-root",
           "--force-script-chrootless", "-i"] + list(debs)
    stub = root.parent / "stub"
    r = run(cmd, check=False, env=dict(os.environ, PATH=f"{stub}:{os.environ['PATH']}"))
    if ok and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}")
    return r


def install(tmp, debs):
    root = tmp / "root"
    admin = root / "var/lib/dpkg"
    for d in ("updates", "info", "triggers"):
        (admin / d).mkdir(parents=True)
    use = [debs[p] for p in ("libmdcom0", "libmdcom-dev", "mdcom-tools")]
    (admin / "status").write_text(host_stanzas(use))
    # libmdcom0's postinst runs ldconfig. Run chrootless (as dpkg must
    # without root, and the root has no /bin/sh) with DPKG_ROOT=<root>, the
    # scripts find this recording stub first on PATH instead of the host's
    # ldconfig, so the host's cache is never touched.
    stub = tmp / "stub"
    stub.mkdir()
    for prog in ("ldconfig", "start-stop-daemon"):  # dpkg wants both on PATH
        (stub / prog).write_text(f'#!/bin/sh\necho "{prog} $*" >> "{tmp}/stub.log"\n')
        (stub / prog).chmod(0o755)
    r = dpkg_root(root, [debs["libmdcom-dev"]], ok=False)
    check(r.returncode != 0 and "libmdcom0" in r.stderr,
          "dpkg -i libmdcom-dev alone is refused for want of libmdcom0")
    # (that left libmdcom-dev unpacked and unconfigured; with its dependencies it configures)
    dpkg_root(root, use)
    st = run(["dpkg-query", f"--admindir={admin}", "-W", "-f", "${Package} ${Version} ${Status}\n"]).stdout
    for p in ("libmdcom0", "libmdcom-dev", "mdcom-tools"):
        check(f"{p} {VERSION} install ok installed" in st, f"dpkg: {p} installed in the private root")
    log = (tmp / "stub.log").read_text() if (tmp / "stub.log").exists() else ""
    check(log.strip() == "ldconfig", f"the postinst ran ldconfig once: {log!r}")
    # stripped as Debian ships them: no .symtab (the dynamic symbols stay)
    if shutil.which("readelf"):
        for f in (f"{LIBDIR}/libmdcom.so.{VERSION}", "usr/bin/mdcom-stat", "usr/bin/mdcom-qemu"):
            sections = run(["readelf", "-S", "-W", root / f]).stdout
            check(".symtab" not in sections, f"{f} is stripped")
    listed = run(["dpkg", f"--root={root}", "-L", "libmdcom0"]).stdout
    check(f"/{LIBDIR}/libmdcom.so.0" in listed, "dpkg -L libmdcom0 lists the soname link")
    return root


TOML = """[region]
name = "pkgt"

[[domain]]
name = "me"
id = 0
role = "master"

[[fifo]]
name = "loop"
block_size = 64
block_count = 4
senders = ["me"]
receivers = ["me"]
"""
MAIN = r"""/* a downstream program: one message through a FIFO of its own region */
#include <stdio.h>
#include <string.h>
#include <mdcom/mdcom.h>
#include "pkgt_cfg.h"
int main(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *ch;
    char buf[16] = "";
    if (mdcom_init(&m, &pkgt_config, PKGT_DOM_ME, NULL) || mdcom_fifoch_open(m, "loop", &ch) ||
        mdcom_fifoch_send(ch, "from-deb", 9, MDCOM_POLL) ||
        mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL) != 9)
        return 1;
    mdcom_term(m);
    printf("pkgt: %s %s\n", buf, MDCOM_VERSION_STRING);
    return strcmp(buf, "from-deb") != 0;
}
"""
CML = """cmake_minimum_required(VERSION 3.20)
project(pkgt LANGUAGES C)
find_package(mdcom %s EXACT REQUIRED)
mdcom_generate_config(pkgt_cfg ${CMAKE_CURRENT_SOURCE_DIR}/pkgt.toml)
add_executable(pkgt main.c)
target_link_libraries(pkgt PRIVATE pkgt_cfg mdcom::mdcom)
"""


def consumers(tmp, root):
    src = tmp / "consumer"
    src.mkdir()
    (src / "pkgt.toml").write_text(TOML)
    (src / "main.c").write_text(MAIN)
    (src / "CMakeLists.txt").write_text(CML % VERSION)
    usr = root / "usr"
    lib = root / LIBDIR
    env = dict(os.environ, PATH=f"{usr / 'bin'}:{os.environ['PATH']}")
    # CMake: the package of the installed root only (no build tree, no host install)
    b = tmp / "cmake-build"
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    run([CMAKE, "-S", src, "-B", b, f"-DCMAKE_PREFIX_PATH={usr}", "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
         "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF", *gen], env=env)
    cache = (b / "CMakeCache.txt").read_text()
    check(f"mdcom_DIR:PATH={lib}/cmake/mdcom" in cache, "find_package(mdcom) found the installed package")
    run([CMAKE, "--build", b], env=env)
    ldd = run(["ldd", b / "pkgt"]).stdout
    check(f"{lib}/libmdcom.so.0" in ldd, "the CMake consumer links the installed libmdcom.so.0")
    shm = tmp / "shm"
    shm.mkdir()
    out = run([b / "pkgt"], env=dict(env, MDCOM_SHM_DIR=str(shm)), timeout=60).stdout
    check(f"pkgt: from-deb {VERSION}" in out, f"CMake consumer ran: {out.strip()}")
    # pkg-config in a sysroot: the .pc says /usr, PKG_CONFIG_SYSROOT_DIR puts the root before it
    pcenv = dict(env, PKG_CONFIG_LIBDIR=str(lib / "pkgconfig"), PKG_CONFIG_SYSROOT_DIR=str(root))
    flags = run(["pkg-config", "--cflags", "--libs", "mdcom"], env=pcenv).stdout.split()
    check(f"-I{usr}/include" in flags and f"-L{lib}" in flags, f"pkg-config: {flags}")
    gen_dir = tmp / "pc-gen"
    run([usr / "bin" / "mdcom-cfg", "generate", src / "pkgt.toml", "--out-dir", gen_dir], env=env)
    exe = tmp / "pkgt-pc"
    run([os.environ.get("CC", "cc"), "-std=c11", f"-I{gen_dir}", src / "main.c",
         gen_dir / "pkgt_cfg.c", "-o", exe, *flags])
    out = run([exe], env=dict(env, MDCOM_SHM_DIR=str(shm), LD_LIBRARY_PATH=str(lib)), timeout=60).stdout
    check(f"pkgt: from-deb {VERSION}" in out, f"pkg-config consumer ran: {out.strip()}")
    ver = run([usr / "bin" / "mdcom-stat", "--version"], env=env).stdout
    check(VERSION in ver, f"installed mdcom-stat --version: {ver.strip()}")


def main():
    for tool, pkg in (("dpkg-deb", "dpkg"), ("dpkg", "dpkg"), ("pkg-config", "pkg-config"),
                      (os.environ.get("CC", "cc"), "gcc")):
        if not shutil.which(tool):
            missing(f"{tool} not found (Debian package {pkg}; scripts/deps.sh installs it)")
    if not Path("/var/lib/dpkg/status").exists():
        missing("no dpkg database on this host (not Debian-based)")
    tmp = Path(tempfile.mkdtemp(prefix="deb-", dir=os.environ.get("MDCOM_TEST_TMP")))
    try:
        out = tmp / "deb"
        run([CPACK, "-G", "DEB", "-B", out, "--config", BUILD / "CPackConfig.cmake"], cwd=BUILD)
        debs = {}
        for d in sorted(out.glob("*.deb")):
            debs[fields(d)["Package"]] = d
            print(f"     {d.name} {d.stat().st_size} bytes")
        want = {"libmdcom0", "libmdcom-dev", "mdcom-tools"} | ({"mdcom-bench"} if WITH_BENCH else set()) \
            | ({"mdcom-zenoh"} if WITH_ZENOH else set())
        check(set(debs) == want, f"packages {sorted(debs)} == {sorted(want)}")
        if not want <= set(debs):
            sys.exit("FAIL: packages missing")
        check_fields(debs)
        check_roles(debs)
        root = install(tmp, debs)
        consumers(tmp, root)
    finally:
        if not failures and not os.environ.get("MDCOM_KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        sys.exit(f"FAIL: {len(failures)} check(s): " + "; ".join(failures))
    print("deb_packages: ok")


if __name__ == "__main__":
    main()
