# SPDX-License-Identifier: BSD-3-Clause
"""mdcom-cfg: validate an MDCOM system description (TOML) and generate C.

The input describes one shared region: its domains (OS instances / cores) and
its channels (FIFO and SMEM).  The tool checks everything that can be checked
from the description alone and writes an ``mdcom_config`` (include/mdcom/mdcom.h)
as C source.  The region *layout* (offsets, sizes, whether an explicit
``region.size`` is large enough) is computed only by ``mdcom_layout_compute()``
in src/core/layout.c; this tool deliberately does not duplicate it.

Sub-commands::

    mdcom-cfg check    FILE.toml
    mdcom-cfg generate FILE.toml --out-dir DIR [--prefix SYM]
    mdcom-cfg dump     FILE.toml [--json]

Exit status: 0 success, 2 configuration (or usage) error, 1 output error.
Configuration errors are printed on stderr, one per line, as
``FILE: KEY.PATH: what is wrong`` (``FILE:LINE: TOML syntax error: ...`` for
syntax errors).  See docs/configuration.md.

Python 3.11+ standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import re
import sys
import tempfile
import tomllib
from typing import Any, Iterable

__all__ = [
    "ConfigError",
    "Config",
    "Region",
    "Domain",
    "Channel",
    "Bridge",
    "load_config",
    "parse_config",
    "default_prefix",
    "macro_name",
    "render_header",
    "render_source",
    "check_prefix",
    "generate",
    "to_json",
    "main",
]

# Limits mirrored from include/mdcom/mdcom.h (wire-format properties).
NAME_MAX = 32  # bytes incl. NUL: channel and region names
DOMAIN_NAME_MAX = 16  # bytes incl. NUL: domain names
MAX_DOMAINS = 32  # domain ids 0..31
MAX_DIR = 1024  # channels per region
MAX_BLOCKS = 65536  # blocks per FIFO channel

FOUR_GIB = 1 << 32
# Payload (blocks, SMEM areas) must stay this far below 4 GiB so the control
# structures fit too; the exact limit is enforced by mdcom_layout_compute().
PAYLOAD_LIMIT = FOUR_GIB - (256 << 20)
DEFAULT_MODE = 0o600
EXIT_OK, EXIT_OUTPUT, EXIT_CONFIG = 0, 1, 2
_UNSET = object()  # "key absent" marker of the field readers

_NAME_RE = re.compile(r"[A-Za-z0-9._-]+")
_SIZE_RE = re.compile(r"([0-9]+)\s*([KkMmGg]?)")
_MODE_RE = re.compile(r"(?:0[oO]?)?([0-7]{1,4})")
_C_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIZE_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

_TOP_KEYS = ("region", "domain", "fifo", "smem", "bridge")
_REGION_KEYS = ("name", "size", "mode", "group",
                # the Linux side of a real SoC (ports/linux/region_soc.c)
                "backend", "path", "offset", "map",
                "doorbell", "doorbell_path", "doorbell_map", "doorbell_reg", "doorbell_value",
                "doorbell_irq", "doorbell_reenable", "doorbell_ack", "doorbell_ack_value")
_BACKENDS = ("shm", "devmem", "uio")
_DOORBELLS = ("futex", "uio")
_UIO_MAPS = 5  # UIO_MAX_MAPS
_DOMAIN_KEYS = ("name", "id", "role")
_FIFO_KEYS = ("name", "block_size", "block_count", "queue_depth", "senders", "receivers")
_SMEM_KEYS = ("name", "size", "users")
_ROLES = ("master", "remote")
# [[bridge]]: a FIFO channel mapped onto a Zenoh key expression by mdcom-zenoh
# (bridge/zenoh, docs/bridge.md)
_BRIDGE_KEYS = ("channel", "direction", "key", "domain", "reliability", "congestion",
                "priority", "rate_limit", "express")
_DIRECTIONS = ("out", "in")  # out: channel -> Zenoh; in: Zenoh -> channel
_RELIABILITIES = ("reliable", "best_effort")
_CONGESTIONS = ("block", "drop")
_KEY_MAX = 1024


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Region:
    """The [region] table, normalised."""

    name: str
    size: int  # 0 = auto (exactly what the layout needs)
    mode: int  # permission bits, never 0
    group: int  # gid or -1
    # Linux side of a real SoC: where the region is mapped from, and the doorbell
    backend: str = "shm"  # "shm" | "devmem" | "uio"
    path: str = ""  # devmem: the memory device; uio: /dev/uioN
    offset: int = 0  # devmem: physical address of the carveout
    map: int = 0  # uio: map index
    doorbell: str = "futex"  # "futex" | "uio"
    doorbell_path: str = ""
    doorbell_map: int = 0
    doorbell_reg: int = 0
    doorbell_value: int = 0
    doorbell_irq: str = ""
    doorbell_reenable: bool = True
    doorbell_ack: int = -1  # register written after each interrupt, -1 none
    doorbell_ack_value: int = 0

    def region_spec(self) -> str:
        """The region spec string of include/mdcom/linux_soc.h."""
        if self.backend == "devmem":
            return f"devmem:{self.path}@{self.offset:#x}:size={self.size:#x}"
        if self.backend == "uio":
            return f"uio:{self.path}:map={self.map}" + (f":size={self.size:#x}" if self.size else "")
        return "shm"

    def doorbell_spec(self) -> str:
        """The doorbell spec string of include/mdcom/linux_soc.h."""
        if self.doorbell != "uio":
            return "futex"
        spec = (f"uio:{self.doorbell_path}:map={self.doorbell_map}:reg={self.doorbell_reg:#x}"
                f":val={self.doorbell_value:#x}")
        if self.doorbell_irq:
            spec += f":irq={self.doorbell_irq}"
        if self.doorbell_ack >= 0:
            spec += f":ack={self.doorbell_ack:#x}:ackval={self.doorbell_ack_value:#x}"
        return spec if self.doorbell_reenable else spec + ":noreenable"


@dataclasses.dataclass(frozen=True)
class Domain:
    """One [[domain]] entry."""

    name: str
    id: int
    role: str  # "master" | "remote"


@dataclasses.dataclass(frozen=True)
class Channel:
    """One channel; FIFO fields are 0/() for SMEM channels and vice versa."""

    name: str
    type: str  # "fifo" | "smem"
    block_size: int = 0
    block_count: int = 0
    queue_depth: int = 0  # 0 = auto
    senders: tuple[int, ...] = ()
    receivers: tuple[int, ...] = ()
    size: int = 0
    users: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class Bridge:
    """One [[bridge]] entry: FIFO channel <-> Zenoh key expression."""

    channel: str
    direction: str  # "out" (channel -> Zenoh) | "in" (Zenoh -> channel)
    key: str
    domain: int  # the domain mdcom-zenoh attaches as
    reliability: str = "reliable"
    congestion: str = "block"
    priority: int = 5  # Zenoh priority 1 (real time) .. 7 (background); 5 = data
    rate_limit: int = 0  # messages per second, 0 = none (direction "out")
    express: bool = False


@dataclasses.dataclass(frozen=True)
class Config:
    """A validated system description. Channels are in index order."""

    source: str  # the file name as given
    region: Region
    domains: tuple[Domain, ...]
    channels: tuple[Channel, ...]
    bridges: tuple[Bridge, ...] = ()

    def domain_name(self, dom_id: int) -> str:
        """Name of the domain with id dom_id."""
        return next(d.name for d in self.domains if d.id == dom_id)


class ConfigError(Exception):
    """The configuration is invalid; .messages holds one line per problem."""

    def __init__(self, messages: list[str]):
        super().__init__("\n".join(messages))
        self.messages = messages


# --------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------


class _Diag:
    """Collects 'FILE: PATH: message' lines while validating."""

    def __init__(self, source: str):
        self.source = source
        self.messages: list[str] = []

    def error(self, path: str, msg: str) -> None:
        """Record a problem at key path `path`."""
        self.messages.append(f"{self.source}: {path}: {msg}")

    def raise_if_any(self) -> None:
        """Raise ConfigError if any problem was recorded."""
        if self.messages:
            raise ConfigError(self.messages)



# Python types of parsed TOML values and their TOML names (bool before int:
# a bool is an int in Python).
_TOML_TYPES = ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"),
               (list, "array"), (dict, "table"))


def _toml_type(value: Any) -> str:
    """The TOML name of a parsed value's type, for messages."""
    return next((name for typ, name in _TOML_TYPES if isinstance(value, typ)), "date/time")


