# SPDX-License-Identifier: BSD-3-Clause
"""pytest suite of the Python package (bindings/python): real processes, a
real region. Run by ctest (tests/python/CMakeLists.txt sets MDCOM_LIB,
MDCOM_C_PEER and PYTHONPATH)."""
from __future__ import annotations

import asyncio
import errno
import os
import pathlib
import select
import subprocess
import sys
import textwrap
import time

import pytest

import mdcom
from mdcom import _cfg

HERE = pathlib.Path(__file__).parent


@pytest.fixture
def toml(tmp_path: pathlib.Path) -> pathlib.Path:
    """pair.toml.in with a region name unique to this test."""
    name = f"mdpy{os.getpid()}-{time.monotonic_ns() % 1000000}"
    p = tmp_path / "pair.toml"
    p.write_text((HERE / "pair.toml.in").read_text().replace("@REGION@", name))
    yield p
    try:
        os.unlink(f"/dev/shm/{name}")
    except OSError:
        pass


def peer(toml: pathlib.Path, body: str) -> subprocess.Popen:
    """A Python process attached as domain "b" running body (sys_ = System)."""
    code = "import mdcom, sys\nsys_ = mdcom.System(sys.argv[1], 'b', attach_timeout=10)\n"
    code += textwrap.dedent(body) + "\nsys_.close()\n"
    return subprocess.Popen([sys.executable, "-c", code, str(toml)])


def finish(p: subprocess.Popen) -> None:
    assert p.wait(timeout=30) == 0


def test_copy_round_trip_between_python_processes(toml):
    with mdcom.System(toml, "a") as s:
        p = peer(toml, """
            a2b, b2a = sys_.fifo('a2b'), sys_.fifo('b2a')
            for _ in range(200):  # echo each message reversed
                b2a.send(a2b.recv(timeout=10)[::-1], timeout=10)
        """)
        a2b, b2a = s.fifo("a2b"), s.fifo("b2a")
        for i in range(200):
            msg = f"message {i}".encode()
            assert a2b.send(msg, timeout=10)
            assert b2a.recv(timeout=10) == msg[::-1]
        finish(p)


def test_zero_copy_memoryview_is_the_block(toml):
    with mdcom.System(toml, "a") as s:
        p = peer(toml, """
            big, ack = sys_.fifo('big'), sys_.fifo('bigack')
            for i in range(3):
                b = big.dequeue(timeout=10)
                assert b.length == 1 << 20
                v = b.data
                assert v[0] == i and v[-1] == 255 - i and sum(v[1:1000]) == 0
                ack.send(bytes([i]), timeout=10)
                big.free(b)
        """)
        big, ack = s.fifo("big"), s.fifo("bigack")
        for i in range(3):
            b = big.alloc()
            assert isinstance(b.data, memoryview) and len(b.data) == 1 << 20
            assert not b.data.readonly
            b.data[0:1000] = bytes(1000)
            b.data[0] = i
            b.data[-1] = 255 - i
            # the view is the shared block: the same address every get()
            assert big.get(b.id) is b.data
            big.enqueue(b, 1 << 20)
            assert ack.recv(timeout=10) == bytes([i])
        finish(p)


def test_numpy_over_a_block_without_copy(toml):
    np = pytest.importorskip("numpy")
    with mdcom.System(toml, "a") as s:
        big = s.fifo("big")
        b = big.alloc()
        arr = np.frombuffer(b.data, dtype=np.uint8)
        arr[:4] = [1, 2, 3, 4]
        assert bytes(b.data[:4]) == b"\x01\x02\x03\x04"
        del arr
        big.free(b)


