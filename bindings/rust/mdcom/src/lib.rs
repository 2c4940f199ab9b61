// SPDX-License-Identifier: BSD-3-Clause
//! Safe Rust API of libmdcom (include/mdcom/mdcom.h), on the raw FFI of
//! `mdcom-sys`.
//!
//! * [`Mdcom`] owns one attachment (`mdcom_t`, mdcom_init .. mdcom_term) and
//!   the configuration the C library keeps pointing to until mdcom_term.
//! * [`Fifo`] and [`Smem`] are channel handles borrowing it: the borrow checker
//!   keeps every handle (and every block or lock guard of it) from outliving
//!   the attachment, and so keeps mdcom_term (in `Drop`, which needs the
//!   attachment by value) from racing any other call on it: the one rule of
//!   the C API's thread safety.
//! * [`TxBlock`] / [`RxBlock`] are zero-copy blocks (alloc/dequeue): guards
//!   whose Drop frees a block that was not enqueued; [`SmemGuard`] holds the
//!   SMEM lock.
//! * Errors are [`Error`]: the negative errno of the call with
//!   mdcom_strerror's text; timeouts are [`Timeout`] (a `Duration`,
//!   [`Timeout::Poll`] or [`Timeout::Forever`]).
//!
//! # Send and Sync
//! Every libmdcom call is thread-safe on one attachment except mdcom_term, so
//! `Mdcom`, `Fifo` and `Smem` are `Send + Sync`: all their methods take
//! `&self`, and `Drop for Mdcom` runs only once no borrow is left. The state
//! the library keeps per thread (its operation records) is keyed by the
//! attachment and given back at thread exit, so terming on another thread
//! than the one that attached is allowed (Send). Blocks and the SMEM lock are
//! held by the process (the attachment), not by a thread, so the guards are
//! `Send` (freed or unlocked on any thread) and `Sync` (shared they give only
//! `&[u8]`).
//!
//! # Shared memory and other processes
//! A block's bytes and the SMEM area are memory other processes map. While a
//! guard exists the protocol gives it to this process alone (a block it
//! allocated or dequeued, a lock it holds); a peer that breaks the protocol
//! (a hostile or corrupted one, or the survivors of a missed heartbeat
//! promise) can still write there. The library bounds-checks everything it
//! reads from the region; callers should treat the bytes as untrusted input.
//!
//! ```no_run
//! use mdcom::{AttachOptions, Config, Domain, FifoSpec, Mdcom, Timeout};
//! use std::time::Duration;
//!
//! let cfg = Config::new("demo-rs")
//!     .domain(Domain::master("linux", 0))
//!     .domain(Domain::remote("fw", 1))
//!     .fifo(FifoSpec::new("ctl", 64, 8).senders(1 << 0).receivers(1 << 1));
//! let m = Mdcom::attach(&cfg, 0, &AttachOptions::default())?;  // mdcom_init
//! let ctl = m.fifo("ctl")?;                                      // Fifo<'_> borrows m
//! ctl.send(b"hello", Duration::from_millis(100))?;              // copy send
//! let mut b = ctl.alloc()?;                                      // zero-copy: TxBlock<'_>
//! b[..3].copy_from_slice(b"abc");
//! b.enqueue(3)?;                                                 // a dropped TxBlock is freed
//! ctl.notify()?;
//! // m dropped: mdcom_term
//! # Ok::<(), mdcom::Error>(())
//! ```
//!
//! A channel handle cannot outlive its attachment (so no call can race the
//! mdcom_term in Drop):
//!
//! ```compile_fail
//! # use mdcom::{Config, Mdcom, AttachOptions};
//! let m = Mdcom::attach(&Config::new("x"), 0, &AttachOptions::default()).unwrap();
//! let f = m.fifo("ctl").unwrap();
//! drop(m); // error[E0505]: cannot move out of `m` because it is borrowed
//! f.notify().unwrap();
//! ```

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
use std::time::Duration;

pub use mdcom_sys as sys;
/// A channel's usage counters (mdcom_sense_fifoch), as the C struct.
pub use mdcom_sys::mdcom_fifo_state as FifoState;

