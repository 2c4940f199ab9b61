// SPDX-License-Identifier: BSD-3-Clause
//! mdcom-zenoh-bench: the native ends of the bridge benchmark
//! (bridge/zenoh/bench_bridge.py drives them).
//!
//!   zsub ZCFG KEY N               plain Zenoh subscriber
//!   zpub ZCFG KEY SIZE N PERIOD_US plain Zenoh publisher (waits for a subscriber)
//!   frecv TOML DOMAIN CHANNEL N    FIFO receiver
//!   fsend TOML DOMAIN CHANNEL SIZE N PERIOD_US  FIFO sender
//!
//! Every message starts with its send time (CLOCK_MONOTONIC ns, u64 LE) and
//! its number (u64 LE). A receiver prints one JSON line: count, one-way
//! latency p50/p99 in us (first 10 % left out), the throughput from the
//! first message's send time to the last receive, and its cpu time (all
//! threads) from the first message to the report. A sender prints a JSON
//! line with its cpu time from the first message to the last once it has
//! sent them.

mod cfg;
mod binding;

use std::sync::{Arc, Mutex};
use std::time::Duration;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::Wait;

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// This process' cpu time (all threads), ns.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn print_sender_cpu(cpu0: u64) {
    println!("{}", serde_json::json!({"cpu_s": (cpu_ns() - cpu0) as f64 / 1e9}));
}

fn fill(buf: &mut [u8], i: u64) {
    let t = now_ns();
    let n = buf.len().min(8);
    buf[..n].copy_from_slice(&t.to_le_bytes()[..n]);
    if buf.len() >= 16 {
        buf[8..16].copy_from_slice(&i.to_le_bytes());
    }
}

/// Pace to `period` after message i (burst when zero): spin the last 100 us.
fn pace(start: u64, i: u64, period_us: u64) {
    if period_us == 0 {
        return;
    }
    let due = start + (i + 1) * period_us * 1000;
    loop {
        let now = now_ns();
        if now >= due {
            return;
        }
        if due - now > 200_000 {
            std::thread::sleep(Duration::from_nanos(due - now - 100_000));
        }
    }
}

#[derive(Default)]
struct Rx {
    lat: Vec<u64>,
    first_sent: u64,
    last_recv: u64,
    count: u64,
    bytes: u64,
    cpu0: u64,
}

impl Rx {
    fn on(&mut self, msg: &[u8]) {
        let t = now_ns();
        let mut b = [0u8; 8];
        b.copy_from_slice(&msg[..8]);
        let sent = u64::from_le_bytes(b);
        if self.count == 0 {
            self.first_sent = sent;
            self.cpu0 = cpu_ns(); // a syscall: only once
        }
        self.lat.push(t.saturating_sub(sent));
        self.last_recv = t;
        self.count += 1;
        self.bytes += msg.len() as u64;
    }

    fn report(&mut self) {
        let skip = self.lat.len() / 10;
        let mut l: Vec<u64> = self.lat[skip..].to_vec();
        l.sort_unstable();
        let pct = |p: f64| if l.is_empty() { 0.0 } else { l[((l.len() - 1) as f64 * p).round() as usize] as f64 / 1000.0 };
        let secs = (self.last_recv.saturating_sub(self.first_sent)) as f64 / 1e9;
        let cpu = if self.count > 0 { (cpu_ns() - self.cpu0) as f64 / 1e9 } else { 0.0 };
        let v = serde_json::json!({
            "received": self.count, "p50_us": pct(0.5), "p99_us": pct(0.99),
            "seconds": secs, "msg_per_s": if secs > 0.0 { self.count as f64 / secs } else { 0.0 },
            "mb_per_s": if secs > 0.0 { self.bytes as f64 / secs / 1e6 } else { 0.0 },
            "cpu_s": cpu,
        });
        println!("{v}");
    }
}

fn arg<T: std::str::FromStr>(a: &[String], i: usize) -> T {
    a.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("mdcom-zenoh-bench: bad or missing argument {i} (see the source's header)");
        std::process::exit(2)
    })
}

fn session(path: &str) -> zenoh::Session {
    let c = zenoh::Config::from_file(path).expect("zenoh config");
    zenoh::open(c).wait().expect("zenoh open")
}

