// SPDX-License-Identifier: BSD-3-Clause
//! The safe API in one process: guards free their blocks, errors carry the
//! errno and mdcom_strerror's text, timeouts convert as the C API wants.

use mdcom::{AttachOptions, Config, Domain, FifoSpec, Mdcom, Sent, Timeout};
use std::time::{Duration, Instant};

/// A master alone with a loopback channel (domain 0 sends and receives).
fn attach(tag: &str) -> Mdcom {
    let cfg = Config::new(&format!("rs-{tag}-{}", std::process::id()))
        .domain(Domain::master("host", 0))
        .fifo(FifoSpec::new("loop", 32, 4).senders(1).receivers(1));
    Mdcom::attach(&cfg, 0, &AttachOptions::default()).expect("attach")
}

#[test]
fn dropped_blocks_go_back_to_the_pool() {
    let m = attach("drop");
    let f = m.fifo("loop").unwrap();
    let b = f.alloc().unwrap();
    assert_eq!(b.len(), 32);
    assert_eq!(f.state().unwrap().free_blocks, 3);
    drop(b); // not enqueued: freed
    assert_eq!(f.state().unwrap().free_blocks, 4);

    let mut b = f.alloc().unwrap();
    b[..2].copy_from_slice(b"hi");
    assert_eq!(b.enqueue(2).unwrap(), Sent::Queued);
    assert_eq!(f.state().unwrap().queued, 1);
    let r = f.dequeue().unwrap().expect("one queued");
    assert_eq!(&r[..], b"hi");
    assert_eq!(f.state().unwrap().free_blocks, 3);
    drop(r); // read: freed
    assert_eq!(f.state().unwrap().free_blocks, 4);
    assert!(f.dequeue().unwrap().is_none());

    // an enqueue the library refuses (len > block size) frees the block too
    let b = f.alloc().unwrap();
    let e = b.enqueue(33).unwrap_err();
    assert_eq!(e.errno(), libc::EINVAL, "{e}");
    assert_eq!(f.state().unwrap().free_blocks, 4);
}

#[test]
fn errors_carry_errno_and_text() {
    let m = attach("err");
    let e = m.fifo("nope").err().expect("no such channel");
    assert_eq!(e.code(), -libc::ENOENT);
    assert!(e.to_string().starts_with("fifo 'nope': ENOENT"), "{e}");
    assert_eq!(e.message(), mdcom::strerror(-libc::ENOENT));

    let f = m.fifo("loop").unwrap();
    let mut buf = [0u8; 32];
    let t0 = Instant::now();
    let e = f.recv(&mut buf, Duration::from_millis(30)).unwrap_err();
    assert!(e.is_timeout() && !e.region_ended(), "{e}");
    assert!(t0.elapsed() >= Duration::from_millis(30));
    assert!(f.send(&[0u8; 33], Timeout::Poll).unwrap_err().errno() == libc::EMSGSIZE);
    let e: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    assert!(e.to_string().contains("ETIMEDOUT"), "{e}");
}

#[test]
fn copy_send_and_recv() {
    let m = attach("copy");
    let f = m.fifo("loop").unwrap();
    for i in 0..10u8 {
        assert_eq!(f.send(&[i; 5], Timeout::Poll).unwrap(), Sent::Queued);
        let mut buf = [0u8; 32];
        assert_eq!(f.recv(&mut buf, Timeout::Forever).unwrap(), 5);
        assert_eq!(buf[..5], [i; 5]);
    }
    f.filter_every_nth(2).unwrap();
    assert_eq!(f.send(b"a", Timeout::Poll).unwrap(), Sent::Filtered);
    assert_eq!(f.send(b"b", Timeout::Poll).unwrap(), Sent::Queued);
    assert_eq!(f.state().unwrap().filtered, 1);
}

#[test]
fn timeouts() {
    assert_eq!(Timeout::Poll.as_ns(), 0);
    assert_eq!(Timeout::Forever.as_ns(), -1);
    assert_eq!(Timeout::from(Duration::from_millis(3)).as_ns(), 3_000_000);
    assert_eq!(Timeout::from(None::<Duration>), Timeout::Forever);
    assert_eq!(Timeout::from(Duration::MAX).as_ns(), i64::MAX);
}

#[test]
fn handles_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Mdcom>();
    both::<mdcom::Fifo<'static>>();
    both::<mdcom::Smem<'static>>();
    both::<mdcom::Error>();
}
