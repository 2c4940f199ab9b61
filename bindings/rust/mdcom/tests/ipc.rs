// SPDX-License-Identifier: BSD-3-Clause
//! Messages between two processes over a real region (the Linux port's
//! /dev/shm file, or $MDCOM_SHM_DIR): this test binary is the master
//! domain "host" and re-executes itself (the test `child_role`, selected
//! with --exact, MDCOM_RS_CHILD naming the region) as the remote domain
//! "peer". host -> peer zero-copy on "down"; the peer checks and echoes
//! each message by copy on "up", where a second thread of the host reads
//! them (one attachment shared by two threads: Mdcom and Fifo are Sync);
//! at the end the peer writes its count into the SMEM area "tally".

use mdcom::{AttachOptions, Config, Domain, FifoSpec, Mdcom, Sent, Timeout, EV_RX, EV_TX};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const N: u32 = 2000;
const CHILD: &str = "MDCOM_RS_CHILD";

fn config(region: &str) -> Config {
    Config::new(region)
        .domain(Domain::master("host", 0))
        .domain(Domain::remote("peer", 1))
        .fifo(FifoSpec::new("down", 64, 8).senders(1 << 0).receivers(1 << 1))
        .fifo(FifoSpec::new("up", 64, 8).senders(1 << 1).receivers(1 << 0))
        .smem("tally", 16, 0b11)
}

fn message(i: u32) -> Vec<u8> {
    format!("message {i} of {N}").into_bytes()
}

/// The peer's side; a no-op when run as a test of its own (no MDCOM_RS_CHILD).
#[test]
fn child_role() {
    let Ok(region) = std::env::var(CHILD) else { return };
    let cfg = config(&region);
    let m = Mdcom::attach(&cfg, 1, &AttachOptions::default().attach_timeout(Duration::from_secs(10)))
        .expect("peer: attach");
    let down = m.fifo("down").unwrap();
    let up = m.fifo("up").unwrap();
    let mut got = 0u32;
    while got < N {
        let Some(b) = down.dequeue().expect("peer: dequeue") else {
            down.wait(EV_RX, Duration::from_secs(10)).expect("peer: wait for host");
            continue;
        };
        assert_eq!(&b[..], &message(got)[..], "peer: message {got}");
        let mut echo = b"echo ".to_vec();
        echo.extend_from_slice(&b);
        drop(b); // the block goes back to host's pool ...
        down.notify().unwrap(); // ... and host, maybe waiting for one, is woken
        assert_eq!(up.send(&echo, Duration::from_secs(10)).expect("peer: send"), Sent::Queued);
        got += 1;
    }
    let tally = m.smem("tally").unwrap();
    let mut g = tally.lock(Duration::from_secs(10)).expect("peer: lock");
    g[..4].copy_from_slice(&got.to_le_bytes());
    g.unlock().unwrap();
}

#[test]
fn fifo_and_smem_between_two_processes() {
    let t0 = Instant::now();
    let region = format!("rs-ipc-{}", std::process::id());
    let cfg = config(&region);
    let m = Mdcom::attach(&cfg, 0, &AttachOptions::default()).expect("host: attach");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_role", "--nocapture", "--test-threads=1"])
        .env(CHILD, &region)
        .stdout(Stdio::null()) // its test harness lines; panics go to stderr (--nocapture)
        .spawn()
        .expect("spawn the peer");
    let down = m.fifo("down").unwrap();
    let up = m.fifo("up").unwrap();
    assert_eq!(down.block_size(), 64);
    std::thread::scope(|s| {
        // the reader thread: every echo, in order
        let reader = s.spawn(|| {
            let mut buf = [0u8; 64];
            for i in 0..N {
                let n = up.recv(&mut buf, Duration::from_secs(10)).unwrap_or_else(|e| panic!("host: echo {i}: {e}"));
                let mut want = b"echo ".to_vec();
                want.extend_from_slice(&message(i));
                assert_eq!(&buf[..n], &want[..], "echo {i}");
            }
        });
        for i in 0..N {
            let mut b = loop {
                match down.alloc() {
                    Ok(b) => break b,
                    Err(e) if e.errno() == libc::ENOBUFS => {
                        down.wait(EV_TX, Duration::from_secs(10)).expect("host: wait for a block");
                    }
                    Err(e) => panic!("host: alloc: {e}"),
                }
            };
            let msg = message(i);
            b[..msg.len()].copy_from_slice(&msg);
            assert_eq!(b.enqueue(msg.len()).unwrap(), Sent::Queued);
            down.notify().unwrap();
        }
        reader.join().unwrap();
    });
    let st = child.wait().unwrap();
    assert!(st.success(), "the peer failed: {st}");
    let tally = m.smem("tally").unwrap();
    let g = tally.try_lock().expect("host: trylock");
    assert_eq!(u32::from_le_bytes(g[..4].try_into().unwrap()), N);
    drop(g);
    let s = up.state().unwrap();
    assert_eq!((s.free_blocks, s.queued, s.errors), (8, 0, 0));
    // the master's term removes the region
    m.term().unwrap();
    eprintln!("{N} messages each way in {:?}", t0.elapsed());
}

#[test]
fn remote_without_master_times_out() {
    let cfg = config(&format!("rs-nomaster-{}", std::process::id()));
    let t0 = Instant::now();
    let e = Mdcom::attach(&cfg, 1, &AttachOptions::default().attach_timeout(Duration::from_millis(50)))
        .expect_err("no master: no attachment");
    assert!(t0.elapsed() >= Duration::from_millis(50), "{:?}", t0.elapsed());
    assert!(e.is_timeout(), "{e}");
    assert!(!Timeout::Forever.as_ns().is_positive());
}
