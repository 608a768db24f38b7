use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::fs::fault::{CrashMode, OpKind, SimFs};
use crate::fs::StdFs;

/// Appends random pieces (flushing and syncing now and then) through a direct writer on `fs`,
/// checking after every flush that the file holds exactly what was appended, and reading
/// random ranges back through a direct reader.
fn round_trip(fs: &dyn Fs, path: &Path, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = create(fs, path, true).unwrap();
    let mut want = Vec::new();
    for step in 0..60 {
        let n = [1, 7, 100, 4095, 4096, 4097, 9000, 70_000][rng.gen_range(0..8)];
        let piece: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
        w.append(&piece).unwrap();
        want.extend_from_slice(&piece);
        assert_eq!(w.size(), want.len() as u64);
        if step % 3 == 0 {
            if rng.gen_bool(0.5) {
                w.sync().unwrap();
            } else {
                w.flush().unwrap();
            }
            let r = open_random(fs, path, true).unwrap();
            assert_eq!(r.size(), want.len() as u64, "step {step}: the padding is cut");
            for _ in 0..20 {
                let off = rng.gen_range(0..want.len());
                let len = rng.gen_range(0..=(want.len() - off).min(20_000));
                let mut got = vec![0u8; len];
                r.read_exact_at(off as u64, &mut got).unwrap();
                assert_eq!(got, want[off..off + len], "step {step}: {len} bytes at {off}");
            }
            let mut past = [0u8; 2];
            let e = r.read_exact_at(want.len() as u64 - 1, &mut past).unwrap_err();
            assert!(e.to_string().contains("past the end"), "{e}");
        }
    }
    w.sync().unwrap();
    let all = crate::fs::read_all(fs, path).unwrap();
    assert_eq!(all, want);
}

#[test]
fn sim_fs_round_trip_with_alignment_checked() {
    for align in [4096, 512] {
        let fs = SimFs::new();
        fs.set_direct_io_alignment(align);
        fs.create_dir_all(Path::new("/d")).unwrap();
        for seed in 0..4 {
            round_trip(fs.as_ref(), Path::new("/d/f"), seed);
        }
    }
}

/// A direct file that records the (offset, length) of every read.
struct Recording(Box<dyn DirectReadFile>, std::sync::Arc<std::sync::Mutex<Vec<(u64, usize)>>>);

impl DirectReadFile for Recording {
    fn read_aligned(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.1.lock().unwrap().push((offset, buf.len()));
        self.0.read_aligned(offset, buf)
    }
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn alignment(&self) -> usize {
        self.0.alignment()
    }
}

#[test]
fn reads_use_the_files_alignment() {
    // A 100-byte read in the middle of a page: 512-byte sectors read one sector, 4 KiB ones a
    // page.
    for (align, want) in [(512usize, 512usize), (4096, 4096)] {
        let fs = SimFs::new();
        fs.set_direct_io_alignment(align);
        fs.create_dir_all(Path::new("/d")).unwrap();
        let mut w = create(fs.as_ref(), Path::new("/d/f"), true).unwrap();
        w.append(&[5u8; 10_000]).unwrap();
        w.sync().unwrap();
        let raw = fs.open_direct_read(Path::new("/d/f")).unwrap();
        assert_eq!(raw.alignment(), align);
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let r = DirectReader::new(
            Box::new(Recording(raw, std::sync::Arc::clone(&asked))),
            Path::new("/d/f"),
        );
        let mut got = [0u8; 100];
        r.read_exact_at(1100, &mut got).unwrap();
        assert_eq!(got, [5u8; 100]);
        assert_eq!(*asked.lock().unwrap(), vec![((1024 / want * want) as u64, want)]);
    }
    assert_eq!(usable_alignment(1), 512);
    assert_eq!(usable_alignment(512), 512);
    assert_eq!(usable_alignment(8192), DIRECT_IO_ALIGNMENT);
    assert_eq!(usable_alignment(3000), DIRECT_IO_ALIGNMENT);
}

