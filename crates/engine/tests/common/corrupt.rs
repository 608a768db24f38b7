//! Corruption-injection helpers for `tests/corruption/`: the block layout of an SST (so that
//! damage can be aimed at a data, index, filter, range-del, properties/meta-index block, an
//! index or filter partition, or the footer), the injections themselves (bit flip, truncation, zeroed range, swapped blocks) applied
//! to a file's bytes, a directory copy, a panic counter that sees panics on every thread, and the
//! per-file-type tally printed at the end of the campaign.
//!
//! Everything here reads the pristine files written by the test itself, so `expect` on their
//! decoding is a test-setup assertion, not trust in untrusted bytes.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use talus::iter::InternalIterator;
use talus::sst::format::{read_block, BlockHandle, Footer, BLOCK_TRAILER_LEN, FOOTER_LEN};
use talus::sst::Block;

/// What a region of an SST file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SstPart {
    /// A data block with its trailer.
    Data,
    /// The index block (or the top-level index of a partitioned one) with its trailer.
    Index,
    /// The bloom filter block (or the top-level filter index) with its trailer.
    Filter,
    /// A partition of a partitioned index, with its trailer.
    IndexPartition,
    /// A partition of a partitioned filter, with its trailer.
    FilterPartition,
    /// The range-deletion block with its trailer.
    RangeDel,
    /// The properties block or the meta-index block, with trailer.
    Meta,
    /// The 56-byte footer.
    Footer,
}

impl SstPart {
    /// The row name in the tally.
    pub fn label(self) -> &'static str {
        match self {
            SstPart::Data => "sst-data",
            SstPart::Index => "sst-index",
            SstPart::Filter => "sst-filter",
            SstPart::IndexPartition => "sst-index-partition",
            SstPart::FilterPartition => "sst-filter-partition",
            SstPart::RangeDel => "sst-rangedel",
            SstPart::Meta => "sst-props/metaindex",
            SstPart::Footer => "sst-footer",
        }
    }
}

/// One region of an SST: `[start, end)` in the file.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// What it holds.
    pub part: SstPart,
    /// First byte.
    pub start: u64,
    /// One past the last byte (trailer included).
    pub end: u64,
}

/// In-memory file for decoding the pristine SST.
struct MemFile(Vec<u8>);

impl talus::fs::RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> talus::Result<()> {
        let s = usize::try_from(offset).expect("offset");
        let src = self.0.get(s..s + buf.len()).expect("read inside the pristine file");
        buf.copy_from_slice(src);
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

fn region(part: SstPart, h: BlockHandle) -> Region {
    Region { part, start: h.offset, end: h.offset + h.size + BLOCK_TRAILER_LEN as u64 }
}

fn handles_of(file: &MemFile, name: &str, footer: &Footer) -> Vec<(Vec<u8>, BlockHandle)> {
    let h = footer.metaindex;
    let data = read_block(file, name, h, footer.checksum_type()).expect("pristine block");
    let block = talus::cache::CacheHandle::new(
        Block::new(data, name.into(), h.offset).expect("pristine block"),
    );
    let mut it = block.iter();
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        let (bh, _) = BlockHandle::decode(it.value()).expect("pristine handle");
        out.push((it.key().to_vec(), bh));
        it.next();
    }
    out
}

/// The regions of a pristine SST image, sorted by offset.
pub fn sst_layout(bytes: &[u8], name: &str) -> Vec<Region> {
    let file = MemFile(bytes.to_vec());
    let footer_at = (bytes.len() - FOOTER_LEN) as u64;
    let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..], name, footer_at)
        .expect("pristine footer");
    let mut out = vec![
        Region { part: SstPart::Footer, start: footer_at, end: bytes.len() as u64 },
        region(SstPart::Meta, footer.metaindex),
        region(SstPart::Index, footer.index),
    ];
    let reader = talus::sst::TableReader::open(std::sync::Arc::new(file), 1, name.into(), None)
        .expect("pristine table");
    for h in reader.data_block_handles().expect("pristine index") {
        out.push(region(SstPart::Data, h));
    }
    for h in reader.index_partition_handles().expect("pristine index") {
        out.push(region(SstPart::IndexPartition, h));
    }
    for h in reader.filter_partition_handles().expect("pristine filter") {
        out.push(region(SstPart::FilterPartition, h));
    }
    let file = MemFile(bytes.to_vec());
    for (k, h) in handles_of(&file, name, &footer) {
        let part = match k.as_slice() {
            b"filter" | b"partitionedfilter" => SstPart::Filter,
            b"rangedel" => SstPart::RangeDel,
            _ => SstPart::Meta,
        };
        out.push(region(part, h));
    }
    out.sort_by_key(|r| r.start);
    out
}

