//! A capped device: [`ThrottledFs`] wraps a file system and holds every file operation of one
//! database to read and write IOPS caps, read and write byte-rate caps and combined (read plus
//! write) IOPS and byte-rate caps, as a cloud disk's limits (KVM's `iotune`, EBS's provisioned
//! IOPS) hold a VM's. Distinct from the rate limiter ([`super::rate_limiter`]), which paces only
//! flush and compaction writes: here foreground reads, WAL writes and syncs wait too.
//!
//! What counts as an IO (the device's view, documented in `docs/design/throttle.md`): a
//! positional or sequential read is one read IO per started [`MAX_IO_BYTES`] of its length; a
//! direct write likewise one write IO per started [`MAX_IO_BYTES`]. Buffered writes reach the
//! device later, so their bytes are charged at `append` (the byte cap then paces writers as a
//! full page cache would) and their IOs when the bytes are handed to the device: at `sync`,
//! `start_writeback` and when the file is dropped, one IO per started [`MAX_IO_BYTES`] of the
//! bytes since the last such point, plus one for the sync's cache flush. A directory sync is one
//! write IO. Without direct IO a read the page cache serves is still charged (the throttle sees
//! the engine's calls, not the cache): runs that model a device use direct reads.
//!
//! Each cap is a token bucket kept as a theoretical arrival time (GCRA): a request of cost `c`
//! reserves `c / rate` seconds of the device after the last reservation, in arrival order (a
//! mutex held for the arithmetic only), and sleeps until its reservation is within the burst
//! ([`BURST`] of the rate) of now. Over any window the units granted stay within the rate times
//! the window plus one burst, and a request waits at most for the ones reserved before it: no
//! one starves. A request under several caps waits for the latest of its reservations.
//!
//! The time a request waits is counted per database ([`Throttle::stats`]: waits, total and
//! largest wait, a histogram) and, with `Options::statistics`, in the process's tickers
//! (`talus.io.throttle.wait.micros`) and histogram (`talus.io.throttle.micros`).
//!
//! Who calls: `Db::open` wraps `Options::fs` when any `Options::io_limits` cap is set
//! ([`apply`]; `Db::io_throttle` reads the counts back), as do `SstFileWriter` and the tools'
//! other file work; the tools set the caps from `--io_limit_*`, and their SQLite VFS waits on a
//! [`Throttle`] of its own through [`Throttle::wait_read`] and [`Throttle::wait_write`].
//! Locks: each bucket's mutex, a leaf, never held while sleeping.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{
    DirectReadFile, DirectWriteFile, FileLock, Fs, RandomAccessFile, SequentialFile, WritableFile,
};
use crate::error::{Error, Result};
use crate::statistics::{self as st, Hist, Ticker};

/// The largest IO the device takes in one operation (a larger request counts as several, as
/// EBS counts 256 KiB units).
pub const MAX_IO_BYTES: u64 = 256 << 10;
/// How far ahead of the rate a request may run: the bucket's depth, as a share of a second.
pub const BURST: Duration = Duration::from_millis(100);

/// The caps, each per second; 0 is no cap. RocksDB has no such options: Talus's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoLimits {
    /// Read operations per second (`io_limit_read_iops`).
    pub read_iops: u64,
    /// Write operations per second, syncs included (`io_limit_write_iops`).
    pub write_iops: u64,
    /// Read bytes per second (`io_limit_read_bytes_per_sec`).
    pub read_bytes_per_sec: u64,
    /// Written bytes per second (`io_limit_write_bytes_per_sec`).
    pub write_bytes_per_sec: u64,
    /// Read and write operations together per second (`io_limit_iops`).
    pub iops: u64,
    /// Read and written bytes together per second (`io_limit_bytes_per_sec`; KVM iotune's
    /// `total_bytes_sec`).
    pub bytes_per_sec: u64,
}

impl IoLimits {
    /// True if no cap is set.
    pub fn is_unlimited(&self) -> bool {
        *self == IoLimits::default()
    }
}

/// One cap: a token bucket kept as a theoretical arrival time (see the module doc).
struct Bucket {
    per_unit: f64,
    tat: Mutex<Option<Instant>>,
}

impl Bucket {
    fn new(rate: u64) -> Option<Bucket> {
        (rate > 0).then(|| Bucket { per_unit: 1.0 / rate as f64, tat: Mutex::new(None) })
    }

    /// Reserves `units` at `now`; returns when the request may proceed.
    fn reserve(&self, units: u64, now: Instant) -> Instant {
        let cost = Duration::from_secs_f64(units as f64 * self.per_unit);
        let mut tat = self.tat.lock();
        let start = tat.map_or(now, |t| t.max(now));
        let end = start + cost;
        *tat = Some(end);
        // Free to go once the reservation's end is within one burst of now.
        end.checked_sub(BURST).unwrap_or(now)
    }
}

