# SPDX-License-Identifier: BSD-3-Clause
"""Every relative link of README.md and docs/*.md resolves (pytest, run by
ctest as docs_links): the file or folder it names exists, and its #anchor is
a heading of the target Markdown file (GitHub's anchor of it) or an explicit
<a id="..."> / <a name="...">. Links inside code blocks and inline code are
not links; absolute URLs (http:, https:, mailto:) are not checked (no
network in the tests).
"""
import os
import re
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MDCOM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DOCS = [SRC / "README.md", *sorted((SRC / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose_lines_raw(path: Path):
    """(line number, text) of the lines outside fenced code, inline code kept
    (headings keep its text)."""
    fence = None
    for n, ln in enumerate(path.read_text().split("\n"), 1):
        m = FENCE.match(ln)
        if m:
            if fence is None:
                fence = m.group(1)[0] * len(m.group(1))
            elif ln.strip().startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, ln


def prose_lines(path: Path):
    """(line number, text) of the lines outside fenced code, inline code removed."""
    for n, ln in prose_lines_raw(path):
        yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", "", ln)


def slug(text: str) -> str:
    """GitHub's anchor of a heading: markup and punctuation dropped, lower
    case, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)   # links: their text
    text = re.sub(r"</?[A-Za-z][^>]*>", "", text)             # inline HTML (not "<->")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, ln in prose_lines_raw(path):
        m = HEADING.match(ln)
        if m:
            base = slug(m.group(2))
            k = seen.get(base, 0)
            out.add(base if k == 0 else f"{base}-{k}")
            seen[base] = k + 1
        out.update(EXPLICIT.findall(ln))
    return out




def links(path: Path):
    for n, ln in prose_lines(path):
        for m in LINK.finditer(ln):
            yield n, m.group(1)
        m = REFDEF.match(ln)
        if m:
            yield n, m.group(1)


def broken(path: Path) -> list[str]:
    bad = []
    for n, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue                                   # http:, https:, mailto:
        file, _, frag = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        where = f"{path.relative_to(SRC)}:{n}: {target}"
        if not dest.exists():
            bad.append(f"{where}: no such file")
        elif frag and dest.suffix == ".md" and frag not in anchors(dest):
            bad.append(f"{where}: no heading or anchor '#{frag}' in {dest.relative_to(SRC)}")
    return bad


def test_found_links():
    assert sum(1 for d in DOCS for _ in links(d)) > 20  # the extractor works


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(SRC)) for d in DOCS])
def test_links_resolve(doc: Path):
    bad = broken(doc)
    assert not bad, "\n".join(bad)


def test_the_check_can_fail(tmp_path: Path):
    (tmp_path / "a.md").write_text("# A title\n\n## `x`: the (second) one\n## C <-> D\n")
    (tmp_path / "b.md").write_text(
        "[ok](a.md#a-title) [ok](a.md#x-the-second-one) [ok](#b) [ok](a.md#c---d)\n# B\n"
        "[bad](a.md#nope) [bad](missing.md) `[code](missing.md)`\n")
    global SRC
    old, SRC = SRC, tmp_path
    try:
        bad = broken(tmp_path / "b.md")
    finally:
        SRC = old
    assert len(bad) == 2, bad
    assert "a.md#nope: no heading" in bad[0] and "missing.md: no such file" in bad[1], bad
