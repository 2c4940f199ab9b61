// SPDX-License-Identifier: BSD-3-Clause
//! A small hand-written binding of libmdcom's public C API (include/mdcom/mdcom.h):
//! the configuration structs, init/term and the FIFO channel calls the bridge uses.

#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::ptr;

pub const MDCOM_ROLE_MASTER: u32 = 1;
pub const MDCOM_ROLE_REMOTE: u32 = 2;
pub const MDCOM_CHAN_FIFO: u32 = 1;
pub const MDCOM_CHAN_SMEM: u32 = 2;
pub const MDCOM_EV_RX: u32 = 0x1;
pub const MDCOM_EV_TX: u32 = 0x2;
pub const MDCOM_FILTERED: c_int = 1;
pub const MDCOM_FOREVER: i64 = -1;
pub const MDCOM_NO_SPIN: u32 = 0xffff_ffff;

#[repr(C)]
pub struct DomainCfg {
    pub name: *const c_char,
    pub id: u32,
    pub role: u32,
}

#[repr(C)]
pub struct ChannelCfg {
    pub name: *const c_char,
    pub ty: u32,
    pub block_size: u32,
    pub block_count: u32,
    pub queue_depth: u32,
    pub senders: u32,
    pub receivers: u32,
    pub size: u32,
    pub users: u32,
}

#[repr(C)]
pub struct Config {
    pub region_name: *const c_char,
    pub region_size: u32,
    pub mode: u32,
    pub group: i32,
    pub domains: *const DomainCfg,
    pub n_domains: u32,
    pub channels: *const ChannelCfg,
    pub n_channels: u32,
}

#[repr(C)]
pub struct InitOpts {
    pub attach_timeout_ns: i64,
    pub platform: *const c_void,
    pub errbuf: *mut c_char,
    pub errbuf_len: usize,
    pub spin_ns: u32,
    pub keep_region: u32,
    pub heartbeat_ms: u32,
    pub reserved0: u32,
    pub layout: *const c_void,
    pub reserved: [u32; 4],
}

#[repr(C)]
#[derive(Default)]
pub struct FifoState {
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

#[repr(C)]
pub struct RawMdcom {
    _p: [u8; 0],
}
#[repr(C)]
pub struct RawFifo {
    _p: [u8; 0],
}

extern "C" {
    fn mdcom_init(out: *mut *mut RawMdcom, cfg: *const Config, domain: u32, opts: *const InitOpts) -> c_int;
    fn mdcom_term(m: *mut RawMdcom) -> c_int;
    fn mdcom_heartbeat(m: *mut RawMdcom) -> c_int;
    fn mdcom_strerror(err: c_int) -> *const c_char;
    fn mdcom_fifoch_open(m: *mut RawMdcom, name: *const c_char, out: *mut *mut RawFifo) -> c_int;
    fn mdcom_sense_fifoch(ch: *mut RawFifo, st: *mut FifoState) -> c_int;
    fn mdcom_fifoch_free(ch: *mut RawFifo, id: u32) -> c_int;
    fn mdcom_fifoch_get(ch: *mut RawFifo, id: u32, p: *mut *mut c_void, size: *mut u32) -> c_int;
    fn mdcom_fifoch_dequeue(ch: *mut RawFifo, id: *mut u32, len: *mut u32) -> c_int;
    fn mdcom_fifoch_notify(ch: *mut RawFifo) -> c_int;
    fn mdcom_fifoch_wait(ch: *mut RawFifo, events: u32, timeout_ns: i64) -> c_int;
    fn mdcom_fifoch_set_spin(ch: *mut RawFifo, spin_ns: u32) -> c_int;
    fn mdcom_fifoch_send(ch: *mut RawFifo, buf: *const c_void, len: u32, timeout_ns: i64) -> c_int;
    fn mdcom_fifoch_recv(ch: *mut RawFifo, buf: *mut c_void, cap: u32, timeout_ns: i64) -> c_int;
}

/// An mdcom error: the negative errno value of a call, with context.
#[derive(Debug, Clone)]
pub struct Error {
    pub code: c_int,
    pub what: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: mdcom_strerror returns a static NUL-terminated string for any value.
        let s = unsafe { CStr::from_ptr(mdcom_strerror(self.code)) };
        write!(f, "{}: {}", self.what, s.to_string_lossy())
    }
}

/// The codes by which an mdcom call says that this attachment is over and a
/// new one is needed (mdcom_term + mdcom_init): the master terminated the
/// region (-ESHUTDOWN), re-formatted it (-ECONNRESET), or the other processes
/// took this one for dead and reclaimed its slot (-ENOTCONN).
pub fn region_ended(code: c_int) -> bool {
    code == -libc::ESHUTDOWN || code == -libc::ECONNRESET || code == -libc::ENOTCONN
}