def test_smem_lock_is_a_context_manager_across_processes(toml):
    with mdcom.System(toml, "a") as s:
        st = s.smem("state")
        with st.lock(timeout=1) as area:
            area[0:5] = b"hello"
            p = peer(toml, """
                st = sys_.smem('state')
                assert not st.trylock()
                sys_.fifo('b2a').send(b'tried', timeout=10)
                with st.lock(timeout=10) as area:
                    assert bytes(area[0:5]) == b'HELLO'
                    area[0:5] = b'world'
            """)
            assert s.fifo("b2a").recv(timeout=10) == b"tried"
            time.sleep(0.05)  # the peer is (very likely) asleep in lock()
            area[0:5] = b"HELLO"
        finish(p)
        with st as area:
            assert bytes(area[0:5]) == b"world"


def test_errors_carry_errno_and_message(toml, tmp_path):
    with mdcom.System(toml, "a") as s:
        with pytest.raises(mdcom.MdcomTimeout) as e:
            s.fifo("b2a").recv(timeout=0.05)
        assert e.value.errno == 110 and "ETIMEDOUT" in str(e.value)
        assert isinstance(e.value, TimeoutError)
        with pytest.raises(mdcom.MdcomError) as e:
            s.fifo("a2b").recv(timeout=0)  # a is not a receiver of a2b
        assert e.value.errno == 1 and "EPERM" in str(e.value)
        with pytest.raises(mdcom.MdcomError) as e:
            s.fifo("nope")
        assert e.value.errno == 2
        with pytest.raises(mdcom.MdcomError) as e:
            s.fifo("a2b").send(b"x" * 65, timeout=0)
        assert e.value.errno == 90  # EMSGSIZE
        t0 = time.monotonic()
        with pytest.raises(mdcom.MdcomTimeout):
            s.fifo("b2a").recv(timeout=0.2)
        assert 0.2 <= time.monotonic() - t0 < 3
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace('block_size = 64\nblock_count = 8\nsenders = ["a"]',
                                            'block_size = 0\nblock_count = 8\nsenders = ["a"]', 1))
    with pytest.raises(_cfg.ConfigError) as e:
        mdcom.System(bad, "a")
    assert "block_size" in "\n".join(e.value.messages)
    with pytest.raises(mdcom.MdcomError):
        mdcom.System(toml, "nobody")
    with pytest.raises(mdcom.MdcomTimeout):  # remote, nobody formats the region
        mdcom.System(toml, "b", attach_timeout=0.1)


def test_fileno_in_select_and_clear(toml):
    with mdcom.System(toml, "a") as s:
        b2a = s.fifo("b2a")
        r, _, _ = select.select([b2a], [], [], 0.1)
        assert r == []
        p = peer(toml, "sys_.fifo('b2a').send(b'ping', timeout=10)")
        r, _, _ = select.select([b2a], [], [], 10)
        assert r == [b2a]
        assert b2a.recv(timeout=0) == b"ping"
        assert b2a.clear() == 0
        r, _, _ = select.select([b2a], [], [], 0)
        assert r == []
        finish(p)


def test_asyncio_await_recv(toml):
    async def main(s: mdcom.System) -> list[bytes]:
        b2a = s.fifo("b2a")
        got = []
        ticks = 0

        async def ticker() -> None:  # the loop keeps running while we wait
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1
        t = asyncio.create_task(ticker())
        for _ in range(20):
            got.append(await b2a.aio.recv(timeout=10))
        with pytest.raises(mdcom.MdcomTimeout):
            await b2a.aio.recv(timeout=0.05)
        t.cancel()
        assert ticks > 0
        return got

    with mdcom.System(toml, "a") as s:
        p = peer(toml, """
            import time
            b2a = sys_.fifo('b2a')
            for i in range(20):
                time.sleep(0.005)
                b2a.send(bytes([i]), timeout=10)
        """)
        assert asyncio.run(main(s)) == [bytes([i]) for i in range(20)]
        finish(p)


