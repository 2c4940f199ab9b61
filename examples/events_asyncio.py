#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""events_asyncio.py - an asyncio program waiting on two mdcom channels with
`await ch.aio.recv()` while its loop keeps running other tasks. The sender
is a thread attached as the other domain (a separate process or firmware
works the same way). Run: MDCOM_LIB=.../libmdcom.so PYTHONPATH=bindings/python
python3 examples/events_asyncio.py"""
import asyncio
import sys

import mdcom
from events_sensor import N, TOML, start_sensor  # the other domain


async def main() -> int:
    with mdcom.System(TOML, "app") as s:
        temp, alarm = s.fifo("temp"), s.fifo("alarm")
        start_sensor()
        readings = [(await temp.aio.recv(timeout=5)).decode() for _ in range(N)]
        print("temperatures:", ", ".join(readings))
        print("alarm:", (await alarm.aio.recv(timeout=5)).decode())
    return 0 if len(readings) == N else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
