# SPDX-License-Identifier: BSD-3-Clause
"""Every fenced code block of README.md and docs/*.md is checked (pytest, run by
ctest as docs_snippets), or says why not.

The blocks are extracted here, so a new block is checked the day it is
written. What a block gets depends on its language and on an optional marker,
an HTML comment on the line just before the fence (invisible on GitHub):

    <!-- snippet: KIND [| key: value]... -->

  c        a translation unit: compiled (cc -std=c11 -Wall -Werror
           -fsyntax-only, the <stdint.h> family prepended) against include/
           and demo_cfg.h (generated from examples/demo.toml)
           marker c-fragment: the block is a function body (its #include
           lines are moved to the top, with the libc and mdcom headers a
           program uses); "prelude: ..." declares at file scope what the
           fragment uses without declaring; "cfg: TOML SYM" generates
           SYM_cfg.h from TOML for it. A block that attaches (mdcom_init with
           <sym>_config, <SYM>_DOM_<D>) and opens FIFOs by name may only
           send / receive on channels domain D sends / receives on
  cpp      a C++ translation unit (<mdcom/mdcom.hpp>): compiled as C++17 and
           as C++20 (c++ -fsyntax-only -Wall -Wextra -Werror) against
           include/ and demo_cfg.h; one that attaches (attach(demo_config,
           DEMO_DOM_<D>)) and opens FIFOs by name (v = m->fifo("name"))
           may only send / receive on channels D sends / receives on
  python   compile()
  sh       bash -n; every repository path it names (scripts/..., tools/..., harness/...)
           exists and every `cmake --preset X` names a preset
  toml     tomllib; a whole system ([region] and [[domain]]) also passes
           `tools/mdcom-cfg check`; marker "toml | with: FILE" appends FILE
           (the rest of a system) to a block that shows only a part of one
  cmake    parsed by cmake -P inside if(FALSE) (syntax, nothing runs)
  json     json.loads; json5: the same after quoting keys
  ini      configparser
  text     diagrams, layouts, output: not code, not checked
  marker excerpt-of-generated: TOML FILE   the block's lines (but "...")
           appear in order in FILE as `mdcom-cfg generate TOML` writes it
  marker json-excerpt-of: COMMAND   the block (with "..." elisions) is a
           part of the JSON that COMMAND prints
  marker copy-of: FILE   the block is FILE's diagram, copied: the lines of
           FILE's first comment after the SPDX line (" * " taken off), from the
           one equal to the block's first line to the comment's end
  marker map-of-tree   a map of the repository: every top-level folder and
           every folder one level below src/, ports/, firmware/, tests/,
           bindings/ is named in it (as NAME/)
  marker skip: REASON   not checked, for the reason given
A fence without a language fails (say `text` for what is not code), and so
does a language with no check and no marker.
Environment (tests/docs/CMakeLists.txt): MDCOM_SOURCE_DIR, MDCOM_CC,
MDCOM_CXX, MDCOM_CMAKE, MDCOM_PYTHON (>= 3.11, runs tools/mdcom-cfg).
"""
import configparser
import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MDCOM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CC = os.environ.get("MDCOM_CC", "cc")
CXX = os.environ.get("MDCOM_CXX", "c++")
CMAKE = os.environ.get("MDCOM_CMAKE", "cmake")
PYTHON = os.environ.get("MDCOM_PYTHON", sys.executable)
MDCOM_CFG = SRC / "tools" / "mdcom-cfg"
DOCS = [SRC / "README.md", *sorted((SRC / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
FRAGMENT_HEADERS = ["stdint.h", "stddef.h", "stdio.h", "stdlib.h", "string.h", "errno.h",
                    "poll.h", "mdcom/mdcom.h", "mdcom/events.h"]


@dataclass
class Block:
    path: Path
    line: int              # 1-based line of the opening fence
    lang: str
    body: str
    kind: str = ""         # the marker's first part ("" without a marker)
    arg: str = ""          # what follows "KIND:"
    opts: dict = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(SRC)}:{self.line}"


def extract(path: Path) -> list[Block]:
    lines = path.read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln
                         for ln in lines[i + 1:j])
        b = Block(path, i + 1, lang, body + "\n")
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mm = MARKER.match(lines[k]) if k >= 0 else None
        if mm:
            head, *rest = [p.strip() for p in mm.group(1).split(" | ")]
            b.kind, _, b.arg = (s.strip() for s in head.partition(":"))
            for r in rest:
                key, _, val = r.partition(":")
                b.opts[key.strip()] = val.strip()
        out.append(b)
        i = j + 1
    return out


BLOCKS = [b for d in DOCS for b in extract(d)]


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run([str(c) for c in cmd], **kw)


def generate(toml: str, out: Path, sym: str = "") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [PYTHON, MDCOM_CFG, "generate", Path(toml).name, "--out-dir", out]
    if sym:
        cmd += ["--prefix", sym]
    r = run(cmd, cwd=SRC / Path(toml).parent)
    assert r.returncode == 0, f"mdcom-cfg generate {toml}: {r.stderr}"
    return out


def compile_c(b: Block, tmp: Path) -> None:
    gen = generate("examples/demo.toml", tmp / "gen")
    if "cfg" in b.opts:
        toml, sym = b.opts["cfg"].split()
        generate(toml, gen, sym)
    if b.kind == "c-fragment":
        incs = [ln for ln in b.body.splitlines() if ln.startswith("#include")]
        code = "\n".join(ln for ln in b.body.splitlines() if not ln.startswith("#include"))
        src = "".join(f"#include <{h}>\n" for h in FRAGMENT_HEADERS) + "\n".join(incs) + "\n"
        src += b.opts.get("prelude", "") + "\n"
        src += f"void snippet(void);\nvoid snippet(void)\n{{\n#line 1\n{code}\n}}\n"
    else:
        src = "#include <stdint.h>\n#include <stddef.h>\n#line 1\n" + b.body
    check_directions(b, gen)
    f = tmp / "snippet.c"
    f.write_text(src)
    r = run([CC, "-std=c11", "-D_DEFAULT_SOURCE", "-fsyntax-only", "-Wall", "-Werror",
             "-Wno-unused", f"-I{SRC / 'include'}", f"-I{gen}", f])
    assert r.returncode == 0, f"{b.where}: the C block does not compile:\n{r.stderr}\n--- as compiled:\n{src}"


def compile_cpp(b: Block, tmp: Path) -> None:
    gen = generate("examples/demo.toml", tmp / "gen")
    check_directions_cpp(b)
    f = tmp / "snippet.cpp"
    f.write_text("#line 1\n" + b.body)
    for std in ("c++17", "c++20"):
        r = run([CXX, f"-std={std}", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused",
                 f"-I{SRC / 'include'}", f"-I{gen}", f])
        assert r.returncode == 0, f"{b.where}: the C++ block does not compile as {std}:\n{r.stderr}"


SENDS = ("alloc", "enqueue", "send")
RECEIVES = ("dequeue", "recv")


def check_directions_cpp(b: Block) -> None:
    """check_directions for <mdcom/mdcom.hpp>: attachment::attach(demo_config,
    DEMO_DOM_<D>), v = m->fifo("name") or m.fifo("name"), v->call / v.call."""
    init = re.search(r"attach\(\s*demo_config,\s*DEMO_DOM_(\w+)", b.body)
    if not init:
        return
    dom = init.group(1).lower()
    r = run([PYTHON, MDCOM_CFG, "dump", "--json", SRC / "examples/demo.toml"])
    assert r.returncode == 0, r.stderr
    chans = {c["name"]: c for c in json.loads(r.stdout)["channels"]}
    var = {v: n for v, n in re.findall(r'(\w+)\s*=\s*\w+(?:->|\.)fifo\("(\w+)"\)', b.body)}
    bad = []
    for v, call in re.findall(r"\b(\w+)(?:->|\.)(alloc|send|dequeue|recv)\(", b.body):
        if v not in var:
            continue
        c = chans[var[v]]
        if call in SENDS and dom not in c["senders"]:
            bad.append(f"{v}.{call} on '{var[v]}': {dom} does not send on it")
        if call in RECEIVES and dom not in c["receivers"]:
            bad.append(f"{v}.{call} on '{var[v]}': {dom} does not receive on it: EPERM")
    assert var, f"{b.where}: attaches but opens no FIFO the check can follow"
    assert not bad, f"{b.where}: against examples/demo.toml: " + "; ".join(bad)


def check_directions(b: Block, gen: Path) -> None:
    """A C block that attaches with <sym>_config and <SYM>_DOM_<D> and opens
    FIFO channels by name may only send on channels D sends on and receive on
    channels D receives on (what the call would answer -EPERM to)."""
    init = re.search(r"mdcom_init\([^,]+,\s*&(\w+)_config,\s*([A-Z0-9_]+)_DOM_(\w+)", b.body)
    if not init:
        return
    sym, dom = init.group(1), init.group(3).lower()
    tomls = {"demo": "examples/demo.toml"}
    if "cfg" in b.opts:
        tomls[b.opts["cfg"].split()[1]] = b.opts["cfg"].split()[0]
    r = run([PYTHON, MDCOM_CFG, "dump", "--json", SRC / tomls[sym]])
    assert r.returncode == 0, r.stderr
    chans = {c["name"]: c for c in json.loads(r.stdout)["channels"]}
    var = {v: n for n, v in re.findall(r'mdcom_fifoch_open\(\w+,\s*"(\w+)",\s*&(\w+)\)', b.body)}
    bad = []
    for call, v in re.findall(r"mdcom_fifoch_(\w+)\((\w+)\b", b.body):
        if v not in var:
            continue
        c = chans[var[v]]
        if call in SENDS and dom not in c["senders"]:
            bad.append(f"mdcom_fifoch_{call} on '{var[v]}': {dom} does not send on it "
                       f"(senders {c['senders']})")
        if call in RECEIVES and dom not in c["receivers"]:
            bad.append(f"mdcom_fifoch_{call} on '{var[v]}': {dom} does not receive on it "
                       f"(receivers {c['receivers']}): -EPERM")
    assert not bad, f"{b.where}: against {tomls[sym]}: " + "; ".join(bad)


REPO_PATH = re.compile(r"(?<![\w/.-])((?:scripts|tools|bridge|harness|examples|bench|bindings|docs|cmake|tests)"
                       r"/[\w./-]*[\w-])")


def check_sh(b: Block, tmp: Path) -> None:
    f = tmp / "snippet.sh"
    f.write_text(b.body)
    r = run(["bash", "-n", f])
    assert r.returncode == 0, f"{b.where}: bash -n: {r.stderr}"
    code = "\n".join(ln.split(" #")[0] for ln in b.body.splitlines())  # not the comments
    missing = [p for p in REPO_PATH.findall(code) if not (SRC / p).exists()]
    assert not missing, f"{b.where}: names repository paths that do not exist: {missing}"
    presets = {p["name"] for p in json.loads((SRC / "CMakePresets.json").read_text())
               ["configurePresets"]}
    named = re.findall(r"\b(?:cmake|ctest)\s+(?:--build\s+)?--preset[ =](\S+)", code)
    unknown = sorted(set(named) - presets)
    assert not unknown, f"{b.where}: unknown CMake presets {unknown} (CMakePresets.json)"


def check_toml(b: Block, tmp: Path) -> None:
    text = b.body
    if "with" in b.opts:  # a part of a system: completed by a file of tests/docs
        text += "\n" + (SRC / b.opts["with"]).read_text()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        pytest.fail(f"{b.where}: TOML: {e}")
    if "region" in doc and "domain" in doc:
        f = tmp / "snippet.toml"
        f.write_text(text)
        r = run([PYTHON, MDCOM_CFG, "check", f])
        assert r.returncode == 0, f"{b.where}: mdcom-cfg check: {r.stdout}{r.stderr}"


def check_cmake(b: Block, tmp: Path) -> None:
    f = tmp / "snippet.cmake"
    f.write_text(f"if(FALSE)\n{b.body}\nendif()\n")
    r = run([CMAKE, "-P", f])
    assert r.returncode == 0, f"{b.where}: cmake does not parse it: {r.stderr}"


def json5_to_json(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"([{,]\s*)([A-Za-z_]\w*)\s*:", r'\1"\2":', text)
    return re.sub(r",(\s*[}\]])", r"\1", text)


def check_json(b: Block, tmp: Path) -> None:
    text = json5_to_json(b.body) if b.lang == "json5" else b.body
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        pytest.fail(f"{b.where}: {b.lang}: {e}")


def check_ini(b: Block, tmp: Path) -> None:
    p = configparser.ConfigParser(interpolation=None, strict=True)
    try:
        p.read_string(b.body)
    except configparser.Error as e:
        pytest.fail(f"{b.where}: ini: {e}")


def excerpt_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "..."]


