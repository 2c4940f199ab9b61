// SPDX-License-Identifier: BSD-3-Clause
//! mdcom-zenoh: bridge FIFO channels of an mdcom region onto Zenoh.
//!
//! The daemon attaches to the region described by a TOML file as one process
//! of a (Linux) domain and serves the file's [[bridge]] entries:
//!
//! * direction "out": messages received from the FIFO channel are published on
//!   the entry's key expression (one Zenoh sample per message);
//! * direction "in": samples received on the key expression are sent into the
//!   FIFO channel (one message per sample), from Zenoh's subscriber callback.
//!
//! Each published sample carries an attachment: "MDZ1", the bridge's epoch
//! (u64 LE, its start time in ns), the entry's sequence number (u64 LE, from
//! 1) and the bridge's id (UTF-8). A receiving bridge drops its own samples
//! (no echo loops), drops duplicates and counts gaps as losses. Counters go
//! to a JSON status file and are answered on a Zenoh queryable.
//!
//! Semantics, configuration and deployment: docs/bridge.md.

mod cfg;
mod binding;
mod seqstore;

use seqstore::SeqStore;
use serde_json::json;
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use zenoh::qos::{CongestionControl, Priority, Reliability};
use zenoh::Wait;

const MAGIC: &[u8; 4] = b"MDZ1";
const HDR: usize = 20;
/// How long a blocking FIFO call waits before it looks at the stop flag again
/// (and lets the supervisor detach, which waits for it).
const SLICE_NS: i64 = 50_000_000;
/// How often the supervisor checks the attachment (mdcom_heartbeat) when no
/// call reported the region's end: the longest the end of an idle region
/// (or one polled with --poll-us) goes unnoticed.
const CHECK_EVERY: Duration = Duration::from_millis(10);
/// One attempt to attach again waits at most this long for the master: a
/// remote that opened the terminated region's file just before its master
/// removed it gives up on it after this and opens the new one.
const REATTACH_ATTEMPT_NS: i64 = 100_000_000;
/// Pause between failed attempts: from the first value, doubled, up to the
/// second (well below the 1 s within which traffic must resume).
const REATTACH_NAP: (Duration, Duration) = (Duration::from_millis(1), Duration::from_millis(50));
/// The longest the supervisor waits for the "out" entries to drain a
/// terminated region before it detaches.
const DRAIN_MAX: Duration = Duration::from_millis(250);
/// How often a bridge of the master domain looks at the region file while
/// it waits for a master's new region.
const FILE_POLL: Duration = Duration::from_millis(5);
/// What a thread that found the bridge detached sleeps before it looks again.
const DETACHED_NAP: Duration = Duration::from_millis(2);

const USAGE: &str = "\
usage: mdcom-zenoh [-h] [-z ZENOH_CONFIG] [-d DOMAIN] [--id ID] [-s STATUS]
                   [--status-key KEY] [--attach-timeout S] [--poll-us US]
                   [--spin-us US] [--exit-on-detach] CONFIG

Bridge the FIFO channels of an mdcom region onto Zenoh key expressions, as its
[[bridge]] entries say (docs/bridge.md).

positional arguments:
  CONFIG                the region's TOML file (with [[bridge]] entries)

options:
  -h, --help            show this help message and exit
  -z, --zenoh-config F  Zenoh JSON5 configuration file, used as is (default:
                        Zenoh's defaults: peer mode, multicast scouting)
  -d, --domain NAME     the domain to attach as (default: the one the
                        [[bridge]] entries name)
  --id ID               this bridge's id in the samples it publishes (default:
                        HOST/REGION/DOMAIN); must differ between bridges
  -s, --status FILE     JSON status file, rewritten 4 times a second;
                        FILE.seq keeps the per-stream sequence numbers across
                        restarts
  --status-key KEY      Zenoh key expression answering status queries
  --attach-timeout S    seconds to wait for the region's master, at start and
                        again each time the region ended (default 30;
                        negative: for ever)
  --poll-us US          poll the FIFOs every US microseconds instead of
                        sleeping on their events: for a region whose other
                        side cannot wake Linux waiters (firmware ringing a
                        doorbell this process does not hold, e.g. QEMU's
                        UART); default 0 = wait on the events
  --spin-us US          spin up to US microseconds on an empty out FIFO
                        before sleeping (the library's adaptive spin, whose
                        default limit is 20 us): lower latency for sparse
                        messages at the price of a busy cpu while it spins
  --exit-on-detach      exit with status 3 when the region ends (its master
                        terminated or re-formatted it) instead of attaching
                        to the master's new region: for a supervisor that
                        restarts the bridge (systemd Restart=on-failure)

When the region ends (ESHUTDOWN, ECONNRESET, ENOTCONN from any mdcom call),
the bridge logs one line, detaches, and attaches again as soon as the master
has formatted the region anew (within --attach-timeout; docs/bridge.md,
'When the region ends').