/// What a throttle counted since it was made (each field cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThrottleStats {
    /// Read IOs charged.
    pub read_ios: u64,
    /// Write IOs charged.
    pub write_ios: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Requests that had to wait.
    pub waits: u64,
    /// Microseconds waited in all.
    pub wait_micros: u64,
    /// The longest single wait, in microseconds.
    pub max_wait_micros: u64,
}

impl std::fmt::Display for ThrottleStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "read_ios={} write_ios={} read_bytes={} write_bytes={} waits={} wait_micros={} \
             max_wait_micros={}",
            self.read_ios,
            self.write_ios,
            self.read_bytes,
            self.write_bytes,
            self.waits,
            self.wait_micros,
            self.max_wait_micros
        )
    }
}

/// The caps of one database and what they counted; shared by every file [`ThrottledFs`] opens.
pub struct Throttle {
    limits: IoLimits,
    read_iops: Option<Bucket>,
    write_iops: Option<Bucket>,
    read_bytes: Option<Bucket>,
    write_bytes: Option<Bucket>,
    iops: Option<Bucket>,
    bytes: Option<Bucket>,
    counts: [AtomicU64; 7],
}

#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

impl Throttle {
    /// A throttle with `limits`.
    pub fn new(limits: IoLimits) -> Throttle {
        Throttle {
            limits,
            read_iops: Bucket::new(limits.read_iops),
            write_iops: Bucket::new(limits.write_iops),
            read_bytes: Bucket::new(limits.read_bytes_per_sec),
            write_bytes: Bucket::new(limits.write_bytes_per_sec),
            iops: Bucket::new(limits.iops),
            bytes: Bucket::new(limits.bytes_per_sec),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The caps.
    pub fn limits(&self) -> IoLimits {
        self.limits
    }

    /// What was charged and waited so far.
    pub fn stats(&self) -> ThrottleStats {
        let c = |i: usize| self.counts[i].load(Relaxed);
        ThrottleStats {
            read_ios: c(0),
            write_ios: c(1),
            read_bytes: c(2),
            write_bytes: c(3),
            waits: c(4),
            wait_micros: c(5),
            max_wait_micros: c(6),
        }
    }

    /// Charges `ios` operations and `bytes` bytes in direction `dir`, waiting as the caps say.
    fn charge(&self, dir: Dir, ios: u64, bytes: u64) {
        let (iops, rate, io_slot) = match dir {
            Dir::Read => (&self.read_iops, &self.read_bytes, 0),
            Dir::Write => (&self.write_iops, &self.write_bytes, 1),
        };
        self.counts[io_slot].fetch_add(ios, Relaxed);
        self.counts[io_slot + 2].fetch_add(bytes, Relaxed);
        let now = Instant::now();
        let mut go = now;
        let caps = [(iops, ios), (rate, bytes), (&self.iops, ios), (&self.bytes, bytes)];
        for (b, units) in caps {
            if let (Some(b), true) = (b, units > 0) {
                go = go.max(b.reserve(units, now));
            }
        }
        if go > now {
            let wait = go - now;
            std::thread::sleep(wait);
            let micros = wait.as_micros() as u64;
            self.counts[4].fetch_add(1, Relaxed);
            self.counts[5].fetch_add(micros, Relaxed);
            self.counts[6].fetch_max(micros, Relaxed);
            st::add(Ticker::IoThrottleWaitMicros, micros);
            st::record(Hist::IoThrottle, micros);
        }
    }

    fn read(&self, bytes: u64) {
        self.charge(Dir::Read, ios_for(bytes), bytes);
    }

    /// Waits for a read of `bytes`: one read IO per started [`MAX_IO_BYTES`], at least one.
    /// For file layers outside [`Fs`] that share these caps (the tools' SQLite VFS).
    pub fn wait_read(&self, bytes: u64) {
        self.read(bytes);
    }

    /// Waits for `ios` write IOs and `bytes` written bytes (either may be 0), counted as the
    /// module doc says for buffered files; for file layers outside [`Fs`], as
    /// [`Throttle::wait_read`].
    pub fn wait_write(&self, ios: u64, bytes: u64) {
        if ios > 0 || bytes > 0 {
            self.charge(Dir::Write, ios, bytes);
        }
    }
}

/// The IOs a transfer of `bytes` takes: one per started [`MAX_IO_BYTES`], at least one.
fn ios_for(bytes: u64) -> u64 {
    bytes.div_ceil(MAX_IO_BYTES).max(1)
}

/// A file system whose every operation waits for a [`Throttle`]; see the module doc.
pub struct ThrottledFs {
    inner: Arc<dyn Fs>,
    throttle: Arc<Throttle>,
}

impl ThrottledFs {
    /// `inner` held to `limits`. Refuses a set of no caps (nothing to throttle).
    pub fn new(inner: Arc<dyn Fs>, limits: IoLimits) -> Result<ThrottledFs> {
        if limits.is_unlimited() {
            return Err(Error::InvalidArgument("a throttled file system needs a cap".into()));
        }
        Ok(ThrottledFs { inner, throttle: Arc::new(Throttle::new(limits)) })
    }

    /// The throttle (its caps and counts).
    pub fn throttle(&self) -> &Arc<Throttle> {
        &self.throttle
    }

    fn writable(&self, f: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        Box::new(TWritable { f, t: self.throttle.clone(), unsent: 0 })
    }
}

struct TWritable {
    f: Box<dyn WritableFile>,
    t: Arc<Throttle>,
    /// Bytes appended since they were last handed to the device (sync, writeback, drop).
    unsent: u64,
}

impl TWritable {
    /// Charges the IOs of the bytes not yet handed to the device, plus `extra` (a cache flush).
    fn send(&mut self, extra: u64) {
        let ios = self.unsent.div_ceil(MAX_IO_BYTES) + extra;
        self.unsent = 0;
        if ios > 0 {
            self.t.charge(Dir::Write, ios, 0);
        }
    }
}

impl WritableFile for TWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.t.charge(Dir::Write, 0, data.len() as u64);
        self.unsent += data.len() as u64;
        self.f.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.f.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.send(1);
        self.f.sync()
    }
    fn size(&self) -> u64 {
        self.f.size()
    }
    fn start_writeback(&mut self) -> Result<()> {
        self.send(0);
        self.f.start_writeback()
    }
}

