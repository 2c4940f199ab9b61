# SPDX-License-Identifier: BSD-3-Clause
"""mdcom: Python bindings of libmdcom (ctypes over libmdcom.so, Linux).

Attach to a system described by a TOML file (parsed and checked at run time by
the configurator's own code, tools/mdcom_cfg.py, shipped as ``mdcom._cfg``)::

    import mdcom
    with mdcom.System("demo.toml", "linux") as sys:
        ctl = sys.fifo("ctl")
        ctl.send(b"hello", timeout=1.0)
        with sys.smem("state") as area:       # the lock, held in the block
            area[0:4] = b"\\x01\\x02\\x03\\x04"

Timeouts are seconds: ``None`` waits for ever, ``0`` never blocks. Errors are
:class:`MdcomError` (an ``OSError``: ``.errno`` and mdcom's message); a
timeout is :class:`MdcomTimeout` (also a ``TimeoutError``).

The library is found through ``$MDCOM_LIB`` (a path to libmdcom.so), else
the dynamic loader's search (``libmdcom.so.0`` / ``libmdcom.so``).
"""
from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno as _errno
import os
import time
from typing import Any, Optional, Union

from . import _cfg

__all__ = ["System", "Fifo", "Smem", "Block", "MdcomError", "MdcomTimeout", "EV_RX", "EV_TX",
           "EV_NOTIFY", "EV_SPACE", "EV_UNLOCKED", "load_library"]

EV_RX, EV_TX, EV_NOTIFY, EV_SPACE, EV_UNLOCKED = 0x1, 0x2, 0x4, 0x8, 0x10
_FOREVER = -1
_CHAN_FIFO, _CHAN_SMEM = 1, 2
_FILTERED = 1


class MdcomError(OSError):
    """A libmdcom call failed: ``errno`` (positive) and mdcom's message."""

    def __init__(self, err: int, what: str, detail: str = "") -> None:
        msg = _strerror(err)
        if detail:
            msg += f": {detail}"
        super().__init__(err, f"{what}: {msg}")


class MdcomTimeout(MdcomError, TimeoutError):
    """A wait ran out (-ETIMEDOUT)."""


# ---------------------------------------------------------------- ctypes ---
class _DomainCfg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("id", ctypes.c_uint32), ("role", ctypes.c_uint32)]


class _ChannelCfg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_uint32),
                ("block_size", ctypes.c_uint32), ("block_count", ctypes.c_uint32),
                ("queue_depth", ctypes.c_uint32), ("senders", ctypes.c_uint32),
                ("receivers", ctypes.c_uint32), ("size", ctypes.c_uint32),
                ("users", ctypes.c_uint32)]


class _Config(ctypes.Structure):
    _fields_ = [("region_name", ctypes.c_char_p), ("region_size", ctypes.c_uint32),
                ("mode", ctypes.c_uint32), ("group", ctypes.c_int32),
                ("domains", ctypes.POINTER(_DomainCfg)), ("n_domains", ctypes.c_uint32),
                ("channels", ctypes.POINTER(_ChannelCfg)), ("n_channels", ctypes.c_uint32)]


class _InitOpts(ctypes.Structure):
    _fields_ = [("attach_timeout_ns", ctypes.c_int64), ("platform", ctypes.c_void_p),
                ("errbuf", ctypes.c_char_p), ("errbuf_len", ctypes.c_size_t),
                ("spin_ns", ctypes.c_uint32), ("keep_region", ctypes.c_uint32),
                ("heartbeat_ms", ctypes.c_uint32), ("reserved0", ctypes.c_uint32),
                ("layout", ctypes.c_void_p), ("reserved", ctypes.c_uint32 * 4)]


_lib: Optional[ctypes.CDLL] = None