Exit status: 0 after SIGTERM/SIGINT, 2 configuration error, 1 region or Zenoh
error (the master not back within --attach-timeout included), 3 the region
ended and --exit-on-detach was given.";

fn log(msg: &str) {
    eprintln!("mdcom-zenoh: {msg}");
}

#[derive(Default)]
struct Args {
    config: String,
    zenoh_config: Option<String>,
    domain: Option<String>,
    id: Option<String>,
    status: Option<String>,
    status_key: Option<String>,
    attach_timeout: f64,
    poll_us: u64,
    spin_us: Option<u32>,
    exit_on_detach: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { attach_timeout: 30.0, ..Default::default() };
    let mut it = std::env::args().skip(1);
    let mut config = None;
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline.clone().or_else(|| it.next()).ok_or(format!("argument {name}: expected one argument"))
        };
        match flag.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "-z" | "--zenoh-config" => a.zenoh_config = Some(value(&flag)?),
            "-d" | "--domain" => a.domain = Some(value(&flag)?),
            "--id" => a.id = Some(value(&flag)?),
            "-s" | "--status" => a.status = Some(value(&flag)?),
            "--status-key" => a.status_key = Some(value(&flag)?),
            "--attach-timeout" => {
                let v = value(&flag)?;
                a.attach_timeout = v.parse().map_err(|_| format!("argument --attach-timeout: invalid float value: '{v}'"))?
            }
            "--poll-us" => {
                let v = value(&flag)?;
                a.poll_us = v.parse().map_err(|_| format!("argument --poll-us: invalid int value: '{v}'"))?
            }
            "--exit-on-detach" => {
                if inline.is_some() {
                    return Err("argument --exit-on-detach: ignored explicit argument".into());
                }
                a.exit_on_detach = true
            }
            "--spin-us" => {
                let v = value(&flag)?;
                let us: u32 = v.parse().map_err(|_| format!("argument --spin-us: invalid int value: '{v}'"))?;
                a.spin_us = Some(us.min(u32::MAX / 2000))
            }
            f if f.starts_with('-') && f.len() > 1 => return Err(format!("unrecognized arguments: {f}")),
            _ if config.is_none() => config = Some(arg),
            _ => return Err(format!("unrecognized arguments: {arg}")),
        }
    }
    a.config = config.ok_or("the following arguments are required: config")?;
    Ok(a)
}

#[derive(Default)]
struct Counters {
    messages: AtomicU64,
    bytes: AtomicU64,
    lost: AtomicU64,
    duplicates: AtomicU64,
    echo_dropped: AtomicU64,
    congestion_dropped: AtomicU64,
    rate_dropped: AtomicU64,
    oversize: AtomicU64,
    filtered: AtomicU64,
    foreign: AtomicU64,
    errors: AtomicU64,
    /// in: messages not delivered because the region had ended (arrived while
    /// the bridge was detached, or their send failed with the region's end)
    region_dropped: AtomicU64,
    seq: AtomicU64, // out: last published
}

