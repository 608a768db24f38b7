//! The expected-state oracle of `talus stress`: one fixed-size slot per key in a file outside
//! the database directory, mirrored in memory, plus a lock per key. Without `--expected_state`
//! the slots live in memory only ([`ExpectedState::in_memory`], RocksDB's
//! `AnonExpectedStateManager`): the run verifies itself but leaves no file, and a crash loses
//! the state with the process.
//!
//! Before anything is created, a run reads an existing file with [`inspect`] (read-only: its
//! header and length), so a wrong or foreign file is refused before the database is touched;
//! [`remove`] deletes a file only after the same check says it is an expected-state file.
//!
//! # File layout (little-endian)
//! ```text
//! offset 0   magic "TALUSXS1"        8 bytes
//! offset 8   max_key                 u64
//! offset 16  mode of the last run    u64 (Mode: 0 sync, 1 no sync, 2 WAL disabled)
//! offset 24  value_size_max          u64 (fixed when the file is made: values depend on it)
//! offset 32  reserved                32 bytes of zeros
//! offset 64  slot[k] for k in 0..max_key, u64 each (see [`Slot`])
//! ```
//! Every change is written with one 8-byte `pwrite` (`FileExt::write_at`) at once, so it reaches
//! the OS page cache before the next step and survives `kill -9` of the process (not a power
//! loss: the file is never fsynced; the crash test kills processes only).
//!
//! # Protocol (who calls what)
//! The workload threads in `ops.rs` take the key's lock ([`ExpectedState::lock`]), call
//! [`ExpectedState::begin`] (pending bit set, written to the file) *before* the database write
//! is issued, and [`ExpectedState::commit`] (version + 1, pending cleared) after it is
//! acknowledged. A key that is not pending therefore says exactly what the database must hold;
//! a pending key may hold its old state or the pending one. Verification (`verify.rs`) runs with
//! no writer active and rewrites slots with [`ExpectedState::store`].

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A scratch directory of the tool's beside the expected-state file `expected`
/// (`FILE.suffix`), or, with the expected state in memory, one under the system's temporary
/// directory named after `suffix` and this process.
pub fn scratch_beside(expected: &Option<std::path::PathBuf>, suffix: &str) -> std::path::PathBuf {
    match expected {
        Some(e) => {
            let mut name = e.as_os_str().to_os_string();
            name.push(".");
            name.push(suffix);
            std::path::PathBuf::from(name)
        }
        None => std::env::temp_dir().join(format!("talus-stress-{suffix}-{}", std::process::id())),
    }
}

/// The file's first 8 bytes.
const MAGIC: &[u8; 8] = b"TALUSXS1";
/// Bytes before slot 0.
const HEADER: u64 = 64;

/// What durability the last run that wrote to the database promised, and so how strictly the
/// next verification may judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every write used `sync=true`.
    Sync,
    /// Writes used `sync=false` (a process crash must still lose nothing).
    NoSync,
    /// Writes used `disable_wal=true`: only flushed data survives a crash.
    NoWal,
}

impl Mode {
    fn to_u64(self) -> u64 {
        match self {
            Mode::Sync => 0,
            Mode::NoSync => 1,
            Mode::NoWal => 2,
        }
    }
    fn from_u64(v: u64) -> Option<Mode> {
        Some(match v {
            0 => Mode::Sync,
            1 => Mode::NoSync,
            2 => Mode::NoWal,
            _ => return None,
        })
    }
    /// The name printed in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::NoSync => "nosync",
            Mode::NoWal => "nowal",
        }
    }
}

/// One key's expected state, packed in a `u64`: bits 0..32 the version of the latest
/// acknowledged write, bit 32 whether that write was a put (else the key is absent), bit 33 the
/// pending bit, bit 34 whether the pending write is a put. A pending write has version + 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(pub u64);

const EXISTS: u64 = 1 << 32;
const PENDING: u64 = 1 << 33;
const PENDING_EXISTS: u64 = 1 << 34;