/// Events of [`Fifo::wait`] (MDCOM_EV_*).
pub const EV_RX: u32 = sys::MDCOM_EV_RX;
pub const EV_TX: u32 = sys::MDCOM_EV_TX;
pub const EV_NOTIFY: u32 = sys::MDCOM_EV_NOTIFY;
pub const EV_SPACE: u32 = sys::MDCOM_EV_SPACE;

// ---------------------------------------------------------------- errors

/// A failed mdcom call: its negative errno value (`code`), mdcom_strerror's
/// name for it, and what was being done (`context`, may be empty; for
/// mdcom_init the library's one-line explanation when it gave one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: i32,
    context: String,
}

impl Error {
    /// An error from a negative return value of a libmdcom call.
    pub fn new(code: i32, context: impl Into<String>) -> Error {
        Error { code, context: context.into() }
    }
    /// The call's return value: a negative errno (e.g. `-libc::ETIMEDOUT`).
    pub fn code(&self) -> i32 {
        self.code
    }
    /// The positive errno value (`libc::ETIMEDOUT`).
    pub fn errno(&self) -> i32 {
        -self.code
    }
    pub fn context(&self) -> &str {
        &self.context
    }
    /// mdcom_strerror's text for the code.
    pub fn message(&self) -> String {
        strerror(self.code)
    }
    pub fn is_timeout(&self) -> bool {
        self.code == -libc::ETIMEDOUT
    }
    /// The attachment is over and a new one is needed (drop it and attach
    /// again): the master terminated the region (-ESHUTDOWN), re-formatted
    /// it (-ECONNRESET), or the others took this process for dead (-ENOTCONN).
    pub fn region_ended(&self) -> bool {
        [libc::ESHUTDOWN, libc::ECONNRESET, libc::ENOTCONN].contains(&self.errno())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.context.is_empty() {
            write!(f, "{}", self.message())
        } else {
            write!(f, "{}: {}", self.context, self.message())
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// mdcom_strerror: the name of an mdcom error code (e.g. "ETIMEDOUT: ...").
pub fn strerror(code: i32) -> String {
    // SAFETY: mdcom_strerror returns a static NUL-terminated string for any value.
    unsafe { CStr::from_ptr(sys::mdcom_strerror(code)) }.to_string_lossy().into_owned()
}

/// A C return value: >= 0 passes through, < 0 is an Error.
fn check(r: c_int, context: &str) -> Result<c_int> {
    if r < 0 {
        Err(Error::new(r, context))
    } else {
        Ok(r)
    }
}

// ---------------------------------------------------------------- timeouts

/// How long a call may block: MDCOM_POLL, a duration, MDCOM_FOREVER.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// never block (MDCOM_POLL)
    Poll,
    /// block at most this long (a zero duration is Poll; one beyond
    /// i64::MAX ns, ~292 years, is cut to that)
    After(Duration),
    /// block until the event (MDCOM_FOREVER)
    Forever,
}

impl Timeout {
    /// The C API's int64_t nanoseconds.
    pub fn as_ns(self) -> i64 {
        match self {
            Timeout::Poll => sys::MDCOM_POLL,
            Timeout::Forever => sys::MDCOM_FOREVER,
            Timeout::After(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        }
    }
}

impl From<Duration> for Timeout {
    fn from(d: Duration) -> Timeout {
        Timeout::After(d)
    }
}

impl From<Option<Duration>> for Timeout {
    /// None: for ever.
    fn from(d: Option<Duration>) -> Timeout {
        d.map_or(Timeout::Forever, Timeout::After)
    }
}

// ---------------------------------------------------------------- configuration

/// A domain of the system (mdcom_domain_cfg).
#[derive(Debug, Clone)]
pub struct Domain {
    pub name: String,
    pub id: u32,
    pub master: bool,
}

impl Domain {
    pub fn master(name: &str, id: u32) -> Domain {
        Domain { name: name.into(), id, master: true }
    }
    pub fn remote(name: &str, id: u32) -> Domain {
        Domain { name: name.into(), id, master: false }
    }
}

/// A FIFO channel (mdcom_channel_cfg with type MDCOM_CHAN_FIFO).
#[derive(Debug, Clone)]
pub struct FifoSpec {
    pub name: String,
    pub block_size: u32,
    pub block_count: u32,
    /// 0: the smallest power of two >= block_count
    pub queue_depth: u32,
    /// bit masks of domain ids
    pub senders: u32,
    pub receivers: u32,
}

impl FifoSpec {
    pub fn new(name: &str, block_size: u32, block_count: u32) -> FifoSpec {
        FifoSpec { name: name.into(), block_size, block_count, queue_depth: 0, senders: 0, receivers: 0 }
    }
    pub fn senders(mut self, mask: u32) -> Self {
        self.senders = mask;
        self
    }
    pub fn receivers(mut self, mask: u32) -> Self {
        self.receivers = mask;
        self
    }
    pub fn queue_depth(mut self, depth: u32) -> Self {
        self.queue_depth = depth;
        self
    }
}

/// An SMEM channel (type MDCOM_CHAN_SMEM): `size` bytes, used by the
/// domains of the bit mask `users`.
#[derive(Debug, Clone)]
pub struct SmemSpec {
    pub name: String,
    pub size: u32,
    pub users: u32,
}

/// The system: region and its domains and channels (mdcom_config). Every
/// process attaching to one region must give the same configuration
/// (mdcom_init checks it: -ESTALE).
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub region: String,
    /// 0: what the layout needs
    pub region_size: u32,
    /// region file mode bits (Linux), 0: 0600
    pub mode: u32,
    /// gid allowed to attach, -1 none
    pub group: i32,
    pub domains: Vec<Domain>,
    /// in the order of cfg->channels (FIFO and SMEM interleaved as pushed)
    pub channels: Vec<ChannelSpec>,
}

#[derive(Debug, Clone)]
pub enum ChannelSpec {
    Fifo(FifoSpec),
    Smem(SmemSpec),
}

impl Config {
    pub fn new(region: &str) -> Config {
        Config { region: region.into(), group: -1, ..Default::default() }
    }
    pub fn domain(mut self, d: Domain) -> Self {
        self.domains.push(d);
        self
    }
    pub fn fifo(mut self, f: FifoSpec) -> Self {
        self.channels.push(ChannelSpec::Fifo(f));
        self
    }
    pub fn smem(mut self, name: &str, size: u32, users: u32) -> Self {
        self.channels.push(ChannelSpec::Smem(SmemSpec { name: name.into(), size, users }));
        self
    }
}

/// mdcom_init_opts: what can be chosen at attach.
#[derive(Debug, Clone)]
pub struct AttachOptions {
    /// how long a remote waits for the master to format the region
    pub attach_timeout: Timeout,
    /// spin before sleeping in waits, ns (0: default, MDCOM_NO_SPIN: none)
    pub spin_ns: u32,
    /// master: keep the region file at term
    pub keep_region: bool,
    /// heartbeat promise in ms (0: none)
    pub heartbeat_ms: u32,
}

impl Default for AttachOptions {
    fn default() -> Self {
        AttachOptions { attach_timeout: Timeout::Poll, spin_ns: 0, keep_region: false, heartbeat_ms: 0 }
    }
}

impl AttachOptions {
    pub fn attach_timeout(mut self, t: impl Into<Timeout>) -> Self {
        self.attach_timeout = t.into();
        self
    }
}

fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(-libc::EINVAL, format!("{what} '{s}' holds a NUL")))
}

