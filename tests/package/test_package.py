# SPDX-License-Identifier: BSD-3-Clause
"""The installed mdcom as a downstream user sees it (pytest, run by ctest).

Installs the build tree (cmake --install) into a temporary prefix, then:
  - nm -D of the installed libmdcom.so exports exactly the functions the
    installed public headers declare, in version node MDCOM_0; soname .so.0
  - examples/consumer builds against the prefix with find_package(mdcom) +
    mdcom_generate_config(), and with pkg-config + mdcom-cfg alone; both run
  - a project's mdcom_generate_config(... LAYOUT) computes the layout on the
    build host with the installed layout code, and it attaches
  - the installed commands answer --version
  - the installed C++ headers (<mdcom/mdcom.hpp>, events.hpp) compile alone (C++17, C++20)
  - a copy of the tree elsewhere still builds the consumer (find_package;
    pkg-config --define-variable=prefix=<new place>)
  - README.md's CMake and pkg-config blocks, pasted into a project, build a
    program that runs
  (the .deb packages: check_deb.py, ctest deb_packages)
Environment (set by tests/package/CMakeLists.txt): MDCOM_BUILD_DIR,
MDCOM_SOURCE_DIR, MDCOM_CMAKE, MDCOM_CXX, MDCOM_VERSION.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD = Path(os.environ["MDCOM_BUILD_DIR"])
SRC = Path(os.environ["MDCOM_SOURCE_DIR"])
CMAKE = os.environ.get("MDCOM_CMAKE", "cmake")
CXX = os.environ.get("MDCOM_CXX", "c++")
VERSION = os.environ["MDCOM_VERSION"]
CONSUMER = SRC / "examples" / "consumer"
HEADERS = ["mdcom.h", "platform.h", "rpmsg.h", "events.h", "linux_soc.h", "wire.h"]


def run(cmd, **kw):
    kw.setdefault("check", True)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    r = subprocess.run([str(c) for c in cmd], **kw)
    return r


def libdir(prefix: Path) -> Path:
    hits = sorted(prefix.glob("lib*/**/libmdcom.so"))
    assert hits, f"no libmdcom.so under {prefix}"
    return hits[0].parent


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    run([CMAKE, "--install", BUILD, "--prefix", p])
    return p


def declared_functions(header_dir: Path):
    """Functions declared between MDCOM_API_BEGIN and MDCOM_API_END of the
    public headers, minus those of ports other than linux (a declaration
    followed by a comment naming ports/<other>)."""
    names = set()
    for h in HEADERS:
        text = (header_dir / h).read_text()
        m = re.search(r"MDCOM_API_BEGIN(.*)MDCOM_API_END", text, re.S)
        assert m, f"{h}: no MDCOM_API_BEGIN ... MDCOM_API_END block"
        body = m.group(1)
        other_port = set(re.findall(r"(mdcom_\w+)\s*\([^;]*;\s*/\*\s*ports/(?!linux)\w+", body))
        body = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
        body = re.sub(r"//[^\n]*", " ", body)
        body = re.sub(r"^\s*#.*(?:\\\n.*)*$", " ", body, flags=re.M)
        while True:  # drop struct/enum bodies (their function pointers are no exports)
            b2 = re.sub(r"\{[^{}]*\}", " ", body)
            if b2 == body:
                break
            body = b2
        for stmt in body.split(";"):
            s = " ".join(stmt.split())
            if not s or s.startswith("typedef"):
                continue
            fm = re.match(r"^[^()]*?\b(mdcom_\w+)\s*\(", s)
            if fm:
                names.add(fm.group(1))
        names -= other_port
    return names


def test_exports_match_public_headers(prefix):
    lib = libdir(prefix) / "libmdcom.so"
    want = declared_functions(prefix / "include" / "mdcom")
    assert len(want) > 40, want  # the parser found the API
    out = run(["nm", "-D", "--defined-only", lib]).stdout
    got, versions, other = set(), set(), []
    for line in out.splitlines():
        parts = line.split()
        sym, kind = parts[-1], parts[-2]
        if kind == "A":  # the version node itself
            versions.add(sym)
            continue
        name, _, ver = sym.partition("@@")
        if kind in "TW" and ver:
            got.add(name)
            versions.add(ver)
        else:
            other.append(line)
    assert not other, f"unexpected exported symbols: {other}"
    assert got - want == set(), f"exported but not public: {sorted(got - want)}"
    assert want - got == set(), f"public but not exported: {sorted(want - got)}"
    assert versions == {"MDCOM_0"}


def test_soname(prefix):
    lib = libdir(prefix) / "libmdcom.so"
    dyn = run(["readelf", "-d", lib]).stdout
    assert "Library soname: [libmdcom.so.0]" in dyn
    assert (lib.parent / "libmdcom.so.0").exists()


def test_installed_files(prefix):
    ld = libdir(prefix)
    for f in [ld / "libmdcom.a", ld / "libmdcom_core.a", ld / "pkgconfig" / "mdcom.pc",
              ld / "cmake" / "mdcom" / "mdcomConfig.cmake",
              ld / "cmake" / "mdcom" / "mdcomConfigVersion.cmake",
              prefix / "include" / "mdcom" / "export.h",
              prefix / "include" / "mdcom" / "wire.h",
              prefix / "include" / "mdcom" / "mdcom.hpp",
              prefix / "include" / "mdcom" / "events.hpp",
              prefix / "bin" / "mdcom-cfg", prefix / "bin" / "mdcom-stat",
              prefix / "bin" / "mdcom-bench", prefix / "share" / "mdcom" / "mdcom_cfg.py"]:
        assert f.exists(), f
    # the QEMU UART doorbell is a test harness of harness/qemu-m4, not the library's
    assert not (prefix / "include" / "mdcom" / "doorbell_uart.h").exists()
    if shutil.which("scdoc"):
        for page in ["man1/mdcom-cfg.1", "man1/mdcom-stat.1", "man1/mdcom-bench.1",
                     "man3/mdcom_init.3", "man3/mdcom_fifoch.3", "man3/mdcom_smemch.3",
                     "man3/mdcom_rpmsg.3", "man3/mdcom_platform.3", "man3/mdcom_events.3",
                     "man3/mdcom_linux_soc.3", "man3/mdcom_wire.3", "man1/mdcom-zenoh.1",
                     "man3/mdcom_fifoch_send.3"]:  # the last one a .so link (test_man.py)
            assert (prefix / "share" / "man" / page).exists(), page


def test_cpp_header_alone(prefix, tmp_path):
    """The installed <mdcom/mdcom.hpp> and <mdcom/events.hpp> need only the
    installed headers and the standard library, as C++17 and C++20, also
    without exceptions."""
    f = tmp_path / "use_hpp.cpp"
    f.write_text("#include <mdcom/events.hpp>\n#include <mdcom/mdcom.hpp>\n"
                 "int main() { return mdcom::poll.ns() == 0 && mdcom::forever.is_forever() ? 0 : 1; }\n")
    for std in ("c++17", "c++20"):
        run([CXX, f"-std={std}", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-pedantic",
             "-fno-exceptions", f"-I{prefix / 'include'}", f])


def test_tools_version(prefix):
    for tool in ["mdcom-cfg", "mdcom-stat", "mdcom-bench"]:
        out = run([prefix / "bin" / tool, "--version"])
        assert VERSION in out.stdout, (tool, out.stdout)


def run_consumer(exe, libpath, tmp):
    env = dict(os.environ, MDCOM_SHM_DIR=str(tmp))
    if libpath:
        env["LD_LIBRARY_PATH"] = str(libpath)
    r = run([exe], env=env, timeout=60)
    assert "consumer: ok" in r.stdout
    assert not list(Path(tmp).iterdir()), "the master left its region behind"


def consumer_cmake(prefix: Path, tmp: Path):
    b = tmp / "cmake-build"
    run([CMAKE, "-S", CONSUMER, "-B", b, f"-DCMAKE_PREFIX_PATH={prefix}", "-G", "Ninja"])
    run([CMAKE, "--build", b])
    exe = b / "mdcom-consumer"
    # linked with the shared library of the prefix (RUNPATH from CMake)
    ldd = run(["ldd", exe]).stdout
    assert str(prefix) in ldd, ldd
    shm = tmp / "shm-cmake"
    shm.mkdir()
    run_consumer(exe, None, shm)
    return exe


def consumer_pkgconfig(prefix: Path, tmp: Path, unpacked=False):
    # mdcom.pc holds the prefix of the install (absolute, as sysroot-aware
    # pkg-config in Yocto/Buildroot expects), here the temporary one, not the
    # configured /usr/local: PKG_CONFIG_PATH alone is enough, as
    # examples/consumer/Makefile says. A moved tree says its old prefix:
    # there --define-variable=prefix=<where it is now> (README.md, the
    # Makefile; --define-prefix, which guesses the prefix from where the .pc
    # is, takes lib/<multiarch>/pkgconfig for lib/pkgconfig and is one level
    # off). A .deb unpacked into a root: PKG_CONFIG_SYSROOT_DIR (check_deb.py).
    out = tmp / "pc-build"
    env = dict(os.environ,
               PKG_CONFIG_PATH=str(libdir(prefix) / "pkgconfig"),
               PATH=f"{prefix / 'bin'}:{os.environ['PATH']}")
    pc = f"pkg-config --define-variable=prefix={prefix}" if unpacked else "pkg-config"
    flags = run(pc.split() + ["--cflags", "--libs", "mdcom"], env=env).stdout
    assert f"-I{prefix}/include" in flags and f"-L{libdir(prefix)}" in flags, flags
    run(["make", "-f", CONSUMER / "Makefile", f"OUT={out}", f"PKG_CONFIG={pc}",
         f"MDCOM_CFG={prefix / 'bin' / 'mdcom-cfg'}"], env=env)
    shm = tmp / "shm-pc"
    shm.mkdir()
    run_consumer(out / "mdcom-consumer", libdir(prefix), shm)


def test_consumer_find_package(prefix, tmp_path):
    consumer_cmake(prefix, tmp_path)


def test_stat_list(prefix, tmp_path):
    """mdcom-stat --list shows a live region with its state and users (by name)."""
    exe = consumer_cmake(prefix, tmp_path)
    shm = tmp_path / "shm-list"
    shm.mkdir()
    (shm / "not-a-region").write_bytes(b"x" * 4096)
    env = dict(os.environ, MDCOM_SHM_DIR=str(shm))
    holder = subprocess.Popen([exe, "--hold", "20"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = ""
        while "holding" not in line:
            line = holder.stdout.readline()
            assert line, "consumer ended before holding"
        stat = prefix / "bin" / "mdcom-stat"
        d = json.loads(run([stat, "--list", "--json"], env=env).stdout)
        assert [r["region"] for r in d["regions"]] == ["consumer"], d
        r = d["regions"][0]
        assert r["ok"] and r["state"] == "READY" and r["generation"] == 1, r
        assert r["users"] == [{"domain": "app", "alive": 1, "dead": 0}], r
        text = run([stat, "--list"], env=env).stdout
        assert re.search(r"^consumer\s+READY\s+1\s+\d+\s+app:1$", text, re.M), text
        one = json.loads(run([stat, "--json", "consumer"], env=env).stdout)
        req = one["channels"][0]
        assert req["sender_names"] == ["app"] and req["receiver_names"] == ["peer"], req
        assert req["lost"] == 0 and req["reclaimed"] == 0, req
        assert one["processes"][0]["domain_name"] == "app", one["processes"]
    finally:
        holder.kill()
        holder.wait()


def test_consumer_pkgconfig(prefix, tmp_path):
    consumer_pkgconfig(prefix, tmp_path)


def test_moved_prefix(prefix, tmp_path):
    """A tree moved after its install: the CMake package finds everything
    relative to itself (the consumer links the moved libmdcom.so), and
    pkg-config --define-variable=prefix=<new place> overrides the prefix
    mdcom.pc holds (what README.md and examples/consumer/Makefile say for
    such a tree)."""
    moved = tmp_path / "moved"
    shutil.copytree(prefix, moved, symlinks=True)
    consumer_cmake(moved, tmp_path)
    consumer_pkgconfig(moved, tmp_path, unpacked=True)


# The README's "Use it in your project" blocks, pasted as they are: the
# system a new user writes (region "chat", as the README's comments assume)
# and a program that includes the header the README names.
CHAT_TOML = """[region]
name = "chat"

