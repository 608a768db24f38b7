//! WAL replay at open, in memory only, and the [`RecoveryReport`] of what it dropped.
//!
//! Who calls: `open.rs` and `open_commit.rs`, after the MANIFEST is loaded. [`replay_wals`]
//! reads the WALs numbered at or above the MANIFEST's log number (ascending), applies the
//! recovery mode to every bad stretch, and hands each good write batch, in order, to a sink; it
//! opens no file for writing. A read-only open's sink is [`Memtables`] (the replayed data stays
//! in memory and serves reads). A read-write open replays twice: first with a sink that does
//! nothing, to find out before writing anything whether the open can succeed (and what it
//! drops); then, in the commit, with a sink that fills a memtable and writes it to L0 whenever it
//! is full, so recovery needs one write buffer of memory, not the whole WAL. The second pass must
//! reproduce the first exactly (`open_commit.rs` checks).
//!
//! What is dropped is measured, not guessed: for a stretch the log reader could not read, its
//! bytes; for everything after a point-in-time stop, the rest of that WAL and every later WAL,
//! read through to count the intact write batches and operations that were not replayed.
//! Semantics per mode: `docs/design/recovery.md`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename::{corrupt_wal_name, corrupt_wal_path, wal_name, wal_path};
use crate::fs::Fs;
use crate::key::SequenceNumber;
use crate::options::WalRecoveryMode;
use crate::wal::{LogReader, PredecessorWal, ReadOutcome};

/// How a WAL lost data at recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalLossKind {
    /// The last WAL ends inside a record (a write torn by a crash): nothing follows it.
    TornTail,
    /// Damage with readable data after it (a bad checksum, a hole, an undecodable batch).
    Damaged,
    /// Not replayed at all: an earlier WAL was damaged and point-in-time recovery stopped
    /// there, so replaying this one would leave a hole.
    NotReplayed,
    /// Not replayed: the WAL before it replayed to less than this WAL recorded of it when it
    /// was started (its unsynced tail was lost to a power loss, or the whole file), so
    /// replaying this one would leave a hole. `reason` says what was missing.
    PredecessorCut,
}

/// What recovery dropped from one WAL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalLoss {
    /// The WAL's number.
    pub wal: u64,
    /// How it lost data.
    pub kind: WalLossKind,
    /// File offset where the dropped bytes begin (the first bad stretch).
    pub offset: u64,
    /// What was wrong there (empty for [`WalLossKind::NotReplayed`]).
    pub reason: String,
    /// Bytes of the file that were not replayed.
    pub bytes: u64,
    /// Intact write batches among those bytes (not replayed).
    pub batches: u64,
    /// Operations in those batches.
    pub operations: u64,
    /// The name the WAL is kept under after a read-write open (`NNNNNN.log.corrupt`), if it
    /// is kept; `None` for a torn tail and after a read-only open (the file is left as it is).
    pub kept_as: Option<String>,
}

impl WalLoss {
    /// True if the WAL holds data that is lost unless it is kept (anything but a torn tail).
    pub fn needs_keeping(&self) -> bool {
        self.kind != WalLossKind::TornTail
    }
}

/// What WAL recovery dropped when the database was opened (empty: nothing). Available as
/// [`crate::Db::recovery_report`] and, as text, as the property `talus.recovery-report`; the
/// same text goes to the LOG.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The recovery mode that applied.
    pub mode: WalRecoveryMode,
    /// One entry per WAL that lost data, in WAL order.
    pub wals: Vec<WalLoss>,
}

impl RecoveryReport {
    /// True if recovery replayed every byte of every WAL.
    pub fn is_empty(&self) -> bool {
        self.wals.is_empty()
    }
    /// True if the only loss (if any) is a torn tail of the last WAL: what a crash in the
    /// middle of a write leaves, no acknowledged write behind it.
    pub fn only_torn_tail(&self) -> bool {
        self.wals.iter().all(|w| w.kind == WalLossKind::TornTail)
    }
    /// Bytes not replayed, over all WALs.
    pub fn bytes_dropped(&self) -> u64 {
        self.wals.iter().map(|w| w.bytes).sum()
    }
    /// Intact write batches not replayed, over all WALs.
    pub fn batches_dropped(&self) -> u64 {
        self.wals.iter().map(|w| w.batches).sum()
    }
    /// Operations in the batches not replayed, over all WALs.
    pub fn operations_dropped(&self) -> u64 {
        self.wals.iter().map(|w| w.operations).sum()
    }
}

