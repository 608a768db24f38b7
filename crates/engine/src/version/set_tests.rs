//! Tests for [`VersionSet`]: create / apply / recover round trips against a model, torn and
//! corrupt MANIFESTs, bad CURRENT files, failed MANIFEST writes, and live-file tracking.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::{Rng, SeedableRng};

use super::*;
use crate::fs::{FileLock, RandomAccessFile, SequentialFile, StdFs, WritableFile};
use crate::key::{InternalKey, ValueKind};
use crate::version::FileMetaData;

/// StdFs whose MANIFEST appends and syncs fail while `fail` is set.
struct FlakyFs {
    fail: Arc<AtomicBool>,
}

struct FlakyFile {
    inner: Box<dyn WritableFile>,
    fail: Arc<AtomicBool>,
}

impl FlakyFile {
    fn check(&self) -> Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(Error::io("writing MANIFEST", std::io::Error::other("injected")));
        }
        Ok(())
    }
}

impl WritableFile for FlakyFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.check()?;
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.check()?;
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.check()?;
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl Fs for FlakyFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let inner = StdFs.create(path)?;
        let is_manifest = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("MAN"));
        if is_manifest {
            return Ok(Box::new(FlakyFile { inner, fail: Arc::clone(&self.fail) }));
        }
        Ok(inner)
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        StdFs.open_random(path)
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        StdFs.open_sequential(path)
    }
    fn exists(&self, path: &Path) -> bool {
        StdFs.exists(path)
    }
    fn list_dir(&self, dir: &Path) -> Result<Vec<String>> {
        StdFs.list_dir(dir)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        StdFs.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        StdFs.rename(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        StdFs.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        StdFs.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        StdFs.sync_dir(dir)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        StdFs.file_size(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        StdFs.lock(path)
    }
}

fn std_fs() -> Arc<dyn Fs> {
    Arc::new(StdFs)
}

fn file(number: u64, lo: &[u8], hi: &[u8], seq: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 1000 + number,
        smallest: InternalKey::new(lo, seq, ValueKind::Put),
        largest: InternalKey::new(hi, seq, ValueKind::Delete),
        smallest_seq: seq,
        largest_seq: seq,
        num_entries: 10,
        num_deletions: 1,
        oldest_blob_file_number: 0,
        reader: Default::default(),
    }
}

fn add(level: usize, f: FileMetaData) -> VersionEdit {
    VersionEdit { new_files: vec![(level, f)], ..Default::default() }
}

/// (level, number) of every file, in the version's order.
fn shape(v: &Version) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    for (level, files) in v.files.iter().enumerate() {
        out.extend(files.iter().map(|f| (level, f.number)));
    }
    out
}

fn current_content(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("CURRENT")).unwrap()
}

#[test]
fn create_writes_manifest_and_current() {
    let dir = tempfile::tempdir().unwrap();
    let vs = VersionSet::create(dir.path(), std_fs(), 7).unwrap();
    assert_eq!(current_content(dir.path()), "MANIFEST-000001\n");
    assert_eq!((vs.manifest_file_number(), vs.next_file_number()), (1, 2));
    assert_eq!((vs.last_sequence(), vs.log_number()), (0, 0));
    drop(vs);
    // The first record is exactly the documented creation edit.
    let path = dir.path().join("MANIFEST-000001");
    let mut r = LogReader::new(StdFs.open_sequential(&path).unwrap(), "m".into());
    let ReadOutcome::Record(payload, 0) = r.read_record().unwrap() else { panic!() };
    let edit = VersionEdit::decode(&payload, "m", 0).unwrap();
    let want = VersionEdit {
        comparator: Some(BYTEWISE_COMPARATOR.into()),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..Default::default()
    };
    assert_eq!(edit, want);
    assert!(VersionSet::create(dir.path(), std_fs(), 7).is_err(), "must not clobber a DB");
}

