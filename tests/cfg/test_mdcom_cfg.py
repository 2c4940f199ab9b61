# SPDX-License-Identifier: BSD-3-Clause
"""Tests of tools/mdcom-cfg (standard library only).

Run from this directory with ``python3 -m unittest -v test_mdcom_cfg`` (ctest
does), or directly: ``python3 tests/cfg/test_mdcom_cfg.py``.

Fixtures: good/*.toml must validate and generate C that compiles (with the
host ``cc`` and ``arm-none-eabi-gcc`` when installed) and that
mdcom_wire_layout_compute() (<mdcom/wire.h>) accepts. bad/*.toml must fail with exit status 2; each
names what the message must contain in ``# expect: ...`` comment lines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TOOL = REPO / "tools" / "mdcom-cfg"
INCLUDE = REPO / "include"
SRC = REPO / "src"
# the layout computation and its public wrapper, compiled into the check program
LAYOUT_SOURCES = [SRC / "core" / f for f in ("layout.c", "msg.c", "verify.c")] + [SRC / "wire.c"]

sys.path.insert(0, str(REPO / "tools"))
sys.dont_write_bytecode = True
import mdcom_cfg  # noqa: E402

GOOD = sorted((HERE / "good").glob("*.toml")) + [REPO / "examples" / "demo.toml",
                                                  REPO / "examples" / "pingpong.toml"]
BAD = sorted((HERE / "bad").glob("*.toml"))

# The bad fixtures the configurator must be tested against (at least).
REQUIRED_BAD = {
    "syntax_error", "unknown_key", "missing_region_name", "bad_name_chars", "dup_domain_id",
    "dup_channel_name", "two_masters", "no_master", "block_count_zero", "queue_depth_pow2",
    "unknown_sender", "world_writable", "region_too_large", "block_size_type",
}

C_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wshadow",
           "-Wstrict-prototypes", "-Wmissing-prototypes"]
ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-ffreestanding"]

LAYOUT_MAIN = r"""
#include <stdio.h>
#include "mdcom/wire.h"
#include "%(sym)s_cfg.h"

int main(void)
{
    mdcom_wire_layout lay;
    mdcom_wire_chan_layout chans[%(sym_up)s_N_CHANNELS + 1];
    char buf[256] = "";
    int rc = mdcom_wire_layout_compute(&%(sym)s_config, &lay, chans, buf, sizeof buf);
    printf("rc=%%d needed=%%u region_size=%%u %%s\n", rc, (unsigned)lay.needed,
           (unsigned)lay.region_size, buf);
    return rc == 0 ? 0 : 1;
}
"""


def run_tool(*args: str | os.PathLike, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the mdcom-cfg wrapper script with the current interpreter."""
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, check=False)


def compile_c(compiler: str, flags: list[str], sources: list[Path], out: Path,
              link: bool = False) -> subprocess.CompletedProcess:
    """Compile (and with link=True, link) C sources; never raises on failure."""
    cmd = [compiler, *flags, *([] if link else ["-c"]), *map(str, sources), "-o", str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def expectations(fixture: Path) -> list[str]:
    """The '# expect: ...' lines of a bad fixture."""
    lines = fixture.read_text(encoding="utf-8").splitlines()
    return [line.split("# expect:", 1)[1].strip() for line in lines
            if line.startswith("# expect:")]


class GeneratedMixin:
    """Generates a fixture into a temporary directory."""

    def generate(self, fixture: Path, *extra: str) -> tuple[Path, str]:
        """Generate fixture into a fresh temp dir; returns (dir, prefix)."""
        out = Path(self.enterContext(tempfile.TemporaryDirectory(prefix="mdcom-cfg-")))
        res = run_tool("generate", fixture, "--out-dir", out, *extra)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stdout, "")
        headers = list(out.glob("*_cfg.h"))
        self.assertEqual(len(headers), 1, headers)
        return out, headers[0].name[:-len("_cfg.h")]