impl Slot {
    /// A slot with no pending write.
    pub fn new(version: u32, exists: bool) -> Slot {
        Slot(u64::from(version) | if exists { EXISTS } else { 0 })
    }
    /// Version of the latest acknowledged write (0: never written).
    pub fn version(self) -> u32 {
        self.0 as u32
    }
    /// Whether the latest acknowledged write left a value.
    pub fn exists(self) -> bool {
        self.0 & EXISTS != 0
    }
    /// Whether a write was issued and not (yet) acknowledged.
    pub fn pending(self) -> bool {
        self.0 & PENDING != 0
    }
    /// Whether the pending write is a put.
    pub fn pending_exists(self) -> bool {
        self.0 & PENDING_EXISTS != 0
    }
    /// The state as seen by a reader: `Some(version)` for a value, `None` for absent.
    pub fn value(self) -> Option<u32> {
        self.exists().then_some(self.version())
    }
    /// The state the pending write would leave (meaningful only if `pending()`).
    pub fn pending_value(self) -> Option<u32> {
        self.pending_exists().then_some(self.version().wrapping_add(1))
    }
    /// This slot with a pending write of kind `exists` marked.
    pub fn with_pending(self, exists: bool) -> Slot {
        let base = self.0 & !(PENDING | PENDING_EXISTS);
        Slot(base | PENDING | if exists { PENDING_EXISTS } else { 0 })
    }
    /// The slot after the pending write is acknowledged.
    pub fn committed(self) -> Slot {
        Slot::new(self.version().wrapping_add(1), self.pending_exists())
    }
}

/// What the header of an expected-state file says (see [`inspect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The `--max_key` the file was made for.
    pub max_key: u64,
    /// The mode of the last run that wrote.
    pub mode: Mode,
    /// The `value_size_max` fixed when the file was made.
    pub value_size_max: usize,
}

/// Checks `header` (the first [`HEADER`] bytes of a file of `len` bytes at `shown`).
fn parse_header(header: &[u8], len: u64, shown: &str) -> Result<Header, String> {
    if len < HEADER || header.get(..8) != Some(MAGIC.as_slice()) {
        return Err(format!("{shown} ({len} bytes) is not a talus stress expected-state file"));
    }
    let word = |at: usize| {
        header.get(at..at + 8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_le_bytes)
    };
    let max_key = word(8);
    if max_key == 0 || max_key > 1 << 28 || len != HEADER + 8 * max_key {
        return Err(format!(
            "{shown} is {len} bytes, expected {} for its max_key {max_key} (truncated?)",
            HEADER.saturating_add(max_key.saturating_mul(8))
        ));
    }
    let m = word(16);
    let mode =
        Mode::from_u64(m).ok_or_else(|| format!("{shown} at offset 16: unknown mode {m}"))?;
    let vmax = word(24);
    let value_size_max = usize::try_from(vmax)
        .ok()
        .filter(|&v| v <= 1 << 20)
        .ok_or_else(|| format!("{shown} at offset 24: bad value_size_max {vmax}"))?;
    Ok(Header { max_key, mode, value_size_max })
}

/// Reads the expected-state file at `path` without changing it: `Ok(None)` if it does not
/// exist or is empty (a run would start it afresh), its header if it is a whole expected-state
/// file, `Err` for anything else (a directory, another program's file, a truncated file).
pub fn inspect(path: &Path) -> Result<Option<Header>, String> {
    let shown = path.display().to_string();
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("opening expected state {shown}: {e}")),
    };
    let meta = file.metadata().map_err(|e| format!("stat {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file (an expected-state file was wanted)"));
    }
    if meta.len() == 0 {
        return Ok(None);
    }
    let mut header = [0u8; HEADER as usize];
    let n = file.read_at(&mut header, 0).map_err(|e| format!("reading {shown}: {e}"))?;
    parse_header(&header[..n], meta.len(), &shown).map(Some)
}

/// Deletes the expected-state file at `path` (a missing one is fine), only if [`inspect`] finds
/// it is one: another program's file under that name is refused, never deleted.
pub fn remove(path: &Path) -> Result<(), String> {
    inspect(path)?;
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("removing {}: {e}", path.display())),
    }
}

