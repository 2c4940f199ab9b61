# SPDX-License-Identifier: BSD-3-Clause
"""The one way tests/kernel's scripted edits change a file of an unpacked
Linux source tree: every (old, new) pair must match exactly once, or the edit
fails loudly (the source does not have the shape it was written for); a file
that already carries the edit's mark is left alone (idempotent)."""
import sys
from pathlib import Path


def apply(tool, tree, rel, mark, edits, done):
    """Edits tree/rel with edits, a list of (old, new, what); prints done."""
    path = Path(tree) / rel
    text = path.read_text()
    if mark in text:
        return
    for old, new, what in edits:
        n = text.count(old)
        if n != 1:
            sys.exit(f"{tool}: expected one {what} in {Path(rel).name}, found {n}")
        text = text.replace(old, new)
    path.write_text(text)
    print(f"{tool}: {path} edited ({done})")