#[test]
fn random_edits_survive_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut vs = VersionSet::create(dir.path(), std_fs(), 4).unwrap();
    // Model: file number -> level.
    let mut model: BTreeMap<u64, usize> = BTreeMap::new();
    for round in 0..60 {
        let mut edit = VersionEdit::default();
        let live: Vec<(u64, usize)> = model.iter().map(|(&n, &l)| (n, l)).collect();
        for &(n, l) in live.iter().filter(|_| rng.gen_range(0..4) == 0) {
            edit.deleted_files.push((l, n));
            model.remove(&n);
        }
        for _ in 0..rng.gen_range(0..3) {
            let n = vs.new_file_number();
            let level = rng.gen_range(0..4);
            let k = (n as u32).to_be_bytes();
            edit.new_files.push((level, file(n, &k, &k, round)));
            model.insert(n, level);
        }
        if rng.gen_range(0..5) == 0 {
            edit.log_number = Some(vs.new_file_number());
        }
        vs.set_last_sequence(vs.last_sequence() + rng.gen_range(0..100));
        vs.log_and_apply(edit).unwrap();
        if round % 20 == 19 {
            let before = (shape(&vs.current()), vs.last_sequence(), vs.log_number());
            let next = vs.next_file_number();
            drop(vs);
            vs = VersionSet::recover(dir.path(), std_fs(), 4).unwrap();
            assert_eq!((shape(&vs.current()), vs.last_sequence(), vs.log_number()), before);
            assert_eq!(vs.manifest_file_number(), next, "the new MANIFEST takes the next number");
            assert_eq!(vs.next_file_number(), next + 1);
            let name = format!("MANIFEST-{next:06}\n");
            assert_eq!(current_content(dir.path()), name);
        }
        let mut got: Vec<(u64, usize)> =
            shape(&vs.current()).iter().map(|&(l, n)| (n, l)).collect();
        got.sort_unstable();
        assert_eq!(got, model.iter().map(|(&n, &l)| (n, l)).collect::<Vec<_>>());
    }
}

#[test]
fn levels_are_ordered_and_metadata_survives() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create(dir.path(), std_fs(), 3).unwrap();
    let mut edit = VersionEdit::default();
    edit.new_files.push((0, file(10, b"a", b"z", 5)));
    edit.new_files.push((0, file(11, b"a", b"z", 9)));
    edit.new_files.push((0, file(12, b"a", b"z", 9)));
    edit.new_files.push((1, file(13, b"m", b"p", 3)));
    edit.new_files.push((1, file(14, b"a", b"c", 3)));
    vs.mark_file_number_used(14);
    vs.log_and_apply(edit).unwrap();
    assert_eq!(shape(&vs.current()), vec![(0, 12), (0, 11), (0, 10), (1, 14), (1, 13)]);
    let before = vs.current();
    drop(vs);
    let vs = VersionSet::recover(dir.path(), std_fs(), 3).unwrap();
    assert_eq!(vs.current().files, before.files);
}

#[test]
fn torn_manifest_tail_is_ignored_but_other_damage_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create(dir.path(), std_fs(), 3).unwrap();
    vs.mark_file_number_used(9);
    vs.log_and_apply(add(1, file(8, b"a", b"b", 1))).unwrap();
    let after_first = shape(&vs.current());
    vs.log_and_apply(add(1, file(9, b"c", b"d", 2))).unwrap();
    drop(vs);
    let manifest = dir.path().join("MANIFEST-000001");
    let full = std::fs::read(&manifest).unwrap();

    // Cut inside the last record: recovery keeps the state before it.
    std::fs::write(&manifest, &full[..full.len() - 5]).unwrap();
    let vs = VersionSet::recover(dir.path(), std_fs(), 3).unwrap();
    assert_eq!(shape(&vs.current()), after_first);
    drop(vs);

    // A flipped byte in the first record (not at the tail): Corruption naming the MANIFEST.
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000001\n").unwrap();
    let mut bad = full.clone();
    bad[10] ^= 0x40;
    std::fs::write(&manifest, &bad).unwrap();
    match VersionSet::recover(dir.path(), std_fs(), 3) {
        Err(Error::Corruption { file, offset: 0, .. }) => {
            assert!(file.ends_with("MANIFEST-000001"))
        }
        other => panic!("expected corruption, got {:?}", other.err()),
    }
}

