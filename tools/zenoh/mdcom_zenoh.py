# SPDX-License-Identifier: BSD-3-Clause
"""mdcom-zenoh: bridge FIFO channels of an mdcom region onto Zenoh.

The daemon attaches to the region described by a TOML file as one process of
a (Linux) domain and serves the file's [[bridge]] entries:

* direction "out": messages received from the FIFO channel are published on
  the entry's key expression (one Zenoh sample per message);
* direction "in": samples received on the key expression are sent into the
  FIFO channel (one message per sample).

Each published sample carries an attachment (see ``Header``): the bridge's
id, the stream's epoch (the publishing bridge's start time) and a per-channel
sequence number. A receiving bridge drops its own samples (no echo loops),
drops duplicates and counts gaps as losses. Counters are written to a JSON
status file and answered on ``<status-key>`` (a Zenoh queryable).

Semantics, configuration and deployment: docs/bridge.md.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import mmap
import os
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from typing import Any, Optional

import mdcom
from mdcom import _cfg

try:
    import zenoh
except ImportError:  # reported by main(); the module stays importable for tests
    zenoh = None  # type: ignore[assignment]

__all__ = ["Header", "Bridge", "main"]


class Header:
    """The sample attachment: magic, epoch (u64), seq (u64), bridge id (utf-8)."""

    MAGIC = b"MDZ1"
    FMT = struct.Struct("<4sQQ")

    @classmethod
    def pack(cls, epoch: int, seq: int, bridge_id: bytes) -> bytes:
        return cls.FMT.pack(cls.MAGIC, epoch, seq) + bridge_id

    @classmethod
    def unpack(cls, raw: bytes) -> Optional[tuple[int, int, bytes]]:
        """(epoch, seq, bridge id), or None for a sample that has no (valid)
        header: a plain Zenoh publisher's."""
        if len(raw) < cls.FMT.size or raw[:4] != cls.MAGIC:
            return None
        _, epoch, seq = cls.FMT.unpack_from(raw)
        return epoch, seq, raw[cls.FMT.size:]


class SeqStore:
    """Last delivered (epoch, seq) per incoming stream, in a small memory-mapped
    file, so that a bridge restarted after a crash (SIGKILL included: the
    mapping is the page cache) knows where each stream stood: what it receives
    again is a duplicate, what it never receives is counted as lost."""

    SLOTS = 256
    SLOT = struct.Struct("<20sQQ")  # sha1(stream name), epoch, last seq

    def __init__(self, path: Optional[str]) -> None:
        self._slots: dict[bytes, int] = {}
        self._by_stream: dict[str, int] = {}
        self._names: dict[int, bytes] = {}
        self._mm: Optional[mmap.mmap] = None
        if path is None:
            return
        size = self.SLOTS * self.SLOT.size
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size != size:
                os.ftruncate(fd, size)
            self._mm = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        for i in range(self.SLOTS):
            name, _, _ = self.SLOT.unpack_from(self._mm, i * self.SLOT.size)
            if name != bytes(20):
                self._slots[name] = i

    @staticmethod
    def _name(stream: str) -> bytes:
        return hashlib.sha1(stream.encode()).digest()

    def load(self, stream: str) -> Optional[tuple[int, int]]:
        """(epoch, last seq) stored for stream, or None."""
        i = self._slots.get(self._name(stream))
        if i is None or self._mm is None:
            return None
        _, epoch, seq = self.SLOT.unpack_from(self._mm, i * self.SLOT.size)
        return epoch, seq

    def store(self, stream: str, epoch: int, seq: int) -> None:
        if self._mm is None:
            return
        i = self._by_stream.get(stream)  # per message: no hashing on the hot path
        if i is not None:
            self.SLOT.pack_into(self._mm, i * self.SLOT.size, self._names[i], epoch, seq)
            return
        name = self._name(stream)
        i = self._slots.get(name)
        if i is None:
            if len(self._slots) >= self.SLOTS:  # full: forget the oldest slot
                i = min(self._slots.values())
                self._slots = {k: v for k, v in self._slots.items() if v != i}
            else:
                i = len(self._slots)
            self._slots[name] = i
        self._by_stream = {k: v for k, v in self._by_stream.items() if v != i}
        self._by_stream[stream] = i
        self._names[i] = name
        self.SLOT.pack_into(self._mm, i * self.SLOT.size, name, epoch, seq)


_IN_QUEUE = 16  # samples between Zenoh's reader and a direction "in" worker

