// SPDX-License-Identifier: BSD-3-Clause
//! Last delivered (epoch, seq) per incoming stream, in a small memory-mapped
//! file, so that a bridge restarted after a crash (SIGKILL included: the
//! mapping is the page cache) knows where each stream stood: what it receives
//! again is a duplicate, what it never receives is counted as lost.
//!
//! File: SLOTS slots of SLOT bytes: a 20-byte name (hash of the stream's
//! name), the epoch (u64 LE) and the last delivered sequence number (u64 LE).

use std::collections::HashMap;
use std::ffi::CString;
use std::ptr;

const SLOTS: usize = 256;
const NAME: usize = 20;
const SLOT: usize = NAME + 16;

pub struct SeqStore {
    map: *mut u8,
    slots: HashMap<[u8; NAME], usize>, // name -> slot
    next_evict: usize,
}

// SAFETY: the mapping is owned by this value; callers serialise access (Mutex).
unsafe impl Send for SeqStore {}

fn fnv(seed: u64, data: &[u8]) -> u64 {
    let mut h = seed;
    for b in data {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// 20 bytes naming a stream: two FNV-1a hashes and the length.
pub fn stream_name(stream: &str) -> [u8; NAME] {
    let mut out = [0u8; NAME];
    let b = stream.as_bytes();
    out[..8].copy_from_slice(&fnv(0xcbf29ce484222325, b).to_le_bytes());
    out[8..16].copy_from_slice(&fnv(0x84222325cbf29ce4, b).to_le_bytes());
    out[16..].copy_from_slice(&(b.len() as u32 | 0x8000_0000).to_le_bytes()); // never all zero
    out
}

impl SeqStore {
    /// A store in `path` (created if needed), or one that keeps nothing.
    pub fn open(path: Option<&str>) -> std::io::Result<SeqStore> {
        let mut s = SeqStore { map: ptr::null_mut(), slots: HashMap::new(), next_evict: 0 };
        let Some(path) = path else { return Ok(s) };
        let c = CString::new(path).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        let size = SLOTS * SLOT;
        // SAFETY: plain POSIX calls on our own file; the mapping is checked.
        unsafe {
            let fd = libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC, 0o600);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0
                || (st.st_size as usize != size && libc::ftruncate(fd, size as libc::off_t) != 0)
            {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                return Err(e);
            }
            let p = libc::mmap(ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0);
            libc::close(fd);
            if p == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            s.map = p as *mut u8;
        }
        for i in 0..SLOTS {
            let name = s.name_at(i);
            if name != [0u8; NAME] {
                s.slots.insert(name, i);
            }
        }
        s.next_evict = s.slots.len() % SLOTS;
        Ok(s)
    }

    fn name_at(&self, i: usize) -> [u8; NAME] {
        let mut n = [0u8; NAME];
        // SAFETY: i < SLOTS; the mapping is SLOTS * SLOT bytes.
        unsafe { ptr::copy_nonoverlapping(self.map.add(i * SLOT), n.as_mut_ptr(), NAME) };
        n
    }

    fn u64_at(&self, off: usize) -> u64 {
        // SAFETY: off + 8 <= SLOTS * SLOT.
        u64::from_le(unsafe { ptr::read_unaligned(self.map.add(off) as *const u64) })
    }

    /// (epoch, last seq) stored for the stream, or None.
    pub fn load(&self, name: &[u8; NAME]) -> Option<(u64, u64)> {
        if self.map.is_null() {
            return None;
        }
        let i = *self.slots.get(name)?;
        Some((self.u64_at(i * SLOT + NAME), self.u64_at(i * SLOT + NAME + 8)))
    }

    /// The slot of a stream (found or taken), None without a file.
    pub fn slot(&mut self, name: &[u8; NAME]) -> Option<usize> {
        if self.map.is_null() {
            return None;
        }
        if let Some(i) = self.slots.get(name) {
            return Some(*i);
        }
        let i = if self.slots.len() < SLOTS {
            self.slots.len()
        } else {
            // full: reuse slots round robin (the oldest taken first)
            let i = self.next_evict;
            self.next_evict = (i + 1) % SLOTS;
            let old = self.name_at(i);
            self.slots.remove(&old);
            i
        };
        self.slots.insert(*name, i);
        // SAFETY: i < SLOTS.
        unsafe { ptr::copy_nonoverlapping(name.as_ptr(), self.map.add(i * SLOT), NAME) };
        Some(i)
    }

    /// Record the last delivered number of the stream in slot i (per message).
    pub fn store(&self, i: usize, epoch: u64, seq: u64) {
        if self.map.is_null() {
            return;
        }
        // SAFETY: i < SLOTS (from slot()).
        unsafe {
            ptr::write_unaligned(self.map.add(i * SLOT + NAME) as *mut u64, epoch.to_le());
            ptr::write_unaligned(self.map.add(i * SLOT + NAME + 8) as *mut u64, seq.to_le());
        }
    }
}

impl Drop for SeqStore {
    fn drop(&mut self) {
        if !self.map.is_null() {
            // SAFETY: the mapping made in open().
            unsafe { libc::munmap(self.map as *mut libc::c_void, SLOTS * SLOT) };
        }
    }
}