def test_timeouts_are_mdcom_timeout_sync_and_async(toml):
    """One exception for every timeout: MdcomTimeout (errno ETIMEDOUT), which
    is also the built-in TimeoutError (so asyncio.TimeoutError on 3.11+)."""
    async def main(s: mdcom.System) -> list[BaseException]:
        b2a, a2b = s.fifo("b2a"), s.fifo("a2b")
        errs = []
        for coro in (b2a.aio.recv(timeout=0.02), b2a.arecv(0.02)):
            try:
                await coro
            except BaseException as e:  # noqa: B036 - recorded and checked below
                errs.append(e)
        while True:  # fill a2b (nobody receives), then asend times out
            try:
                a2b.send(b"x", timeout=0)
            except mdcom.MdcomTimeout:
                break
        try:
            await a2b.aio.send(b"y", timeout=0.02)
        except BaseException as e:  # noqa: B036
            errs.append(e)
        return errs

    with mdcom.System(toml, "a") as s:
        errs = [*asyncio.run(main(s))]
        for f in (lambda: s.fifo("b2a").recv(timeout=0.01),
                  lambda: s.fifo("b2a").poll_recv(0.01)):
            try:
                f()
            except BaseException as e:  # noqa: B036
                errs.append(e)
    assert len(errs) == 5, errs
    for e in errs:
        assert type(e) is mdcom.MdcomTimeout, repr(e)
        assert isinstance(e, TimeoutError) and isinstance(e, asyncio.TimeoutError)
        assert isinstance(e, mdcom.MdcomError) and e.errno == errno.ETIMEDOUT, repr(e)


def test_aio_recv_ends_with_the_region(toml):
    """An awaited receive on a remote ends when the master terminates the
    region (docs/events.md, "When the region ends"): MdcomError ESHUTDOWN at
    once, not a timeout, and the event loop does not spin meanwhile."""
    code = ("import mdcom, sys\ns = mdcom.System(sys.argv[1], 'a')\nprint('up', flush=True)\n"
            "sys.stdin.readline()\ns.close()\n")
    master = subprocess.Popen([sys.executable, "-c", code, str(toml)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert master.stdout.readline() == "up\n"
        with mdcom.System(toml, "b", attach_timeout=10) as s:
            a2b = s.fifo("a2b")

            async def main() -> tuple[BaseException, float, float]:
                t = asyncio.create_task(a2b.aio.recv(timeout=20))
                await asyncio.sleep(0.2)
                cpu0, t0 = time.process_time(), time.monotonic()
                master.stdin.write("\n")  # the master ends the region now
                master.stdin.flush()
                try:
                    await t
                except BaseException as e:  # noqa: B036 - checked below
                    return e, time.monotonic() - t0, time.process_time() - cpu0
                raise AssertionError("aio.recv returned after the end of the region")

            e, dt, cpu = asyncio.run(main())
        assert isinstance(e, mdcom.MdcomError) and not isinstance(e, mdcom.MdcomTimeout), repr(e)
        assert e.errno == errno.ESHUTDOWN, repr(e)
        assert dt < 5, f"the end took {dt:.1f} s to reach the awaiting task"
        assert cpu < max(1.0, dt), f"{cpu:.2f} s of CPU in {dt:.2f} s: the loop spun"
    finally:
        master.stdin.close()
        assert master.wait(timeout=30) == 0


def test_python_and_c_processes(toml):
    exe = os.environ.get("MDCOM_C_PEER")
    if not exe:
        pytest.skip("MDCOM_C_PEER not set (run through ctest)")
    with mdcom.System(toml, "a") as s:
        region = s.config.region.name
        p = subprocess.Popen([exe, region, "50"])
        a2b, b2a = s.fifo("a2b"), s.fifo("b2a")
        for i in range(50):
            msg = f"py->c {i}".encode()
            a2b.send(msg, timeout=10)
            assert b2a.recv(timeout=10) == msg[::-1]
        assert p.wait(timeout=30) == 0


def test_config_is_the_configurators():
    # the package ships tools/mdcom_cfg.py itself, not a copy of its logic
    tools = HERE.parent.parent / "tools" / "mdcom_cfg.py"
    assert pathlib.Path(_cfg.__file__).resolve().read_bytes() == tools.read_bytes()