def check_excerpt_of_generated(b: Block, tmp: Path) -> None:
    toml, name = b.arg.split()
    full = (generate(toml, tmp / "gen") / name).read_text()
    have = excerpt_lines(full)
    pos = 0
    for ln in excerpt_lines(b.body):
        try:
            pos = have.index(ln, pos) + 1
        except ValueError:
            pytest.fail(f"{b.where}: '{ln}' is not (in this order) in {name} as "
                        f"mdcom-cfg generates it from {toml}:\n{full}")


def part_of(doc, real, path="") -> str:
    """'' when doc (with elisions) is a part of real, else where it differs."""
    if isinstance(doc, dict):
        if not isinstance(real, dict):
            return path or "/"
        for k, v in doc.items():
            if k not in real:
                return f"{path}/{k} (absent)"
            d = part_of(v, real[k], f"{path}/{k}")
            if d:
                return d
        return ""
    if isinstance(doc, list):
        if not isinstance(real, list) or len(doc) > len(real):
            return path or "/"
        for i, v in enumerate(doc):
            d = part_of(v, real[i], f"{path}[{i}]")
            if d:
                return d
        return ""
    return "" if doc == real else f"{path}: {doc!r} != {real!r}"


def check_json_excerpt_of(b: Block, tmp: Path) -> None:
    cmd = b.arg.split()
    if cmd[0] == "tools/mdcom-cfg":
        cmd = [PYTHON, MDCOM_CFG, *cmd[1:]]
    r = run(cmd, cwd=SRC)
    assert r.returncode == 0, f"{b.where}: {b.arg}: {r.stderr}"
    text = re.sub(r"^\s*\.\.\.\s*$", "", b.body, flags=re.M)
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    d = part_of(json.loads(text), json.loads(r.stdout))
    assert not d, f"{b.where}: differs from the output of `{b.arg}` at {d}"