/// The C configuration and everything it points to. mdcom_init keeps the
/// pointer until mdcom_term (the header: "cfg is NOT copied"), so it lives in
/// the attachment; the vectors' heap buffers and the box do not move when the
/// Mdcom value does.
struct CConfig {
    _strings: Vec<CString>,
    _domains: Vec<sys::mdcom_domain_cfg>,
    _channels: Vec<sys::mdcom_channel_cfg>,
    cfg: Box<sys::mdcom_config>,
}

impl CConfig {
    fn new(c: &Config) -> Result<CConfig> {
        let mut strings = vec![cstring(&c.region, "region")?];
        let mut domains = Vec::with_capacity(c.domains.len());
        for d in &c.domains {
            let s = cstring(&d.name, "domain")?;
            domains.push(sys::mdcom_domain_cfg {
                name: s.as_ptr(),
                id: d.id,
                role: if d.master { sys::MDCOM_ROLE_MASTER } else { sys::MDCOM_ROLE_REMOTE },
            });
            strings.push(s); // moving a CString does not move its heap bytes
        }
        let mut channels = Vec::with_capacity(c.channels.len());
        for ch in &c.channels {
            let zero = sys::mdcom_channel_cfg {
                name: ptr::null(),
                type_: 0,
                block_size: 0,
                block_count: 0,
                queue_depth: 0,
                senders: 0,
                receivers: 0,
                size: 0,
                users: 0,
            };
            let (s, cc) = match ch {
                ChannelSpec::Fifo(f) => (cstring(&f.name, "channel")?, sys::mdcom_channel_cfg {
                    type_: sys::MDCOM_CHAN_FIFO,
                    block_size: f.block_size,
                    block_count: f.block_count,
                    queue_depth: f.queue_depth,
                    senders: f.senders,
                    receivers: f.receivers,
                    ..zero
                }),
                ChannelSpec::Smem(m) => (cstring(&m.name, "channel")?, sys::mdcom_channel_cfg {
                    type_: sys::MDCOM_CHAN_SMEM,
                    size: m.size,
                    users: m.users,
                    ..zero
                }),
            };
            channels.push(sys::mdcom_channel_cfg { name: s.as_ptr(), ..cc });
            strings.push(s);
        }
        let cfg = Box::new(sys::mdcom_config {
            region_name: strings[0].as_ptr(),
            region_size: c.region_size,
            mode: c.mode,
            group: c.group,
            domains: domains.as_ptr(),
            n_domains: domains.len() as u32,
            channels: channels.as_ptr(),
            n_channels: channels.len() as u32,
        });
        Ok(CConfig { _strings: strings, _domains: domains, _channels: channels, cfg })
    }
}