def load_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Load libmdcom (``path``, ``$MDCOM_LIB``, or the loader's search) once."""
    global _lib
    if _lib is not None:
        return _lib
    cands = [path or os.environ.get("MDCOM_LIB") or "", "libmdcom.so.0", "libmdcom.so",
             ctypes.util.find_library("mdcom") or ""]
    last: Optional[OSError] = None
    for c in cands:
        if not c:
            continue
        try:
            lib = ctypes.CDLL(c, use_errno=True)
            break
        except OSError as exc:
            last = exc
    else:
        raise OSError(_errno.ENOENT, f"libmdcom not found (set MDCOM_LIB): {last}")
    vp, u32, i32, i64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_int64
    pu32 = ctypes.POINTER(u32)
    sig = {
        "mdcom_init": (i32, [ctypes.POINTER(vp), ctypes.POINTER(_Config), u32,
                             ctypes.POINTER(_InitOpts)]),
        "mdcom_term": (i32, [vp]),
        "mdcom_strerror": (ctypes.c_char_p, [i32]),
        "mdcom_fifoch_open": (i32, [vp, ctypes.c_char_p, ctypes.POINTER(vp)]),
        "mdcom_smemch_open": (i32, [vp, ctypes.c_char_p, ctypes.POINTER(vp)]),
        "mdcom_fifoch_alloc": (i32, [vp, pu32]),
        "mdcom_fifoch_free": (i32, [vp, u32]),
        "mdcom_fifoch_get": (i32, [vp, u32, ctypes.POINTER(vp), pu32]),
        "mdcom_fifoch_enqueue": (i32, [vp, u32, u32]),
        "mdcom_fifoch_dequeue": (i32, [vp, pu32, pu32]),
        "mdcom_fifoch_notify": (i32, [vp]),
        "mdcom_fifoch_wait": (i32, [vp, u32, i64]),
        "mdcom_fifoch_send": (i32, [vp, ctypes.c_char_p, u32, i64]),
        "mdcom_fifoch_recv": (i32, [vp, vp, u32, i64]),
        "mdcom_smemch_get": (i32, [vp, ctypes.POINTER(vp), pu32]),
        "mdcom_smemch_trylock": (i32, [vp]),
        "mdcom_smemch_lock": (i32, [vp, i64]),
        "mdcom_smemch_unlock": (i32, [vp]),
        "mdcom_fifoch_fd": (i32, [vp, u32]),
        "mdcom_smemch_fd": (i32, [vp]),
        "mdcom_fd_clear": (i32, [i32]),
        "mdcom_fd_close": (i32, [i32]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def _strerror(err: int) -> str:
    try:
        s = load_library().mdcom_strerror(-abs(err))
        return s.decode() if s else os.strerror(err)
    except OSError:
        return os.strerror(err)


def _ns(timeout: Optional[float]) -> int:
    """Seconds (None = for ever) to mdcom's nanoseconds."""
    if timeout is None:
        return _FOREVER
    if timeout < 0:
        raise ValueError("timeout must be >= 0 or None")
    return int(timeout * 1e9)


def _check(r: int, what: str, detail: str = "") -> int:
    if r < 0:
        if r == -_errno.ETIMEDOUT:
            raise MdcomTimeout(-r, what, detail)
        raise MdcomError(-r, what, detail)
    return r


async def _within(coro: Any, timeout: Optional[float], what: str) -> Any:
    """Await coro at most timeout seconds (None: for ever). Running out is
    :class:`MdcomTimeout`, as in the blocking calls (it is a TimeoutError,
    hence also asyncio.TimeoutError, which asyncio.wait_for raises)."""
    try:
        return await asyncio.wait_for(coro, timeout)
    except asyncio.TimeoutError:
        raise MdcomTimeout(_errno.ETIMEDOUT, what, f"nothing within {timeout} s") from None


# --------------------------------------------------------------- objects ---
class System:
    """An attachment to the region a TOML file describes, as one domain.

    ``domain`` is the domain's name or id. The master domain formats the
    region; others wait up to ``attach_timeout`` seconds for it. The config is
    parsed and checked by ``mdcom._cfg`` (tools/mdcom_cfg.py): errors raise
    ``mdcom._cfg.ConfigError`` with one message per problem.
    """

    def __init__(self, toml: Union[str, os.PathLike], domain: Union[str, int],
                 attach_timeout: Optional[float] = 5.0, spin_ns: int = 0,
                 keep_region: bool = False, library: Optional[str] = None) -> None:
        lib = load_library(library)
        self._lib = lib
        self.config = cfg = _cfg.load_config(os.fspath(toml))
        ids = {d.name: d.id for d in cfg.domains}
        if isinstance(domain, str):
            if domain not in ids:
                raise MdcomError(_errno.EINVAL, "System", f"no domain '{domain}' in {toml}")
            domain = ids[domain]
        self.domain_id = int(domain)
        # the C structs must outlive the attachment: keep them on self
        self._names = [c.name.encode() for c in cfg.channels] + [d.name.encode()
                                                                 for d in cfg.domains]
        doms = (_DomainCfg * len(cfg.domains))()
        for i, d in enumerate(cfg.domains):
            doms[i] = _DomainCfg(d.name.encode(), d.id, 1 if d.role == "master" else 2)
        chans = (_ChannelCfg * max(1, len(cfg.channels)))()

        def mask(ids_: tuple[int, ...]) -> int:
            return sum(1 << i for i in ids_)
        for i, c in enumerate(cfg.channels):
            if c.type == "fifo":
                chans[i] = _ChannelCfg(c.name.encode(), _CHAN_FIFO, c.block_size, c.block_count,
                                       c.queue_depth, mask(c.senders), mask(c.receivers), 0, 0)
            else:
                chans[i] = _ChannelCfg(c.name.encode(), _CHAN_SMEM, 0, 0, 0, 0, 0, c.size,
                                       mask(c.users))
        self._doms, self._chans = doms, chans
        self._c = _Config(cfg.region.name.encode(), cfg.region.size, cfg.region.mode,
                          cfg.region.group, doms, len(cfg.domains), chans, len(cfg.channels))
        self._err = ctypes.create_string_buffer(256)
        opts = _InitOpts(_ns(attach_timeout), None, ctypes.cast(self._err, ctypes.c_char_p),
                         256, spin_ns, 1 if keep_region else 0, 0)
        h = ctypes.c_void_p()
        r = lib.mdcom_init(ctypes.byref(h), ctypes.byref(self._c), self.domain_id,
                           ctypes.byref(opts))
        _check(r, "mdcom_init", self._err.value.decode(errors="replace"))
        self._h: Optional[int] = h.value
        self._chs: dict[str, Union[Fifo, Smem]] = {}

    @property
    def handle(self) -> int:
        if self._h is None:
            raise MdcomError(_errno.EINVAL, "System", "closed")
        return self._h

    def fifo(self, name: str) -> "Fifo":
        """The FIFO channel ``name`` (-ENOENT, -EPERM as MdcomError)."""
        return self._channel(name, Fifo, self._lib.mdcom_fifoch_open, "fifo")

    def smem(self, name: str) -> "Smem":
        """The SMEM channel ``name``."""
        return self._channel(name, Smem, self._lib.mdcom_smemch_open, "smem")

    def _channel(self, name: str, cls: type, open_fn: Any, kind: str) -> Any:
        """The channel ``name`` of class cls, opened once with open_fn."""
        ch = self._chs.get(name)
        if ch is None:
            out = ctypes.c_void_p()
            _check(open_fn(self.handle, name.encode(), ctypes.byref(out)), f"{kind} '{name}'")
            ch = self._chs[name] = cls(self, name, out.value)
        assert isinstance(ch, cls)
        return ch

    def close(self) -> None:
        """Detach (mdcom_term). Channels and memoryviews become invalid."""
        if self._h is not None:
            for ch in self._chs.values():
                ch._closing()
            self._lib.mdcom_term(self._h)
            self._h = None

    def __enter__(self) -> "System":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class Block:
    """A block of a FIFO channel held by this process: ``id`` and ``data``, a
    writable memoryview over the block itself (no copy; ``numpy.frombuffer``
    works on it). ``length``: the message length (dequeued blocks)."""

    __slots__ = ("id", "data", "length")

    def __init__(self, id_: int, data: memoryview, length: int) -> None:
        self.id, self.data, self.length = id_, data, length


class Fifo:
    """A FIFO channel. Copy API: send/recv; zero-copy: alloc/get/enqueue/
    dequeue/free; waits: wait, fileno() (readable while a block is queued),
    and the coroutines arecv/asend for asyncio."""

    def __init__(self, sys_: System, name: str, h: int) -> None:
        self.system, self.name, self._h, self._lib = sys_, name, h, sys_._lib
        self._fds: dict[int, int] = {}
        self._views: dict[int, memoryview] = {}
        self._buf = ctypes.create_string_buffer(max(1, self._block_size()))
        self._u1, self._u2 = ctypes.c_uint32(), ctypes.c_uint32()

    def _block_size(self) -> int:
        c = next(c for c in self.system.config.channels if c.name == self.name)
        return c.block_size

    @property
    def block_size(self) -> int:
        return len(self._buf)

    # copy API
    def send(self, data: Union[bytes, bytearray, memoryview], timeout: Optional[float] = None) -> bool:
        """Copy ``data`` into a block, queue it, notify. False when the
        channel's filter dropped it. Waits up to ``timeout`` for a free block."""
        b = bytes(data) if not isinstance(data, bytes) else data
        r = _check(self._lib.mdcom_fifoch_send(self._h, b, len(b), _ns(timeout)),
                   f"send on '{self.name}'")
        return r != _FILTERED

    def recv(self, timeout: Optional[float] = None) -> bytes:
        """The next message (a copy), waiting up to ``timeout`` seconds."""
        n = _check(self._lib.mdcom_fifoch_recv(self._h, self._buf, len(self._buf), _ns(timeout)),
                   f"recv on '{self.name}'")
        return ctypes.string_at(self._buf, n)  # n bytes, not the whole block

    def try_recv(self) -> Optional[bytes]:
        """The next message, or None at once when none is queued (no
        exception on the empty path: for polling loops)."""
        n = self._lib.mdcom_fifoch_recv(self._h, self._buf, len(self._buf), 0)
        if n == -_errno.ETIMEDOUT:
            return None
        _check(n, f"recv on '{self.name}'")
        return ctypes.string_at(self._buf, n)

    def poll_recv(self, timeout: float, interval: float = 0.0) -> bytes:
        """The next message, polling (try_recv, with ``interval`` seconds of
        sleep between tries) for up to ``timeout`` seconds: for regions whose
        peer cannot wake this process (a firmware whose doorbell is not the
        futex). :class:`MdcomTimeout` when nothing came."""
        end = time.monotonic() + timeout
        while True:
            m = self.try_recv()
            if m is not None:
                return m
            if time.monotonic() > end:
                raise MdcomTimeout(_errno.ETIMEDOUT, f"poll_recv on '{self.name}'",
                                   f"nothing within {timeout} s")
            if interval:
                time.sleep(interval)

    def recv_into(self, buf: Union[bytearray, memoryview], timeout: Optional[float] = None) -> int:
        """Receive into a writable buffer; returns the length."""
        c = (ctypes.c_char * len(buf)).from_buffer(buf)
        return _check(self._lib.mdcom_fifoch_recv(self._h, c, len(buf), _ns(timeout)),
                      f"recv on '{self.name}'")

    # zero-copy API
    def get(self, id_: int) -> memoryview:
        """A writable memoryview over block ``id_`` (the shared memory itself)."""
        v = self._views.get(id_)
        if v is None:
            p = ctypes.c_void_p()
            _check(self._lib.mdcom_fifoch_get(self._h, id_, ctypes.byref(p), ctypes.byref(self._u1)),
                   f"get on '{self.name}'")
            v = memoryview((ctypes.c_char * self._u1.value).from_address(p.value)).cast("B")
            self._views[id_] = v
        return v

    def alloc(self) -> Block:
        """Take a free block (MdcomError ENOBUFS when none; wait(EV_TX) first)."""
        _check(self._lib.mdcom_fifoch_alloc(self._h, ctypes.byref(self._u1)),
               f"alloc on '{self.name}'")
        i = self._u1.value
        return Block(i, self.get(i), 0)

    def enqueue(self, block: Union[Block, int], length: int, notify: bool = True) -> bool:
        """Queue a block carrying ``length`` bytes (ownership passes to the
        receiver), then notify unless told not to. False: filtered out."""
        i = block.id if isinstance(block, Block) else block
        r = _check(self._lib.mdcom_fifoch_enqueue(self._h, i, length), f"enqueue on '{self.name}'")
        if notify:
            self._lib.mdcom_fifoch_notify(self._h)
        return r != _FILTERED

    def dequeue(self, timeout: Optional[float] = 0) -> Block:
        """Take the oldest queued block (waiting up to ``timeout`` for one);
        give it back with :meth:`free`."""
        t = _ns(timeout)
        while True:
            r = self._lib.mdcom_fifoch_dequeue(self._h, ctypes.byref(self._u1), ctypes.byref(self._u2))
            if r != -_errno.EAGAIN or t == 0:
                _check(r, f"dequeue on '{self.name}'")
                i = self._u1.value
                return Block(i, self.get(i), self._u2.value)
            _check(self._lib.mdcom_fifoch_wait(self._h, EV_RX, t), f"dequeue on '{self.name}'")

    def free(self, block: Union[Block, int], notify: bool = True) -> None:
        """Return a block to the pool (and notify waiting senders)."""
        i = block.id if isinstance(block, Block) else block
        _check(self._lib.mdcom_fifoch_free(self._h, i), f"free on '{self.name}'")
        if notify:
            self._lib.mdcom_fifoch_notify(self._h)

    def notify(self) -> None:
        self._lib.mdcom_fifoch_notify(self._h)

    def wait(self, events: int = EV_RX, timeout: Optional[float] = None) -> int:
        """Wait until one of ``events`` holds; returns those that hold."""
        return _check(self._lib.mdcom_fifoch_wait(self._h, events, _ns(timeout)),
                      f"wait on '{self.name}'")

    # event loops
    def fd(self, events: int = EV_RX) -> int:
        """A pollable fd readable while ``events`` hold (one per event mask,
        owned by the channel; see docs/events.md). After handling it, call
        :meth:`clear`."""
        fd = self._fds.get(events)
        if fd is None:
            fd = self._fds[events] = _check(self._lib.mdcom_fifoch_fd(self._h, events),
                                            f"fd of '{self.name}'")
        return fd

    def fileno(self) -> int:
        """The EV_RX fd (so a Fifo can be given to select/selectors)."""
        return self.fd(EV_RX)

    def clear(self, events: int = EV_RX) -> int:
        """Re-evaluate the fd of ``events``: the mask that holds (0: the fd is
        no longer readable)."""
        return _check(self._lib.mdcom_fd_clear(self.fd(events)), f"clear on '{self.name}'")

    async def _ready(self, events: int) -> None:
        loop = asyncio.get_running_loop()
        fd = self.fd(events)
        fut = loop.create_future()

        def cb() -> None:
            if not fut.done():
                fut.set_result(None)
        loop.add_reader(fd, cb)
        try:
            await fut
        finally:
            loop.remove_reader(fd)

    async def arecv(self, timeout: Optional[float] = None) -> bytes:
        """asyncio: the next message, without blocking the event loop."""
        async def go() -> bytes:
            while True:
                try:
                    return self.recv(0)
                except MdcomTimeout:
                    pass
                if self.clear(EV_RX) == 0:
                    await self._ready(EV_RX)
        return await _within(go(), timeout, f"recv on '{self.name}'")

    async def asend(self, data: bytes, timeout: Optional[float] = None) -> bool:
        """asyncio: send, waiting for a free block without blocking the loop."""
        async def go() -> bool:
            while True:
                try:
                    return self.send(data, 0)
                except MdcomTimeout:
                    pass
                if self.clear(EV_TX) == 0:
                    await self._ready(EV_TX)
        return await _within(go(), timeout, f"send on '{self.name}'")

    @property
    def aio(self) -> "AsyncFifo":
        """This channel with coroutine send/recv: ``await ch.aio.recv()``."""
        return AsyncFifo(self)

    def _closing(self) -> None:
        for fd in self._fds.values():
            self._lib.mdcom_fd_close(fd)
        self._fds.clear()
        for v in self._views.values():
            try:
                v.release()
            except BufferError:  # still exported (a numpy array over it): leave it
                pass
        self._views.clear()


class AsyncFifo:
    """asyncio view of a :class:`Fifo`: ``await ch.aio.recv()``."""

    def __init__(self, ch: Fifo) -> None:
        self.ch = ch

    async def recv(self, timeout: Optional[float] = None) -> bytes:
        return await self.ch.arecv(timeout)

    async def send(self, data: bytes, timeout: Optional[float] = None) -> bool:
        return await self.ch.asend(data, timeout)


class Smem:
    """An SMEM channel: a shared area behind an inter-domain lock. Use it as a
    context manager (``with sys.smem("x") as area:``) or via :meth:`lock`."""

    def __init__(self, sys_: System, name: str, h: int) -> None:
        self.system, self.name, self._h, self._lib = sys_, name, h, sys_._lib
        p, n = ctypes.c_void_p(), ctypes.c_uint32()
        _check(self._lib.mdcom_smemch_get(h, ctypes.byref(p), ctypes.byref(n)), "smem get")
        self._view: Optional[memoryview] = memoryview(
            (ctypes.c_char * n.value).from_address(p.value)).cast("B")
        self._fd: Optional[int] = None
        self._timeout: Optional[float] = None

    @property
    def area(self) -> memoryview:
        """The shared area (access it only while holding the lock)."""
        if self._view is None:
            raise MdcomError(_errno.EINVAL, "smem", "closed")
        return self._view

    def trylock(self) -> bool:
        """Take the lock if free: True, or False when another holds it."""
        r = self._lib.mdcom_smemch_trylock(self._h)
        if r == -_errno.EBUSY:
            return False
        _check(r, f"trylock '{self.name}'")
        return True

    def acquire(self, timeout: Optional[float] = None) -> memoryview:
        _check(self._lib.mdcom_smemch_lock(self._h, _ns(timeout)), f"lock '{self.name}'")
        return self.area

    def release(self) -> None:
        _check(self._lib.mdcom_smemch_unlock(self._h), f"unlock '{self.name}'")

    def lock(self, timeout: Optional[float] = None) -> "_Locked":
        """``with smem.lock(timeout=1.0) as area:`` holds the lock in the block."""
        return _Locked(self, timeout)

    def fileno(self) -> int:
        """A pollable fd readable while the lock is free."""
        if self._fd is None:
            self._fd = _check(self._lib.mdcom_smemch_fd(self._h), f"fd of '{self.name}'")
        return self._fd

    def __enter__(self) -> memoryview:
        return self.acquire(self._timeout)

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _closing(self) -> None:
        if self._fd is not None:
            self._lib.mdcom_fd_close(self._fd)
            self._fd = None
        if self._view is not None:
            self._view.release()
            self._view = None


class _Locked:
    def __init__(self, s: Smem, timeout: Optional[float]) -> None:
        self.s, self.timeout = s, timeout

    def __enter__(self) -> memoryview:
        return self.s.acquire(self.timeout)

    def __exit__(self, *exc: object) -> None:
        self.s.release()

