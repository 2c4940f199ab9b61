// SPDX-License-Identifier: BSD-3-Clause
//! Raw FFI to libmdcom: a hand-written transcription of
//! include/mdcom/mdcom.h (wire format version 9, API 0.1.0). Every function
//! returns 0 (or a documented non-negative value) or a negative errno value,
//! exactly as in C; nothing here is safe to call without reading the header's
//! contract. The safe API is the `mdcom` crate.
//!
//! The `#[repr(C)]` structs are checked against the C header by the mdcom
//! crate's layout test (tests/layout.rs: sizeof/offsetof from a C program
//! compiled against include/, compared field by field).
//! Linking: see build.rs (MDCOM_LIB_DIR, MDCOM_LINK).

#![no_std]
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_void};

pub const MDCOM_VERSION_MAJOR: u32 = 0;
pub const MDCOM_VERSION_MINOR: u32 = 1;
pub const MDCOM_VERSION_PATCH: u32 = 0;
pub const MDCOM_WIRE_VERSION: u32 = 9;

pub const MDCOM_NAME_MAX: u32 = 32;
pub const MDCOM_DOMAIN_NAME_MAX: u32 = 16;
pub const MDCOM_MAX_DOMAINS: u32 = 32;
pub const MDCOM_MAX_PROCS: u32 = 64;
pub const MDCOM_MAX_DIR: u32 = 1024;
pub const MDCOM_MAX_BLOCKS: u32 = 65536;

/// Timeouts (int64_t nanoseconds): never block / block until the event.
pub const MDCOM_POLL: i64 = 0;
pub const MDCOM_FOREVER: i64 = -1;
pub const MDCOM_REAP_BUDGET_NS: i64 = 1_000_000;

/// enum mdcom_role
pub const MDCOM_ROLE_MASTER: u32 = 1;
pub const MDCOM_ROLE_REMOTE: u32 = 2;
/// enum mdcom_chan_type
pub const MDCOM_CHAN_FIFO: u32 = 1;
pub const MDCOM_CHAN_SMEM: u32 = 2;

pub const MDCOM_HEARTBEAT_MIN_MS: u32 = 100;
pub const MDCOM_HEARTBEAT_MAX_MS: u32 = 3_600_000;
pub const MDCOM_NO_SPIN: u32 = 0xffff_ffff;

/// mdcom_fifoch_enqueue / send: the channel's filter dropped the message.
pub const MDCOM_FILTERED: c_int = 1;

/// Events of mdcom_fifoch_wait.
pub const MDCOM_EV_RX: u32 = 0x1;
pub const MDCOM_EV_TX: u32 = 0x2;
pub const MDCOM_EV_NOTIFY: u32 = 0x4;
pub const MDCOM_EV_SPACE: u32 = 0x8;