fn inc(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

struct Entry {
    index: usize,
    cfg: cfg::BridgeCfg,
    /// the channel's block size (the configuration's: the same in every
    /// attachment)
    block_size: u32,
    n: Counters,
    /// "out": everything queued when the region was terminated has been
    /// taken (the supervisor waits for it before it detaches)
    drained: AtomicBool,
}

impl Entry {
    fn snapshot(&self) -> serde_json::Value {
        let n = &self.n;
        let mut v = json!({
            "channel": self.cfg.channel, "direction": if self.cfg.out { "out" } else { "in" },
            "key": self.cfg.key, "congestion": if self.cfg.block { "block" } else { "drop" },
            "reliability": if self.cfg.reliable { "reliable" } else { "best_effort" },
            "messages": n.messages.load(Relaxed), "bytes": n.bytes.load(Relaxed),
            "lost": n.lost.load(Relaxed), "duplicates": n.duplicates.load(Relaxed),
            "echo_dropped": n.echo_dropped.load(Relaxed),
            "congestion_dropped": n.congestion_dropped.load(Relaxed),
            "rate_dropped": n.rate_dropped.load(Relaxed), "oversize": n.oversize.load(Relaxed),
            "filtered": n.filtered.load(Relaxed), "foreign": n.foreign.load(Relaxed),
            "errors": n.errors.load(Relaxed), "region_dropped": n.region_dropped.load(Relaxed),
        });
        if self.cfg.out {
            v["seq"] = json!(n.seq.load(Relaxed));
        }
        v
    }
}

/// Where one incoming stream (sender id, key) stands.
struct Stream {
    epoch: u64,
    last: u64,
    slot: Option<usize>,
}

/// The streams of an "in" entry: sender id -> key -> stream.
type StreamMap = HashMap<Vec<u8>, HashMap<String, Stream>>;

/// One attachment to the region and its channel handles (one per entry, in
/// entry order), valid together until the attachment is dropped (mdcom_term).
struct Attachment {
    fifos: Vec<binding::Fifo>,
    system: binding::System,
}

/// What is needed to attach (again) and where the attachment stands.
struct Region {
    spec: binding::SystemSpec,
    domain: u32,
    domain_name: String,
    /// the bridge's domain is the region's master domain: after the region
    /// was terminated it must not create and format a new one itself
    master_domain: bool,
    /// how long to wait for the master, ns (< 0: for ever)
    attach_timeout_ns: i64,
    exit_on_detach: bool,
    /// None while detached. Every mdcom call holds the read lock; the
    /// supervisor takes the write lock to detach and to attach again.
    att: RwLock<Option<Attachment>>,
    /// the code of the first call that saw the region end (0 = none): the
    /// supervisor detaches; meanwhile "out" entries drain what is still queued
    ended: AtomicI32,
    attached: AtomicBool,
    reattaches: AtomicU64,
    /// the reason of the last end, for the status ("" = never ended)
    last_end: Mutex<String>,
}

impl Region {
    fn report_end(&self, code: i32) {
        let _ = self.ended.compare_exchange(0, code, Relaxed, Relaxed);
    }

    /// Attach, open every entry's channel, set the spin limit of "out" ones.
    fn attach(&self, entries: &[Arc<Entry>], timeout_ns: i64, spin_us: Option<u32>) -> Result<Attachment, binding::Error> {
        let system = binding::System::attach(&self.spec, self.domain, timeout_ns)?;
        let mut fifos = Vec::with_capacity(entries.len());
        for e in entries {
            let fifo = system.fifo(&e.cfg.channel)?;
            if let (true, Some(us)) = (e.cfg.out, spin_us) {
                fifo.set_spin(if us == 0 { binding::MDCOM_NO_SPIN } else { us * 1000 });
            }
            fifos.push(fifo);
        }
        Ok(Attachment { fifos, system })
    }
}

struct Shared {
    id: String,
    epoch: u64,
    started: Instant,
    entries: Vec<Arc<Entry>>,
    stop: AtomicBool,
    peers: AtomicU64,
    connects: AtomicU64,
    seqs: Mutex<SeqStore>,
    zid: String,
    /// > 0: poll the FIFOs with this sleep instead of waiting on their events
    poll: Duration,
    spin_us: Option<u32>,
    region: Region,
    /// the process' exit status when it ends by itself (the supervisor sets
    /// it, then raises SIGUSR1 for the main thread)
    exit_code: AtomicU8,
}

impl Shared {
    fn status(&self) -> serde_json::Value {
        json!({
            "id": self.id, "pid": std::process::id(), "epoch": self.epoch,
            "uptime_s": (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            "zenoh": {"zid": self.zid, "peers": self.peers.load(Relaxed),
                      "connects": self.connects.load(Relaxed)},
            "region": {"name": self.region.spec.region, "domain": self.region.domain_name,
                       "attached": self.region.attached.load(Relaxed),
                       "reattaches": self.region.reattaches.load(Relaxed),
                       "last_end": self.region.last_end.lock().unwrap().clone()},
            "entries": self.entries.iter().map(|e| e.snapshot()).collect::<Vec<_>>(),
        })
    }
}

fn write_status(path: &str, v: &serde_json::Value) -> std::io::Result<()> {
    let tmp = format!("{path}.{}.tmp", std::process::id());
    std::fs::write(&tmp, serde_json::to_string_pretty(v).unwrap_or_default())?;
    std::fs::rename(&tmp, path)
}

fn priority(p: u8) -> Priority {
    match p {
        1 => Priority::RealTime,
        2 => Priority::InteractiveHigh,
        3 => Priority::InteractiveLow,
        4 => Priority::DataHigh,
        6 => Priority::DataLow,
        7 => Priority::Background,
        _ => Priority::Data,
    }
}

// channel -> Zenoh ----------------------------------------------------------

/// At most this many messages, and no more once BATCH_BYTES are copied, are
/// taken from an "out" FIFO before they are published: the blocks go back to
/// the pool at once and the senders are notified once per batch, not once
/// per message. (The byte bound keeps large messages to one or two per batch:
/// megabytes of copies freed at once would be handed back to the kernel by
/// malloc and faulted in again for the next batch.)
const BATCH: usize = 64;
const BATCH_BYTES: usize = 64 * 1024;

/// Drain the FIFO without sleeping while messages are queued (one sample per
/// message); wait on the channel's event only when it is empty. Each round
/// copies out what is queued (up to BATCH messages / BATCH_BYTES), frees the blocks,
/// notifies the senders once, then publishes the copies in FIFO order.
fn out_loop(sh: Arc<Shared>, e: Arc<Entry>, publisher: zenoh::pubsub::Publisher<'static>) {
    let rate = e.cfg.rate_limit;
    let interval = if rate > 0 { Duration::from_secs_f64(1.0 / rate as f64) } else { Duration::ZERO };
    let mut next_slot = Instant::now();
    let mut seq = 0u64;
    let mut att = Vec::with_capacity(HDR + sh.id.len());
    att.extend_from_slice(MAGIC);
    att.extend_from_slice(&sh.epoch.to_le_bytes());
    att.extend_from_slice(&0u64.to_le_bytes());
    att.extend_from_slice(sh.id.as_bytes());
    // a rate-limited "block" entry takes one message at a time: its pacing
    // holds the FIFO, not a batch in the bridge
    let cap = if rate > 0 && e.cfg.block { 1 } else { BATCH };
    let mut batch: Vec<Vec<u8>> = Vec::with_capacity(cap);
    while !sh.stop.load(Relaxed) {
        // what to do after this round, once the attachment is let go
        let mut pause = Duration::ZERO;
        {
            let guard = sh.region.att.read().unwrap();
            let Some(cur) = guard.as_ref() else {
                drop(guard);
                thread::sleep(DETACHED_NAP);
                continue;
            };
            let fifo = &cur.fifos[e.index];
            // once the region was terminated, everything still queued is
            // taken in this one round (dequeue works on a terminated region):
            // the supervisor, waiting to detach, lets no further round in. A
            // re-formatted region (or this process reaped) is left alone: its
            // queues are the new generation's.
            let ended = sh.region.ended.load(Relaxed);
            if ended != 0 && ended != -libc::ESHUTDOWN {
                drop(guard);
                thread::sleep(DETACHED_NAP);
                continue;
            }
            let ending = ended != 0;
            let (max_n, max_bytes) = if ending { (usize::MAX, usize::MAX) } else { (cap, BATCH_BYTES) };
            let mut failed = None;
            let mut bytes = 0;
            while batch.len() < max_n && bytes < max_bytes {
                match fifo.take(|m| {
                    bytes += m.len();
                    batch.push(m.to_vec())
                }) {
                    Ok(binding::Recv::Got) => {}
                    Ok(binding::Recv::Empty) => break,
                    Err(r) => {
                        failed = Some(r);
                        break;
                    }
                }
            }
            if !batch.is_empty() {
                fifo.notify(); // wakes senders waiting for a free block, once per batch
            }
            if let Some(r) = failed {
                if binding::region_ended(r) {
                    sh.region.report_end(r);
                } else {
                    inc(&e.n.errors);
                    log(&format!("{}: receive: {}", e.cfg.channel, binding::strerror(r)));
                    if r != -libc::EPROTO && r != -libc::EBADMSG && batch.is_empty() {
                        pause = Duration::from_millis(500);
                    }
                }
            } else if ending {
                e.drained.store(true, Relaxed); // the copies are published below
                if batch.is_empty() {
                    pause = DETACHED_NAP; // the supervisor detaches
                }
            } else if batch.is_empty() {
                if !sh.poll.is_zero() {
                    pause = sh.poll;
                } else {
                    let r = fifo.wait(binding::MDCOM_EV_RX, SLICE_NS);
                    if binding::region_ended(r) {
                        sh.region.report_end(r); // the next round drains what is left
                    } else if r < 0 && r != -libc::ETIMEDOUT && r != -libc::EINTR {
                        inc(&e.n.errors);
                        log(&format!("{}: wait: {}", e.cfg.channel, binding::strerror(r)));
                        pause = Duration::from_millis(500);
                    }
                }
            }
        }
        if !pause.is_zero() {
            thread::sleep(pause);
        }
        if batch.is_empty() {
            continue;
        }
        for payload in batch.drain(..) {
            if rate > 0 {
                let mut now = Instant::now();
                if now < next_slot {
                    if !e.cfg.block {
                        inc(&e.n.rate_dropped);
                        continue;
                    }
                    thread::sleep(next_slot - now); // pacing = backpressure into the FIFO
                    now = next_slot;
                }
                next_slot = if e.cfg.block {
                    (next_slot + interval).max(now.checked_sub(Duration::from_secs(1)).unwrap_or(now))
                } else {
                    now + interval
                };
            }
            seq += 1;
            att[12..20].copy_from_slice(&seq.to_le_bytes());
            let len = payload.len() as u64;
            match publisher.put(payload).attachment(att.clone()).wait() {
                Ok(()) => {
                    e.n.seq.store(seq, Relaxed);
                    inc(&e.n.messages);
                    e.n.bytes.fetch_add(len, Relaxed);
                }
                Err(err) => {
                    inc(&e.n.errors);
                    log(&format!("{}: put: {err}", e.cfg.channel));
                }
            }
        }
    }
}

// Zenoh -> channel ----------------------------------------------------------

/// The subscriber callback of an "in" entry: runs on Zenoh's receive task and
/// sends into the FIFO directly. With "block" it waits for a free block as
/// long as it takes (Zenoh stops reading, TCP fills, the publishing bridge
/// blocks, its FIFO fills); with "drop" a full FIFO drops the message.
fn on_sample(
    sh: &Shared,
    e: &Entry,
    streams: &Mutex<StreamMap>,
    sample: zenoh::sample::Sample,
) {
    let att = sample.attachment().map(|a| a.to_bytes());
    let hdr = att.as_deref().filter(|a| a.len() >= HDR && &a[..4] == MAGIC);
    let mut track: Option<(u64, u64, Option<usize>)> = None; // epoch, seq, slot
    match hdr {
        None => inc(&e.n.foreign), // a plain Zenoh publisher: no order/loss tracking
        Some(a) => {
            let epoch = u64::from_le_bytes(a[4..12].try_into().unwrap());
            let seq = u64::from_le_bytes(a[12..20].try_into().unwrap());
            let sender = &a[HDR..];
            if sender == sh.id.as_bytes() {
                inc(&e.n.echo_dropped);
                return;
            }
            let key = sample.key_expr().as_str();
            let mut map = streams.lock().unwrap();
            // lookups by borrowed slices: no allocation per message once the
            // stream is known
            if !map.contains_key(sender) {
                map.insert(sender.to_vec(), HashMap::new());
            }
            let per_sender = map.get_mut(sender).unwrap();
            if !per_sender.contains_key(key) {
                let name = format!("{}|{}|{}", e.index, String::from_utf8_lossy(sender), key);
                let name = seqstore::stream_name(&name);
                let mut seqs = sh.seqs.lock().unwrap();
                let stored = seqs.load(&name);
                let slot = seqs.slot(&name);
                // a stream delivered before a restart goes on from there; a
                // new epoch of a sender seen before (it restarted) is
                // numbered from 1, so what it published before this bridge
                // got its first sample (no route yet: Zenoh dropped it) is a
                // loss; a sender never seen starts here (this bridge joined
                // late: what went before was not lost to it)
                let st = match stored {
                    Some((ep, last)) if ep == epoch => Stream { epoch, last, slot },
                    Some(_) => Stream { epoch, last: 0, slot },
                    None => Stream { epoch, last: seq.saturating_sub(1), slot },
                };
                per_sender.insert(key.to_string(), st);
            }
            let st = per_sender.get_mut(key).unwrap();
            if st.epoch != epoch {
                st.epoch = epoch;
                st.last = 0;
            }
            if seq <= st.last {
                inc(&e.n.duplicates);
                return;
            }
            if seq > st.last + 1 {
                e.n.lost.fetch_add(seq - st.last - 1, Relaxed);
            }
            st.last = seq;
            track = Some((epoch, seq, st.slot));
        }
    }
    let delivered = |t: Option<(u64, u64, Option<usize>)>| {
        if let Some((epoch, seq, Some(slot))) = t {
            sh.seqs.lock().unwrap().store(slot, epoch, seq);
        }
    };
    let payload = sample.payload().to_bytes();
    if payload.len() > e.block_size as usize {
        if e.n.oversize.fetch_add(1, Relaxed) == 0 {
            log(&format!(
                "{}: {} B message from '{}' is larger than the channel's block size {}: not delivered (counted as oversize)",
                e.cfg.channel,
                payload.len(),
                sample.key_expr(),
                e.block_size
            ));
        }
        delivered(track);
        return;
    }
    // the attachment is looked up for each try: a "block" send waiting for a
    // free block lets the supervisor detach between tries
    let (timeout, pause) = if sh.poll.is_zero() { (SLICE_NS, Duration::ZERO) } else { (0, sh.poll) };
    let r = loop {
        let guard = sh.region.att.read().unwrap();
        let Some(cur) = guard.as_ref() else {
            // detached: the region ended and its master is not back yet
            inc(&e.n.region_dropped);
            delivered(track);
            return;
        };
        let fifo = &cur.fifos[e.index];
        let res = fifo.send(&payload, if e.cfg.block { timeout } else { 0 });
        match res {
            Err(r) if !e.cfg.block && (r == -libc::ETIMEDOUT || r == -libc::ENOBUFS || r == -libc::EAGAIN) => {
                inc(&e.n.congestion_dropped);
                delivered(track);
                return;
            }
            Err(r) if e.cfg.block && (r == -libc::ETIMEDOUT || r == -libc::ENOBUFS || r == -libc::EINTR) => {
                drop(guard);
                if sh.stop.load(Relaxed) {
                    return;
                }
                if !pause.is_zero() {
                    thread::sleep(pause);
                }
                continue;
            }
            // reported while this attachment is held: a report after the
            // supervisor attached again would end the new one
            Err(r) if binding::region_ended(r) => sh.region.report_end(r),
            _ => {}
        }
        break res;
    };
    match r {
        Ok(true) => {
            inc(&e.n.messages);
            e.n.bytes.fetch_add(payload.len() as u64, Relaxed);
        }
        Ok(false) => inc(&e.n.filtered),
        Err(r) if binding::region_ended(r) => {
            // the message is gone with the region (the supervisor attaches
            // again); a master's restart is not an error of the bridge
            inc(&e.n.region_dropped);
        }
        Err(r) => {
            inc(&e.n.errors);
            log(&format!("{}: send: {}", e.cfg.channel, binding::strerror(r)));
            return;
        }
    }
    delivered(track);
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return "localhost".into();
    }
    let n = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn run() -> Result<(), (u8, Vec<String>)> {
    let args = parse_args().map_err(|m| (2, vec![USAGE.lines().next().unwrap().to_string(), format!("mdcom-zenoh: error: {m}")]))?;
    let cfg = match cfg::load(&args.config) {
        Ok(c) => c,
        Err(cfg::CfgError::Invalid(lines)) => return Err((2, lines)),
        Err(cfg::CfgError::Tool(m)) => return Err((1, vec![format!("mdcom-zenoh: {m}")])),
    };
    let file = &args.config;
    let bad = |m: String| (2u8, vec![m]);
    if cfg.bridges.is_empty() {
        return Err(bad(format!("{file}: no [[bridge]] entry")));
    }
    let domain = match &args.domain {
        Some(d) => d.clone(),
        None => {
            let mut used: Vec<&str> = cfg.bridges.iter().map(|b| b.domain.as_str()).collect();
            used.sort();
            used.dedup();
            if used.len() != 1 {
                return Err(bad(format!(
                    "{file}: [[bridge]] entries name several domains ({}): choose one with --domain",
                    used.join(", ")
                )));
            }
            used[0].to_string()
        }
    };
    let Some((dom_name, dom_id, dom_master)) = cfg
        .sys
        .domains
        .iter()
        .find(|(n, i, _)| *n == domain || i.to_string() == domain)
        .map(|(n, i, m)| (n.clone(), *i, *m))
    else {
        return Err(bad(format!("{file}: no domain '{domain}'")));
    };
    let region = cfg.sys.region.clone();
    let bridge_cfgs: Vec<cfg::BridgeCfg> = cfg.bridges.into_iter().filter(|b| b.domain == dom_name).collect();
    if bridge_cfgs.is_empty() {
        return Err(bad(format!("{file}: no [[bridge]] entry for domain '{domain}'")));
    }
    let id = args.id.clone().unwrap_or_else(|| format!("{}/{}/{}", hostname(), region, dom_name));
    let seqs = SeqStore::open(args.status.as_ref().map(|s| format!("{s}.seq")).as_deref())
        .map_err(|e| (1, vec![format!("mdcom-zenoh: {}.seq: {e}", args.status.as_deref().unwrap_or(""))]))?;
    let timeout_ns = if args.attach_timeout < 0.0 { -1 } else { (args.attach_timeout * 1e9) as i64 };
    let mut entries = Vec::new();
    for (index, b) in bridge_cfgs.into_iter().enumerate() {
        let Some(ch) = cfg.sys.channels.iter().find(|c| c.name == b.channel && c.fifo) else {
            return Err(bad(format!("{file}: [[bridge]] channel '{}' is not a FIFO channel", b.channel)));
        };
        entries.push(Arc::new(Entry { index, block_size: ch.block_size, cfg: b, n: Counters::default(), drained: AtomicBool::new(false) }));
    }
    let region_cfg = Region {
        spec: cfg.sys,
        domain: dom_id,
        domain_name: dom_name.clone(),
        master_domain: dom_master,
        attach_timeout_ns: timeout_ns,
        exit_on_detach: args.exit_on_detach,
        att: RwLock::new(None),
        ended: AtomicI32::new(0),
        attached: AtomicBool::new(false),
        reattaches: AtomicU64::new(0),
        last_end: Mutex::new(String::new()),
    };
    let first = region_cfg.attach(&entries, timeout_ns, args.spin_us).map_err(|e| (1, vec![format!("mdcom-zenoh: {e}")]))?;
    *region_cfg.att.write().unwrap() = Some(first);
    region_cfg.attached.store(true, Relaxed);
    let zc = match &args.zenoh_config {
        Some(p) => zenoh::Config::from_file(p).map_err(|e| (1, vec![format!("mdcom-zenoh: zenoh: {p}: {e}")]))?,
        None => zenoh::Config::default(),
    };
    let session = zenoh::open(zc).wait().map_err(|e| (1, vec![format!("mdcom-zenoh: zenoh: {e}")]))?;
    let zerr = |e: zenoh::Error| (1u8, vec![format!("mdcom-zenoh: zenoh: {e}")]);

    let epoch = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let sh = Arc::new(Shared {
        id: id.clone(),
        epoch,
        started: Instant::now(),
        entries: entries.clone(),
        stop: AtomicBool::new(false),
        peers: AtomicU64::new(0),
        connects: AtomicU64::new(0),
        seqs: Mutex::new(seqs),
        zid: session.zid().to_string(),
        poll: Duration::from_micros(args.poll_us),
        spin_us: args.spin_us,
        region: region_cfg,
        exit_code: AtomicU8::new(0),
    });

    let mut threads = Vec::new();
    let mut subscribers = Vec::new();
    for e in &entries {
        let b = &e.cfg;
        if b.out {
            let publisher = session
                .declare_publisher(b.key.clone())
                .congestion_control(if b.block { CongestionControl::Block } else { CongestionControl::Drop })
                .priority(priority(b.priority))
                .express(b.express)
                .reliability(if b.reliable { Reliability::Reliable } else { Reliability::BestEffort })
                .wait()
                .map_err(zerr)?;
            let (sh2, e2) = (sh.clone(), e.clone());
            threads.push(
                thread::Builder::new()
                    .name(format!("out:{}", b.channel))
                    .spawn(move || out_loop(sh2, e2, publisher))
                    .expect("thread"),
            );
        } else {
            let (sh2, e2) = (sh.clone(), e.clone());
            let streams: Mutex<StreamMap> = Mutex::new(HashMap::new());
            let sub = session
                .declare_subscriber(b.key.clone())
                .callback(move |s| on_sample(&sh2, &e2, &streams, s))
                .wait()
                .map_err(zerr)?;
            subscribers.push(sub);
        }
    }
    let queryable = match &args.status_key {
        Some(k) => {
            let sh2 = sh.clone();
            Some(
                session
                    .declare_queryable(k.clone())
                    .callback(move |q| {
                        let text = sh2.status().to_string();
                        if let Err(e) = q.reply(q.key_expr().clone(), text).wait() {
                            log(&format!("status query: {e}"));
                        }
                    })
                    .wait()
                    .map_err(zerr)?,
            )
        }
        None => None,
    };
    {
        let (sh2, s2, path) = (sh.clone(), session.clone(), args.status.clone());
        threads.push(
            thread::Builder::new()
                .name("status".into())
                .spawn(move || status_loop(sh2, s2, path))
                .expect("thread"),
        );
    }
    {
        let sh2 = sh.clone();
        threads.push(
            thread::Builder::new()
                .name("region".into())
                .spawn(move || supervise(sh2))
                .expect("thread"),
        );
    }
    log(&format!(
        "bridge '{id}' up: region '{region}' as domain '{dom_name}', {} entr{}",
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" }
    ));

    wait_for_signal();

    sh.stop.store(true, Relaxed);
    drop(queryable);
    for s in subscribers {
        let _ = s.undeclare().wait();
    }
    for t in threads {
        let _ = t.join();
    }
    if let Some(p) = &args.status {
        let _ = write_status(p, &sh.status());
    }
    let _ = session.close().wait();
    drop(entries);
    *sh.region.att.write().unwrap() = None; // mdcom_term
    let code = sh.exit_code.load(Relaxed);
    drop(sh);
    if code != 0 {
        return Err((code, vec![]));
    }
    log("stopped");
    Ok(())
}

/// The region's supervisor: notices the end of the attachment (a call's
/// report, or its own check every CHECK_EVERY), detaches, and attaches again
/// once the master is back (or, with --exit-on-detach, has the process exit
/// with status 3). One log line when the region ends, one when the bridge is
/// back; the attempts in between are quiet unless their error changes.
fn supervise(sh: Arc<Shared>) {
    let rg = &sh.region;
    let name = &rg.spec.region;
    let dropped = |sh: &Shared| sh.entries.iter().map(|e| e.n.region_dropped.load(Relaxed)).sum::<u64>();
    // region_dropped grows only from a region's end to the next attach: what
    // it counts beyond this mark at the next attach is that outage's
    let mut dropped_mark = 0;
    while !sh.stop.load(Relaxed) {
        thread::sleep(CHECK_EVERY);
        let mut code = rg.ended.load(Relaxed);
        if code == 0 {
            if let Some(cur) = rg.att.read().unwrap().as_ref() {
                let r = cur.system.check();
                if binding::region_ended(r) {
                    rg.report_end(r);
                    code = r;
                }
            }
        }
        if code == 0 {
            continue;
        }
        let since = Instant::now();
        // a terminated region's queues can still be drained: what its senders
        // queued before the end is published (bounded: a blocked publisher
        // must not hold up the detach)
        if code == -libc::ESHUTDOWN {
            let until = Instant::now() + DRAIN_MAX;
            while Instant::now() < until && !sh.entries.iter().all(|e| !e.cfg.out || e.drained.load(Relaxed)) {
                thread::sleep(DETACHED_NAP);
            }
        }
        {
            let mut g = rg.att.write().unwrap();
            *g = None; // mdcom_term
            for e in &sh.entries {
                e.drained.store(false, Relaxed);
            }
            rg.ended.store(0, Relaxed);
            rg.attached.store(false, Relaxed);
        }
        let why = binding::strerror(code);
        *rg.last_end.lock().unwrap() = why.clone();
        if rg.exit_on_detach {
            log(&format!("region '{name}' ended ({why}): exiting with status 3 (--exit-on-detach)"));
            finish(&sh, 3);
            return;
        }
        log(&format!("region '{name}' ended ({why}): detached; attaching again when its master is back"));
        let deadline = (rg.attach_timeout_ns >= 0).then(|| since + Duration::from_nanos(rg.attach_timeout_ns as u64));
        let mut nap = REATTACH_NAP.0;
        let mut last_err = String::new();
        loop {
            if sh.stop.load(Relaxed) {
                return;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                log(&format!(
                    "region '{name}': its master did not format it again within --attach-timeout ({} s){}: exiting",
                    rg.attach_timeout_ns as f64 / 1e9,
                    if last_err.is_empty() { String::new() } else { format!(", last attempt: {last_err}") }
                ));
                finish(&sh, 1);
                return;
            }
            // a bridge of the master domain would format a region of its own
            // where there is none (or where only the terminated one is): it
            // attaches once a master formats the new one
            if rg.master_domain && code == -libc::ESHUTDOWN
                && !matches!(binding::region_file_state(name), Some(binding::ST_FORMATTING | binding::ST_READY))
            {
                thread::sleep(FILE_POLL);
                continue;
            }
            match rg.attach(&sh.entries, REATTACH_ATTEMPT_NS, sh.spin_us) {
                Ok(cur) => {
                    *rg.att.write().unwrap() = Some(cur);
                    rg.attached.store(true, Relaxed);
                    let n = rg.reattaches.fetch_add(1, Relaxed) + 1;
                    let total = dropped(&sh);
                    log(&format!(
                        "region '{name}': attached again as domain '{}' after {:.3} s (re-attach {n}); \
                         {} message(s) could not be delivered meanwhile (region_dropped)",
                        rg.domain_name,
                        since.elapsed().as_secs_f64(),
                        total - dropped_mark
                    ));
                    dropped_mark = total;
                    break;
                }
                Err(e) => {
                    // timeouts are the wait for the master; other errors are
                    // logged once each (a new master with another layout...)
                    let msg = e.to_string();
                    if e.code() != -libc::ETIMEDOUT && msg != last_err {
                        log(&format!("region '{name}': attach: {msg} (retrying)"));
                    }
                    last_err = msg;
                    thread::sleep(nap);
                    nap = (nap * 2).min(REATTACH_NAP.1);
                }
            }
        }
    }
}

/// Have the process end with `code` (the main thread takes SIGUSR1).
fn finish(sh: &Shared, code: u8) {
    sh.exit_code.store(code, Relaxed);
    // SAFETY: a plain signal to this process.
    unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
}

fn status_loop(sh: Arc<Shared>, session: zenoh::Session, path: Option<String>) {
    loop {
        let info = session.info();
        let n = info.peers_zid().wait().count() + info.routers_zid().wait().count();
        let before = sh.peers.swap(n as u64, Relaxed);
        if n > 0 && before == 0 {
            sh.connects.fetch_add(1, Relaxed);
            log(&format!("connected to {n} Zenoh peer(s)/router(s)"));
        } else if before > 0 && n == 0 {
            log("lost all Zenoh peers/routers: reconnecting as configured");
        }
        if let Some(p) = &path {
            if let Err(e) = write_status(p, &sh.status()) {
                log(&format!("status file: {e}"));
            }
        }
        for _ in 0..5 {
            if sh.stop.load(Relaxed) {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// SIGTERM/SIGINT (and SIGUSR1, see finish()) are blocked in every thread (main() blocks them before any
/// thread exists); the main thread takes them here.
fn block_signals() -> libc::sigset_t {
    // SAFETY: plain signal-mask calls on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGUSR1); // finish(): the process ends by itself
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_for_signal() {
    let set = block_signals();
    let mut sig = 0;
    // SAFETY: set is initialised; sig receives the signal number.
    while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
}

fn main() -> ExitCode {
    block_signals();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, lines)) => {
            for l in lines {
                eprintln!("{l}");
            }
            ExitCode::from(code)
        }
    }
}