/// The expected state of every key in `0..max_key`, kept in memory and (unless made with
/// [`ExpectedState::in_memory`]) in its file.
pub struct ExpectedState {
    file: Option<File>,
    slots: Vec<AtomicU64>,
    locks: Vec<Mutex<()>>,
    mode: Mode,
    value_size_max: usize,
}

impl ExpectedState {
    /// Opens the state file at `path`, creating it (every key absent, version 0) if it does not
    /// exist, with `value_size_max`). An existing file must have been made for the same
    /// `max_key`; its own `value_size_max` wins (values written earlier depend on it).
    pub fn open(path: &Path, max_key: u64, value_size_max: usize) -> Result<ExpectedState, String> {
        let shown = path.display();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("opening expected state {shown}: {e}"))?;
        let len = file.metadata().map_err(|e| format!("stat {shown}: {e}"))?.len();
        let n = usize::try_from(max_key).map_err(|_| format!("max_key {max_key} is too large"))?;
        if len == 0 {
            let mut header = [0u8; HEADER as usize];
            header[..8].copy_from_slice(MAGIC);
            header[8..16].copy_from_slice(&max_key.to_le_bytes());
            header[24..32].copy_from_slice(&(value_size_max as u64).to_le_bytes());
            file.write_all_at(&header, 0).map_err(|e| format!("writing {shown}: {e}"))?;
            file.set_len(HEADER + 8 * max_key).map_err(|e| format!("sizing {shown}: {e}"))?;
            let mut e = ExpectedState::in_memory(max_key, value_size_max)?;
            e.file = Some(file);
            return Ok(e);
        }
        let mut header = [0u8; HEADER as usize];
        let got = file
            .read_at(&mut header, 0)
            .map_err(|e| format!("{shown}: reading the header: {e}"))?;
        let h = parse_header(&header[..got], len, &shown.to_string())?;
        if h.max_key != max_key {
            return Err(format!(
                "{shown} was made for --max_key={}, not {max_key}: use the same value",
                h.max_key
            ));
        }
        let mut body = vec![0u8; n * 8];
        file.read_exact_at(&mut body, HEADER)
            .map_err(|e| format!("{shown}: reading slots: {e}"))?;
        let slots = body
            .chunks_exact(8)
            .map(|c| AtomicU64::new(u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))))
            .collect();
        let locks = (0..n).map(|_| Mutex::new(())).collect();
        Ok(ExpectedState {
            file: Some(file),
            slots,
            locks,
            mode: h.mode,
            value_size_max: h.value_size_max,
        })
    }

    /// A state for `max_key` keys, every key absent, kept in memory only (no file): the state of
    /// a run without `--expected_state`, which starts from an empty database.
    pub fn in_memory(max_key: u64, value_size_max: usize) -> Result<ExpectedState, String> {
        let n = usize::try_from(max_key).map_err(|_| format!("max_key {max_key} is too large"))?;
        Ok(ExpectedState {
            file: None,
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            locks: (0..n).map(|_| Mutex::new(())).collect(),
            mode: Mode::Sync,
            value_size_max,
        })
    }

    /// Number of keys.
    pub fn max_key(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Largest value filler: fixed for the file's life, since values are checked against it.
    pub fn value_size_max(&self) -> usize {
        self.value_size_max
    }

    /// The mode of the last run that wrote (as read at open, or as last set).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Records the mode of the run about to write.
    pub fn set_mode(&mut self, mode: Mode) -> Result<(), String> {
        if let Some(f) = &self.file {
            f.write_all_at(&mode.to_u64().to_le_bytes(), 16)
                .map_err(|e| format!("writing the expected state's mode: {e}"))?;
        }
        self.mode = mode;
        Ok(())
    }

    /// Key `k`'s slot. Stable while the caller holds `lock(k)` (or no writer runs).
    pub fn get(&self, k: u64) -> Slot {
        Slot(self.slots.get(k as usize).map_or(0, |s| s.load(Ordering::Acquire)))
    }

    /// Takes key `k`'s lock: no other thread writes `k` until the guard drops.
    pub fn lock(&self, k: u64) -> MutexGuard<'_, ()> {
        let m = self.locks.get(k as usize).unwrap_or_else(|| panic!("key {k} out of range"));
        // A poisoned lock only means another worker panicked; the run is failing anyway.
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks a write of kind `exists` to `k` as pending (caller holds `lock(k)`).
    pub fn begin(&self, k: u64, exists: bool) -> Result<(), String> {
        self.store(k, self.get(k).with_pending(exists))
    }

    /// Records the pending write to `k` as acknowledged (caller holds `lock(k)`).
    pub fn commit(&self, k: u64) -> Result<(), String> {
        self.store(k, self.get(k).committed())
    }

    /// Overwrites `k`'s slot, in memory and in the file.
    pub fn store(&self, k: u64, slot: Slot) -> Result<(), String> {
        let Some(s) = self.slots.get(k as usize) else {
            return Err(format!("key {k} is outside the expected state"));
        };
        s.store(slot.0, Ordering::Release);
        let Some(f) = &self.file else { return Ok(()) };
        f.write_all_at(&slot.0.to_le_bytes(), HEADER + 8 * k)
            .map_err(|e| format!("writing the expected state of key {k}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_bits() {
        let s = Slot::new(7, true);
        assert_eq!((s.version(), s.exists(), s.pending()), (7, true, false));
        let p = s.with_pending(false);
        assert!(p.pending() && !p.pending_exists());
        assert_eq!(p.value(), Some(7));
        assert_eq!(p.pending_value(), None);
        assert_eq!(p.committed(), Slot::new(8, false));
        let p = Slot::new(8, false).with_pending(true);
        assert_eq!(p.pending_value(), Some(9));
        assert_eq!(p.committed(), Slot::new(9, true));
        assert_eq!(Slot::new(u32::MAX, true).version(), u32::MAX);
    }

    #[test]
    fn state_survives_reopen_and_checks_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exp");
        {
            let mut e = ExpectedState::open(&path, 100, 7).unwrap();
            assert_eq!(e.get(5), Slot(0));
            e.begin(5, true).unwrap();
            e.commit(5).unwrap();
            e.begin(6, true).unwrap();
            e.set_mode(Mode::NoWal).unwrap();
        }
        let e = ExpectedState::open(&path, 100, 50).unwrap();
        assert_eq!(e.value_size_max(), 7, "the file's value_size_max wins");
        assert_eq!(e.get(5), Slot::new(1, true));
        assert!(e.get(6).pending());
        assert_eq!(e.mode(), Mode::NoWal);
        assert!(ExpectedState::open(&path, 101, 7).err().unwrap().contains("max_key=100"));
        std::fs::write(&path, b"garbage-garbage-garbage").unwrap();
        assert!(ExpectedState::open(&path, 100, 7).err().unwrap().contains("not a talus"));
    }

    #[test]
    fn truncated_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exp");
        drop(ExpectedState::open(&path, 10, 7).unwrap());
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(HEADER + 8 * 9).unwrap();
        assert!(ExpectedState::open(&path, 10, 7).err().unwrap().contains("truncated"));
    }

    #[test]
    fn inspect_reads_only_and_remove_deletes_only_an_expected_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exp");
        assert_eq!(inspect(&path).unwrap(), None);
        assert!(!path.exists(), "inspect created the file");
        drop(ExpectedState::open(&path, 10, 7).unwrap());
        let before = std::fs::read(&path).unwrap();
        let h = inspect(&path).unwrap().unwrap();
        assert_eq!((h.max_key, h.mode, h.value_size_max), (10, Mode::Sync, 7));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, b"mine").unwrap();
        assert!(remove(&notes).unwrap_err().contains("not a talus"));
        assert_eq!(std::fs::read(&notes).unwrap(), b"mine");
        assert!(inspect(dir.path()).unwrap_err().contains("not a regular file"));
        remove(&path).unwrap();
        assert!(!path.exists());
        remove(&path).unwrap();
    }

    #[test]
    fn in_memory_state_works_without_a_file() {
        let mut e = ExpectedState::in_memory(10, 7).unwrap();
        e.begin(3, true).unwrap();
        e.commit(3).unwrap();
        e.set_mode(Mode::NoSync).unwrap();
        assert_eq!(e.get(3), Slot::new(1, true));
        assert_eq!(e.mode(), Mode::NoSync);
        assert!(e.file.is_none());
    }
}