/// Region states of the wire header (include/mdcom/wire.h, MDCOM_ST_*).
pub const ST_FORMATTING: u32 = 0x464f_524d;
pub const ST_READY: u32 = 0x5944_4552;
/// Offset of the state word in the wire header (mdcom_wire_hdr.state).
const HDR_STATE_OFF: u64 = 24;

/// The state word of the region file `name` of the Linux port
/// ($MDCOM_SHM_DIR, default /dev/shm), read without attaching; None when
/// there is no such file (or it is shorter than the header). A word read
/// while it changes is at worst a value that is none of the states.
pub fn region_file_state(name: &str) -> Option<u32> {
    use std::os::unix::fs::FileExt;
    let dir = std::env::var("MDCOM_SHM_DIR").ok().filter(|d| !d.is_empty());
    let path = format!("{}/{name}", dir.as_deref().unwrap_or("/dev/shm"));
    let f = std::fs::File::open(path).ok()?;
    let mut w = [0u8; 4];
    f.read_exact_at(&mut w, HDR_STATE_OFF).ok()?;
    Some(u32::from_le_bytes(w))
}

pub fn strerror(code: c_int) -> String {
    // SAFETY: as above.
    unsafe { CStr::from_ptr(mdcom_strerror(code)) }.to_string_lossy().into_owned()
}

/// One FIFO channel of the region (as named in the configuration).
pub struct ChannelSpec {
    pub name: String,
    pub fifo: bool,
    pub block_size: u32,
    pub block_count: u32,
    pub queue_depth: u32,
    pub senders: u32,
    pub receivers: u32,
    pub size: u32,
    pub users: u32,
}

/// The region's configuration as mdcom_init takes it.
pub struct SystemSpec {
    pub region: String,
    pub size: u32,
    pub mode: u32,
    pub group: i32,
    pub domains: Vec<(String, u32, bool)>, // name, id, master
    pub channels: Vec<ChannelSpec>,
}

/// An attachment to a region (mdcom_init .. mdcom_term).
pub struct System {
    h: *mut RawMdcom,
    // the C structs point into these; they must outlive the attachment
    _strings: Vec<CString>,
    _doms: Vec<DomainCfg>,
    _chans: Vec<ChannelCfg>,
    _cfg: Box<Config>,
}

// SAFETY: libmdcom's calls are thread-safe on one handle (the library's
// contract: a process' threads share the attachment).
unsafe impl Send for System {}
unsafe impl Sync for System {}

impl System {
    pub fn attach(spec: &SystemSpec, domain: u32, attach_timeout_ns: i64) -> Result<System, Error> {
        let cs = |s: &str| CString::new(s).expect("names have no NUL (checked by mdcom-cfg)");
        let mut strings = vec![cs(&spec.region)];
        let mut doms = Vec::new();
        for (name, id, master) in &spec.domains {
            strings.push(cs(name));
            doms.push(DomainCfg {
                name: strings.last().unwrap().as_ptr(),
                id: *id,
                role: if *master { MDCOM_ROLE_MASTER } else { MDCOM_ROLE_REMOTE },
            });
        }
        let mut chans = Vec::new();
        for c in &spec.channels {
            strings.push(cs(&c.name));
            chans.push(ChannelCfg {
                name: strings.last().unwrap().as_ptr(),
                ty: if c.fifo { MDCOM_CHAN_FIFO } else { MDCOM_CHAN_SMEM },
                block_size: c.block_size,
                block_count: c.block_count,
                queue_depth: c.queue_depth,
                senders: c.senders,
                receivers: c.receivers,
                size: c.size,
                users: c.users,
            });
        }
        let cfg = Box::new(Config {
            region_name: strings[0].as_ptr(),
            region_size: spec.size,
            mode: spec.mode,
            group: spec.group,
            domains: doms.as_ptr(),
            n_domains: doms.len() as u32,
            channels: chans.as_ptr(),
            n_channels: chans.len() as u32,
        });
        let mut err = vec![0 as c_char; 256];
        let opts = InitOpts {
            attach_timeout_ns,
            platform: ptr::null(),
            errbuf: err.as_mut_ptr(),
            errbuf_len: err.len(),
            spin_ns: 0,
            keep_region: 0,
            heartbeat_ms: 0,
            reserved0: 0,
            layout: ptr::null(),
            reserved: [0; 4],
        };
        let mut h = ptr::null_mut();
        // SAFETY: cfg, its arrays and strings live in the returned System.
        let r = unsafe { mdcom_init(&mut h, &*cfg, domain, &opts) };
        if r < 0 {
            // SAFETY: errbuf is NUL-terminated by mdcom_init (zeroed before).
            let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
            let what = if msg.is_empty() {
                format!("mdcom_init region '{}'", spec.region)
            } else {
                format!("mdcom_init: {msg}")
            };
            return Err(Error { code: r, what });
        }
        Ok(System { h, _strings: strings, _doms: doms, _chans: chans, _cfg: cfg })
    }

