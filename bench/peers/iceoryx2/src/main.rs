// SPDX-License-Identifier: BSD-3-Clause
//! mdcom-bench-iceoryx2: iceoryx2 (publish-subscribe, loaned samples) as a
//! peer transport of mdcom-bench; its command line and output are those of
//! bench/tr_ext.c (`rtt ...`: raw round-trip samples, `stream ...`: one
//! result line). Side A (this process) measures; side B is this program
//! started again with `pong`. Both sides poll `receive()`; a message carries
//! its sequence number at its start and (SIZE >= 8) its end; streams also
//! write and check every byte. Method: docs/benchmarks.md, "Transports".
//! Exit status: 0 ok, 1 integrity error, 2 other error.

use iceoryx2::prelude::*;
use std::io::Write;
use std::mem::MaybeUninit;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STOP: u32 = u32::MAX;
const HELLO: u32 = 0;

type Res<T> = Result<T, Box<dyn std::error::Error>>;
type Pub = iceoryx2::port::publisher::Publisher<ipc::Service, [u8], ()>;
type Sub = iceoryx2::port::subscriber::Subscriber<ipc::Service, [u8], ()>;

struct Ends {
    _node: Node<ipc::Service>,
    tx: Pub,
    rx: Sub,
}

fn pin(cpu: i64) {
    if cpu < 0 {
        return;
    }
    // SAFETY: a zeroed cpu_set_t with one bit set, passed by pointer with its size
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            eprintln!("mdcom-bench-iceoryx2: cannot pin to cpu {cpu}");
        }
    }
}

/// Services "<name>/a2b" and "<name>/b2a"; side A publishes on a2b.
fn open(name: &str, side_a: bool, size: usize, depth: usize) -> Res<Ends> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let svc = |dir: &str| -> Res<_> {
        Ok(node
            .service_builder(&format!("{name}/{dir}").as_str().try_into()?)
            .publish_subscribe::<[u8]>()
            .subscriber_max_buffer_size(depth)
            .history_size(0)
            .enable_safe_overflow(false)
            .max_publishers(1)
            .max_subscribers(1)
            .open_or_create()?)
    };
    let (out, inp) = if side_a { (svc("a2b")?, svc("b2a")?) } else { (svc("b2a")?, svc("a2b")?) };
    let rx = inp.subscriber_builder().create()?;
    let tx = out
        .publisher_builder()
        .initial_max_slice_len(size.max(8))
        .max_loaned_samples(2)
        .create()?;
    Ok(Ends { _node: node, tx, rx })
}

fn send(tx: &Pub, size: usize, seq: u32) -> Res<()> {
    send_body(tx, size, seq, false)
}

/// body: also write every byte between the stamps (streaming: the payload
/// is produced and checked, as in mdcom-bench throughput).
fn send_body(tx: &Pub, size: usize, seq: u32, body: bool) -> Res<()> {
    let mut s = tx.loan_slice_uninit(size)?;
    let p = s.payload_mut();
    if body {
        for (i, b) in p.iter_mut().enumerate() {
            *b = MaybeUninit::new(pattern(seq, i));
        }
    }
    let b = seq.to_le_bytes();
    for i in 0..size.min(4) {
        p[i] = MaybeUninit::new(b[i]);
    }
    if size >= 8 {
        for i in 0..4 {
            p[size - 4 + i] = MaybeUninit::new(b[i]);
        }
    }
    // SAFETY: the bytes not written above are the data segment's shared
    // memory, which the OS hands out zero-filled; only the stamps are
    // meaningful (zero-copy use: the payload is not copied)
    unsafe { s.assume_init() }.send()?;
    Ok(())
}

fn pattern(seq: u32, i: usize) -> u8 {
    (seq as usize).wrapping_add(i.wrapping_mul(31)) as u8
}

/// (seq, len, tail ok) of the next message, polling.
fn recv(rx: &Sub, deadline: Instant) -> Res<(u32, usize, bool)> {
    loop {
        let m = next(rx, deadline)?;
        if m.0 != HELLO {
            return Ok(m); // late answers to the start-up hellos are skipped
        }
    }
}

fn next(rx: &Sub, deadline: Instant) -> Res<(u32, usize, bool)> {
    next_body(rx, deadline, false)
}

/// body: also check every byte between the stamps (tail ok = all ok).
fn next_body(rx: &Sub, deadline: Instant, body: bool) -> Res<(u32, usize, bool)> {
    loop {
        if let Some(s) = rx.receive()? {
            let p = s.payload();
            let mut h = [0u8; 4];
            let n = p.len().min(4);
            h[..n].copy_from_slice(&p[..n]);
            let seq = u32::from_le_bytes(h);
            let mut ok = p.len() < 8 || p[p.len() - 4..] == seq.to_le_bytes();
            if body && p.len() > 8 && seq != HELLO && seq != STOP {
                ok &= p[4..p.len() - 4].iter().enumerate().all(|(i, &b)| b == pattern(seq, i + 4));
            }
            return Ok((seq, p.len(), ok));
        }
        if Instant::now() > deadline {
            return Err("timed out waiting for a message".into());
        }
        std::hint::spin_loop();
    }
}

fn pong(name: &str, size: usize, depth: usize, stream_ack: u32) -> Res<i32> {
    let e = open(name, false, size, depth)?;
    let mut expect = 1u32;
    let timeout = Duration::from_secs(10);
    loop {
        let (seq, len, tail) = next_body(&e.rx, Instant::now() + timeout, stream_ack != 0)?;
        if seq == STOP {
            return Ok(0);
        }
        if seq == HELLO {
            send(&e.tx, 4, HELLO)?;
            continue;
        }
        if seq != expect || len != size || !tail {
            eprintln!("mdcom-bench-iceoryx2: pong: message {expect}: seq {seq} len {len}");
            return Ok(1);
        }
        if stream_ack == 0 {
            send(&e.tx, size, seq)?;
        } else if seq % stream_ack == 0 {
            send(&e.tx, 4, seq)?; // ack: all up to seq received
        }
        expect += 1;
    }
}

