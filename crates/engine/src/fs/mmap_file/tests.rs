//! Tests of the mapped WAL writer (`super`).

use super::*;

fn open_rw(path: &std::path::Path) -> File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap()
}

/// Appends across allocation and window boundaries (records straddling them) read back
/// byte for byte; the file runs to the end of the last allocation while open and is exactly
/// as long as the data once dropped.
#[test]
fn appends_cross_windows_and_drop_truncates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.log");
    let (window, alloc) = (256u64 << 10, 64u64 << 10);
    let mut w =
        MmapWritable::with_sizes(open_rw(&path), "000001.log".into(), window, alloc, 0).unwrap();
    let mut want = Vec::new();
    let mut i = 0u32;
    while want.len() < 3 * window as usize + 12_345 {
        // Record sizes that do not divide the allocation, so some straddle its boundaries.
        let rec: Vec<u8> = (0..(997 + i % 5000)).map(|j| (i ^ j) as u8).collect();
        w.append(&rec).unwrap();
        want.extend_from_slice(&rec);
        i += 1;
    }
    assert_eq!(w.size(), want.len() as u64);
    w.flush().unwrap();
    // Visible to readers of the file at once, before any sync.
    let on_disk = std::fs::read(&path).unwrap();
    assert_eq!(on_disk.len() as u64, (want.len() as u64).next_multiple_of(alloc));
    assert_eq!(&on_disk[..want.len()], &want[..]);
    assert!(on_disk[want.len()..].iter().all(|&b| b == 0));
    w.sync().unwrap();
    w.start_writeback().unwrap();
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

/// Records given as parts, large (written with `pwritev`) and small (copied) mixed, across
/// allocation and window boundaries, read back byte for byte.
#[test]
fn large_records_are_written_not_copied() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000005.log");
    let (window, alloc) = (256u64 << 10, 64u64 << 10);
    let mut w =
        MmapWritable::with_sizes(open_rw(&path), "000005.log".into(), window, alloc, 0).unwrap();
    let mut want = Vec::new();
    let mut i = 0u32;
    while want.len() < 3 * window as usize + 777 {
        let header: Vec<u8> = (0..7).map(|j| (i + j) as u8).collect();
        let len =
            if i.is_multiple_of(3) { 100 + i % 50 } else { PWRITE_MIN as u32 + i * 37 % 9000 };
        let body: Vec<u8> = (0..len).map(|j| (i ^ j) as u8).collect();
        w.append_parts(&[&header, &body]).unwrap();
        want.extend_from_slice(&header);
        want.extend_from_slice(&body);
        assert_eq!(w.size(), want.len() as u64);
        i += 1;
    }
    w.sync().unwrap();
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

/// This thread's minor page faults so far.
fn minor_faults() -> i64 {
    // SAFETY: `getrusage` writes the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) }, 0);
    u.ru_minflt
}

/// A large record costs no page fault per page (it is written, not copied through the
/// mapping); the same bytes appended as one copy fault each page in.
#[test]
fn a_large_record_takes_no_page_faults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000006.log");
    let mut w = MmapWritable::with_sizes(open_rw(&path), "x".into(), 4 << 20, 1 << 20, 0).unwrap();
    let big = vec![5u8; 32 * PAGE as usize];
    // Warm the buffer's own pages and the code paths first.
    w.append_parts(&[b"header!", &big]).unwrap();
    w.append(&big).unwrap();
    let f0 = minor_faults();
    w.append_parts(&[b"header!", &big]).unwrap();
    let written = minor_faults() - f0;
    let f1 = minor_faults();
    w.append(&big).unwrap();
    let copied = minor_faults() - f1;
    assert!(written < 8, "pwritev path: {written} faults");
    assert!(copied >= 16, "copy path: {copied} faults (the measure itself is broken)");
    drop(w);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * big.len() as u64 + 14);
}