impl fmt::Display for RecoveryReport {
    /// One line per WAL; empty when nothing was dropped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, w) in self.wals.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let name = wal_name(w.wal);
            match w.kind {
                WalLossKind::TornTail => write!(
                    f,
                    "{name}: torn tail at offset {} ({}): dropped {} bytes of an incomplete \
                     record",
                    w.offset, w.reason, w.bytes
                )?,
                WalLossKind::Damaged => write!(
                    f,
                    "{name}: damaged at offset {} ({}), {}: dropped {} bytes holding {} intact \
                     write batches ({} operations) besides the damaged records",
                    w.offset,
                    w.reason,
                    self.mode.name(),
                    w.bytes,
                    w.batches,
                    w.operations
                )?,
                WalLossKind::NotReplayed => write!(
                    f,
                    "{name}: not replayed after the damage in an earlier WAL ({}): dropped {} \
                     bytes holding {} write batches ({} operations)",
                    self.mode.name(),
                    w.bytes,
                    w.batches,
                    w.operations
                )?,
                WalLossKind::PredecessorCut => write!(
                    f,
                    "{name}: not replayed because {} ({}): dropped {} bytes holding {} write \
                     batches ({} operations)",
                    w.reason,
                    self.mode.name(),
                    w.bytes,
                    w.batches,
                    w.operations
                )?,
            }
            match &w.kept_as {
                Some(k) => write!(f, "; kept as {k}")?,
                None if w.needs_keeping() => write!(f, "; the file is left as it is")?,
                None => {}
            }
        }
        Ok(())
    }
}

/// A WAL to replay: its number and whether it is already named `NNNNNN.log.corrupt` (an
/// earlier open renamed it, then crashed before its new MANIFEST was current).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WalFile {
    pub number: u64,
    pub corrupt_name: bool,
}

impl WalFile {
    pub fn path(&self, dir: &Path) -> PathBuf {
        if self.corrupt_name {
            corrupt_wal_path(dir, self.number)
        } else {
            wal_path(dir, self.number)
        }
    }
}

/// What a replay found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Replayed {
    /// The largest sequence number seen (at least the MANIFEST's).
    pub last_sequence: SequenceNumber,
    /// What was dropped.
    pub report: RecoveryReport,
}

/// Replays `wals` (ascending) under `mode`, handing every good batch to `sink` in order, with
/// the number of the WAL it was read from. Reads only. `Err` for IO errors, for damage the mode does not accept, and for the sink's errors.
///
/// A WAL started at a memtable switch begins with a [`PredecessorWal`] record: what the WAL
/// before it held at the switch (Talus syncs that WAL lazily, see `write.rs`). If the
/// predecessor replayed to less (its unsynced tail, or the whole file, was lost to a power
/// loss), this WAL's writes came after a hole: point-in-time recovery stops before it, the
/// strict modes fail, `SkipAnyCorruptedRecords` replays it anyway. A predecessor numbered below
/// `log_number` (the MANIFEST's) was flushed, so nothing is owed.
pub(crate) fn replay_wals(
    fs: &dyn Fs,
    dir: &Path,
    wals: &[WalFile],
    mode: WalRecoveryMode,
    last_sequence: SequenceNumber,
    log_number: u64,
    sink: &mut dyn FnMut(u64, &WriteBatch) -> Result<()>,
) -> Result<Replayed> {
    let mut out = Replayed { last_sequence, report: RecoveryReport { mode, wals: vec![] } };
    let mut stopped = false;
    // The WALs replayed so far: (number, last sequence replayed, file size). A predecessor
    // record is compared with the WAL it names, which is the one replayed last unless a failed
    // switch left an empty WAL in between (`write.rs` removes those; one a crash kept holds
    // nothing, so it hides no write).
    let mut replayed: Vec<(u64, SequenceNumber, u64)> = Vec::new();
    // WALs at the end that hold nothing (empty, or preallocated zeros only: the WAL the flush
    // thread made ahead for the next memtable switch, `write.rs`) have nothing to replay, and
    // the WAL before them is the last one: its torn tail is a tail, not damage in the middle.
    let mut end = wals.len();
    while end > 0 && holds_nothing(fs, &wals[end - 1].path(dir), &wals[end - 1])? {
        end -= 1;
    }
    let wals = &wals[..end];
    for (i, wal) in wals.iter().enumerate() {
        let path = wal.path(dir);
        let name = wal_name(wal.number);
        let mut reader = LogReader::new_wal(fs.open_sequential(&path)?, name.clone());
        if stopped {
            let (batches, operations) = count_intact(&mut reader)?;
            let bytes = fs.file_size(&path)?;
            out.report.wals.push(loss(wal, WalLossKind::NotReplayed, 0, String::new(), bytes));
            if let Some(l) = out.report.wals.last_mut() {
                (l.batches, l.operations) = (batches, operations);
            }
            continue;
        }
        let is_last = i + 1 == wals.len();
        // A SkipAnyCorruptedRecords loss accumulates here over the WAL's bad stretches.
        let mut skipped: Option<WalLoss> = None;
        let mut wal_last: SequenceNumber = 0;
        loop {
            let (offset, bytes, reason, at_tail) = match reader.read_record()? {
                ReadOutcome::Eof => break,
                ReadOutcome::Predecessor(p, _) => {
                    let prev = replayed.iter().rev().find(|r| r.0 == p.number).copied();
                    let Some(cut) = predecessor_cut(&p, prev, log_number) else { continue };
                    match mode {
                        WalRecoveryMode::SkipAnyCorruptedRecords => continue,
                        WalRecoveryMode::PointInTimeRecovery => {
                            let (batches, operations) = count_intact(&mut reader)?;
                            let size = fs.file_size(&path)?;
                            let mut l = loss(wal, WalLossKind::PredecessorCut, 0, cut, size);
                            (l.batches, l.operations) = (batches, operations);
                            out.report.wals.push(l);
                            stopped = true;
                            break;
                        }
                        _ => return Err(Error::corruption(wal_name(p.number), p.size, cut)),
                    }
                }
                ReadOutcome::Record(data, offset) => {
                    let len = data.len() as u64;
                    match WriteBatch::from_data(data, &name, offset) {
                        Ok(batch) => {
                            sink(wal.number, &batch)?;
                            let last =
                                batch.sequence() + u64::from(batch.count()).saturating_sub(1);
                            out.last_sequence = out.last_sequence.max(last);
                            wal_last = wal_last.max(last);
                            continue;
                        }
                        Err(e)
                            if matches!(
                                mode,
                                WalRecoveryMode::PointInTimeRecovery
                                    | WalRecoveryMode::SkipAnyCorruptedRecords
                            ) =>
                        {
                            (offset, len, format!("bad write batch: {e}"), false)
                        }
                        Err(e) => return Err(e),
                    }
                }
                ReadOutcome::Corrupt { offset, bytes, reason, at_tail } => {
                    (offset, bytes, reason, at_tail)
                }
            };
            let torn_tail = at_tail && is_last;
            match mode {
                WalRecoveryMode::AbsoluteConsistency => {
                    return Err(Error::corruption(&name, offset, reason));
                }
                WalRecoveryMode::TolerateCorruptedTailRecords if !torn_tail => {
                    return Err(Error::corruption(&name, offset, reason));
                }
                WalRecoveryMode::SkipAnyCorruptedRecords if !torn_tail => {
                    let l = skipped
                        .get_or_insert_with(|| loss(wal, WalLossKind::Damaged, offset, reason, 0));
                    l.bytes += bytes;
                    continue;
                }
                _ if torn_tail => {
                    out.report.wals.push(loss(wal, WalLossKind::TornTail, offset, reason, bytes));
                    break;
                }
                // Point in time: stop here; everything after is dropped, and measured.
                _ => {
                    let (batches, operations) = count_intact(&mut reader)?;
                    let size = fs.file_size(&path)?;
                    let mut l = loss(
                        wal,
                        WalLossKind::Damaged,
                        offset,
                        reason,
                        size.saturating_sub(offset),
                    );
                    (l.batches, l.operations) = (batches, operations);
                    out.report.wals.push(l);
                    stopped = true;
                    break;
                }
            }
        }
        out.report.wals.extend(skipped);
        if !stopped {
            replayed.push((wal.number, wal_last, fs.file_size(&path)?));
        }
    }
    Ok(out)
}

