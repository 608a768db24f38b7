//! `ldb dump_blob --file=N.blob`: prints a blob file (`docs/format/blob.md`) the way RocksDB's
//! `blob_dump` tool does: its header, its footer, each record (offset, key size, value size,
//! key, stored value and, for a file written with compression, the raw value of each record
//! that decompresses: a value that did not shrink is stored as it is, which only its blob
//! index records) and a summary.
//!
//! Keys and values print as text, or as `0x` hex with `--key_hex`/`--value_hex`/`--hex`;
//! `--no_value` leaves the values out. The file is read on its own (no database is opened, so
//! `--db` is not needed). Every record's checksums are checked: damage ends the dump with
//! `Failed: Corruption: ... <file> at offset N` after the records before it were printed.

use std::path::Path;

use talus::blob::format::{
    BlobFooter, BlobHeader, RecordHeader, BLOB_FORMAT_VERSION, FOOTER_LEN, HEADER_LEN,
    RECORD_HEADER_LEN,
};
use talus::fs::{Fs, StdFs};
use talus::options::CompressionType;

use super::{Ctx, Fail};
use crate::fmt::write_bytes;

/// Totals for the summary.
#[derive(Default)]
struct Totals {
    records: u64,
    key_bytes: u64,
    blob_bytes: u64,
    raw_blob_bytes: u64,
}

pub(super) fn dump_blob(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let Some(file) = ctx.args.value("file").map(str::to_string) else {
        return Err(Fail::Msg("dump_blob needs --file=<blob file>".into()));
    };
    let (kh, vh, no_value) = (ctx.key_hex(), ctx.value_hex(), ctx.args.flag("no_value"));
    let path = Path::new(&file);
    let name = path.file_name().map_or(file.clone(), |n| n.to_string_lossy().into_owned());
    let corrupt = |at: u64, why: String| Fail::from(talus::Error::corruption(&name, at, why));
    let f = StdFs.open_random(path)?;
    let size = f.size();
    if size < (HEADER_LEN + FOOTER_LEN) as u64 {
        return Err(corrupt(0, format!("blob file truncated to {size} bytes")));
    }
    let header = BlobHeader::decode(&f.read_vec_at(0, HEADER_LEN)?).map_err(|e| corrupt(0, e))?;
    let out = &mut *ctx.out;
    writeln!(out, "Blob file header:")?;
    writeln!(out, "  Version          : {BLOB_FORMAT_VERSION}")?;
    writeln!(out, "  Compression      : {}", header.compression.name())?;
    let footer_at = size - FOOTER_LEN as u64;
    let footer = BlobFooter::decode(&f.read_vec_at(footer_at, FOOTER_LEN)?)
        .map_err(|e| corrupt(footer_at, e))?;
    writeln!(out, "Blob file footer:")?;
    writeln!(out, "  Blob count       : {}", footer.blob_count)?;
    writeln!(out, "  Blob bytes       : {}", footer.blob_bytes)?;
    let mut t = Totals::default();
    let mut at = HEADER_LEN as u64;
    while at < footer_at {
        if at + RECORD_HEADER_LEN as u64 > footer_at {
            return Err(corrupt(at, "blob record header runs into the footer".into()));
        }
        let h = RecordHeader::decode(&f.read_vec_at(at, RECORD_HEADER_LEN)?)
            .map_err(|e| corrupt(at, e))?;
        let body_at = at + RECORD_HEADER_LEN as u64;
        if body_at + h.body_len() > footer_at {
            return Err(corrupt(at, "blob record runs into the footer".into()));
        }
        let len = usize::try_from(h.body_len())
            .map_err(|_| corrupt(at, "blob record too large".into()))?;
        let body = f.read_vec_at(body_at, len)?;
        let (key, stored) = h.check_body(&body).map_err(|e| corrupt(at, e))?;
        writeln!(out, "Read record with offset {at:#x} ({at}):")?;
        writeln!(out, "  key size   : {}", h.key_len)?;
        writeln!(out, "  value size : {}", h.value_len)?;
        writeln!(out, "  value at   : {}", body_at + u64::from(h.key_len))?;
        out.write_all(b"  key        : ")?;
        write_bytes(out, key, kh)?;
        out.write_all(b"\n")?;
        // The writer stores a value that does not shrink uncompressed (its blob index says
        // so; the file does not), so a value that does not decompress is shown as stored.
        let raw = match header.compression {
            CompressionType::None => None,
            c => talus::sst::compression::decompress(c, stored).ok(),
        };
        if !no_value {
            out.write_all(b"  blob       : ")?;
            write_bytes(out, stored, vh)?;
            out.write_all(b"\n")?;
            if let Some(raw) = &raw {
                out.write_all(b"  raw blob   : ")?;
                write_bytes(out, raw, vh)?;
                out.write_all(b"\n")?;
            }
        }
        t.records += 1;
        t.key_bytes += u64::from(h.key_len);
        t.blob_bytes += u64::from(h.value_len);
        t.raw_blob_bytes += raw.as_ref().map_or(u64::from(h.value_len), |r| r.len() as u64);
        at = body_at + h.body_len();
    }
    writeln!(out, "Summary:")?;
    writeln!(out, "  total records: {}", t.records)?;
    writeln!(out, "  total key size: {}", t.key_bytes)?;
    writeln!(out, "  total blob size: {}", t.blob_bytes)?;
    if header.compression != CompressionType::None {
        writeln!(out, "  total raw blob size: {}", t.raw_blob_bytes)?;
    }
    if t.records != footer.blob_count {
        return Err(corrupt(
            footer_at,
            format!(
                "the footer counts {} records, the file holds {}",
                footer.blob_count, t.records
            ),
        ));
    }
    Ok(())
}