def comment_lines(path: Path) -> list[str]:
    """The first /* ... */ comment of path after its SPDX line, without the
    leading " * " (or " *") of each line, right-stripped."""
    text = path.read_text()
    start = text.index("/*", text.index("*/") + 2)
    body = text[start:text.index("*/", start)].split("\n")[1:]
    lines = [re.sub(r"^ \* ?", "", ln).rstrip() for ln in body]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def check_copy_of(b: Block, tmp: Path) -> None:
    src = comment_lines(SRC / b.arg)
    mine = [ln.rstrip() for ln in b.body.rstrip("\n").split("\n")]
    starts = [i for i, ln in enumerate(src) if ln == mine[0]]
    assert starts, f"{b.where}: its first line {mine[0]!r} is not a line of {b.arg}'s comment"
    want = src[starts[0]:]
    if mine != want:
        import difflib
        diff = "\n".join(difflib.unified_diff(want, mine, b.arg, b.where, lineterm=""))
        pytest.fail(f"{b.where}: not the diagram of {b.arg} as it is now (copy it again):\n{diff}")


MAPPED_PARENTS = ("src", "ports", "firmware", "tests", "bindings")
NOT_MAPPED = {"build", "bench-results", "__pycache__"}


def folders(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and p.name not in NOT_MAPPED)