/// An append asks the next `READ_AHEAD` bytes of pages into the page cache (fails without
/// the `MADV_WILLNEED`), and no more: the pages further on stay out of the cache.
#[test]
fn an_append_reads_ahead_its_own_pages_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000003.log");
    let mut w = MmapWritable::new(open_rw(&path), "000003.log".into(), 0).unwrap();
    w.append(b"x").unwrap();
    let page = 4096usize;
    let mut resident = vec![0u8; ALLOC as usize / page];
    let map = w.map.unwrap().as_ptr();
    // SAFETY: `map` is the live mapping of at least `ALLOC` bytes; `resident` has a byte
    // per page of that range.
    let r = unsafe { libc::mincore(map.cast(), ALLOC as usize, resident.as_mut_ptr()) };
    assert_eq!(r, 0);
    let ahead = READ_AHEAD as usize / page;
    assert!(resident[..ahead].iter().all(|&b| b & 1 == 1), "{resident:?}");
    assert!(resident[2 * ahead..].iter().all(|&b| b & 1 == 0), "{resident:?}");
}

/// The window is unmapped in pieces that cover it exactly, the appended part in steps of
/// at most `step` (so no one `munmap` holds the address-space lock for long).
#[test]
fn unmap_steps_cover_the_window_once() {
    let mb = 1u64 << 20;
    for (touched, window, step) in
        [(0, 1024 * mb, mb), (64 * mb + 4096, 1024 * mb, mb), (3 * mb, 3 * mb, mb), (5, 9, 2)]
    {
        let pieces: Vec<_> = unmap_steps(touched, window, step).collect();
        let mut next = 0;
        for &(off, len) in &pieces {
            assert_eq!(off, next, "{pieces:?}");
            assert!(len > 0);
            if off < touched {
                assert!(len <= step && off + len <= touched, "{pieces:?}");
            }
            next = off + len;
        }
        assert_eq!(next, window, "{pieces:?}");
        let tail = usize::from(touched < window);
        assert_eq!(pieces.len(), touched.div_ceil(step) as usize + tail, "{pieces:?}");
    }
}

/// A size hint allocates that much at once (rounded up to the allocation unit, at most the
/// window); appends past it allocate a unit at a time as before.
#[test]
fn a_size_hint_allocates_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000004.log");
    let (window, alloc) = (1u64 << 20, 64u64 << 10);
    let len = || std::fs::metadata(&path).unwrap().len();
    let mut w =
        MmapWritable::with_sizes(open_rw(&path), "000004.log".into(), window, alloc, 200 << 10)
            .unwrap();
    assert_eq!(len(), 256 << 10);
    w.append(&vec![7u8; 300 << 10]).unwrap();
    assert_eq!(len(), 320 << 10);
    drop(w);
    assert_eq!(len(), 300 << 10);
    let w = MmapWritable::with_sizes(open_rw(&path), "000004.log".into(), window, alloc, 1 << 40)
        .unwrap();
    assert_eq!(len(), window);
    drop(w);
}

/// A writer that appends nothing leaves an empty file; the real sizes map and allocate.
#[test]
fn empty_writer_leaves_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000002.log");
    let w = MmapWritable::new(open_rw(&path), "000002.log".into(), 0).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), ALLOC);
    drop(w);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
}

/// `StdFs::will_need` brings a prepared WAL's preallocated pages into the page cache before
/// any append (fails without the `posix_fadvise`: no page of the fresh file is resident), so
/// the appends' own read ahead finds them there.
#[test]
fn will_need_caches_a_prepared_wals_pages() {
    use crate::fs::{Fs, StdFs};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000004.log");
    let w = MmapWritable::new(open_rw(&path), "000004.log".into(), 0).unwrap();
    let page = 4096usize;
    let resident = |w: &MmapWritable| {
        let mut r = vec![0u8; ALLOC as usize / page];
        // SAFETY: the live mapping of at least `ALLOC` bytes; a byte per page of it.
        let rc = unsafe {
            libc::mincore(w.map.unwrap().as_ptr().cast(), ALLOC as usize, r.as_mut_ptr())
        };
        assert_eq!(rc, 0);
        r.iter().filter(|&&b| b & 1 == 1).count()
    };
    assert_eq!(resident(&w), 0, "a fresh file has no cached pages");
    StdFs.will_need(&path, ALLOC);
    assert_eq!(resident(&w), ALLOC as usize / page);
}