fn system(toml: &str, domain: &str) -> (binding::System, u32) {
    let c = match cfg::load(toml) {
        Ok(c) => c,
        Err(cfg::CfgError::Invalid(l)) => panic!("{}", l.join("\n")),
        Err(cfg::CfgError::Tool(m)) => panic!("{m}"),
    };
    let id = c.sys.domains.iter().find(|d| d.0 == domain).expect("domain").1;
    (binding::System::attach(&c.sys, id, 20_000_000_000).expect("attach"), id)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let role = a.first().cloned().unwrap_or_default();
    match role.as_str() {
        "zsub" => {
            let (z, key, n): (String, String, u64) = (arg(&a, 1), arg(&a, 2), arg(&a, 3));
            let s = session(&z);
            let rx = Arc::new(Mutex::new(Rx { lat: Vec::with_capacity(n as usize), ..Default::default() }));
            let rx2 = rx.clone();
            let _sub = s
                .declare_subscriber(key)
                .callback(move |sample| rx2.lock().unwrap().on(&sample.payload().to_bytes()))
                .wait()
                .expect("subscriber");
            println!("ready");
            let mut idle = 0;
            let mut last = 0;
            while idle < 100 {
                std::thread::sleep(Duration::from_millis(100));
                let c = rx.lock().unwrap().count;
                if c >= n {
                    break;
                }
                idle = if c == last { idle + 1 } else { 0 };
                last = c;
            }
            rx.lock().unwrap().report();
        }
        "zpub" => {
            let (z, key, size, n, period): (String, String, usize, u64, u64) =
                (arg(&a, 1), arg(&a, 2), arg(&a, 3), arg(&a, 4), arg(&a, 5));
            let s = session(&z);
            let p = s
                .declare_publisher(key)
                .congestion_control(CongestionControl::Block)
                .reliability(Reliability::Reliable)
                .wait()
                .expect("publisher");
            let ms = p.matching_status().wait().expect("matching");
            let mut tries = 0;
            let mut ms = ms;
            while !ms.matching() && tries < 200 {
                std::thread::sleep(Duration::from_millis(50));
                ms = p.matching_status().wait().expect("matching");
                tries += 1;
            }
            std::thread::sleep(Duration::from_millis(200));
            let mut buf = vec![0u8; size];
            let cpu0 = cpu_ns();
            let start = now_ns();
            for i in 0..n {
                fill(&mut buf, i);
                p.put(buf.clone()).wait().expect("put");
                pace(start, i, period);
            }
            print_sender_cpu(cpu0);
            std::thread::sleep(Duration::from_millis(500)); // let the last samples leave
        }
        "frecv" => {
            let (toml, dom, ch, n): (String, String, String, u64) = (arg(&a, 1), arg(&a, 2), arg(&a, 3), arg(&a, 4));
            let (sys, _) = system(&toml, &dom);
            let f = sys.fifo(&ch).expect("fifo");
            let mut buf = vec![0u8; f.block_size as usize];
            let mut rx = Rx { lat: Vec::with_capacity(n as usize), ..Default::default() };
            println!("ready");
            while rx.count < n {
                let r = f.recv(&mut buf, 10_000_000_000);
                if r < 0 {
                    break;
                }
                rx.on(&buf[..r as usize]);
            }
            rx.report();
            drop(f);
            drop(sys);
        }
        "fsend" => {
            let (toml, dom, ch, size, n, period): (String, String, String, usize, u64, u64) =
                (arg(&a, 1), arg(&a, 2), arg(&a, 3), arg(&a, 4), arg(&a, 5), arg(&a, 6));
            let (sys, _) = system(&toml, &dom);
            let f = sys.fifo(&ch).expect("fifo");
            let mut buf = vec![0u8; size];
            println!("ready");
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line); // go
            let cpu0 = cpu_ns();
            let start = now_ns();
            for i in 0..n {
                fill(&mut buf, i);
                f.send(&buf, binding::MDCOM_FOREVER).expect("send");
                pace(start, i, period);
            }
            print_sender_cpu(cpu0);
            drop(f);
            drop(sys);
        }
        _ => {
            eprintln!("usage: mdcom-zenoh-bench zsub|zpub|frecv|fsend ... (see the source's header)");
            std::process::exit(2);
        }
    }
}