// ---------------------------------------------------------------- attachment

/// One attachment of this process to a region (mdcom_t): mdcom_init at
/// [`Mdcom::attach`], mdcom_term at drop (or [`Mdcom::term`] for its result).
pub struct Mdcom {
    h: NonNull<sys::mdcom_t>,
    _cfg: CConfig,
}

// SAFETY: libmdcom's calls are thread-safe and multi-process safe on one
// mdcom_t except mdcom_term (mdcom.h, "Conventions"). Shared (&Mdcom) use only
// reaches the thread-safe calls; mdcom_term runs in Drop / term(self), which
// own the value, so no borrow (Fifo, Smem, guards) and no other thread's call
// can be live then. Per-thread library state is keyed by the attachment and
// released at thread exit, so moving the attachment between threads is fine.
unsafe impl Send for Mdcom {}
unsafe impl Sync for Mdcom {}

impl Mdcom {
    /// mdcom_init: attach as domain `domain` (the master domain creates and
    /// formats the region; a remote waits up to opts.attach_timeout for it).
    pub fn attach(cfg: &Config, domain: u32, opts: &AttachOptions) -> Result<Mdcom> {
        let c = CConfig::new(cfg)?;
        let mut errbuf = [0 as c_char; 256];
        let o = sys::mdcom_init_opts {
            attach_timeout_ns: opts.attach_timeout.as_ns(),
            platform: ptr::null(),
            errbuf: errbuf.as_mut_ptr(),
            errbuf_len: errbuf.len(),
            spin_ns: opts.spin_ns,
            keep_region: opts.keep_region as u32,
            heartbeat_ms: opts.heartbeat_ms,
            reserved0: 0,
            layout: ptr::null(),
            reserved: [0; 4],
        };
        let mut h = ptr::null_mut();
        // SAFETY: c.cfg and all it points to live in the returned Mdcom until
        // mdcom_term; opts is read during the call only.
        let r = unsafe { sys::mdcom_init(&mut h, &*c.cfg, domain, &o) };
        if r < 0 {
            // SAFETY: errbuf was zeroed; mdcom_init writes a NUL-terminated line.
            let msg = unsafe { CStr::from_ptr(errbuf.as_ptr()) }.to_string_lossy().into_owned();
            let ctx = if msg.is_empty() { format!("mdcom_init region '{}'", cfg.region) } else { format!("mdcom_init: {msg}") };
            return Err(Error::new(r, ctx));
        }
        let h = NonNull::new(h).ok_or_else(|| Error::new(-libc::EPROTO, "mdcom_init gave no handle"))?;
        Ok(Mdcom { h, _cfg: c })
    }