def _show(value: Any) -> str:
    """Short rendering of a value for 'got ...' in messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        text = json.dumps(value) if isinstance(value, str) else str(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return _toml_type(value)


def _entry_path(kind: str, index: int, table: dict) -> str:
    """Key path of an array-of-tables entry: kind[i] 'name' (the name only
    if it is made of valid characters; a bad one is shown by its message)."""
    name = table.get("name")
    if isinstance(name, str) and len(name) < NAME_MAX and _NAME_RE.fullmatch(name):
        return f"{kind}[{index}] '{name}'"
    return f"{kind}[{index}]"


def _is_int(value: Any) -> bool:
    """True for TOML integers (Python bool is an int subclass: excluded)."""
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------
# Field readers: each returns the value or None (after recording an error)
# --------------------------------------------------------------------------


def _check_keys(diag: _Diag, table: dict, allowed: Iterable[str], path: str) -> None:
    """Report keys of `table` that are not in `allowed` (typos)."""
    allowed = tuple(allowed)
    for key in table:
        if key in allowed:
            continue
        hint = difflib.get_close_matches(key, allowed, n=1)
        if hint:
            tip = f" (did you mean '{hint[0]}'?)"
        else:
            tip = f" (expected one of: {', '.join(allowed)})"
        diag.error(f"{path}.{key}" if path else key, f"unknown key{tip}")


def _get(diag: _Diag, table: dict, key: str, path: str, required: bool) -> Any:
    """Fetch table[key]; report a missing required key. _UNSET if absent."""
    if key in table:
        return table[key]
    if required:
        diag.error(f"{path}.{key}", "missing (required)")
    return _UNSET


def _get_typed(diag: _Diag, table: dict, key: str, path: str, typ: type,
               expected: str) -> tuple[Any, str]:
    """Required table[key] of Python type typ ("must be <expected>" if not):
    (the value or None, the key's path)."""
    where = f"{path}.{key}"
    value = _get(diag, table, key, path, required=True)
    if value is _UNSET:
        return None, where
    if not isinstance(value, typ):
        diag.error(where, f"must be {expected}, got {_toml_type(value)}")
        return None, where
    return value, where


def _read_name(diag: _Diag, table: dict, path: str, max_len: int, what: str,
               no_leading_dot: bool = False) -> str | None:
    """A required name of 1..max_len chars of [A-Za-z0-9._-]."""
    value, where = _get_typed(diag, table, "name", path, str, "a string")
    if value is None:
        return None
    if not 1 <= len(value) <= max_len:
        diag.error(where, f"{what} must be 1..{max_len} characters, got {len(value)}")
        return None
    if not _NAME_RE.fullmatch(value):
        diag.error(where, f"{what} may only contain [A-Za-z0-9._-], got {_show(value)}")
        return None
    if no_leading_dot and value.startswith("."):
        diag.error(where, f"{what} must not start with '.', got {_show(value)}")
        return None
    return value


def _read_int(diag: _Diag, table: dict, key: str, path: str, lo: int, hi: int,
              default: Any = _UNSET, sizes: bool = False) -> int | None:
    """An integer in lo..hi; with sizes=True also a string like "64K"."""
    value = _get(diag, table, key, path, required=default is _UNSET)
    if value is _UNSET:
        return None if default is _UNSET else default
    where = f"{path}.{key}"
    if sizes and isinstance(value, str):
        match = _SIZE_RE.fullmatch(value.strip())
        if not match:
            diag.error(where, "must be an integer or a size like \"64K\", \"4M\", \"1G\", "
                       f"got {_show(value)}")
            return None
        value = int(match.group(1)) * _SIZE_SUFFIX[match.group(2).upper()]
    elif not _is_int(value):
        kind = "an integer or a size string" if sizes else "an integer"
        diag.error(where, f"must be {kind}, got {_toml_type(value)}")
        return None
    if not lo <= value <= hi:
        diag.error(where, f"must be {_range_text(lo, hi)}, got {value}")
        return None
    return value


def _range_text(lo: int, hi: int) -> str:
    """'1..65536', or '< 4 GiB' style text for the huge upper bounds."""
    if hi == FOUR_GIB - 1:
        return f"{lo}..{hi} (< 4 GiB)"
    return f"{lo}..{hi}"


def _read_mode(diag: _Diag, table: dict, path: str) -> int | None:
    """region.mode: octal string or integer; permission bits, no world bits."""
    value = _get(diag, table, "mode", path, required=False)
    if value is _UNSET:
        return DEFAULT_MODE
    where = f"{path}.mode"
    if isinstance(value, str):
        match = _MODE_RE.fullmatch(value.strip())
        if not match:
            diag.error(where, f"must be an octal string like \"0600\", got {_show(value)}")
            return None
        value = int(match.group(1), 8)
    elif not _is_int(value):
        diag.error(where, f"must be an octal string or an integer, got {_toml_type(value)}")
        return None
    if value & ~0o777 or value < 0:
        diag.error(where, f"permission bits only (0..0777), got {_octal(value)}")
        return None
    if value & 0o007:
        diag.error(where, f"must not grant access to others (o+rwx), got {_octal(value)}")
        return None
    if value & 0o600 != 0o600:
        diag.error(where, f"must grant the owner read and write (0600), got {_octal(value)}")
        return None
    return value


def _octal(value: int) -> str:
    """0600-style rendering of a mode."""
    return f"0{value:o}" if value >= 0 else str(value)


def _read_domain_list(diag: _Diag, table: dict, key: str, path: str,
                      doms: _DomainTable) -> tuple[int, ...] | None:
    """senders/receivers/users: non-empty list of domain names or ids."""
    value, where = _get_typed(diag, table, key, path, list, "an array of domain names")
    if value is None:
        return None
    if not value:
        diag.error(where, "must name at least one domain")
        return None
    result: list[int] = []
    ok = True
    for i, item in enumerate(value):
        dom_id = _resolve_domain(diag, item, f"{where}[{i}]", doms)
        if dom_id is _UNSET:
            ok = False
        elif dom_id is not None and dom_id in result:
            diag.error(f"{where}[{i}]", f"domain {_show(item)} is listed twice")
            ok = False
        elif dom_id is not None:
            result.append(dom_id)
    return tuple(sorted(result)) if ok else None


def _resolve_domain(diag: _Diag, item: Any, where: str, doms: _DomainTable) -> Any:
    """Domain id for a name or id; None if the domain itself is broken
    (already reported); _UNSET after reporting a new error."""
    if isinstance(item, str):
        if item not in doms.ids:
            known = ", ".join(doms.ids) or "none"
            diag.error(where, f"unknown domain {_show(item)} (configured: {known})")
            return _UNSET
        return doms.ids[item]
    if _is_int(item):
        if item not in doms.id_where:
            diag.error(where, f"no domain has id {item}")
            return _UNSET
        return item
    diag.error(where, f"must be a domain name or id, got {_toml_type(item)}")
    return _UNSET


# --------------------------------------------------------------------------
# Section validators
# --------------------------------------------------------------------------


def _tables(diag: _Diag, data: dict, key: str) -> list[dict] | None:
    """The [[key]] array of tables ([] if absent, None after a type error)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        diag.error(key, f"must be an array of tables ([[{key}]]), got {_toml_type(value)}")
        return None
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            diag.error(f"{key}[{i}]", f"must be a table ([[{key}]]), got {_toml_type(item)}")
            return None
    return value


def _parse_region(diag: _Diag, data: dict) -> Region | None:
    """Validate [region]."""
    table = data.get("region")
    if table is None:
        diag.error("region", "missing table [region] (required)")
        return None
    if not isinstance(table, dict):
        diag.error("region", f"must be a table ([region]), got {_toml_type(table)}")
        return None
    _check_keys(diag, table, _REGION_KEYS, "region")
    name = _read_name(diag, table, "region", NAME_MAX - 1, "region name", no_leading_dot=True)
    size = _read_int(diag, table, "size", "region", 0, FOUR_GIB - 1, default=0, sizes=True)
    mode = _read_mode(diag, table, "region")
    group = _read_int(diag, table, "group", "region", -1, 0x7FFFFFFF, default=-1)
    soc = _parse_region_soc(diag, table, size)
    if None in (name, size, mode, group, soc):
        return None
    return Region(name=name, size=size, mode=mode, group=group, **soc)


def _read_choice(diag: _Diag, table: dict, key: str, path: str, choices: tuple[str, ...]) -> str | None:
    """An optional string out of choices (default: the first)."""
    value = _get(diag, table, key, path, required=False)
    if value is _UNSET:
        return choices[0]
    if not isinstance(value, str) or value not in choices:
        diag.error(f"{path}.{key}", f"must be one of {', '.join(repr(c) for c in choices)}, "
                   f"got {_show(value)}")
        return None
    return value


def _read_dev_path(diag: _Diag, table: dict, key: str, path: str, default: Any = _UNSET) -> str | None:
    """A device path: absolute, printable, without the spec separators ':' and '@'."""
    value = _get(diag, table, key, path, required=default is _UNSET)
    if value is _UNSET:
        return None if default is _UNSET else default
    where = f"{path}.{key}"
    if not isinstance(value, str):
        diag.error(where, f"must be a string, got {_toml_type(value)}")
        return None
    if (not value.startswith("/") or len(value) >= 128 or any(c in value for c in ":@\"\\")
            or not value.isprintable()):
        diag.error(where, f"must be an absolute path (< 128 chars, no ':', '@' or quotes), "
                   f"got {_show(value)}")
        return None
    return value


def _parse_region_soc(diag: _Diag, table: dict, size: int | None) -> dict | None:
    """The [region] keys of the Linux side of a real SoC: backend, doorbell."""
    out: dict[str, Any] = {}
    ok = True
    backend = _read_choice(diag, table, "backend", "region", _BACKENDS)
    doorbell = _read_choice(diag, table, "doorbell", "region", _DOORBELLS)
    if backend is None or doorbell is None:
        return None
    out["backend"] = backend
    out["doorbell"] = doorbell
    only = {"path": ("devmem", "uio"), "offset": ("devmem",), "map": ("uio",)}
    for key, kinds in only.items():
        if key in table and backend not in kinds:
            diag.error(f"region.{key}", f"only with backend = {' or '.join(repr(k) for k in kinds)}"
                       f" (backend is {backend!r})")
            ok = False
    if backend == "devmem":
        out["path"] = _read_dev_path(diag, table, "path", "region", default="/dev/mem")
        out["offset"] = _read_int(diag, table, "offset", "region", 0, (1 << 64) - 1)
        if size == 0:
            diag.error("region.size", "required with backend = 'devmem' (the carveout's size)")
            ok = False
    elif backend == "uio":
        out["path"] = _read_dev_path(diag, table, "path", "region")
        out["map"] = _read_int(diag, table, "map", "region", 0, _UIO_MAPS - 1, default=0)
    db_keys = ("doorbell_path", "doorbell_map", "doorbell_reg", "doorbell_value", "doorbell_irq",
               "doorbell_reenable", "doorbell_ack", "doorbell_ack_value")
    if doorbell != "uio":
        for key in db_keys:
            if key in table:
                diag.error(f"region.{key}", "only with doorbell = 'uio'")
                ok = False
    else:
        out["doorbell_path"] = _read_dev_path(diag, table, "doorbell_path", "region")
        out["doorbell_map"] = _read_int(diag, table, "doorbell_map", "region", 0, _UIO_MAPS - 1,
                                        default=0)
        reg = _read_int(diag, table, "doorbell_reg", "region", 0, 0xFFFFFFFC)
        if reg is not None and reg % 4:
            diag.error("region.doorbell_reg", f"must be a multiple of 4 (a 32-bit register), got {reg}")
            reg = None
        out["doorbell_reg"] = reg
        out["doorbell_value"] = _read_int(diag, table, "doorbell_value", "region", 0, 0xFFFFFFFF)
        out["doorbell_irq"] = _read_dev_path(diag, table, "doorbell_irq", "region", default="")
        reen = _get(diag, table, "doorbell_reenable", "region", required=False)
        if reen is _UNSET:
            reen = True
        elif not isinstance(reen, bool):
            diag.error("region.doorbell_reenable", f"must be a boolean, got {_toml_type(reen)}")
            reen = None
        out["doorbell_reenable"] = reen
        ack = _read_int(diag, table, "doorbell_ack", "region", 0, 0xFFFFFFFC, default=-1)
        if ack is not None and ack >= 0 and ack % 4:
            diag.error("region.doorbell_ack", f"must be a multiple of 4 (a 32-bit register), got {ack}")
            ack = None
        out["doorbell_ack"] = ack
        if ack is not None and ack >= 0:
            out["doorbell_ack_value"] = _read_int(diag, table, "doorbell_ack_value", "region", 0,
                                                  0xFFFFFFFF)
        elif "doorbell_ack_value" in table:
            diag.error("region.doorbell_ack_value", "only with doorbell_ack")
            ok = False
    if not ok or any(v is None for v in out.values()):
        return None
    return out


class _DomainTable:
    """Domains seen so far while validating [[domain]] entries."""

    def __init__(self) -> None:
        self.domains: list[Domain] = []
        self.ids: dict[str, int | None] = {}  # name -> id (None: id invalid)
        self.name_where: dict[str, str] = {}  # name -> key path of its entry
        self.id_where: dict[int, str] = {}  # id -> key path of its entry
        self.master: str | None = None  # key path of the master entry

    def add(self, diag: _Diag, path: str, name: str | None, dom_id: int | None,
            role: str | None) -> None:
        """Check one entry for duplicates / a second master and record it."""
        if name is not None and name in self.name_where:
            diag.error(f"{path}.name", f"duplicate domain name (also {self.name_where[name]})")
            name = None
        if dom_id is not None and dom_id in self.id_where:
            diag.error(f"{path}.id", f"duplicate domain id {dom_id} (also {self.id_where[dom_id]})")
            dom_id = None
        if role == "master" and self.master is not None:
            diag.error(f"{path}.role", f"second master ({self.master} is master already); "
                       "exactly one domain must be master")
        elif role == "master":
            self.master = path
        if name is not None:
            self.ids[name] = dom_id
            self.name_where[name] = path
        if dom_id is not None:
            self.id_where[dom_id] = path
        if None not in (name, dom_id, role):
            self.domains.append(Domain(name=name, id=dom_id, role=role))


def _parse_domains(diag: _Diag, data: dict) -> _DomainTable:
    """Validate [[domain]]. The result also maps every well-formed name to
    its id, so that channel references are resolved without cascading errors."""
    table = _DomainTable()
    entries = _tables(diag, data, "domain")
    if entries is None:
        return table
    if not entries:
        diag.error("domain", "at least one [[domain]] is required")
    for i, entry in enumerate(entries):
        path = _entry_path("domain", i, entry)
        _check_keys(diag, entry, _DOMAIN_KEYS, path)
        name = _read_name(diag, entry, path, DOMAIN_NAME_MAX - 1, "domain name")
        dom_id = _read_int(diag, entry, "id", path, 0, MAX_DOMAINS - 1)
        role = _read_role(diag, entry, path)
        table.add(diag, path, name, dom_id, role)
    if entries and table.master is None:
        diag.error("domain", "no domain has role \"master\"; exactly one must")
    _check_macro_collisions(diag, [(f"domain[{i}]", e.get("name")) for i, e in enumerate(entries)],
                            "domain")
    return table


def _read_role(diag: _Diag, table: dict, path: str) -> str | None:
    """domain.role: "master" or "remote"."""
    value = _get(diag, table, "role", path, required=True)
    if value is _UNSET:
        return None
    if not isinstance(value, str):
        diag.error(f"{path}.role", f"must be a string, got {_toml_type(value)}")
        return None
    if value not in _ROLES:
        diag.error(f"{path}.role", f"must be \"master\" or \"remote\", got {_show(value)}")
        return None
    return value


def _parse_fifo(diag: _Diag, table: dict, path: str, doms: _DomainTable) -> Channel | None:
    """Validate one [[fifo]] entry."""
    _check_keys(diag, table, _FIFO_KEYS, path)
    name = _read_name(diag, table, path, NAME_MAX - 1, "channel name")
    block_size = _read_int(diag, table, "block_size", path, 1, FOUR_GIB - 1, sizes=True)
    block_count = _read_int(diag, table, "block_count", path, 1, MAX_BLOCKS)
    depth = _read_queue_depth(diag, table, path)
    senders = _read_domain_list(diag, table, "senders", path, doms)
    receivers = _read_domain_list(diag, table, "receivers", path, doms)
    if block_size is not None and block_count is not None:
        payload = block_size * block_count
        if payload > PAYLOAD_LIMIT:
            diag.error(f"{path}.block_size", f"block_size x block_count = {payload} bytes: "
                       f"must stay under {PAYLOAD_LIMIT} (4 GiB minus room for control data)")
            return None
    if None in (name, block_size, block_count, depth, senders, receivers):
        return None
    return Channel(name=name, type="fifo", block_size=block_size, block_count=block_count,
                   queue_depth=depth, senders=senders, receivers=receivers)


def _read_queue_depth(diag: _Diag, table: dict, path: str) -> int | None:
    """fifo.queue_depth: absent/0 = auto, else a power of two 1..65536."""
    depth = _read_int(diag, table, "queue_depth", path, 0, MAX_BLOCKS, default=0)
    if depth and depth & (depth - 1):
        diag.error(f"{path}.queue_depth",
                   f"must be a power of two 1..{MAX_BLOCKS} (or 0 = auto), got {depth}")
        return None
    return depth


def _parse_smem(diag: _Diag, table: dict, path: str, doms: _DomainTable) -> Channel | None:
    """Validate one [[smem]] entry."""
    _check_keys(diag, table, _SMEM_KEYS, path)
    name = _read_name(diag, table, path, NAME_MAX - 1, "channel name")
    size = _read_int(diag, table, "size", path, 1, PAYLOAD_LIMIT, sizes=True)
    users = _read_domain_list(diag, table, "users", path, doms)
    if None in (name, size, users):
        return None
    return Channel(name=name, type="smem", size=size, users=users)


def _parse_channels(diag: _Diag, data: dict, doms: _DomainTable) -> list[Channel]:
    """Validate [[fifo]] then [[smem]]; channel index order is that order."""
    entries = [("fifo", i, t) for i, t in enumerate(_tables(diag, data, "fifo") or [])]
    entries += [("smem", i, t) for i, t in enumerate(_tables(diag, data, "smem") or [])]
    if len(entries) > MAX_DIR:
        diag.error("fifo+smem", f"{len(entries)} channels (fifo + smem): at most {MAX_DIR}")
    channels: list[Channel] = []
    seen: dict[str, str] = {}
    for kind, i, table in entries:
        path = _entry_path(kind, i, table)
        parse = _parse_fifo if kind == "fifo" else _parse_smem
        chan = parse(diag, table, path, doms)
        name = table.get("name")
        if isinstance(name, str) and name in seen:
            diag.error(f"{path}.name", f"duplicate channel name (also {seen[name]})")
            chan = None
        elif isinstance(name, str):
            seen[name] = f"{kind}[{i}]"
        if chan is not None:
            channels.append(chan)
    _check_macro_collisions(diag, [(f"{k}[{i}]", t.get("name")) for k, i, t in entries], "channel")
    total = sum(c.block_size * c.block_count + c.size for c in channels)
    if total > PAYLOAD_LIMIT:
        diag.error("fifo+smem", f"all channels together hold {total} bytes of payload: "
                   f"must stay under {PAYLOAD_LIMIT} (4 GiB minus room for control data)")
    return channels


def _check_macro_collisions(diag: _Diag, entries: list[tuple[str, Any]], what: str) -> None:
    """Different names must not map to the same generated macro suffix."""
    seen: dict[str, tuple[str, str]] = {}
    for where, name in entries:
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            continue
        macro = macro_name(name)
        if macro in seen and seen[macro][1] != name:
            other_where, other = seen[macro]
            diag.error(f"{where} '{name}'.name",
                       f"{what} name gives the same C macro suffix {macro} as "
                       f"{other_where} '{other}'")
        seen.setdefault(macro, (where, name))


def _key_expr_problem(key: str, wildcards: bool) -> str | None:
    """Why `key` is not a canonical Zenoh key expression (None if it is).
    Chunks are separated by '/', none empty; '#', '?' and whitespace are
    reserved; '$' only in the '$*' sub-chunk wildcard; '*' and '**' only as
    whole chunks (and only when wildcards are allowed)."""
    if not key:
        return "must not be empty"
    if len(key) > _KEY_MAX:
        return f"must be at most {_KEY_MAX} characters, got {len(key)}"
    if key.startswith("/") or key.endswith("/"):
        return "must not start or end with '/'"
    if any(c in key for c in "#?") or any(c.isspace() or not c.isprintable() for c in key):
        return "must not contain '#', '?', whitespace or control characters"
    chunks = key.split("/")
    if "" in chunks:
        return "must not contain an empty chunk ('//')"
    for chunk in chunks:
        wild = chunk in ("*", "**") or "$*" in chunk
        if wild and not wildcards:
            return (f"must be a plain key without wildcards for direction \"out\" "
                    f"(a publisher's key), got chunk {_show(chunk)}")
        if chunk not in ("*", "**") and "*" in chunk.replace("$*", ""):
            return f"'*' must be a whole chunk ('*' or '**') or '$*', got chunk {_show(chunk)}"
        if "$" in chunk.replace("$*", ""):
            return f"'$' is only allowed as '$*', got chunk {_show(chunk)}"
    for a, b in zip(chunks, chunks[1:]):
        if a == "**" and b == "**":
            return "'**/**' is not canonical: write '**'"
    return None


def _parse_bridges(diag: _Diag, data: dict, doms: _DomainTable,
                   channels: list[Channel]) -> list[Bridge]:
    """Validate [[bridge]] against the channels and domains."""
    tables = _tables(diag, data, "bridge") or []
    fifos = {c.name: c for c in channels if c.type == "fifo"}
    smems = {c.name for c in channels if c.type == "smem"}
    bridges: list[Bridge] = []
    seen_chan: dict[tuple[str, str], str] = {}
    seen_out_key: dict[str, str] = {}
    for i, table in enumerate(tables):
        chan_name = table.get("channel")
        path = f"bridge[{i}] '{chan_name}'" if isinstance(chan_name, str) and \
            _NAME_RE.fullmatch(chan_name) and len(chan_name) < NAME_MAX else f"bridge[{i}]"
        _check_keys(diag, table, _BRIDGE_KEYS, path)
        ok = True
        chan = None
        value, _ = _get_typed(diag, table, "channel", path, str, "a string")
        if value is not None:
            if value in smems:
                diag.error(f"{path}.channel", f"{_show(value)} is an [[smem]] channel: "
                           "only [[fifo]] channels can be bridged")
                ok = False
            elif value not in fifos:
                known = ", ".join(fifos) or "none"
                diag.error(f"{path}.channel",
                           f"unknown fifo channel {_show(value)} (configured: {known})")
                ok = False
            else:
                chan = fifos[value]
        ok = ok and chan is not None
        direction = _get(diag, table, "direction", path, required=True)
        if direction is not _UNSET and direction not in _DIRECTIONS:
            diag.error(f"{path}.direction", "must be \"out\" (channel -> Zenoh) or \"in\" "
                       f"(Zenoh -> channel), got {_show(direction)}")
            direction = None
        if direction in (None, _UNSET):
            ok = False
        key, _ = _get_typed(diag, table, "key", path, str, "a string")
        problem = key is not None and _key_expr_problem(key, wildcards=direction != "out")
        if problem:
            diag.error(f"{path}.key", f"not a valid Zenoh key expression: {problem}")
        if key is None or problem:
            ok = False
        dom = _get(diag, table, "domain", path, required=True)
        dom_id = None
        if dom is not _UNSET:
            dom_id = _resolve_domain(diag, dom, f"{path}.domain", doms)
            if dom_id is _UNSET or dom_id is None:
                ok = False
                dom_id = None
        else:
            ok = False
        if chan is not None and dom_id is not None and direction in _DIRECTIONS:
            role, ids = ("receiver", chan.receivers) if direction == "out" else \
                ("sender", chan.senders)
            if dom_id not in ids:
                names = ", ".join(_domain_label(doms, d) for d in ids)
                diag.error(f"{path}.domain", f"domain {_show(dom)} is not a {role} of fifo "
                           f"{_show(chan.name)} ({role}s: {names}): direction "
                           f"{_show(direction)} needs the bridge's domain as a {role}")
                ok = False
        reliability = _read_choice(diag, table, "reliability", path, _RELIABILITIES)
        congestion = _read_choice(diag, table, "congestion", path, _CONGESTIONS)
        priority = _read_int(diag, table, "priority", path, 1, 7, default=5)
        rate = _read_int(diag, table, "rate_limit", path, 0, 10**9, default=0)
        express = _get(diag, table, "express", path, required=False)
        if express is _UNSET:
            express = False
        elif not isinstance(express, bool):
            diag.error(f"{path}.express", f"must be a boolean, got {_toml_type(express)}")
            express = None
        if rate and direction == "in":
            diag.error(f"{path}.rate_limit", "only applies to direction \"out\" "
                       "(the bridge paces what it publishes)")
            rate = None
        if None in (reliability, congestion, priority, rate, express) or not ok:
            continue
        dup = (chan.name, direction)
        if dup in seen_chan:
            diag.error(f"{path}.channel", f"channel {_show(chan.name)} is already bridged "
                       f"{_show(direction)} by {seen_chan[dup]}")
            continue
        seen_chan[dup] = f"bridge[{i}]"
        if direction == "out":
            if key in seen_out_key:
                diag.error(f"{path}.key", f"key {_show(key)} is already published by "
                           f"{seen_out_key[key]}")
                continue
            seen_out_key[key] = f"bridge[{i}]"
        bridges.append(Bridge(channel=chan.name, direction=direction, key=key, domain=dom_id,
                              reliability=reliability, congestion=congestion,
                              priority=priority, rate_limit=rate, express=express))
    return bridges


def _domain_label(doms: _DomainTable, dom_id: int) -> str:
    """A domain's name for messages (its id if it has none)."""
    for d in doms.domains:
        if d.id == dom_id:
            return d.name
    return str(dom_id)


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------


def parse_config(data: dict, source: str) -> Config:
    """Validate parsed TOML `data` (from file `source`) into a Config.

    Raises ConfigError listing every problem found.
    """
    diag = _Diag(source)
    _check_keys(diag, data, _TOP_KEYS, "")
    region = _parse_region(diag, data)
    doms = _parse_domains(diag, data)
    channels = _parse_channels(diag, data, doms)
    bridges = _parse_bridges(diag, data, doms, channels)
    diag.raise_if_any()
    return Config(source=source, region=region, domains=tuple(doms.domains),
                  channels=tuple(channels), bridges=tuple(bridges))


def _syntax_error(source: str, text: str, exc: tomllib.TOMLDecodeError) -> ConfigError:
    """Turn tomllib's message into 'FILE:LINE: TOML syntax error: ...'."""
    msg = str(exc)
    match = re.search(r"\s*\(at line (\d+), column (\d+)\)$", msg)
    if match:
        line = int(match.group(1))
        msg = f"{msg[:match.start()]} (column {match.group(2)})"
    else:
        line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        msg = re.sub(r"\s*\(at end of document\)$", " at end of file", msg)
    return ConfigError([f"{source}:{line}: TOML syntax error: {msg}"])


def load_config(path: str) -> Config:
    """Read, parse and validate the TOML file at `path`.

    Raises ConfigError (unreadable file, syntax error, invalid config).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{path}: not valid UTF-8 (byte {exc.start})"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, text, exc) from None
    return parse_config(data, path)


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------


def macro_name(name: str) -> str:
    """Macro suffix for a domain/channel name: upper case, non-identifier
    characters replaced by '_'."""
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


def default_prefix(region_name: str) -> str:
    """C symbol prefix derived from the region name: lower case, each run of
    other characters than [a-z0-9] becomes one '_', no leading/trailing '_';
    'region_' is prepended if the result is empty or starts with a digit."""
    sym = re.sub(r"[^a-z0-9]+", "_", region_name.lower()).strip("_")
    if not sym or sym[0].isdigit():
        sym = f"region_{sym}".rstrip("_")
    return sym


def check_prefix(prefix: str) -> str | None:
    """Error text if `prefix` is not a usable C identifier, else None."""
    if not _C_IDENT_RE.fullmatch(prefix):
        return f"--prefix {prefix!r}: must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)"
    if prefix.startswith("_"):
        return f"--prefix {prefix!r}: must not start with '_' (reserved identifiers)"
    return None


# --------------------------------------------------------------------------
# C generation
# --------------------------------------------------------------------------


def _banner(cfg: Config, file_name: str) -> str:
    """The 'generated, do not edit' comment at the top of both files."""
    src = os.path.basename(cfg.source)
    return (f"/*\n"
            f" * {file_name} - MDCOM configuration of region '{cfg.region.name}'.\n"
            f" *\n"
            f" * GENERATED by mdcom-cfg from {src}. DO NOT EDIT: edit {src} and\n"
            f" * regenerate (mdcom-cfg generate, or the mdcom_generate_config() CMake rule).\n"
            f" */\n")


def render_header(cfg: Config, sym: str) -> str:
    """Text of <sym>_cfg.h."""
    up = sym.upper()
    guard = f"{up}_CFG_H"
    lines = [_banner(cfg, f"{sym}_cfg.h").rstrip("\n"),
             f"#ifndef {guard}", f"#define {guard}", "",
             '#include "mdcom/mdcom.h"', "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
             "/* The configuration to pass to mdcom_init(). */",
             f"extern const mdcom_config {sym}_config;", "",
             "/* Domain ids (mdcom_init domain_id). */"]
    lines += [f"#define {up}_DOM_{macro_name(d.name)} {d.id}" for d in cfg.domains]
    lines += ["", "/* Channel indices (mdcom_fifoch_at / mdcom_smemch_at). */"]
    lines += [f"#define {up}_CH_{macro_name(c.name)} {i} /* {c.type} */"
              for i, c in enumerate(cfg.channels)]
    lines += [f"#define {up}_N_CHANNELS {len(cfg.channels)}", "",
              "/* The Linux side's region backend and doorbell ([region] backend, doorbell):",
              " * specs for mdcom_linux_soc_init() (include/mdcom/linux_soc.h). */",
              f'#define {up}_REGION_SPEC "{cfg.region.region_spec()}"',
              f'#define {up}_DOORBELL_SPEC "{cfg.region.doorbell_spec()}"', "",
              "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _mask_expr(ids: Iterable[int], up: str, cfg: Config) -> str:
    """C expression of a domain bit mask: (1u << UP_DOM_X) | ..."""
    return " | ".join(f"(1u << {up}_DOM_{macro_name(cfg.domain_name(i))})" for i in ids)


def _domain_init(d: Domain) -> list[str]:
    """Designated initialiser lines of one mdcom_domain_cfg."""
    role = "MDCOM_ROLE_MASTER" if d.role == "master" else "MDCOM_ROLE_REMOTE"
    return [f'    {{.name = "{d.name}", .id = {d.id}u, .role = {role}}},']


def _channel_init(c: Channel, up: str, cfg: Config) -> list[str]:
    """Designated initialiser lines of one mdcom_channel_cfg."""
    out = [f"    [{up}_CH_{macro_name(c.name)}] = {{", f'        .name = "{c.name}",']
    if c.type == "fifo":
        auto = "" if c.queue_depth else " /* auto */"
        out += ["        .type = MDCOM_CHAN_FIFO,",
                f"        .block_size = {c.block_size}u,",
                f"        .block_count = {c.block_count}u,",
                f"        .queue_depth = {c.queue_depth}u,{auto}",
                f"        .senders = {_mask_expr(c.senders, up, cfg)},",
                f"        .receivers = {_mask_expr(c.receivers, up, cfg)},"]
    else:
        out += ["        .type = MDCOM_CHAN_SMEM,",
                f"        .size = {c.size}u,",
                f"        .users = {_mask_expr(c.users, up, cfg)},"]
    return out + ["    },"]


def render_source(cfg: Config, sym: str) -> str:
    """Text of <sym>_cfg.c."""
    up = sym.upper()
    r = cfg.region
    lines = [_banner(cfg, f"{sym}_cfg.c").rstrip("\n"), f'#include "{sym}_cfg.h"', "",
             f"static const mdcom_domain_cfg {sym}_domains[{len(cfg.domains)}] = {{"]
    for d in cfg.domains:
        lines += _domain_init(d)
    lines += ["};", ""]
    if cfg.channels:
        lines.append(f"static const mdcom_channel_cfg {sym}_channels[{up}_N_CHANNELS] = {{")
        for c in cfg.channels:
            lines += _channel_init(c, up, cfg)
        lines += ["};", ""]
    size_note = " /* auto: exactly what the layout needs */" if not r.size else ""
    lines += [f"const mdcom_config {sym}_config = {{",
              f'    .region_name = "{r.name}",',
              f"    .region_size = {r.size}u,{size_note}",
              f"    .mode = {_octal(r.mode)}u,",
              f"    .group = {r.group},{' /* none */' if r.group < 0 else ''}",
              f"    .domains = {sym}_domains,",
              f"    .n_domains = {len(cfg.domains)}u,",
              f"    .channels = {f'{sym}_channels' if cfg.channels else 'NULL'},",
              f"    .n_channels = {up}_N_CHANNELS,",
              "};", ""]
    return "\n".join(lines)


def _write_atomic(path: str, text: str) -> None:
    """Write text to path via a temporary file + rename."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".mdcom-cfg-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def generate(cfg: Config, out_dir: str, sym: str) -> tuple[str, str]:
    """Write <out_dir>/<sym>_cfg.h and .c; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    header = os.path.join(out_dir, f"{sym}_cfg.h")
    source = os.path.join(out_dir, f"{sym}_cfg.c")
    _write_atomic(header, render_header(cfg, sym))
    _write_atomic(source, render_source(cfg, sym))
    return header, source


# --------------------------------------------------------------------------
# JSON / text dump
# --------------------------------------------------------------------------


def to_json(cfg: Config, sym: str | None = None) -> dict:
    """The normalised configuration as a JSON-serialisable dict.

    Values are those of the generated mdcom_config (queue_depth 0 = auto,
    size 0 = auto); masks are given both as numbers and as domain names.
    """
    def names(ids: Iterable[int]) -> list[str]:
        return [cfg.domain_name(i) for i in ids]

    def mask(ids: Iterable[int]) -> int:
        return sum(1 << i for i in ids)

    sym = sym or default_prefix(cfg.region.name)
    channels = []
    for index, c in enumerate(cfg.channels):
        entry: dict[str, Any] = {"index": index, "name": c.name, "type": c.type,
                                 "macro": f"{sym.upper()}_CH_{macro_name(c.name)}"}
        if c.type == "fifo":
            entry.update(block_size=c.block_size, block_count=c.block_count,
                         queue_depth=c.queue_depth, senders=names(c.senders),
                         receivers=names(c.receivers), senders_mask=mask(c.senders),
                         receivers_mask=mask(c.receivers))
        else:
            entry.update(size=c.size, users=names(c.users), users_mask=mask(c.users))
        channels.append(entry)
    r = cfg.region
    out: dict[str, Any] = {
        "source": cfg.source,
        "prefix": sym,
        "region": {"name": r.name, "size": r.size, "mode": r.mode, "mode_octal": _octal(r.mode),
                   "group": r.group},
        "domains": [{"name": d.name, "id": d.id, "role": d.role} for d in cfg.domains],
        "channels": channels,
    }
    if cfg.bridges:  # only when configured: the dump of other systems is unchanged
        out["bridges"] = [{"channel": b.channel, "direction": b.direction, "key": b.key,
                           "domain": cfg.domain_name(b.domain), "reliability": b.reliability,
                           "congestion": b.congestion, "priority": b.priority,
                           "rate_limit": b.rate_limit, "express": b.express}
                          for b in cfg.bridges]
    return out


def _summary(cfg: Config) -> str:
    """One-line summary printed by `check`."""
    fifo = sum(c.type == "fifo" for c in cfg.channels)
    smem = len(cfg.channels) - fifo
    master = next(d.name for d in cfg.domains if d.role == "master")
    payload = sum(c.block_size * c.block_count + c.size for c in cfg.channels)
    size = f"{cfg.region.size} bytes" if cfg.region.size else "auto"
    return (f"{cfg.source}: ok: region '{cfg.region.name}', "
            f"{_plural(len(cfg.domains), 'domain')} (master '{master}'), "
            f"{_plural(fifo, 'fifo channel')}, {_plural(smem, 'smem channel')}, "
            f"{payload} bytes payload, size {size}, mode {_octal(cfg.region.mode)}")


def _plural(n: int, word: str) -> str:
    """'1 domain', '2 domains'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _text_dump(cfg: Config) -> str:
    """Human-readable listing printed by `dump` without --json."""
    r = cfg.region
    out = [f"region {r.name}: size {r.size or 'auto'}, mode {_octal(r.mode)}, group {r.group}"]
    out += [f"domain {d.id:2d} {d.name} ({d.role})" for d in cfg.domains]
    for i, c in enumerate(cfg.channels):
        if c.type == "fifo":
            senders = ",".join(cfg.domain_name(x) for x in c.senders)
            receivers = ",".join(cfg.domain_name(x) for x in c.receivers)
            out.append(f"channel {i:3d} fifo {c.name}: {c.block_count} x {c.block_size} B, "
                       f"queue {c.queue_depth or 'auto'}, {senders} -> {receivers}")
        else:
            users = ",".join(cfg.domain_name(x) for x in c.users)
            out.append(f"channel {i:3d} smem {c.name}: {c.size} B, users {users}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """The argparse command line."""
    p = argparse.ArgumentParser(
        prog="mdcom-cfg",
        description="Validate an MDCOM system description (TOML) and generate its C configuration.",
        epilog="Exit status: 0 ok, 2 configuration error, 1 output error. "
               "See docs/configuration.md.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    c = sub.add_parser("check", help="validate FILE and print a one-line summary")
    c.add_argument("file", metavar="FILE.toml")
    g = sub.add_parser("generate", help="write DIR/<SYM>_cfg.h and DIR/<SYM>_cfg.c")
    g.add_argument("file", metavar="FILE.toml")
    g.add_argument("--out-dir", required=True, metavar="DIR")
    g.add_argument("--prefix", metavar="SYM",
                   help="C symbol prefix (default: the region name as a lower-case C identifier)")
    d = sub.add_parser("dump", help="print the normalised configuration")
    d.add_argument("file", metavar="FILE.toml")
    d.add_argument("--json", action="store_true", help="as JSON (for other tools)")
    d.add_argument("--prefix", metavar="SYM", help="prefix to report (as for generate)")
    return p


def _run(args: argparse.Namespace) -> int:
    """Execute a parsed command; ConfigError propagates."""
    sym = getattr(args, "prefix", None)
    if sym is not None and (problem := check_prefix(sym)):
        raise ConfigError([f"mdcom-cfg: {problem}"])
    cfg = load_config(args.file)
    sym = sym or default_prefix(cfg.region.name)
    if args.command == "check":
        print(_summary(cfg))
    elif args.command == "generate":
        try:
            generate(cfg, args.out_dir, sym)
        except OSError as exc:
            print(f"mdcom-cfg: cannot write to {args.out_dir}: {exc.strerror or exc}",
                  file=sys.stderr)
            return EXIT_OUTPUT
    elif args.json:
        print(json.dumps(to_json(cfg, sym), indent=2))
    else:
        print(_text_dump(cfg))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except ConfigError as exc:
        for line in exc.messages:
            print(line, file=sys.stderr)
        return EXIT_CONFIG


if __name__ == "__main__":
    sys.exit(main())