COUNTERS = ("messages", "bytes", "lost", "duplicates", "echo_dropped", "congestion_dropped",
            "rate_dropped", "oversize", "filtered", "foreign", "errors")


class Entry:
    """One [[bridge]] entry at run time with its counters."""

    def __init__(self, index: int, b: _cfg.Bridge) -> None:
        self.index, self.cfg = index, b
        # written only by the entry's own worker thread; status readers copy
        # the dict (one operation under the GIL) and may be a message behind
        self.stats: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.seq = 0  # out: last published
        # in: (sender id, key) -> [epoch, last delivered seq]
        self.streams: dict[tuple[bytes, str], list[int]] = {}

    def count(self, what: str, n: int = 1) -> None:
        self.stats[what] += n

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.stats)
        out.update(channel=self.cfg.channel, direction=self.cfg.direction, key=self.cfg.key,
                   congestion=self.cfg.congestion, reliability=self.cfg.reliability)
        if self.cfg.direction == "out":
            out["seq"] = self.seq
        return out


def _zenoh_qos(b: _cfg.Bridge) -> dict[str, Any]:
    return dict(
        congestion_control=(zenoh.CongestionControl.BLOCK if b.congestion == "block"
                            else zenoh.CongestionControl.DROP),
        priority=getattr(zenoh.Priority, ("REAL_TIME", "INTERACTIVE_HIGH", "INTERACTIVE_LOW",
                                          "DATA_HIGH", "DATA", "DATA_LOW",
                                          "BACKGROUND")[b.priority - 1]),
        express=b.express,
        reliability=(zenoh.Reliability.RELIABLE if b.reliability == "reliable"
                     else zenoh.Reliability.BEST_EFFORT),
    )