    /// The raw handle, for mdcom-sys calls the safe API lacks. It stays
    /// valid while self lives; never pass it to mdcom_term.
    pub fn as_ptr(&self) -> *mut sys::mdcom_t {
        self.h.as_ptr()
    }

    /// mdcom_heartbeat: a sign of life, and a check that the attachment holds.
    pub fn heartbeat(&self) -> Result<()> {
        // SAFETY: h is live while self is.
        check(unsafe { sys::mdcom_heartbeat(self.as_ptr()) }, "heartbeat").map(drop)
    }

    /// mdcom_sense_process: live processes attached as domain `domain`.
    pub fn processes(&self, domain: u32) -> Result<u32> {
        // SAFETY: as above.
        check(unsafe { sys::mdcom_sense_process(self.as_ptr(), domain) }, "sense_process").map(|n| n as u32)
    }

    /// This attachment's domain id.
    pub fn domain_id(&self) -> u32 {
        // SAFETY: as above.
        unsafe { sys::mdcom_domain_id(self.as_ptr()) }
    }

    /// mdcom_fifoch_open: a FIFO channel by name.
    pub fn fifo(&self, name: &str) -> Result<Fifo<'_>> {
        let c = cstring(name, "channel")?;
        let mut ch = ptr::null_mut();
        // SAFETY: h is live; the handle returned lives as long as h (borrowed: 'self).
        check(unsafe { sys::mdcom_fifoch_open(self.as_ptr(), c.as_ptr(), &mut ch) }, &format!("fifo '{name}'"))?;
        let ch = NonNull::new(ch).ok_or_else(|| Error::new(-libc::EPROTO, "fifoch_open gave no handle"))?;
        let f = Fifo { ch, block_size: 0, _m: PhantomData };
        let st = f.state()?;
        Ok(Fifo { block_size: st.block_size, ..f })
    }

    /// mdcom_smemch_open: an SMEM channel by name.
    pub fn smem(&self, name: &str) -> Result<Smem<'_>> {
        let c = cstring(name, "channel")?;
        let mut ch = ptr::null_mut();
        // SAFETY: as for fifo().
        check(unsafe { sys::mdcom_smemch_open(self.as_ptr(), c.as_ptr(), &mut ch) }, &format!("smem '{name}'"))?;
        let ch = NonNull::new(ch).ok_or_else(|| Error::new(-libc::EPROTO, "smemch_open gave no handle"))?;
        Ok(Smem { ch, _m: PhantomData })
    }

    /// Detach now and see mdcom_term's result (Drop ignores it).
    pub fn term(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: we own the attachment (no borrow is live); Drop will not run.
        let r = unsafe { sys::mdcom_term(me.as_ptr()) };
        // SAFETY: the configuration is dropped after mdcom_term, once, here.
        drop(unsafe { ptr::read(&me._cfg) });
        check(r, "term").map(drop)
    }
}

impl Drop for Mdcom {
    fn drop(&mut self) {
        // SAFETY: &mut self: no handle or guard borrowing self is live, and
        // no other thread can be in a call on it. The configuration (a field)
        // is dropped after this.
        unsafe { sys::mdcom_term(self.as_ptr()) };
    }
}

impl fmt::Debug for Mdcom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mdcom").field("domain", &self.domain_id()).finish()
    }
}

// ---------------------------------------------------------------- FIFO channels

/// What a send or an enqueue did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Queued,
    /// the channel's filter dropped it (MDCOM_FILTERED; the block was freed)
    Filtered,
}

fn sent(r: c_int, context: &str) -> Result<Sent> {
    match check(r, context)? {
        sys::MDCOM_FILTERED => Ok(Sent::Filtered),
        _ => Ok(Sent::Queued),
    }
}

/// A FIFO channel of an attachment (mdcom_fifoch_t), valid while it is.
#[derive(Clone, Copy)]
pub struct Fifo<'m> {
    ch: NonNull<sys::mdcom_fifoch_t>,
    block_size: u32,
    _m: PhantomData<&'m Mdcom>,
}