/// One way of damaging a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Injection {
    /// Flip bit `bit % 8` of byte `bit / 8`.
    FlipBit(u64),
    /// Keep only the first `n` bytes.
    Truncate(u64),
    /// Zero `[start, start + len)` (clipped to the file).
    Zero(u64, u64),
    /// Exchange two non-overlapping byte ranges `[a0, a1)` and `[b0, b1)` (`a1 <= b0`).
    Swap(u64, u64, u64, u64),
    /// Replace the whole content.
    Replace(Vec<u8>),
    /// Delete the file.
    Delete,
}

impl Injection {
    /// The kind, for the tally.
    pub fn kind(&self) -> &'static str {
        match self {
            Injection::FlipBit(_) => "flip",
            Injection::Truncate(_) => "truncate",
            Injection::Zero(..) => "zero",
            Injection::Swap(..) => "swap",
            Injection::Replace(_) => "replace",
            Injection::Delete => "delete",
        }
    }

    /// The damaged bytes (`None`: the file is deleted).
    pub fn apply(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let len = bytes.len() as u64;
        let mut v = bytes.to_vec();
        match *self {
            Injection::FlipBit(bit) => {
                if let Some(b) = v.get_mut((bit / 8) as usize) {
                    *b ^= 1 << (bit % 8);
                }
            }
            Injection::Truncate(n) => v.truncate(n.min(len) as usize),
            Injection::Zero(s, n) => {
                let (s, e) = (s.min(len) as usize, (s + n).min(len) as usize);
                v[s..e].fill(0);
            }
            Injection::Swap(a0, a1, b0, b1) => {
                let (a0, a1, b0, b1) = (a0 as usize, a1 as usize, b0 as usize, b1 as usize);
                let mut out = Vec::with_capacity(v.len());
                out.extend_from_slice(&bytes[..a0]);
                out.extend_from_slice(&bytes[b0..b1]);
                out.extend_from_slice(&bytes[a1..b0]);
                out.extend_from_slice(&bytes[a0..a1]);
                out.extend_from_slice(&bytes[b1..]);
                v = out;
            }
            Injection::Replace(ref c) => v = c.clone(),
            Injection::Delete => return None,
        }
        Some(v)
    }

    /// Writes the damaged file over `path`.
    pub fn inject(&self, path: &Path) {
        let bytes = std::fs::read(path).expect("read file to damage");
        match self.apply(&bytes) {
            Some(v) => std::fs::write(path, v).expect("write damaged file"),
            None => std::fs::remove_file(path).expect("delete file"),
        }
    }
}

/// Every entry of `dir` by name: `(size, crc32c)` for a file, `None` for anything else (a
/// subdirectory). Two snapshots are equal when no byte of the directory changed.
pub fn dir_snapshot(dir: &Path) -> BTreeMap<String, Option<(u64, u32)>> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("dir entry");
            let name = e.file_name().to_string_lossy().into_owned();
            let file = e.file_type().expect("file type").is_file().then(|| {
                let bytes = std::fs::read(e.path()).expect("read file");
                (bytes.len() as u64, crc32c::crc32c(&bytes))
            });
            (name, file)
        })
        .collect()
}

/// What differs between two [`dir_snapshot`]s, one line per name.
pub fn snapshot_diff(
    before: &BTreeMap<String, Option<(u64, u32)>>,
    after: &BTreeMap<String, Option<(u64, u32)>>,
) -> String {
    let mut out = String::new();
    for (name, b) in before {
        match after.get(name) {
            None => out += &format!("  deleted {name}\n"),
            Some(a) if a != b => out += &format!("  changed {name}: {b:?} -> {a:?}\n"),
            _ => {}
        }
    }
    for name in after.keys().filter(|n| !before.contains_key(*n)) {
        out += &format!("  created {name}\n");
    }
    out
}

/// Copies every regular file of `from` into `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("dir entry");
        if e.file_type().expect("file type").is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy file");
        }
    }
}

static PANICS: AtomicUsize = AtomicUsize::new(0);
static PANIC_MESSAGES: Mutex<Vec<String>> = Mutex::new(Vec::new());
static HOOK: Once = Once::new();

/// Installs (once) a panic hook that counts panics on every thread (background threads
/// included) and keeps their messages, instead of printing them.
pub fn install_panic_counter() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            let msg = format!("{info}");
            if let Ok(mut m) = PANIC_MESSAGES.lock() {
                if m.len() < 20 {
                    m.push(msg);
                }
            }
        }));
    });
}

/// Panics seen so far on any thread.
pub fn panic_count() -> usize {
    PANICS.load(Ordering::SeqCst)
}

/// The first panic messages seen.
pub fn panic_messages() -> Vec<String> {
    PANIC_MESSAGES.lock().map(|m| m.clone()).unwrap_or_default()
}