class TestGoodFixtures(GeneratedMixin, unittest.TestCase):
    """Every valid description checks, generates, compiles, and lays out."""

    def test_check(self):
        for fixture in GOOD:
            with self.subTest(fixture=fixture.name):
                res = run_tool("check", fixture)
                self.assertEqual(res.returncode, 0, res.stderr)
                self.assertEqual(res.stderr, "")
                self.assertEqual(len(res.stdout.splitlines()), 1, res.stdout)
                self.assertIn(f"{fixture}: ok:", res.stdout)

    def for_each_generated(self, tool: str, check) -> None:
        """check(dir, prefix) on every good fixture, generated afresh, each in its
        own subTest; skipped when tool (the compiler check uses) is missing."""
        if not shutil.which(tool):
            self.skipTest(f"{tool} not installed")
        for fixture in GOOD:
            with self.subTest(fixture=fixture.name, tool=tool):
                check(*self.generate(fixture))

    def _compile_all(self, compiler: str, flags: list[str]):
        def check(out: Path, sym: str):
            res = compile_c(compiler, [*flags, f"-I{INCLUDE}"], [out / f"{sym}_cfg.c"],
                            out / f"{sym}_cfg.o")
            self.assertEqual(res.returncode, 0, res.stderr)
        self.for_each_generated(compiler, check)

    def test_compiles_host(self):
        self._compile_all("cc", C_FLAGS)

    def test_compiles_host_freestanding(self):
        self._compile_all("cc", [*C_FLAGS, "-ffreestanding"])

    def test_compiles_cortex_m4(self):
        self._compile_all("arm-none-eabi-gcc", [*C_FLAGS, *ARM_FLAGS])

    def test_header_compiles_as_cxx(self):
        def check(out: Path, sym: str):
            src = out / "use.cpp"
            src.write_text(f'#include "{sym}_cfg.h"\n'
                           f"const mdcom_config *cfg_ptr() {{ return &{sym}_config; }}\n")
            res = compile_c("c++", ["-std=c++17", "-Wall", "-Wextra", "-Werror",
                                    f"-I{INCLUDE}", f"-I{out}"], [src], out / "use.o")
            self.assertEqual(res.returncode, 0, res.stderr)
        self.for_each_generated("c++", check)

    def test_layout_accepts(self):
        """mdcom_wire_layout_compute() (the core's layout, the authority) returns 0."""
        def check(out: Path, sym: str):
            main_c = out / "main.c"
            main_c.write_text(LAYOUT_MAIN % {"sym": sym, "sym_up": sym.upper()})
            flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}",
                     f"-I{SRC}", f"-I{out}"]
            res = compile_c("cc", flags, [main_c, out / f"{sym}_cfg.c", *LAYOUT_SOURCES],
                            out / "layout_check", link=True)
            self.assertEqual(res.returncode, 0, res.stderr)
            run = subprocess.run([str(out / "layout_check")], capture_output=True,
                                 text=True, check=False)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.for_each_generated("cc", check)

    def test_deterministic(self):
        """Same input, same bytes: across runs, directories and paths given."""
        for fixture in GOOD:
            with self.subTest(fixture=fixture.name):
                first, sym = self.generate(fixture)
                second = Path(self.enterContext(tempfile.TemporaryDirectory()))
                res = run_tool("generate", os.path.relpath(fixture, fixture.parent.parent),
                               "--out-dir", second, cwd=fixture.parent.parent)
                self.assertEqual(res.returncode, 0, res.stderr)
                for suffix in ("_cfg.h", "_cfg.c"):
                    self.assertEqual((first / f"{sym}{suffix}").read_bytes(),
                                     (second / f"{sym}{suffix}").read_bytes())

    def test_dump_json(self):
        for fixture in GOOD:
            with self.subTest(fixture=fixture.name):
                res = run_tool("dump", fixture, "--json")
                self.assertEqual(res.returncode, 0, res.stderr)
                data = json.loads(res.stdout)
                self.assertEqual(set(data) - {"bridges"}, {"source", "prefix", "region", "domains", "channels"})
                self.assertEqual([c["index"] for c in data["channels"]],
                                 list(range(len(data["channels"]))))

    def test_dump_text(self):
        res = run_tool("dump", REPO / "examples" / "demo.toml")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("channel   0 fifo ctl: 64 x 512 B, queue 64, linux -> m4", res.stdout)


