//! `TableReader` over arbitrary file bytes (an in-memory `RandomAccessFile`): open, scan both
//! ways, point lookups, `verify_checksums`. No panic; every error is `Corruption`.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use talus::fs::RandomAccessFile;
use talus::sst::TableReader;

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
    let data = data.to_vec();
    let file = Arc::new(MemFile(data));
    let Some(r) = ok_or_corruption(TableReader::open(file, 1, "fuzz.sst".into(), None)) else {
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
});