    /// Whether the attachment still holds (mdcom_heartbeat, which without a
    /// heartbeat promise only checks the region): 0, or a negative errno
    /// (region_ended() tells the ones that end it).
    pub fn check(&self) -> c_int {
        // SAFETY: h is a live handle.
        unsafe { mdcom_heartbeat(self.h) }
    }

    pub fn fifo(&self, name: &str) -> Result<Fifo, Error> {
        let c = CString::new(name).unwrap();
        let mut out = ptr::null_mut();
        // SAFETY: h is a live handle; out receives a channel handle owned by it.
        let r = unsafe { mdcom_fifoch_open(self.h, c.as_ptr(), &mut out) };
        if r < 0 {
            return Err(Error { code: r, what: format!("fifo '{name}'") });
        }
        let mut st = FifoState::default();
        // SAFETY: out is a valid channel handle.
        let r = unsafe { mdcom_sense_fifoch(out, &mut st) };
        if r < 0 {
            return Err(Error { code: r, what: format!("fifo '{name}': sense") });
        }
        Ok(Fifo { ch: out, block_size: st.block_size, name: name.to_string() })
    }
}

impl Drop for System {
    fn drop(&mut self) {
        // SAFETY: h is live; no Fifo may be used after this (they borrow the
        // attachment by convention: the bridge drops its threads first).
        unsafe { mdcom_term(self.h) };
    }
}

/// A FIFO channel handle (valid while its System is attached).
#[derive(Clone)]
pub struct Fifo {
    ch: *mut RawFifo,
    pub block_size: u32,
    pub name: String,
}

// SAFETY: as for System: channel calls are thread-safe.
unsafe impl Send for Fifo {}
unsafe impl Sync for Fifo {}

/// What a receive returned.
pub enum Recv {
    Got,
    Empty,
}

impl Fifo {
    /// Copy send: Ok(true) sent, Ok(false) dropped by the channel's filter;
    /// Err(-ETIMEDOUT / -ENOBUFS) when no block became free in time.
    pub fn send(&self, data: &[u8], timeout_ns: i64) -> Result<bool, c_int> {
        // SAFETY: data is valid for len bytes.
        let r = unsafe { mdcom_fifoch_send(self.ch, data.as_ptr().cast(), data.len() as u32, timeout_ns) };
        match r {
            0 => Ok(true),
            MDCOM_FILTERED => Ok(false),
            e => Err(e),
        }
    }

    /// Copy receive into buf (>= block_size): the length, or a negative errno.
    pub fn recv(&self, buf: &mut [u8], timeout_ns: i64) -> c_int {
        // SAFETY: buf is valid for its length.
        unsafe { mdcom_fifoch_recv(self.ch, buf.as_mut_ptr().cast(), buf.len() as u32, timeout_ns) }
    }

    /// Zero-copy receive without waiting: f gets the message in place, then
    /// the block goes back to the pool. Ok(Empty) when nothing is queued.
    /// Does not notify: call notify() after a batch.
    pub fn take<F: FnOnce(&[u8])>(&self, f: F) -> Result<Recv, c_int> {
        let mut id = 0u32;
        let mut len = 0u32;
        // SAFETY: ch is valid; id/len are out parameters.
        let r = unsafe { mdcom_fifoch_dequeue(self.ch, &mut id, &mut len) };
        if r == -libc::EAGAIN {
            return Ok(Recv::Empty);
        }
        if r < 0 {
            return Err(r);
        }
        let mut p: *mut c_void = ptr::null_mut();
        let mut size = 0u32;
        // SAFETY: id was just dequeued by this process.
        let r = unsafe { mdcom_fifoch_get(self.ch, id, &mut p, &mut size) };
        if r < 0 {
            unsafe { mdcom_fifoch_free(self.ch, id) };
            return Err(r);
        }
        let n = len.min(size) as usize;
        // SAFETY: the block is ours until mdcom_fifoch_free; n <= block size
        // (the library validated len at dequeue).
        let msg = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
        f(msg);
        // SAFETY: id is held by this process.
        let r = unsafe { mdcom_fifoch_free(self.ch, id) };
        if r < 0 {
            return Err(r);
        }
        Ok(Recv::Got)
    }

    pub fn notify(&self) {
        // SAFETY: ch is valid.
        unsafe { mdcom_fifoch_notify(self.ch) };
    }

    /// The adaptive spin limit of this process' waits on the channel (ns).
    pub fn set_spin(&self, spin_ns: u32) {
        // SAFETY: ch is valid.
        unsafe { mdcom_fifoch_set_spin(self.ch, spin_ns) };
    }

    /// Wait for events (MDCOM_EV_*): the mask that holds, or a negative errno.
    pub fn wait(&self, events: u32, timeout_ns: i64) -> c_int {
        // SAFETY: ch is valid.
        unsafe { mdcom_fifoch_wait(self.ch, events, timeout_ns) }
    }
}