class TestGeneratedContent(GeneratedMixin, unittest.TestCase):
    """The generated text for good/full.toml."""

    @classmethod
    def setUpClass(cls):
        cls.fixture = HERE / "good" / "full.toml"

    def test_header(self):
        out, sym = self.generate(self.fixture)
        self.assertEqual(sym, "cfgtest_full")
        text = (out / "cfgtest_full_cfg.h").read_text()
        for needle in ("GENERATED by mdcom-cfg from full.toml. DO NOT EDIT",
                       "#ifndef CFGTEST_FULL_CFG_H", '#include "mdcom/mdcom.h"',
                       'extern "C" {', "extern const mdcom_config cfgtest_full_config;",
                       "#define CFGTEST_FULL_DOM_HOST 0\n", "#define CFGTEST_FULL_DOM_M4 3\n",
                       "#define CFGTEST_FULL_DOM_DSP 31\n", "#define CFGTEST_FULL_CH_CMD 0 ",
                       "#define CFGTEST_FULL_CH_REPLY_1 1 ",
                       "#define CFGTEST_FULL_CH_SHARED_STATE 2 ",
                       "#define CFGTEST_FULL_CH_BIG 3 ", "#define CFGTEST_FULL_N_CHANNELS 4\n"):
            self.assertIn(needle, text)
        self.assertNotIn(str(REPO), text, "no absolute paths in generated files")

    def test_source(self):
        out, _ = self.generate(self.fixture, "--prefix", "cfgtest")
        text = (out / "cfgtest_cfg.c").read_text()
        for needle in ('#include "cfgtest_cfg.h"',
                       "static const mdcom_domain_cfg cfgtest_domains[3]",
                       "static const mdcom_channel_cfg cfgtest_channels[CFGTEST_N_CHANNELS]",
                       "[CFGTEST_CH_CMD] = {", ".type = MDCOM_CHAN_FIFO,",
                       ".type = MDCOM_CHAN_SMEM,",
                       ".receivers = (1u << CFGTEST_DOM_M4) | (1u << CFGTEST_DOM_DSP),",
                       ".senders = (1u << CFGTEST_DOM_M4) | (1u << CFGTEST_DOM_DSP),",
                       ".block_size = 1024u,", ".size = 65536u,", ".queue_depth = 0u,",
                       ".role = MDCOM_ROLE_MASTER", ".region_size = 2097152u,",
                       ".mode = 0640u,", ".group = 1234,", 'region_name = "cfgtest.full"'):
            self.assertIn(needle, text)

    def test_soc_specs(self):
        """[region] backend / doorbell keys become the spec strings of linux_soc.h."""
        cases = {
            "soc_devmem.toml": ('#define SOC_DEVMEM_REGION_SPEC "devmem:/dev/mem@0x10040000:size=0x100000"',
                                '#define SOC_DEVMEM_DOORBELL_SPEC '
                                '"uio:/dev/uio0:map=0:reg=0x8:val=0x10000:ack=0x8:ackval=0x2"'),
            "soc_uio.toml": ('#define SOC_UIO_REGION_SPEC "uio:/dev/uio1:map=1"',
                             '#define SOC_UIO_DOORBELL_SPEC "futex"'),
            "minimal.toml": ('#define MIN_REGION_SPEC "shm"', '#define MIN_DOORBELL_SPEC "futex"'),
        }
        for name, needles in cases.items():
            with self.subTest(fixture=name):
                out, sym = self.generate(HERE / "good" / name)
                text = (out / f"{sym}_cfg.h").read_text()
                for needle in needles:
                    self.assertIn(needle + "\n", text)

    def test_prefix_option(self):
        out, sym = self.generate(self.fixture, "--prefix", "Board2")
        self.assertEqual(sym, "Board2")
        header = (out / "Board2_cfg.h").read_text()
        self.assertIn("extern const mdcom_config Board2_config;", header)
        self.assertIn("#define BOARD2_CH_CMD 0", header)

    def test_bad_prefix(self):
        for prefix in ("2x", "a-b", "", "_x"):
            with self.subTest(prefix=prefix):
                with tempfile.TemporaryDirectory() as out:
                    res = run_tool("generate", self.fixture, "--out-dir", out, "--prefix", prefix)
                    self.assertEqual(res.returncode, 2)
                    self.assertIn("--prefix", res.stderr)
                    self.assertEqual(os.listdir(out), [])

    def test_defaults(self):
        out, _ = self.generate(HERE / "good" / "minimal.toml")
        text = (out / "min_cfg.c").read_text()
        for needle in (".mode = 0600u,", ".group = -1,", ".region_size = 0u,",
                       ".channels = NULL,", ".n_channels = MIN_N_CHANNELS,"):
            self.assertIn(needle, text)

    def test_pingpong_json(self):
        data = json.loads(run_tool("dump", REPO / "examples" / "pingpong.toml", "--json").stdout)
        self.assertEqual(data["region"]["name"], "pingpong")
        self.assertEqual([(d["name"], d["id"], d["role"]) for d in data["domains"]],
                         [("a", 0, "master"), ("b", 1, "remote")])
        ping, pong = data["channels"]
        self.assertEqual((ping["name"], ping["senders"], ping["receivers"]),
                         ("ping", ["a"], ["b"]))
        self.assertEqual((pong["name"], pong["senders"], pong["receivers"]),
                         ("pong", ["b"], ["a"]))
        for ch in (ping, pong):
            self.assertEqual((ch["type"], ch["block_size"], ch["block_count"]),
                             ("fifo", 1048576, 8))