#[test]
fn bad_current_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = VersionSet::recover(dir.path(), std_fs(), 3).err().unwrap();
    assert!(matches!(err, Error::NotFound(_)), "{err}");

    drop(VersionSet::create(dir.path(), std_fs(), 3).unwrap());
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000042\n").unwrap();
    let err = VersionSet::recover(dir.path(), std_fs(), 3).err().unwrap();
    assert!(err.is_corruption() && err.to_string().contains("MANIFEST-000042"), "{err}");

    for garbled in ["MANIFEST-000001", "000001.log\n", "", "MANIFEST-\n", "\u{0}\u{1}"] {
        std::fs::write(dir.path().join("CURRENT"), garbled).unwrap();
        let err = VersionSet::recover(dir.path(), std_fs(), 3).err().unwrap();
        assert!(err.is_corruption() && err.to_string().contains("CURRENT"), "{err}");
    }
}

/// A database whose MANIFEST holds file 7 at L1, then `bad` appended by hand. Returns the dir
/// and the offset of the appended record.
fn manifest_with_extra_edit(bad: &VersionEdit) -> (tempfile::TempDir, u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create(dir.path(), std_fs(), 3).unwrap();
    vs.mark_file_number_used(7);
    vs.log_and_apply(add(1, file(7, b"a", b"b", 1))).unwrap();
    drop(vs);
    let manifest = dir.path().join("MANIFEST-000001");
    let old = std::fs::read(&manifest).unwrap();
    let mut f = StdFs.create(&manifest).unwrap();
    f.append(&old).unwrap();
    let mut w = LogWriter::new(f); // continues after the existing bytes
    let mut record = Vec::new();
    bad.encode(&mut record);
    w.add_record(&record).unwrap();
    w.sync().unwrap();
    (dir, old.len() as u64)
}

#[test]
fn inconsistent_edits_in_a_manifest_are_corruption() {
    let cases = [
        (add(2, file(7, b"x", b"y", 1)), "already live"),
        (VersionEdit { deleted_files: vec![(1, 99)], ..Default::default() }, "no such file"),
        (VersionEdit { deleted_files: vec![(2, 7)], ..Default::default() }, "at level 1"),
        // A family's level count is its options' (not recorded): the MANIFEST may name any
        // level below the most there may be.
        (add(64, file(8, b"x", b"y", 1)), "only 64 levels"),
    ];
    for (edit, what) in cases {
        let (dir, offset) = manifest_with_extra_edit(&edit);
        match VersionSet::recover(dir.path(), std_fs(), 3) {
            Err(Error::Corruption { file, offset: o, detail }) => {
                assert!(file.ends_with("MANIFEST-000001"), "{file}");
                assert_eq!(o, offset, "offset of the bad record");
                assert!(detail.contains(what), "{detail}");
            }
            other => panic!("expected corruption, got {:?}", other.err()),
        }
    }
    // A level beyond the caller's count loads (the version keeps it); giving the family fewer
    // levels than that is refused, more is taken.
    let (dir, _) = manifest_with_extra_edit(&add(5, file(8, b"x", b"y", 1)));
    let mut vs = VersionSet::recover(dir.path(), std_fs(), 3).unwrap();
    assert_eq!(vs.current().num_levels(), 6);
    assert!(matches!(vs.set_family_levels(0, 5), Err(Error::InvalidArgument(_))));
    vs.set_family_levels(0, 7).unwrap();
    assert_eq!(vs.current().num_levels(), 7);
    assert_eq!(vs.current().level_files(5).len(), 1);
    drop(vs);
    // A foreign comparator is refused with a clear message.
    let foreign =
        VersionEdit { comparator: Some("rocksdb.ReverseComparator".into()), ..Default::default() };
    let (dir, _) = manifest_with_extra_edit(&foreign);
    let err = VersionSet::recover(dir.path(), std_fs(), 3).err().unwrap();
    assert!(err.to_string().contains("rocksdb.ReverseComparator"), "{err}");
}