def check_map_of_tree(b: Block, tmp: Path) -> None:
    missing = [f"{top}/" for top in folders(SRC) if not re.search(
        rf"(^|\s){re.escape(top)}/", b.body, re.M)]
    for parent in MAPPED_PARENTS:
        for sub in folders(SRC / parent) if (SRC / parent).is_dir() else []:
            if not re.search(rf"(^|[\s(,]|{parent}/){re.escape(sub)}/", b.body, re.M):
                missing.append(f"{parent}/{sub}/")
    assert not missing, f"{b.where}: the map does not name " + ", ".join(missing)


def test_readme_region_heading_names_the_wire_version():
    m = re.search(r"#define MDCOM_WIRE_VERSION (\d+)u", (SRC / "include/mdcom/mdcom.h").read_text())
    assert m, "MDCOM_WIRE_VERSION not found in include/mdcom/mdcom.h"
    h = re.search(r"^## Layout of the shared region \(wire version (\d+)\)$",
                  (SRC / "README.md").read_text(), re.M)
    assert h, "README.md has no heading '## Layout of the shared region (wire version N)'"
    assert h.group(1) == m.group(1), \
        f"README.md's region diagram says wire version {h.group(1)}, the code is at {m.group(1)}"


def test_diagram_checks_can_fail(tmp_path: Path):
    """copy-of and map-of-tree find a changed line and a folder left out."""
    readme = next(b for b in BLOCKS if b.kind == "copy-of")
    bad = Block(readme.path, readme.line, "text", readme.body.replace("magic", "magik", 1),
                "copy-of", readme.arg)
    with pytest.raises(pytest.fail.Exception):
        check_copy_of(bad, tmp_path)
    tree = next(b for b in BLOCKS if b.kind == "map-of-tree")
    bad = Block(tree.path, tree.line, "text", re.sub(r"\bfirmware/", "fw/", tree.body), "map-of-tree")
    with pytest.raises(AssertionError):
        check_map_of_tree(bad, tmp_path)