/// Why the WAL whose predecessor record is `p` follows a hole, if it does: the predecessor
/// `prev` (the WAL `p` names, if it was replayed) ends below what `p` recorded, or a
/// predecessor that was still live (numbered at or above `log_number`) is missing.
fn predecessor_cut(
    p: &PredecessorWal,
    prev: Option<(u64, SequenceNumber, u64)>,
    log_number: u64,
) -> Option<String> {
    let pred = wal_name(p.number);
    match prev {
        Some((n, last, size)) if n == p.number => {
            if last < p.last_seq {
                Some(format!(
                    "{pred} replayed to sequence {last}, but held up to {} when this WAL was \
                     started (its unsynced tail was lost)",
                    p.last_seq
                ))
            } else if size < p.size {
                Some(format!(
                    "{pred} has {size} bytes, but had {} when this WAL was started (its unsynced \
                     tail was lost)",
                    p.size
                ))
            } else {
                None
            }
        }
        _ if p.number >= log_number => Some(format!(
            "{pred}, still needed, is missing (lost before its directory entry was synced)"
        )),
        _ => None,
    }
}

fn loss(wal: &WalFile, kind: WalLossKind, offset: u64, reason: String, bytes: u64) -> WalLoss {
    WalLoss {
        wal: wal.number,
        kind,
        offset,
        reason,
        bytes,
        batches: 0,
        operations: 0,
        kept_as: wal.corrupt_name.then(|| corrupt_wal_name(wal.number)),
    }
}

/// True if the WAL at `path` holds no record, damaged or not (it is empty, or zeros only).
pub(crate) fn holds_nothing(fs: &dyn Fs, path: &Path, wal: &WalFile) -> Result<bool> {
    let mut reader = LogReader::new_wal(fs.open_sequential(path)?, wal_name(wal.number));
    Ok(matches!(reader.read_record()?, ReadOutcome::Eof))
}

/// Reads `reader` to its end: the intact write batches left and their operations.
fn count_intact(reader: &mut LogReader) -> Result<(u64, u64)> {
    let (mut batches, mut ops) = (0u64, 0u64);
    loop {
        match reader.read_record()? {
            ReadOutcome::Eof => return Ok((batches, ops)),
            ReadOutcome::Corrupt { .. } | ReadOutcome::Predecessor(..) => {}
            ReadOutcome::Record(data, offset) => {
                if let Ok(b) = WriteBatch::from_data(data, "", offset) {
                    batches += 1;
                    ops += u64::from(b.count());
                }
            }
        }
    }
}