/// Start side B and wait until it answers.
fn start_peer(name: &str, size: usize, depth: usize, ack: u32, cpu_b: i64) -> Res<(Ends, std::process::Child)> {
    let e = open(name, true, size, depth)?;
    let child = Command::new(std::env::current_exe()?)
        .args(["pong", name, &size.to_string(), &depth.to_string(), &ack.to_string(), &cpu_b.to_string()])
        .stdout(Stdio::null())
        .spawn()?;
    let t0 = Instant::now();
    loop {
        send(&e.tx, 4, HELLO)?;
        if let Ok((HELLO, _, _)) = next(&e.rx, Instant::now() + Duration::from_millis(2)) {
            break;
        }
        if t0.elapsed() > Duration::from_secs(10) {
            return Err("peer did not answer".into());
        }
    }
    Ok((e, child))
}

fn finish(e: &Ends, mut child: std::process::Child) -> Res<i32> {
    send(&e.tx, 4, STOP)?;
    let st = child.wait()?;
    Ok(st.code().unwrap_or(2))
}

fn rtt(a: &[u64]) -> Res<i32> {
    let (size, samples, warm, budget) = (a[0] as usize, a[1], a[2], a[3]);
    let name = format!("mdb-iox2-{}", std::process::id());
    let (e, child) = start_peer(&name, size, 2, 0, a[5] as i64)?;
    let mut out = Vec::with_capacity(samples as usize);
    let timeout = Duration::from_secs(10);
    let mut seq = 0u32;
    let mut bad = false;
    let w0 = Instant::now();
    'run: for phase in 0..2 {
        let n = if phase == 0 { warm } else { samples };
        let t_phase = Instant::now();
        for i in 0..n {
            seq += 1;
            let t0 = Instant::now();
            send(&e.tx, size, seq)?;
            let (r, len, tail) = recv(&e.rx, Instant::now() + timeout)?;
            let dt = t0.elapsed().as_nanos() as u64;
            if r != seq || len != size || !tail {
                eprintln!("mdcom-bench-iceoryx2: reply to {seq}: seq {r} len {len}");
                bad = true;
                break 'run;
            }
            if phase == 1 {
                out.push(dt);
                if budget > 0 && t_phase.elapsed().as_nanos() as u64 > budget {
                    break;
                }
            } else if budget > 0 && i >= 32 && w0.elapsed().as_nanos() as u64 > budget / 4 {
                break;
            }
        }
    }
    let code = finish(&e, child)?;
    let mut o = std::io::stdout().lock();
    for v in &out {
        o.write_all(&v.to_le_bytes())?;
    }
    o.flush()?;
    Ok(if bad || code == 1 { 1 } else if code != 0 { 2 } else { 0 })
}

fn stream(a: &[u64]) -> Res<i32> {
    let (size, msgs, window, budget) = (a[0] as usize, a[1] as u32, a[2].max(2) as u32, a[3]);
    let ack = window / 2;
    let name = format!("mdb-iox2s-{}", std::process::id());
    let (e, child) = start_peer(&name, size, window as usize + 2, ack, a[5] as i64)?;
    let timeout = Duration::from_secs(10);
    let t0 = Instant::now();
    let (mut sent, mut acked) = (0u32, 0u32);
    let mut lost = 0u64;
    // B acknowledges every `ack` messages: the stream ends on a multiple of it
    let mut target = (msgs / ack).max(1) * ack;
    while acked < target {
        while sent < target && sent - acked < window {
            sent += 1;
            send_body(&e.tx, size, sent, true)?;
        }
        let (r, _, _) = recv(&e.rx, Instant::now() + timeout)?;
        if r != acked + ack {
            eprintln!("mdcom-bench-iceoryx2: ack {r} after {acked} (step {ack})");
            lost += 1;
            break;
        }
        acked = r;
        if budget > 0 && t0.elapsed().as_nanos() as u64 > budget {
            target = target.min(sent.div_ceil(ack) * ack); // capped by the cell's budget
        }
    }
    let wall = t0.elapsed().as_nanos() as u64;
    let code = finish(&e, child)?;
    println!("{} {} {} {} 0", acked, acked as u64 * size as u64, wall, lost);
    Ok(if lost > 0 || code == 1 { 1 } else if code != 0 { 2 } else { 0 })
}

fn main() {
    set_log_level(LogLevel::Error);
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: mdcom-bench-iceoryx2 rtt|stream SIZE N WARMUP|WINDOW BUDGET_NS CPU_A CPU_B";
    let r = match args.get(1).map(String::as_str) {
        Some("pong") if args.len() == 7 => {
            let n = |i: usize| args[i].parse::<i64>().unwrap_or(0);
            pin(n(6));
            pong(&args[2], n(3) as usize, n(4) as usize, n(5) as u32)
        }
        Some(m @ ("rtt" | "stream")) if args.len() == 8 => {
            let v: Vec<u64> = args[2..].iter().map(|s| s.parse::<i64>().unwrap_or(-1) as u64).collect();
            pin(v[4] as i64);
            if m == "rtt" { rtt(&v) } else { stream(&v) }
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    match r {
        Ok(c) => std::process::exit(c),
        Err(e) => {
            eprintln!("mdcom-bench-iceoryx2: {e}");
            std::process::exit(2);
        }
    }
}