[[domain]]
name = "me"
id = 0
role = "master"

[[fifo]]
name = "talk"
block_size = 64
block_count = 4
senders = ["me"]
receivers = ["me"]
"""
CHAT_MAIN = r"""#include <stdio.h>
#include <mdcom/mdcom.h>
#include "%s"
int main(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *ch;
    char buf[8];
    if (mdcom_init(&m, &chat_config, CHAT_DOM_ME, NULL) || mdcom_fifoch_open(m, "talk", &ch) ||
        mdcom_fifoch_send(ch, "hi", 3, MDCOM_POLL) || mdcom_fifoch_recv(ch, buf, 8, MDCOM_POLL) != 3)
        return 1;
    mdcom_term(m);
    printf("chat: %%s\n", buf);
    return 0;
}
"""


def readme_block(lang: str, needle: str) -> str:
    blocks = re.findall(r"^```" + lang + r"\n(.*?)^```", (SRC / "README.md").read_text(), re.S | re.M)
    hits = [b for b in blocks if needle in b]
    assert len(hits) == 1, f"README.md: one ```{lang} block with {needle!r}, found {len(hits)}"
    return hits[0]


def chat_project(tmp: Path, header: str) -> Path:
    src = tmp / "chat"
    src.mkdir()
    (src / "system.toml").write_text(CHAT_TOML)
    (src / "app.c").write_text(CHAT_MAIN % header)
    return src


def test_readme_cmake_block(prefix, tmp_path):
    """The README's CMake block in a project: it configures, and the header
    its comment names for region "chat" is the one the build generates."""
    block = readme_block("cmake", "find_package(mdcom")
    m = re.search(r'name = "chat" gives (\w+\.h)', block)
    assert m, "the README's CMake block no longer says which header region 'chat' gives"
    src = chat_project(tmp_path, m.group(1))
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(chat LANGUAGES C)\n"
        "add_executable(app app.c)\n" + block)
    b = tmp_path / "chat-build"
    run([CMAKE, "-S", src, "-B", b, f"-DCMAKE_PREFIX_PATH={prefix}", "-G", "Ninja"])
    run([CMAKE, "--build", b])
    shm = tmp_path / "shm-chat"
    shm.mkdir()
    r = run([b / "app"], env=dict(os.environ, MDCOM_SHM_DIR=str(shm)), timeout=60)
    assert "chat: hi" in r.stdout


def test_readme_pkgconfig_block(prefix, tmp_path):
    """The README's pkg-config block, run as it is in a shell with only
    PATH and PKG_CONFIG_PATH pointing at the prefix."""
    block = readme_block("sh", "pkg-config --cflags --libs mdcom")
    src = chat_project(tmp_path, "chat_cfg.h")
    env = dict(os.environ, PKG_CONFIG_PATH=str(libdir(prefix) / "pkgconfig"),
               PATH=f"{prefix / 'bin'}:{os.environ['PATH']}")
    run(["bash", "-e", "-c", block], cwd=src, env=env)
    shm = tmp_path / "shm-chat"
    shm.mkdir()
    r = run([src / "a.out"], env=dict(os.environ, MDCOM_SHM_DIR=str(shm),
                                      LD_LIBRARY_PATH=str(libdir(prefix))), timeout=60)
    assert "chat: hi" in r.stdout


AOT_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(aot LANGUAGES C)
find_package(mdcom 0.1 REQUIRED)
mdcom_generate_config(aot_cfg %s PREFIX aot LAYOUT)
add_executable(aot main.c)
target_link_libraries(aot PRIVATE aot_cfg mdcom::mdcom)
target_compile_options(aot PRIVATE -Wall -Wextra -Werror)
"""
AOT_MAIN = r"""#include <stdio.h>
#include <string.h>
#include "aot_layout.h"
int main(void)
{
    mdcom_wire_layout lay;
    mdcom_wire_chan_layout ch[AOT_N_CHANNELS];
    char err[160] = "";
    mdcom_init_opts o;
    mdcom_t *m;
    int r = mdcom_wire_layout_compute(&aot_config, &lay, ch, err, sizeof err);
    if (r || memcmp(&lay, &aot_layout.lay, sizeof lay) || aot_layout.cfg != &aot_config ||
        memcmp(ch, aot_layout.chans, sizeof ch)) {
        printf("aot: table differs (%d %s)\n", r, err);
        return 1;
    }
    memset(&o, 0, sizeof o);
    o.errbuf = err;
    o.errbuf_len = sizeof err;
    o.layout = &aot_layout;
    r = mdcom_init(&m, &aot_config, AOT_DOM_APP, &o);
    if (r) {
        printf("aot: mdcom_init: %d %s\n", r, err);
        return 1;
    }
    mdcom_term(m);
    printf("aot: ok\n");
    return 0;
}
"""


def test_layout_ahead_of_time(prefix, tmp_path):
    src = tmp_path / "aot"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(AOT_CMAKE % (CONSUMER / "consumer.toml"))
    (src / "main.c").write_text(AOT_MAIN)
    b = tmp_path / "aot-build"
    run([CMAKE, "-S", src, "-B", b, f"-DCMAKE_PREFIX_PATH={prefix}", "-G", "Ninja"])
    r = run([CMAKE, "--build", b])
    assert "computing aot_config's layout on the build host" in r.stdout, r.stdout
    shm = tmp_path / "shm-aot"
    shm.mkdir()
    r = run([b / "aot"], env=dict(os.environ, MDCOM_SHM_DIR=str(shm)), timeout=60)
    assert "aot: ok" in r.stdout, r.stdout
