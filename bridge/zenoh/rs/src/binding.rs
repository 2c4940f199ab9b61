// SPDX-License-Identifier: BSD-3-Clause
//! The bridge's attachment and channel handles, on the mdcom crate
//! (bindings/rust): mdcom::Mdcom attaches and terms and turns the region's
//! configuration into the C structs, mdcom::Error carries the errors. The
//! channel calls go through mdcom-sys on the raw handle: the bridge keeps its
//! channel handles beside the attachment in one struct (under a RwLock the
//! supervisor takes to detach), which the safe crate's borrowing handles
//! (Fifo<'m>) cannot express; Attachment's field order and that lock keep
//! every handle within the attachment's life, as before.

#![allow(dead_code)]

use mdcom::sys;
use std::ffi::{c_int, c_void};
use std::ptr;

pub use mdcom::Error;
pub const MDCOM_FOREVER: i64 = sys::MDCOM_FOREVER;
pub const MDCOM_NO_SPIN: u32 = sys::MDCOM_NO_SPIN;
pub const MDCOM_EV_RX: u32 = sys::MDCOM_EV_RX;
pub const MDCOM_EV_TX: u32 = sys::MDCOM_EV_TX;
const MDCOM_FILTERED: c_int = sys::MDCOM_FILTERED;

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
    mdcom::strerror(code)
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

/// An attachment to a region (mdcom_init .. mdcom_term, in mdcom::Mdcom).
pub struct System {
    m: mdcom::Mdcom,
}

impl System {
    pub fn attach(spec: &SystemSpec, domain: u32, attach_timeout_ns: i64) -> Result<System, Error> {
        let mut cfg = mdcom::Config::new(&spec.region);
        cfg.region_size = spec.size;
        cfg.mode = spec.mode;
        cfg.group = spec.group;
        for (name, id, master) in &spec.domains {
            cfg = cfg.domain(mdcom::Domain { name: name.clone(), id: *id, master: *master });
        }
        for c in &spec.channels {
            cfg.channels.push(if c.fifo {
                mdcom::ChannelSpec::Fifo(mdcom::FifoSpec {
                    name: c.name.clone(),
                    block_size: c.block_size,
                    block_count: c.block_count,
                    queue_depth: c.queue_depth,
                    senders: c.senders,
                    receivers: c.receivers,
                })
            } else {
                mdcom::ChannelSpec::Smem(mdcom::SmemSpec { name: c.name.clone(), size: c.size, users: c.users })
            });
        }
        let timeout = match attach_timeout_ns {
            t if t < 0 => mdcom::Timeout::Forever,
            0 => mdcom::Timeout::Poll,
            t => mdcom::Timeout::After(std::time::Duration::from_nanos(t as u64)),
        };
        let opts = mdcom::AttachOptions { attach_timeout: timeout, ..Default::default() };
        Ok(System { m: mdcom::Mdcom::attach(&cfg, domain, &opts)? })
    }

    /// Whether the attachment still holds (mdcom_heartbeat, which without a
    /// heartbeat promise only checks the region): 0, or a negative errno
    /// (region_ended() tells the ones that end it).
    pub fn check(&self) -> c_int {
        self.m.heartbeat().err().map_or(0, |e| e.code())
    }

    pub fn fifo(&self, name: &str) -> Result<Fifo, Error> {
        let f = self.m.fifo(name)?;
        Ok(Fifo { ch: f.as_ptr(), block_size: f.block_size(), name: name.to_string() })
    }
}

/// A FIFO channel handle (valid while its System is attached).
#[derive(Clone)]
pub struct Fifo {
    ch: *mut sys::mdcom_fifoch_t,
    pub block_size: u32,
    pub name: String,
}

// SAFETY: libmdcom's channel calls are thread-safe on one handle (the
// library's contract: a process' threads share the attachment); a Fifo is
// used only while its System is attached (Attachment drops the handles with
// it, under the supervisor's write lock).
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
        let r = unsafe { sys::mdcom_fifoch_send(self.ch, data.as_ptr().cast(), data.len() as u32, timeout_ns) };
        match r {
            0 => Ok(true),
            MDCOM_FILTERED => Ok(false),
            e => Err(e),
        }
    }

    /// Copy receive into buf (>= block_size): the length, or a negative errno.
    pub fn recv(&self, buf: &mut [u8], timeout_ns: i64) -> c_int {
        // SAFETY: buf is valid for its length.
        unsafe { sys::mdcom_fifoch_recv(self.ch, buf.as_mut_ptr().cast(), buf.len() as u32, timeout_ns) }
    }

    /// Zero-copy receive without waiting: f gets the message in place, then
    /// the block goes back to the pool. Ok(Empty) when nothing is queued.
    /// Does not notify: call notify() after a batch.
    pub fn take<F: FnOnce(&[u8])>(&self, f: F) -> Result<Recv, c_int> {
        let mut id = 0u32;
        let mut len = 0u32;
        // SAFETY: ch is valid; id/len are out parameters.
        let r = unsafe { sys::mdcom_fifoch_dequeue(self.ch, &mut id, &mut len) };
        if r == -libc::EAGAIN {
            return Ok(Recv::Empty);
        }
        if r < 0 {
            return Err(r);
        }
        let mut p: *mut c_void = ptr::null_mut();
        let mut size = 0u32;
        // SAFETY: id was just dequeued by this process.
        let r = unsafe { sys::mdcom_fifoch_get(self.ch, id, &mut p, &mut size) };
        if r < 0 {
            unsafe { sys::mdcom_fifoch_free(self.ch, id) };
            return Err(r);
        }
        let n = len.min(size) as usize;
        // SAFETY: the block is ours until mdcom_fifoch_free; n <= block size
        // (the library validated len at dequeue).
        let msg = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
        f(msg);
        // SAFETY: id is held by this process.
        let r = unsafe { sys::mdcom_fifoch_free(self.ch, id) };
        if r < 0 {
            return Err(r);
        }
        Ok(Recv::Got)
    }

    pub fn notify(&self) {
        // SAFETY: ch is valid.
        unsafe { sys::mdcom_fifoch_notify(self.ch) };
    }

    /// The adaptive spin limit of this process' waits on the channel (ns).
    pub fn set_spin(&self, spin_ns: u32) {
        // SAFETY: ch is valid.
        unsafe { sys::mdcom_fifoch_set_spin(self.ch, spin_ns) };
    }

    /// Wait for events (MDCOM_EV_*): the mask that holds, or a negative errno.
    pub fn wait(&self, events: u32, timeout_ns: i64) -> c_int {
        // SAFETY: ch is valid.
        unsafe { sys::mdcom_fifoch_wait(self.ch, events, timeout_ns) }
    }
}