impl Drop for TWritable {
    fn drop(&mut self) {
        self.send(0);
    }
}

struct TRandom {
    f: Arc<dyn RandomAccessFile>,
    t: Arc<Throttle>,
}

impl RandomAccessFile for TRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.t.read(buf.len() as u64);
        self.f.read_exact_at(offset, buf)
    }
    fn size(&self) -> u64 {
        self.f.size()
    }
    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.t.read(len as u64);
        self.f.read_vec_at(offset, len)
    }
}

struct TSequential {
    f: Box<dyn SequentialFile>,
    t: Arc<Throttle>,
}

impl SequentialFile for TSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = self.f.read(buf)?;
        if n > 0 {
            self.t.read(n as u64);
        }
        Ok(n)
    }
}

struct TDirectRead {
    f: Box<dyn DirectReadFile>,
    t: Arc<Throttle>,
}

impl DirectReadFile for TDirectRead {
    fn read_aligned(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.t.read(buf.len() as u64);
        self.f.read_aligned(offset, buf)
    }
    fn size(&self) -> u64 {
        self.f.size()
    }
    fn alignment(&self) -> usize {
        self.f.alignment()
    }
}

struct TDirectWrite {
    f: Box<dyn DirectWriteFile>,
    t: Arc<Throttle>,
}

impl DirectWriteFile for TDirectWrite {
    fn write_aligned(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let n = data.len() as u64;
        self.t.charge(Dir::Write, ios_for(n), n);
        self.f.write_aligned(offset, data)
    }
    fn set_len(&mut self, len: u64) -> Result<()> {
        self.f.set_len(len)
    }
    fn sync(&mut self) -> Result<()> {
        self.t.charge(Dir::Write, 1, 0);
        self.f.sync()
    }
}

impl Fs for ThrottledFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(self.writable(self.inner.create(path)?))
    }
    fn create_mapped(&self, path: &Path, size_hint: u64) -> Result<Box<dyn WritableFile>> {
        Ok(self.writable(self.inner.create_mapped(path, size_hint)?))
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(TRandom { f: self.inner.open_random(path)?, t: self.throttle.clone() }))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        Ok(Box::new(TSequential { f: self.inner.open_sequential(path)?, t: self.throttle.clone() }))
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        self.inner.list_dir(dir)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.inner.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.inner.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.throttle.charge(Dir::Write, 1, 0);
        self.inner.sync_dir(dir)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.hard_link(from, to)
    }
    fn open_direct_read(&self, path: &Path) -> Result<Box<dyn DirectReadFile>> {
        Ok(Box::new(TDirectRead {
            f: self.inner.open_direct_read(path)?,
            t: self.throttle.clone(),
        }))
    }
    fn create_direct_write(&self, path: &Path) -> Result<Box<dyn DirectWriteFile>> {
        Ok(Box::new(TDirectWrite {
            f: self.inner.create_direct_write(path)?,
            t: self.throttle.clone(),
        }))
    }
    fn throttle(&self) -> Option<&Arc<Throttle>> {
        Some(&self.throttle)
    }
}

/// `fs` held to `limits`: `fs` itself if it has no caps to apply or already applies exactly
/// these (a reopen with a handle's own options), else a [`ThrottledFs`] around it.
pub fn apply(fs: Arc<dyn Fs>, limits: IoLimits) -> Result<Arc<dyn Fs>> {
    if limits.is_unlimited() || fs.throttle().is_some_and(|t| t.limits() == limits) {
        return Ok(fs);
    }
    Ok(Arc::new(ThrottledFs::new(fs, limits)?))
}

#[cfg(test)]
mod tests;
