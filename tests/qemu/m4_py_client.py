# SPDX-License-Identifier: BSD-3-Clause
"""The Linux side of test_qemu_m4_py.py, run by mdcom-qemu next to the
firmware (mdcom-fw-resp under QEMU): the Python package attaches as domain
"linux" of qemu_m4.toml and talks the protocol of
firmware/common/include/mdcom_fw/proto.h, polling (the binding has no UART
doorbell; the firmware's command wait wakes on its SysTick). Exits 0 when
every check held, else 1 with the reason."""
from __future__ import annotations

import struct
import sys
import zlib

import mdcom

FW_OP_PING, FW_OP_ECHO, FW_OP_SMEM = 1, 2, 5
FW_MODE_POLL = 0
FW_ARG_CHECK = 1
RSP = struct.Struct("<IiIIII")  # fw_rsp: op, status, count, value, value2, elapsed_us
HDR = struct.Struct("<III")     # fw_echo_hdr: seq, len, crc


def main() -> int:
    s = mdcom.System(sys.argv[1], "linux", attach_timeout=10)
    ctl, rsp, ein, eout = (s.fifo(n) for n in ("ctl", "rsp", "echo_in", "echo_out"))

    def run(op: int, count: int = 0, arg: int = 0) -> tuple[int, ...]:
        assert ctl.send(struct.pack("<4I", op, FW_MODE_POLL, count, arg), timeout=10)
        return RSP.unpack(rsp.poll_recv(30))

    op, status, _, token, _, _ = run(FW_OP_PING)
    assert (op, status) == (FW_OP_PING, 0) and token >= 1, f"ping: op {op} status {status}"

    # echo of varied lengths; the firmware checks seq + CRC-32 (zlib's is the
    # same IEEE CRC as fw_crc32), this side checks every byte that comes back
    n = 2000
    assert ctl.send(struct.pack("<4I", FW_OP_ECHO, FW_MODE_POLL, n, FW_ARG_CHECK), timeout=10)
    for i in range(n):
        body = bytes((i * 7 + k) & 0xFF for k in range((i * 37) % 485))
        msg = HDR.pack(i, len(body), zlib.crc32(body)) + body
        assert ein.send(msg, timeout=10)
        back = eout.poll_recv(10.0)
        assert back == msg, f"echo {i}: {len(back)} bytes back for {len(msg)}"
    op, status, count, bad, _, _ = RSP.unpack(rsp.poll_recv(30))
    assert (status, count, bad) == (0, n, 0), f"echo: status {status} count {count} bad {bad}"

    # the SMEM lock and area shared with the firmware: it increments the
    # counter (word 0 of "state") n times under the lock, then this side does
    state = s.smem("state")
    with state.lock(timeout=10) as area:
        start = struct.unpack_from("<I", area, 0)[0]
    op, status, count, bad, _, _ = run(FW_OP_SMEM, 1000)
    assert (status, count, bad) == (0, 1000, 0), f"smem: status {status} count {count} bad {bad}"
    for _ in range(1000):
        with state.lock(timeout=10) as area:
            v = struct.unpack_from("<I", area, 0)[0]
            struct.pack_into("<I", area, 0, v + 1)
    with state.lock(timeout=10) as area:
        end = struct.unpack_from("<I", area, 0)[0]
    assert end == start + 2000, f"smem counter {end}, expected {start + 2000}"
    s.close()
    print("python <-> firmware: ping, 2000 echoes, 2000 locked increments: ok")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, TimeoutError, mdcom.MdcomError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
