//! `TableReader` over arbitrary file bytes (an in-memory `RandomAccessFile`): open, scan both
//! ways, point lookups, `verify_checksums`. No panic; every error is `Corruption`. Each input is
//! opened twice: with no block cache, and with a tiny one holding the index and filter blocks
//! (and the partitions of a partitioned index or filter, format version 3; seed
//! `partitioned-*.sst`), so both placements of every decoder run.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use talus::cache::{Cache, LruCache};
use talus::fs::RandomAccessFile;
use talus::sst::reader::TableReaderOptions;
use talus::sst::{Block, TableReader};

struct MemFile(Vec<u8>);

impl RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> talus::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.0.get(o..o.checked_add(buf.len())?))
            .ok_or_else(|| talus::Error::corruption("fuzz.sst", offset, "read past end"))?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

fn ok_or_corruption<T>(r: talus::Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(e.is_corruption(), "{e}");
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let cache: Arc<dyn Cache<Block>> = Arc::new(LruCache::new(4096, 0, false));
    for opts in [
        TableReaderOptions::default(),
        TableReaderOptions {
            block_cache: Some(cache),
            cache_index_and_filter_blocks: true,
            pin_top_level_index_and_filter: true,
            ..Default::default()
        },
    ] {
        check(data, opts);
    }
});

fn check(data: &[u8], opts: TableReaderOptions) {
    let file = Arc::new(MemFile(data.to_vec()));
    let Some(r) = ok_or_corruption(TableReader::open_with(file, 1, "fuzz.sst".into(), opts)) else {
        return;
    };
    let r = Arc::new(r);
    let _ = ok_or_corruption(r.verify_checksums());
    let mut keys = Vec::new();
    let mut it = r.iter(false);
    it.seek_to_first();
    while it.valid() && keys.len() < 100_000 {
        keys.push(it.key().to_vec());
        it.next();
    }
    let _ = ok_or_corruption(it.status());
    it.seek_to_last();
    let mut n = 0;
    while it.valid() && n < 100_000 {
        it.prev();
        n += 1;
    }
    let _ = ok_or_corruption(it.status());
    for k in keys.iter().take(64) {
        let user_key = &k[..k.len().saturating_sub(8)];
        let _ = ok_or_corruption(r.get(user_key, u64::MAX >> 8, false));
        it.seek(k);
    }
    let _ = ok_or_corruption(it.status());
}
