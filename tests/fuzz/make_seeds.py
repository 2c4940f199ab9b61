#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the hand-made seeds of corpus/ (the fuzzer adds its own there when
the corpus is merged: scripts/reliability fuzz-merge). Encoding: see the
comment at the top of fuzz_region.c and its api()/hostile()/lifecycle()."""
import os, sys

API = 48
def api(op, k, c, to=0, *args):
    return bytes([API + op, k, c, to, *args])
SEND, RECV, ALLOC, GET, ENQ, DEQ, FREE, NOTIFY, WAIT, SENSE, FILTER, MISC = 7, 8, 0, 2, 3, 4, 1, 5, 6, 9, 10, 11

def hostile_word(off16, val_sel):
    return bytes([0, off16 & 0xff, off16 >> 8, val_sel])
def hostile_field(field, val_sel, a=0, b=0):
    return bytes([2, field, val_sel, a, b])

seeds = {
    "copy-traffic": b"".join(api(SEND, 0, 0, 0, 10) + api(RECV, 1, 0, 0, 48) for _ in range(6))
                    + api(SEND, 0, 1, 0, 1) + api(RECV, 1, 1, 2, 1)
                    + api(SEND, 1, 3, 0, 150) + api(RECV, 0, 3, 3, 200),
    "zero-copy": api(ALLOC, 0, 0) + api(GET, 0, 0, 0, 0) + api(ENQ, 0, 0, 0, 0, 5)
                 + api(NOTIFY, 0, 0) + api(WAIT, 1, 0, 2, 1) + api(DEQ, 1, 0) + api(FREE, 1, 0, 0, 0)
                 + api(SENSE, 0, 0),
    "smem": bytes([API + 0, 0, 2, 0]) + bytes([API + 1, 1, 2, 3]) + bytes([API + 3, 0, 2, 0])
            + bytes([API + 2, 0, 2, 0]) + bytes([API + 1, 1, 2, 3]) + bytes([API + 2, 1, 2, 0]),
    "filters": api(FILTER, 0, 0, 0, 1, 2, 1) + b"".join(api(SEND, 0, 0, 0, 4) for _ in range(4))
               + api(SENSE, 1, 0) + api(FILTER, 0, 0, 0, 0, 0, 0),
    "hostile-queue": api(SEND, 0, 0, 0, 8) + hostile_field(2 << 2 | 0, 4, 1, 0)   # ctl words of a
                     + api(RECV, 1, 0, 1, 48) + hostile_field(3 << 2 | 0, 200, 0, 1)  # slot id
                     + api(SEND, 0, 0, 0, 8) + api(DEQ, 1, 0) + api(SENSE, 0, 0),
    "hostile-blocks": api(ALLOC, 0, 0) + hostile_field(4 << 2 | 0, 20, 0) + api(ENQ, 0, 0, 0, 0, 3)
                      + hostile_field(4 << 2 | 0, 40, 1) + api(ALLOC, 0, 0) + api(DEQ, 1, 0)
                      + api(SENSE, 1, 0),
    "hostile-header": hostile_field(0 << 2, 11, 1) + api(SEND, 0, 0, 2, 4) + api(RECV, 1, 0, 2, 8)
                      + hostile_field(0 << 2, 9, 1) + api(WAIT, 1, 0, 3, 1),
    "lifecycle": bytes([240, 0, 1]) + api(SEND, 1, 0, 0, 4) + bytes([241, 0, 0])
                 + bytes([243]) + bytes([241, 1, 1]) + bytes([242, 0]) + api(RECV, 1, 0, 0, 48)
                 + bytes([244, 0]) + api(SEND, 1, 0, 3, 4) + bytes([245, 0]),
    "proc-table": hostile_field(1 << 2, 150, 5, 0) + hostile_field(1 << 2, 3, 5, 1)
                  + bytes([241, 0, 1]) + api(MISC, 0, 0, 0, 2, 1),
    "forged-entry": api(SEND, 0, 0, 0, 8) + bytes([3, 0, 0, 8, 5, 1, 2]) + api(DEQ, 1, 0)
                    + bytes([3, 3, 0, 1, 100, 1, 1]) + api(RECV, 0, 3, 0, 200) + api(SENSE, 0, 3),
    "scribble": hostile_word(64, 6) + bytes([1, 16, 0x40, 0x01] + [0xff] * 16) + api(SEND, 0, 0, 0, 4)
                + api(RECV, 1, 0, 0, 48),
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {out}")