class TestModel(unittest.TestCase):
    """In-process checks of parse_config() and the naming helpers."""

    DOMAINS = [{"name": "a", "id": 0, "role": "master"}, {"name": "b", "id": 1, "role": "remote"}]

    def parse(self, **tables):
        data = {"region": {"name": "t"}, "domain": self.DOMAINS, **tables}
        return mdcom_cfg.parse_config(data, "t.toml")

    def errors(self, **tables) -> list[str]:
        with self.assertRaises(mdcom_cfg.ConfigError) as ctx:
            self.parse(**tables)
        return ctx.exception.messages

    def test_channel_order_fifo_then_smem(self):
        fifo = {"name": "f", "block_size": 8, "block_count": 1, "senders": ["a"],
                "receivers": ["b"]}
        smem = {"name": "s", "size": 8, "users": ["a"]}
        # Python dicts keep insertion order: smem before fifo in the "file".
        cfg = self.parse(smem=[smem], fifo=[fifo])
        self.assertEqual([c.name for c in cfg.channels], ["f", "s"])

    def test_sizes_and_modes(self):
        cases = {"4096": 4096, "64K": 65536, "64k": 65536, "4M": 4 << 20, "1G": 1 << 30}
        for text, value in cases.items():
            with self.subTest(size=text):
                data = {"region": {"name": "t", "size": text}, "domain": self.DOMAINS}
                self.assertEqual(mdcom_cfg.parse_config(data, "t.toml").region.size, value)
        for mode, value in {"0600": 0o600, "660": 0o660, "0o640": 0o640, 0o660: 0o660}.items():
            with self.subTest(mode=mode):
                data = {"region": {"name": "t", "mode": mode}, "domain": self.DOMAINS}
                self.assertEqual(mdcom_cfg.parse_config(data, "t.toml").region.mode, value)

    def test_all_errors_reported(self):
        msgs = self.errors(fifo=[{"name": "x y", "block_size": 0, "block_count": 70000,
                                  "senders": "a", "receivers": ["zz"], "depth": 2}])
        text = "\n".join(msgs)
        for path in ("fifo[0].depth", "fifo[0].name", "fifo[0].block_size",
                     "fifo[0].block_count", "fifo[0].senders",
                     "fifo[0].receivers[0]"):
            self.assertIn(f"t.toml: {path}: ", text)
        self.assertTrue(all(m.startswith("t.toml: ") for m in msgs))

    def test_duplicate_in_list(self):
        msgs = self.errors(smem=[{"name": "s", "size": 1, "users": ["a", 0]}])
        self.assertIn("t.toml: smem[0] 's'.users[1]: domain 0 is listed twice", msgs)

    def test_owner_access_required(self):
        with self.assertRaises(mdcom_cfg.ConfigError) as ctx:
            mdcom_cfg.parse_config({"region": {"name": "t", "mode": "0"}, "domain": self.DOMAINS},
                                   "t.toml")
        self.assertIn("region.mode: must grant the owner read and write", ctx.exception.messages[0])

    def test_names(self):
        self.assertEqual(mdcom_cfg.default_prefix("Demo"), "demo")
        self.assertEqual(mdcom_cfg.default_prefix("my.sys-1"), "my_sys_1")
        self.assertEqual(mdcom_cfg.default_prefix("1st"), "region_1st")
        self.assertEqual(mdcom_cfg.default_prefix("-a--b-"), "a_b")
        self.assertEqual(mdcom_cfg.default_prefix("__"), "region")
        self.assertEqual(mdcom_cfg.macro_name("reply-1.x"), "REPLY_1_X")