#[test]
fn failed_manifest_write_changes_nothing_and_rolls_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let fail = Arc::new(AtomicBool::new(false));
    let fs: Arc<dyn Fs> = Arc::new(FlakyFs { fail: Arc::clone(&fail) });
    let mut vs = VersionSet::create(dir.path(), Arc::clone(&fs), 3).unwrap();
    vs.mark_file_number_used(20);
    vs.log_and_apply(add(1, file(5, b"a", b"b", 1))).unwrap();
    let before = shape(&vs.current());

    fail.store(true, Ordering::SeqCst);
    vs.set_last_sequence(50);
    assert!(vs.log_and_apply(add(1, file(6, b"c", b"d", 2))).is_err());
    assert_eq!(shape(&vs.current()), before);
    // Still failing: rolling to a new MANIFEST fails too, and still nothing changes.
    assert!(vs.log_and_apply(add(1, file(6, b"c", b"d", 2))).is_err());
    assert_eq!(shape(&vs.current()), before);
    assert_eq!(vs.manifest_file_number(), 1);
    assert_eq!(current_content(dir.path()), "MANIFEST-000001\n");

    fail.store(false, Ordering::SeqCst);
    vs.log_and_apply(add(1, file(7, b"e", b"f", 3))).unwrap();
    assert_ne!(vs.manifest_file_number(), 1, "a fresh MANIFEST was started");
    let name = format!("MANIFEST-{:06}\n", vs.manifest_file_number());
    assert_eq!(current_content(dir.path()), name);
    let after = shape(&vs.current());
    assert_eq!(after, vec![(1, 5), (1, 7)]);
    drop(vs);
    let vs = VersionSet::recover(dir.path(), fs, 3).unwrap();
    assert_eq!(shape(&vs.current()), after);
    assert_eq!(vs.last_sequence(), 50);
}

#[test]
fn rejected_edits_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create(dir.path(), std_fs(), 3).unwrap();
    let manifest_size = vs.manifest_file_size();
    let unallocated = add(1, file(vs.next_file_number(), b"a", b"b", 1));
    let reason = |r: Result<()>| match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    assert!(reason(vs.log_and_apply(unallocated)).contains("never allocated"));
    vs.mark_file_number_used(3);
    let missing = VersionEdit { deleted_files: vec![(1, 3)], ..Default::default() };
    assert!(reason(vs.log_and_apply(missing)).contains("no such file"));
    assert!(reason(vs.log_and_apply(add(3, file(3, b"a", b"b", 1)))).contains("only 3 levels"));
    let future_log = VersionEdit { log_number: Some(100), ..Default::default() };
    assert!(reason(vs.log_and_apply(future_log)).contains("log number 100"));
    assert_eq!(vs.manifest_file_size(), manifest_size, "nothing was written");
    vs.log_and_apply(add(1, file(3, b"a", b"b", 1))).unwrap();
    assert!(reason(vs.log_and_apply(add(2, file(3, b"a", b"b", 1)))).contains("already live"));
    // A move between levels in one edit is fine.
    let mv = VersionEdit {
        deleted_files: vec![(1, 3)],
        new_files: vec![(2, file(3, b"a", b"b", 1))],
        ..Default::default()
    };
    vs.log_and_apply(mv).unwrap();
    assert_eq!(shape(&vs.current()), vec![(2, 3)]);
    assert!(vs.manifest_file_size() > manifest_size);
}

#[test]
fn live_files_include_versions_held_by_readers() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create(dir.path(), std_fs(), 3).unwrap();
    vs.mark_file_number_used(9);
    vs.log_and_apply(add(0, file(5, b"a", b"b", 1))).unwrap();
    let held = vs.current();
    let compaction = VersionEdit {
        deleted_files: vec![(0, 5)],
        new_files: vec![(1, file(6, b"a", b"b", 1))],
        ..Default::default()
    };
    vs.log_and_apply(compaction).unwrap();
    let want: HashSet<u64> = [5, 6].into_iter().collect();
    assert_eq!(vs.live_files(), want);
    drop(held);
    assert_eq!(vs.live_files(), [6].into_iter().collect());
    vs.log_and_apply(VersionEdit::default()).unwrap();
    assert_eq!(vs.versions.len(), 1, "dead versions are pruned");
}

#[test]
fn version_set_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<VersionSet>();
}