// SAFETY: channel calls are thread-safe (as for Mdcom); 'm keeps the handle
// within the attachment's life.
unsafe impl Send for Fifo<'_> {}
unsafe impl Sync for Fifo<'_> {}

impl<'m> Fifo<'m> {
    /// The raw handle (valid for 'm), for mdcom-sys calls.
    pub fn as_ptr(&self) -> *mut sys::mdcom_fifoch_t {
        self.ch.as_ptr()
    }

    /// Bytes per block: the largest message.
    pub fn block_size(&self) -> u32 {
        self.block_size
    }

    /// mdcom_sense_fifoch: a snapshot of the counters.
    pub fn state(&self) -> Result<FifoState> {
        let mut st = FifoState::default();
        // SAFETY: ch is live for 'm; st is an out parameter of the C layout.
        check(unsafe { sys::mdcom_sense_fifoch(self.as_ptr(), &mut st) }, "sense_fifoch")?;
        Ok(st)
    }

    /// mdcom_fifoch_send: copy `data` into a block (waiting up to `timeout`
    /// for a free one), queue it, notify.
    pub fn send(&self, data: &[u8], timeout: impl Into<Timeout>) -> Result<Sent> {
        let len = u32::try_from(data.len()).map_err(|_| Error::new(-libc::EMSGSIZE, "send"))?;
        // SAFETY: data is valid for len bytes during the call.
        sent(unsafe { sys::mdcom_fifoch_send(self.as_ptr(), data.as_ptr().cast(), len, timeout.into().as_ns()) }, "send")
    }

    /// mdcom_fifoch_recv: wait up to `timeout` for a message, copy it into
    /// `buf`, free its block, notify. The message length; -EMSGSIZE when buf
    /// is shorter than the message (then its first buf.len() bytes are
    /// copied and it is consumed).
    pub fn recv(&self, buf: &mut [u8], timeout: impl Into<Timeout>) -> Result<usize> {
        let cap = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // SAFETY: buf is valid for cap bytes during the call.
        let r = unsafe { sys::mdcom_fifoch_recv(self.as_ptr(), buf.as_mut_ptr().cast(), cap, timeout.into().as_ns()) };
        check(r, "recv").map(|n| n as usize)
    }

    /// mdcom_fifoch_wait: until one of `events` (EV_*) holds; the mask that
    /// holds. Conditions may be gone again when the caller acts: loop.
    pub fn wait(&self, events: u32, timeout: impl Into<Timeout>) -> Result<u32> {
        // SAFETY: ch is live.
        check(unsafe { sys::mdcom_fifoch_wait(self.as_ptr(), events, timeout.into().as_ns()) }, "wait").map(|m| m as u32)
    }

    /// mdcom_fifoch_notify: wake waiters (after a batch of enqueues or frees).
    pub fn notify(&self) -> Result<()> {
        // SAFETY: ch is live.
        check(unsafe { sys::mdcom_fifoch_notify(self.as_ptr()) }, "notify").map(drop)
    }

    /// mdcom_fifoch_set_spin: this process' spin limit in waits on the channel.
    pub fn set_spin(&self, spin: Option<Duration>) -> Result<()> {
        let ns = spin.map_or(sys::MDCOM_NO_SPIN, |d| u32::try_from(d.as_nanos()).unwrap_or(u32::MAX - 1));
        // SAFETY: ch is live.
        check(unsafe { sys::mdcom_fifoch_set_spin(self.as_ptr(), ns) }, "set_spin").map(drop)
    }

    /// mdcom_filter_set with MDCOM_FILTER_EVERY_NTH (n >= 1), or none (n = 0):
    /// this process' sends pass only every nth message.
    pub fn filter_every_nth(&self, n: u32) -> Result<()> {
        let f = sys::mdcom_filter {
            type_: if n == 0 { sys::MDCOM_FILTER_NONE } else { sys::MDCOM_FILTER_EVERY_NTH },
            n,
            fn_: None,
            arg: ptr::null_mut(),
        };
        // SAFETY: f is read during the call (an EVERY_NTH filter keeps no pointer).
        check(unsafe { sys::mdcom_filter_set(self.as_ptr(), &f) }, "filter_set").map(drop)
    }

