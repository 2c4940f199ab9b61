# SPDX-License-Identifier: BSD-3-Clause
"""events_sensor.py - the other domain of the events examples
(events_asyncio.py, events_glib.py): a "sensor" attached to events.toml
(or $MDCOM_EVENTS_TOML) that sends N temperatures on "temp", then one
message on "alarm". The examples run it in a thread; a separate process or
firmware works the same way."""
import os
import pathlib
import threading
import time

import mdcom

TOML = os.environ.get("MDCOM_EVENTS_TOML", str(pathlib.Path(__file__).with_name("events.toml")))
N = 5


def sensor() -> None:
    with mdcom.System(TOML, "sensor", attach_timeout=5) as s:
        temp, alarm = s.fifo("temp"), s.fifo("alarm")
        for i in range(N):
            time.sleep(0.01)
            temp.send(f"{20 + i} C".encode(), timeout=5)
        alarm.send(b"overheat", timeout=5)


def start_sensor() -> None:
    """The sensor in a daemon thread."""
    threading.Thread(target=sensor, daemon=True).start()