/// enum mdcom_filter_type
pub const MDCOM_FILTER_NONE: u32 = 0;
pub const MDCOM_FILTER_EVERY_NTH: u32 = 1;
pub const MDCOM_FILTER_FUNC: u32 = 2;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mdcom_domain_cfg {
    pub name: *const c_char,
    pub id: u32,
    pub role: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mdcom_channel_cfg {
    pub name: *const c_char,
    /// enum mdcom_chan_type (`type` in C)
    pub type_: u32,
    pub block_size: u32,
    pub block_count: u32,
    pub queue_depth: u32,
    pub senders: u32,
    pub receivers: u32,
    pub size: u32,
    pub users: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mdcom_config {
    pub region_name: *const c_char,
    pub region_size: u32,
    pub mode: u32,
    pub group: i32,
    pub domains: *const mdcom_domain_cfg,
    pub n_domains: u32,
    pub channels: *const mdcom_channel_cfg,
    pub n_channels: u32,
}

/// Opaque: struct mdcom_platform (mdcom/platform.h), struct
/// mdcom_layout_table (mdcom/wire.h); only passed by pointer here.
#[repr(C)]
pub struct mdcom_platform {
    _p: [u8; 0],
}
#[repr(C)]
pub struct mdcom_layout_table {
    _p: [u8; 0],
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mdcom_init_opts {
    pub attach_timeout_ns: i64,
    pub platform: *const mdcom_platform,
    pub errbuf: *mut c_char,
    pub errbuf_len: usize,
    pub spin_ns: u32,
    pub keep_region: u32,
    pub heartbeat_ms: u32,
    pub reserved0: u32,
    pub layout: *const mdcom_layout_table,
    pub reserved: [u32; 4],
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct mdcom_fifo_state {
    pub block_size: u32,
    pub block_count: u32,
    pub queue_depth: u32,
    pub free_blocks: u32,
    pub queued: u32,
    pub filtered: u32,
    pub errors: u32,
    pub lost: u32,
    pub reclaimed: u32,
    pub discarded: u32,
    pub reserved: [u32; 6],
}

pub type mdcom_filter_fn = Option<unsafe extern "C" fn(arg: *mut c_void, msg: *const c_void, len: u32) -> c_int>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mdcom_filter {
    pub type_: u32,
    pub n: u32,
    pub fn_: mdcom_filter_fn,
    pub arg: *mut c_void,
}

/// Opaque handles (typedef struct mdcom mdcom_t, ...).
#[repr(C)]
pub struct mdcom_t {
    _p: [u8; 0],
}
#[repr(C)]
pub struct mdcom_fifoch_t {
    _p: [u8; 0],
}
#[repr(C)]
pub struct mdcom_smemch_t {
    _p: [u8; 0],
}

extern "C" {
    pub fn mdcom_init(out: *mut *mut mdcom_t, cfg: *const mdcom_config, domain_id: u32,
                      opts: *const mdcom_init_opts) -> c_int;
    pub fn mdcom_heartbeat(m: *mut mdcom_t) -> c_int;
    pub fn mdcom_term(m: *mut mdcom_t) -> c_int;
    pub fn mdcom_sense_process(m: *mut mdcom_t, domain_id: u32) -> c_int;
    pub fn mdcom_domain_id(m: *const mdcom_t) -> u32;
    pub fn mdcom_strerror(err: c_int) -> *const c_char;

    pub fn mdcom_fifoch_open(m: *mut mdcom_t, name: *const c_char, out: *mut *mut mdcom_fifoch_t) -> c_int;
    pub fn mdcom_fifoch_at(m: *mut mdcom_t, index: u32, out: *mut *mut mdcom_fifoch_t) -> c_int;
    pub fn mdcom_sense_fifoch(ch: *mut mdcom_fifoch_t, st: *mut mdcom_fifo_state) -> c_int;
    pub fn mdcom_fifoch_alloc(ch: *mut mdcom_fifoch_t, id: *mut u32) -> c_int;
    pub fn mdcom_fifoch_free(ch: *mut mdcom_fifoch_t, id: u32) -> c_int;
    pub fn mdcom_fifoch_get(ch: *mut mdcom_fifoch_t, id: u32, ptr: *mut *mut c_void, size: *mut u32) -> c_int;
    pub fn mdcom_fifoch_enqueue(ch: *mut mdcom_fifoch_t, id: u32, len: u32) -> c_int;
    pub fn mdcom_fifoch_dequeue(ch: *mut mdcom_fifoch_t, id: *mut u32, len: *mut u32) -> c_int;
    pub fn mdcom_fifoch_notify(ch: *mut mdcom_fifoch_t) -> c_int;
    pub fn mdcom_fifoch_wait(ch: *mut mdcom_fifoch_t, events: u32, timeout_ns: i64) -> c_int;
    pub fn mdcom_fifoch_send(ch: *mut mdcom_fifoch_t, buf: *const c_void, len: u32, timeout_ns: i64) -> c_int;
    pub fn mdcom_fifoch_recv(ch: *mut mdcom_fifoch_t, buf: *mut c_void, cap: u32, timeout_ns: i64) -> c_int;
    pub fn mdcom_filter_set(ch: *mut mdcom_fifoch_t, f: *const mdcom_filter) -> c_int;
    pub fn mdcom_fifoch_init(ch: *mut mdcom_fifoch_t) -> c_int;
    pub fn mdcom_fifoch_set_spin(ch: *mut mdcom_fifoch_t, spin_ns: u32) -> c_int;

    pub fn mdcom_smemch_open(m: *mut mdcom_t, name: *const c_char, out: *mut *mut mdcom_smemch_t) -> c_int;
    pub fn mdcom_smemch_at(m: *mut mdcom_t, index: u32, out: *mut *mut mdcom_smemch_t) -> c_int;
    pub fn mdcom_smemch_get(ch: *mut mdcom_smemch_t, ptr: *mut *mut c_void, size: *mut u32) -> c_int;
    pub fn mdcom_smemch_trylock(ch: *mut mdcom_smemch_t) -> c_int;
    pub fn mdcom_smemch_lock(ch: *mut mdcom_smemch_t, timeout_ns: i64) -> c_int;
    pub fn mdcom_smemch_unlock(ch: *mut mdcom_smemch_t) -> c_int;
}