    fn block(&self, id: u32) -> Result<(*mut u8, u32)> {
        let mut p: *mut c_void = ptr::null_mut();
        let mut size = 0u32;
        // SAFETY: ch is live; id, if bad, is refused (-EINVAL).
        check(unsafe { sys::mdcom_fifoch_get(self.as_ptr(), id, &mut p, &mut size) }, "get")?;
        Ok((p.cast(), size))
    }

    /// mdcom_fifoch_alloc: a free block to fill in place (never blocks:
    /// -ENOBUFS when the pool is dry; wait for EV_TX). Queue it with
    /// [`TxBlock::enqueue`]; dropped, it goes back to the pool.
    pub fn alloc(&self) -> Result<TxBlock<'_>> {
        let mut id = 0u32;
        // SAFETY: ch is live; id is an out parameter.
        check(unsafe { sys::mdcom_fifoch_alloc(self.as_ptr(), &mut id) }, "alloc")?;
        match self.block(id) {
            Ok((ptr, size)) => Ok(TxBlock { fifo: self, id, ptr, size }),
            Err(e) => {
                // SAFETY: id is held by this process.
                unsafe { sys::mdcom_fifoch_free(self.as_ptr(), id) };
                Err(e)
            }
        }
    }

    /// mdcom_fifoch_dequeue: the oldest queued message, read in place
    /// (never blocks: None when nothing is queued; wait for EV_RX). Its
    /// block is freed when the guard drops (notify() after a batch).
    pub fn dequeue(&self) -> Result<Option<RxBlock<'_>>> {
        let mut id = 0u32;
        let mut len = 0u32;
        // SAFETY: ch is live; id/len are out parameters.
        let r = unsafe { sys::mdcom_fifoch_dequeue(self.as_ptr(), &mut id, &mut len) };
        if r == -libc::EAGAIN {
            return Ok(None);
        }
        check(r, "dequeue")?;
        match self.block(id) {
            // the library validated len <= block size at dequeue; min() anyway
            Ok((ptr, size)) => Ok(Some(RxBlock { fifo: self, id, ptr, len: len.min(size) })),
            Err(e) => {
                // SAFETY: id was dequeued by this process.
                unsafe { sys::mdcom_fifoch_free(self.as_ptr(), id) };
                Err(e)
            }
        }
    }
}

/// A block allocated for sending (zero-copy): derefs to the whole block
/// (block_size bytes). [`TxBlock::enqueue`] queues it; dropped without that,
/// it is freed.
pub struct TxBlock<'f> {
    fifo: &'f Fifo<'f>,
    id: u32,
    ptr: *mut u8,
    size: u32,
}

// SAFETY: the block is held by the process (the attachment), not by a
// thread; freeing or enqueueing it from another thread is allowed. Shared,
// it gives only &[u8].
unsafe impl Send for TxBlock<'_> {}
unsafe impl Sync for TxBlock<'_> {}

impl<'f> TxBlock<'f> {
    pub fn id(&self) -> u32 {
        self.id
    }

    /// mdcom_fifoch_enqueue of the first `len` bytes: ownership passes to
    /// the receiver (Sent::Filtered: the filter dropped and freed it). Does
    /// not wake the receiver: Fifo::notify() after a batch. On an error
    /// (-EAGAIN queue full, ...) the block is freed.
    pub fn enqueue(self, len: usize) -> Result<Sent> {
        let me = std::mem::ManuallyDrop::new(self);
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        // SAFETY: id is held by this process; the library checks len.
        let r = unsafe { sys::mdcom_fifoch_enqueue(me.fifo.as_ptr(), me.id, len) };
        if r < 0 {
            // not queued: still ours, give it back
            // SAFETY: id is held by this process.
            unsafe { sys::mdcom_fifoch_free(me.fifo.as_ptr(), me.id) };
        }
        sent(r, "enqueue")
    }
}

impl Deref for TxBlock<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr/size describe the block, which this process holds until
        // the guard ends (see the crate docs on other processes).
        unsafe { std::slice::from_raw_parts(self.ptr, self.size as usize) }
    }
}

impl DerefMut for TxBlock<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above; &mut self: the only view of it in this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size as usize) }
    }
}

