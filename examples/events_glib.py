#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""events_glib.py - a GLib main loop (PyGObject: Debian python3-gi) watching
two mdcom channels through their pollable fds (GLib.unix_fd_add_full): the
loop sleeps in poll(2) until a notify from the other domain. After draining
a channel the handler calls ch.clear(), so the level-triggered fd stops being
readable until the next message. Run like events_asyncio.py."""
import sys

from gi.repository import GLib

import mdcom
from events_sensor import N, TOML, start_sensor  # the other domain


def main() -> int:
    loop = GLib.MainLoop()
    got: list[str] = []
    with mdcom.System(TOML, "app") as s:
        def on_ready(fd: int, cond: GLib.IOCondition, ch: mdcom.Fifo) -> bool:
            while True:
                try:
                    msg = ch.recv(timeout=0).decode()
                except mdcom.MdcomTimeout:
                    break
                except mdcom.MdcomError as e:  # ESHUTDOWN, ECONNRESET, ENOTCONN:
                    print(f"region ended: {e}")  # the fd stays readable: stop
                    loop.quit()                  # watching it (docs/events.md)
                    return GLib.SOURCE_REMOVE
                got.append(f"{ch.name}: {msg}")
                if ch.name == "alarm":
                    loop.quit()
            ch.clear()  # drained: the fd is readable again only after a notify
            return GLib.SOURCE_CONTINUE
        for name in ("temp", "alarm"):
            ch = s.fifo(name)
            GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, ch.fileno(), GLib.IOCondition.IN,
                                  on_ready, ch)
        GLib.timeout_add_seconds(10, loop.quit)
        start_sensor()
        loop.run()
    print("\n".join(got))
    return 0 if len(got) == N + 1 else 1


if __name__ == "__main__":
    sys.exit(main())