#[test]
fn std_fs_round_trip_with_o_direct() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    round_trip(&StdFs, &path, 9);
    let raw = StdFs.open_direct_read(&path).unwrap();
    let a = raw.alignment();
    assert!(a.is_power_of_two() && (512..=4096).contains(&a), "{a}");
    // The real file has the exact length (no padding left behind).
    let n = std::fs::metadata(&path).unwrap().len();
    assert_eq!(std::fs::read(&path).unwrap().len() as u64, n);
}

#[test]
fn misaligned_requests_fail_like_the_kernel() {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let path = PathBuf::from("/d/f");
    let mut w = fs.create_direct_write(&path).unwrap();
    let mut page = AlignedBuf::new(4096);
    page.as_mut_slice().fill(7);
    w.write_aligned(0, page.as_slice()).unwrap();
    assert!(w.write_aligned(100, page.as_slice()).is_err(), "misaligned offset");
    assert!(w.write_aligned(0, &page.as_slice()[..100]).is_err(), "misaligned length");
    let mut big = AlignedBuf::new(8192);
    assert!(w.write_aligned(0, &big.as_mut_slice()[1..4097]).is_err(), "misaligned address");
    let r = fs.open_direct_read(&path).unwrap();
    let mut buf = AlignedBuf::new(8192);
    assert_eq!(r.read_aligned(0, buf.as_mut_slice()).unwrap(), 4096, "short at the end");
    assert!(r.read_aligned(512, buf.as_mut_slice()).is_err());
    let e = r.read_aligned(0, &mut buf.as_mut_slice()[..512]).unwrap_err();
    assert!(e.to_string().contains("not aligned"), "{e}");
}

#[test]
fn power_loss_keeps_the_synced_prefix_of_a_direct_file() {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let path = Path::new("/d/f");
    let mut w = create(fs.as_ref(), path, true).unwrap();
    let a: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
    w.append(&a).unwrap();
    w.sync().unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    // The next write rewrites the synced tail page; a power loss must still give back `a`.
    w.append(&[0xee; 3000]).unwrap();
    w.flush().unwrap();
    assert_eq!(fs.contents(path).unwrap().len(), 8000);
    let fs2 = fs.crash(CrashMode::DropAllUnsynced);
    assert_eq!(fs2.contents(path).unwrap(), a);
}

#[test]
fn direct_io_ops_are_counted_and_can_fail() {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let path = Path::new("/d/f");
    let mut w = create(fs.as_ref(), path, true).unwrap();
    fs.reset_op_counts();
    w.append(&[1; 10]).unwrap();
    assert_eq!(fs.op_counts().get(OpKind::Write), 0, "buffered");
    w.sync().unwrap();
    let c = fs.op_counts();
    assert_eq!((c.get(OpKind::Write), c.get(OpKind::Sync)), (2, 1), "write + set_len, sync");
    fs.fail_after(OpKind::Read, 1, std::io::ErrorKind::Other, true);
    let r = open_random(fs.as_ref(), path, true).unwrap();
    assert!(r.read_exact_at(0, &mut [0u8; 4]).is_err());
    let mut got = [0u8; 4];
    r.read_exact_at(0, &mut got).unwrap();
    assert_eq!(got, [1; 4]);
}

#[test]
fn unsupported_file_system_is_an_invalid_argument_naming_the_option() {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let lock = Path::new("/d/LOCK");
    drop(fs.create(lock).unwrap());
    check_supported(fs.as_ref(), lock, "use_direct_reads").unwrap();
    fs.set_direct_io_supported(false);
    let e = check_supported(fs.as_ref(), lock, "use_direct_reads").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("use_direct_reads") && e.to_string().contains("/d"), "{e}");
    assert!(create(fs.as_ref(), Path::new("/d/x"), true).is_err());
    assert!(!fs.exists(Path::new("/d/x")), "a refused direct create leaves nothing");
}