impl Drop for TxBlock<'_> {
    fn drop(&mut self) {
        // SAFETY: not enqueued (enqueue skips Drop): held by this process.
        unsafe { sys::mdcom_fifoch_free(self.fifo.as_ptr(), self.id) };
    }
}

/// A received message in its block (zero-copy): derefs to its bytes; the
/// block is freed when the guard drops.
pub struct RxBlock<'f> {
    fifo: &'f Fifo<'f>,
    id: u32,
    ptr: *mut u8,
    len: u32,
}

// SAFETY: as for TxBlock.
unsafe impl Send for RxBlock<'_> {}
unsafe impl Sync for RxBlock<'_> {}

impl RxBlock<'_> {
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl Deref for RxBlock<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the dequeued block is this process' until freed in Drop.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len as usize) }
    }
}

impl Drop for RxBlock<'_> {
    fn drop(&mut self) {
        // SAFETY: dequeued by this process and not freed yet.
        unsafe { sys::mdcom_fifoch_free(self.fifo.as_ptr(), self.id) };
    }
}

// ---------------------------------------------------------------- SMEM channels

/// An SMEM channel (mdcom_smemch_t): a shared area behind an inter-domain lock.
#[derive(Clone, Copy)]
pub struct Smem<'m> {
    ch: NonNull<sys::mdcom_smemch_t>,
    _m: PhantomData<&'m Mdcom>,
}

// SAFETY: as for Fifo.
unsafe impl Send for Smem<'_> {}
unsafe impl Sync for Smem<'_> {}

impl<'m> Smem<'m> {
    pub fn as_ptr(&self) -> *mut sys::mdcom_smemch_t {
        self.ch.as_ptr()
    }

    fn guard(&self) -> Result<SmemGuard<'_>> {
        let mut p: *mut c_void = ptr::null_mut();
        let mut size = 0u32;
        // SAFETY: ch is live.
        let r = unsafe { sys::mdcom_smemch_get(self.as_ptr(), &mut p, &mut size) };
        let g = SmemGuard { smem: self, ptr: p.cast(), size };
        check(r, "smemch_get")?; // on error g unlocks
        Ok(g)
    }

    /// mdcom_smemch_lock: the area, locked, waiting up to `timeout`.
    /// -EDEADLK when this process (any of its threads) holds it already: so
    /// at most one guard of a channel exists per attachment.
    pub fn lock(&self, timeout: impl Into<Timeout>) -> Result<SmemGuard<'_>> {
        // SAFETY: ch is live.
        check(unsafe { sys::mdcom_smemch_lock(self.as_ptr(), timeout.into().as_ns()) }, "lock")?;
        self.guard()
    }

    /// mdcom_smemch_trylock: -EBUSY when another process holds it.
    pub fn try_lock(&self) -> Result<SmemGuard<'_>> {
        // SAFETY: ch is live.
        check(unsafe { sys::mdcom_smemch_trylock(self.as_ptr()) }, "trylock")?;
        self.guard()
    }
}

/// The SMEM area while this process holds its lock; unlocked at drop
/// (mdcom_smemch_unlock publishes the contents).
pub struct SmemGuard<'s> {
    smem: &'s Smem<'s>,
    ptr: *mut u8,
    size: u32,
}

// SAFETY: the lock is held by the process, not a thread (unlock from any
// thread); shared, the guard gives only &[u8].
unsafe impl Send for SmemGuard<'_> {}
unsafe impl Sync for SmemGuard<'_> {}

impl SmemGuard<'_> {
    /// Unlock now and see the result (-ENOTCONN: this process was taken for
    /// dead and its lock broken meanwhile).
    pub fn unlock(self) -> Result<()> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: the lock is held by this process.
        check(unsafe { sys::mdcom_smemch_unlock(me.smem.as_ptr()) }, "unlock").map(drop)
    }
}

impl Deref for SmemGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the area is ours while the lock is (the C lock excludes the
        // other processes and, -EDEADLK, a second guard in this one).
        unsafe { std::slice::from_raw_parts(self.ptr, self.size as usize) }
    }
}

impl DerefMut for SmemGuard<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size as usize) }
    }
}

impl Drop for SmemGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the lock is held by this process.
        unsafe { sys::mdcom_smemch_unlock(self.smem.as_ptr()) };
    }
}