BY_LANG = {"c": compile_c, "cpp": compile_cpp, "python": None, "sh": check_sh, "toml": check_toml,
           "cmake": check_cmake, "json": check_json, "json5": check_json, "ini": check_ini}
BY_MARKER = {"c-fragment": compile_c, "toml": check_toml, "excerpt-of-generated": check_excerpt_of_generated,
             "json-excerpt-of": check_json_excerpt_of, "copy-of": check_copy_of,
             "map-of-tree": check_map_of_tree}


def check_python(b: Block, tmp: Path) -> None:
    try:
        compile(b.body, b.where, "exec")
    except SyntaxError as e:
        pytest.fail(f"{b.where}: Python: {e}")


BY_LANG["python"] = check_python


def test_found_the_blocks():
    assert len(BLOCKS) > 40, [b.where for b in BLOCKS]  # the extractor works


def test_every_block_has_a_check_or_a_reason():
    bad = []
    for b in BLOCKS:
        if b.kind == "skip":
            if len(b.arg) < 10:
                bad.append(f"{b.where}: 'skip' without a reason")
        elif b.kind:
            if b.kind not in BY_MARKER:
                bad.append(f"{b.where}: unknown marker '{b.kind}'")
        elif not b.lang:
            bad.append(f"{b.where}: a fence without a language (`text` for what is not code)")
        elif b.lang != "text" and b.lang not in BY_LANG:
            bad.append(f"{b.where}: nothing checks '{b.lang}' blocks: add a check here or a "
                       "<!-- snippet: skip: REASON --> marker")
    assert not bad, "\n".join(bad)


CHECKED = [b for b in BLOCKS if b.kind in BY_MARKER or (not b.kind and b.lang in BY_LANG)]


@pytest.mark.parametrize("b", CHECKED, ids=[b.where for b in CHECKED])
def test_block(b: Block, tmp_path: Path):
    (BY_MARKER.get(b.kind) or BY_LANG[b.lang])(b, tmp_path)