/// How one injection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Open or a read returned a well-formed error (or WAL recovery reported a drop).
    Detected,
    /// Nothing noticed and every read returned exactly the expected data.
    Harmless,
    /// The WAL was cut exactly at a record boundary: a valid shorter log, a prefix came back.
    SilentPrefix,
    /// The MANIFEST lost its tail (cut or zeroed to the end, which reads as a torn last
    /// edit): the database silently rolled back to an older state; every value returned was
    /// one written for its key, but newer ones are missing.
    Stale,
    /// A read returned a value that was not written, or missed a key (a failure).
    Wrong,
    /// An error of the wrong kind or without the file name/offset (a failure).
    BadError,
    /// A panic (a failure).
    Panic,
}

/// Counts per row (file type) of the campaign.
#[derive(Debug, Default, Clone)]
pub struct Row {
    /// Injections run.
    pub injections: u64,
    /// [`Verdict::Detected`].
    pub detected: u64,
    /// [`Verdict::Harmless`].
    pub harmless: u64,
    /// [`Verdict::SilentPrefix`].
    pub silent_prefix: u64,
    /// [`Verdict::Stale`].
    pub stale: u64,
    /// [`Verdict::Wrong`].
    pub wrong: u64,
    /// [`Verdict::BadError`].
    pub bad_errors: u64,
    /// [`Verdict::Panic`].
    pub panics: u64,
}

/// The campaign's table: one [`Row`] per file type, plus failure descriptions.
#[derive(Debug, Default)]
pub struct Tally {
    /// Rows by file type.
    pub rows: BTreeMap<&'static str, Row>,
    /// Kinds of injection run per file type.
    pub kinds: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
    /// Descriptions of the failures (wrong values, bad errors, panics).
    pub failures: Vec<String>,
}

impl Tally {
    /// Records one injection's verdict.
    pub fn add(&mut self, row: &'static str, kind: &'static str, v: Verdict) {
        let r = self.rows.entry(row).or_default();
        r.injections += 1;
        match v {
            Verdict::Detected => r.detected += 1,
            Verdict::Harmless => r.harmless += 1,
            Verdict::SilentPrefix => r.silent_prefix += 1,
            Verdict::Stale => r.stale += 1,
            Verdict::Wrong => r.wrong += 1,
            Verdict::BadError => r.bad_errors += 1,
            Verdict::Panic => r.panics += 1,
        }
        *self.kinds.entry(row).or_default().entry(kind).or_default() += 1;
    }

    /// The table as text.
    pub fn render(&self) -> String {
        let mut s = format!(
            "{:<22}{:>7}{:>9}{:>9}{:>8}{:>7}{:>7}{:>8}{:>7}  kinds\n",
            "file type",
            "inject",
            "detected",
            "harmless",
            "prefix",
            "stale",
            "wrong",
            "bad-err",
            "panic"
        );
        let mut total = Row::default();
        for (name, r) in &self.rows {
            let kinds: Vec<String> =
                self.kinds[name].iter().map(|(k, n)| format!("{k}:{n}")).collect();
            s += &format!(
                "{:<22}{:>7}{:>9}{:>9}{:>8}{:>7}{:>7}{:>8}{:>7}  {}\n",
                name,
                r.injections,
                r.detected,
                r.harmless,
                r.silent_prefix,
                r.stale,
                r.wrong,
                r.bad_errors,
                r.panics,
                kinds.join(" ")
            );
            total.injections += r.injections;
            total.detected += r.detected;
            total.harmless += r.harmless;
            total.silent_prefix += r.silent_prefix;
            total.stale += r.stale;
            total.wrong += r.wrong;
            total.bad_errors += r.bad_errors;
            total.panics += r.panics;
        }
        s += &format!(
            "{:<22}{:>7}{:>9}{:>9}{:>8}{:>7}{:>7}{:>8}{:>7}\n",
            "TOTAL",
            total.injections,
            total.detected,
            total.harmless,
            total.silent_prefix,
            total.stale,
            total.wrong,
            total.bad_errors,
            total.panics
        );
        s
    }
}

/// The layout of a pristine WAL: each record's `(start, end)` (first header to the end of its
/// last fragment) and every fragment boundary (header starts and payload ends).
pub fn wal_layout(bytes: &[u8]) -> (Vec<(u64, u64)>, Vec<u64>) {
    use talus::wal::{BLOCK_SIZE, FULL_TYPE, HEADER_SIZE, LAST_TYPE};
    let (mut records, mut bounds) = (Vec::new(), Vec::new());
    let (mut pos, mut start) = (0usize, None);
    while pos + HEADER_SIZE <= bytes.len() {
        let left = BLOCK_SIZE - pos % BLOCK_SIZE;
        if left < HEADER_SIZE {
            pos += left;
            continue;
        }
        let len = usize::from(u16::from_le_bytes([bytes[pos + 4], bytes[pos + 5]]));
        let ty = bytes[pos + 6];
        if ty == 0 {
            break;
        }
        bounds.push(pos as u64);
        start.get_or_insert(pos as u64);
        pos += HEADER_SIZE + len;
        bounds.push(pos as u64);
        if ty == FULL_TYPE || ty == LAST_TYPE {
            records.push((start.take().expect("record start"), pos as u64));
        }
    }
    (records, bounds)
}
