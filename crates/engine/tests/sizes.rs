//! Keys and values too large for the format's 32-bit lengths are refused with
//! `InvalidArgument`, as RocksDB refuses them, at `WriteBatch::put` (reported by `Db::write`),
//! `Db::put` and `SstFileWriter::put`; before, `as u32` truncated them (a 4 GiB key was encoded
//! as an empty one) and the memtable panicked on longer ones.
//!
//! The huge inputs are never allocated: they are slices of an anonymous read-only mapping
//! reserved with `MAP_NORESERVE` (untouched pages of it cost nothing), and the checks run on
//! their length before a byte is copied. If a check were missing, the copy would try to
//! allocate gigabytes; run under `ulimit -v` that fails fast instead of swapping.

use talus::{Db, Error, Options, SstFileWriter, WriteBatch, WriteOptions};

/// `len` zero bytes that are never backed by memory unless read.
struct Reserved {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Reserved {
    fn new(len: usize) -> Option<Reserved> {
        // SAFETY: an anonymous private mapping with no address hint; checked for failure.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Reserved { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is `len` readable bytes and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

fn too_large(r: talus::Result<()>, what: &str) {
    match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("too large"), "{what}: {m}"),
        other => panic!("{what}: want InvalidArgument, got {other:?}"),
    }
}

#[test]
fn keys_and_values_of_4_gib_are_refused_without_being_copied() {
    let Some(huge) = Reserved::new((4usize << 30) + 4096) else {
        println!("skipped: cannot reserve 4 GiB of address space here");
        return;
    };
    let gib4 = &huge.bytes()[..1usize << 32];
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { create_if_missing: true, ..Options::default() };
    let db = Db::open(dir.path(), opts.clone()).unwrap();

    too_large(db.put(gib4, b"v"), "4 GiB key");
    too_large(db.put(b"k", gib4), "4 GiB value");
    too_large(db.put(&gib4[..3 << 30], &gib4[..(1 << 30) + 100]), "3 GiB key + 1 GiB value");
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.put(b"k", gib4);
    b.put(b"z", b"26");
    assert_eq!(b.count(), 2, "the refused put was not added");
    too_large(db.write(b, &WriteOptions::default()), "a batch holding a refused put");
    let mut b = WriteBatch::new();
    b.delete_range(b"a", gib4);
    too_large(db.write(b, &WriteOptions::default()), "delete_range with a 4 GiB end");
    assert_eq!(db.get(b"a").unwrap(), None, "a refused batch writes nothing");

    let mut w = SstFileWriter::open(dir.path().join("ext.sst"), &opts).unwrap();
    w.put(b"a", b"1").unwrap();
    too_large(w.put(b"b", gib4), "SstFileWriter value");
    too_large(w.put(gib4, b""), "SstFileWriter key");
    w.put(b"c", b"3").unwrap();
    assert_eq!(w.entries(), 2);

    // The database is unharmed.
    db.put(b"k", b"v").unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