class TestBridge(unittest.TestCase):
    """The [[bridge]] table read by mdcom-zenoh (bridge/zenoh, docs/bridge.md)."""

    def test_values_and_defaults(self):
        cfg = mdcom_cfg.load_config(str(HERE / "good" / "bridge.toml"))
        up, down = cfg.bridges
        self.assertEqual((up.channel, up.direction, up.key, up.domain), ("up", "out", "soc/a/m4/up", 0))
        self.assertEqual((up.reliability, up.congestion, up.priority, up.rate_limit, up.express),
                         ("reliable", "block", 5, 10000, False))
        self.assertEqual((down.direction, down.key, down.reliability, down.congestion,
                          down.priority, down.express),
                         ("in", "soc/*/m4/down/**", "best_effort", "drop", 2, True))
        dumped = json.loads(run_tool("dump", HERE / "good" / "bridge.toml", "--json").stdout)
        self.assertEqual(dumped["bridges"][1]["domain"], "linux")
        self.assertEqual(dumped["bridges"][0]["rate_limit"], 10000)

    def test_no_bridge_table(self):
        cfg = mdcom_cfg.load_config(str(HERE / "good" / "minimal.toml"))
        self.assertEqual(cfg.bridges, ())

    def test_key_expressions(self):
        good_in = ["a", "a/b/c", "a/*/c", "a/**", "**", "a/b$*/c", "robot-1/cmd_vel", "a/**/b"]
        for key in good_in:
            with self.subTest(key=key):
                self.assertIsNone(mdcom_cfg._key_expr_problem(key, wildcards=True))
        self.assertIsNone(mdcom_cfg._key_expr_problem("a/b/c", wildcards=False))
        bad = ["", "/a", "a/", "a//b", "a b", "a/b#", "a/b?", "a/*b", "a/$b", "**/**"]
        for key in bad:
            with self.subTest(key=key):
                self.assertIsNotNone(mdcom_cfg._key_expr_problem(key, wildcards=True))
        for key in ("a/*", "a/**", "a/x$*"):
            with self.subTest(key=key):
                self.assertIsNotNone(mdcom_cfg._key_expr_problem(key, wildcards=False))


class TestBadFixtures(unittest.TestCase):
    """Every invalid description fails cleanly with a precise message."""

    def test_required_fixtures_exist(self):
        self.assertLessEqual(REQUIRED_BAD, {f.stem for f in BAD})

    def test_bad(self):
        for fixture in BAD:
            with self.subTest(fixture=fixture.name):
                expected = expectations(fixture)
                self.assertTrue(expected, "fixture lacks '# expect:' lines")
                res = run_tool("check", fixture)
                self.assertEqual(res.returncode, 2, res.stderr)
                self.assertEqual(res.stdout, "")
                self.assertIn(fixture.name, res.stderr)
                for line in res.stderr.splitlines():
                    self.assertTrue(line.startswith(f"{fixture}:"), line)
                for needle in expected:
                    self.assertIn(needle, res.stderr)

    def test_generate_writes_nothing(self):
        for fixture in BAD:
            with self.subTest(fixture=fixture.name), tempfile.TemporaryDirectory() as out:
                res = run_tool("generate", fixture, "--out-dir", out)
                self.assertEqual(res.returncode, 2)
                self.assertEqual(os.listdir(out), [])

    def test_dump_fails(self):
        res = run_tool("dump", BAD[0], "--json")
        self.assertEqual(res.returncode, 2)
        self.assertEqual(res.stdout, "")

    def test_missing_file(self):
        res = run_tool("check", HERE / "bad" / "no-such-file.toml")
        self.assertEqual(res.returncode, 2)
        self.assertIn("no-such-file.toml: cannot read", res.stderr)

    def test_usage_error(self):
        self.assertEqual(run_tool("frobnicate").returncode, 2)
        self.assertEqual(run_tool("generate", GOOD[0]).returncode, 2)  # no --out-dir


if __name__ == "__main__":
    unittest.main()