class Bridge:
    """The daemon: one mdcom attachment, one Zenoh session, the entries."""

    def __init__(self, toml: str, domain: Optional[str], zenoh_config: Optional[str],
                 bridge_id: Optional[str], status: Optional[str], status_key: Optional[str],
                 attach_timeout: float, log=None) -> None:
        self.log = log or (lambda msg: print(f"mdcom-zenoh: {msg}", file=sys.stderr, flush=True))
        cfg = _cfg.load_config(toml)
        if not cfg.bridges:
            raise _cfg.ConfigError([f"{toml}: no [[bridge]] entry"])
        doms = {d.id: d.name for d in cfg.domains}
        if domain is None:
            used = {b.domain for b in cfg.bridges}
            if len(used) != 1:
                raise _cfg.ConfigError([f"{toml}: [[bridge]] entries name several domains "
                                        f"({', '.join(sorted(doms[d] for d in used))}): "
                                        "choose one with --domain"])
            domain = doms[used.pop()]
        dom_id = next((i for i, n in doms.items() if n == domain or str(i) == domain), None)
        if dom_id is None:
            raise _cfg.ConfigError([f"{toml}: no domain '{domain}'"])
        self.entries = [Entry(i, b) for i, b in enumerate(cfg.bridges) if b.domain == dom_id]
        if not self.entries:
            raise _cfg.ConfigError([f"{toml}: no [[bridge]] entry for domain '{domain}'"])
        self.id = (bridge_id or f"{socket.gethostname()}/{cfg.region.name}/{doms[dom_id]}")
        self.id_b = self.id.encode()
        self.epoch = time.time_ns()
        self.status_path = status
        self.status_key = status_key
        self.seqs = SeqStore(status + ".seq" if status else None)
        self.stop = threading.Event()
        self.peers = 0
        self.connects = 0  # times the number of Zenoh peers/routers went from 0 to > 0
        self.started = time.time()
        self.system = mdcom.System(toml, dom_id, attach_timeout=attach_timeout)
        zc = zenoh.Config.from_file(zenoh_config) if zenoh_config else zenoh.Config()
        self.session = zenoh.open(zc)
        self._threads: list[threading.Thread] = []
        self._decl: list[Any] = []
        for e in self.entries:
            fifo = self.system.fifo(e.cfg.channel)
            if e.cfg.direction == "out":
                pub = self.session.declare_publisher(e.cfg.key, **_zenoh_qos(e.cfg))
                self._decl.append(pub)
                t = threading.Thread(target=self._out_loop, args=(e, fifo, pub),
                                     name=f"out:{e.cfg.channel}", daemon=True)
                self._threads.append(t)
            else:
                # a bounded queue between Zenoh's reader and the worker: with
                # "block" a full one holds the reader (backpressure onto the
                # link), with "drop" the oldest sample goes (a gap: counted lost)
                handler = (zenoh.handlers.FifoChannel(_IN_QUEUE) if e.cfg.congestion == "block"
                           else zenoh.handlers.RingChannel(_IN_QUEUE))
                sub = self.session.declare_subscriber(e.cfg.key, handler)
                self._decl.append(sub)
                t = threading.Thread(target=self._in_loop, args=(e, fifo, sub),
                                     name=f"in:{e.cfg.channel}", daemon=True)
                self._threads.append(t)
        if status_key:
            self._decl.append(self.session.declare_queryable(status_key, self._on_status_query))
        self._threads.append(threading.Thread(target=self._status_loop, name="status",
                                              daemon=True))
        for t in self._threads:
            t.start()
        self.log(f"bridge '{self.id}' up: region '{cfg.region.name}' as domain "
                 f"'{doms[dom_id]}', {len(self.entries)} entr{'y' if len(self.entries) == 1 else 'ies'}")

    # channel -> Zenoh ------------------------------------------------------
    def _out_loop(self, e: Entry, fifo: mdcom.Fifo, pub: Any) -> None:
        rate = e.cfg.rate_limit
        interval = 1.0 / rate if rate else 0.0
        next_slot = time.monotonic()
        block = e.cfg.congestion == "block"
        while not self.stop.is_set():
            try:
                msg = fifo.recv(timeout=0.2)
            except mdcom.MdcomTimeout:
                continue
            except mdcom.MdcomError as exc:
                e.count("errors")
                self.log(f"{e.cfg.channel}: {exc}")
                self.stop.wait(0.5)
                continue
            if rate:
                now = time.monotonic()
                if now < next_slot:
                    if not block:
                        e.count("rate_dropped")
                        continue
                    time.sleep(next_slot - now)  # pacing = backpressure into the FIFO
                    now = next_slot
                next_slot = max(next_slot + interval, now - 1.0) if block else now + interval
            e.seq += 1
            try:
                pub.put(msg, attachment=Header.pack(self.epoch, e.seq, self.id_b))
            except Exception as exc:  # zenoh.ZError: session closing
                e.count("errors")
                self.log(f"{e.cfg.channel}: put: {exc}")
                continue
            e.stats["messages"] += 1
            e.stats["bytes"] += len(msg)

    # Zenoh -> channel ------------------------------------------------------
    def _in_loop(self, e: Entry, fifo: mdcom.Fifo, sub: Any) -> None:
        while not self.stop.is_set():
            try:
                sample = sub.handler.recv()
            except Exception:  # the subscriber was undeclared: closing
                return
            self._on_sample(e, fifo, sample)

    def _on_sample(self, e: Entry, fifo: mdcom.Fifo, sample: Any) -> None:
        att = sample.attachment
        hdr = Header.unpack(att.to_bytes()) if att is not None else None
        key = str(sample.key_expr)
        stream_name = ""
        seq = 0
        if hdr is None:
            e.count("foreign")  # a plain Zenoh publisher: no order/loss tracking
        else:
            epoch, seq, sender = hdr
            if sender == self.id_b:
                e.count("echo_dropped")
                return
            stream = (sender, key)
            st = e.streams.get(stream)
            if st is None:
                name = f"{e.index}|{sender.decode(errors='replace')}|{key}"
                stored = self.seqs.load(name)
                # a stream we delivered before a restart goes on from there;
                # a new one (or a new epoch: the sender restarted) starts here
                st = e.streams[stream] = [*stored, name] if stored and stored[0] == epoch \
                    else [epoch, seq - 1, name]
            elif st[0] != epoch:
                st[:2] = [epoch, seq - 1]
            stream_name = st[2]
            if seq <= st[1]:
                e.stats["duplicates"] += 1
                return
            if seq > st[1] + 1:
                e.stats["lost"] += seq - st[1] - 1
            st[1] = seq
        payload = sample.payload.to_bytes()
        if len(payload) > fifo.block_size:
            e.count("oversize")
            if e.stats["oversize"] == 1:
                self.log(f"{e.cfg.channel}: {len(payload)} B message from '{key}' is larger "
                         f"than the channel's block size {fifo.block_size}: not delivered "
                         "(counted as oversize)")
            self._delivered(stream_name, hdr, seq)
            return
        try:
            if e.cfg.congestion == "block":
                # wait for a free block as long as it takes: Zenoh's reader
                # stops, TCP fills, the publishing bridge blocks, its FIFO fills
                while True:
                    try:
                        ok = fifo.send(payload, timeout=0.2)
                        break
                    except mdcom.MdcomTimeout:
                        if self.stop.is_set():
                            return
            else:
                try:
                    ok = fifo.send(payload, timeout=0)
                except mdcom.MdcomTimeout:
                    e.count("congestion_dropped")
                    self._delivered(stream_name, hdr, seq)
                    return
        except mdcom.MdcomError as exc:
            e.count("errors")
            self.log(f"{e.cfg.channel}: {exc}")
            return
        if ok:
            e.stats["messages"] += 1
            e.stats["bytes"] += len(payload)
        else:
            e.stats["filtered"] += 1
        self._delivered(stream_name, hdr, seq)

    def _delivered(self, stream_name: str, hdr: Any, seq: int) -> None:
        if hdr is not None:
            self.seqs.store(stream_name, hdr[0], seq)

    # status ------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return {"id": self.id, "pid": os.getpid(), "epoch": self.epoch,
                "uptime_s": round(time.time() - self.started, 3),
                "zenoh": {"zid": str(self.session.info.zid()), "peers": self.peers,
                          "connects": self.connects},
                "entries": [e.snapshot() for e in self.entries]}

    def _on_status_query(self, query: Any) -> None:
        query.reply(query.key_expr, json.dumps(self.status()))

    def _write_status(self) -> None:
        if not self.status_path:
            return
        text = json.dumps(self.status(), indent=1)
        d = os.path.dirname(os.path.abspath(self.status_path))
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".mdcom-zenoh-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, self.status_path)

    def _status_loop(self) -> None:
        while True:
            try:
                n = len(list(self.session.info.peers_zid())) + \
                    len(list(self.session.info.routers_zid()))
            except Exception:
                n = self.peers
            if n and not self.peers:
                self.connects += 1
                self.log(f"connected to {n} Zenoh peer(s)/router(s)")
            elif self.peers and not n:
                self.log("lost all Zenoh peers/routers: reconnecting as configured")
            self.peers = n
            try:
                self._write_status()
            except OSError as exc:
                self.log(f"status file: {exc}")
            if self.stop.wait(0.25):
                break

    def close(self) -> None:
        self.stop.set()
        for d in self._decl:  # ends the "in" workers' recv()
            try:
                d.undeclare()
            except Exception:
                pass
        for t in self._threads:
            t.join(timeout=2)
        try:
            self._write_status()
        except OSError:
            pass
        self.session.close()
        self.system.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mdcom-zenoh", description=(
        "Bridge the FIFO channels of an mdcom region onto Zenoh key expressions, as its "
        "[[bridge]] entries say (docs/bridge.md)."))
    p.add_argument("config", help="the region's TOML file (with [[bridge]] entries)")
    p.add_argument("-z", "--zenoh-config", help="Zenoh JSON5 configuration file, used as is "
                   "(default: Zenoh's defaults: peer mode, multicast scouting)")
    p.add_argument("-d", "--domain", help="the domain to attach as (default: the one the "
                   "[[bridge]] entries name)")
    p.add_argument("--id", help="this bridge's id in the samples it publishes "
                   "(default: HOST/REGION/DOMAIN); must differ between bridges")
    p.add_argument("-s", "--status", help="JSON status file, rewritten 4 times a second; "
                   "STATUS.seq keeps the per-stream sequence numbers across restarts")
    p.add_argument("--status-key", help="Zenoh key expression answering status queries "
                   "(e.g. mdcom/bridge/soc-a/status)")
    p.add_argument("--attach-timeout", type=float, default=30.0,
                   help="seconds to wait for the region's master (default 30)")
    return p


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if zenoh is None:
        print("mdcom-zenoh: the Python package 'eclipse-zenoh' is not installed "
              "(pip install eclipse-zenoh; scripts/deps.sh does)", file=sys.stderr)
        return 3
    try:
        bridge = Bridge(args.config, args.domain, args.zenoh_config, args.id, args.status,
                        args.status_key, args.attach_timeout)
    except _cfg.ConfigError as exc:
        for line in exc.messages:
            print(line, file=sys.stderr)
        return 2
    except (mdcom.MdcomError, OSError) as exc:
        print(f"mdcom-zenoh: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # zenoh.ZError (bad Zenoh config, endpoint in use)
        print(f"mdcom-zenoh: zenoh: {exc}", file=sys.stderr)
        return 1
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    while not done.wait(0.5):
        pass
    bridge.close()
    bridge.log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
