//! The data commands: `put`, `get`, `delete`, `deleterange`, `scan`, `dump`, `load`,
//! `get_property`, `compact`.
//!
//! `get`, `scan` and `dump` take `--decode_blob_index` (RocksDB's ldb flag): a value that lives
//! in a blob file prints as its blob index (`[blob ref] file:N offset:O size:S compression: C`)
//! instead of being read.
//!
//! Each decodes and checks its input first, then opens the database, so bad input never
//! touches it. Scans run through [`talus::RawIter`] with the range as read bounds and
//! `fill_cache = false`, writing each pair straight into the buffered output.

use std::borrow::Cow;

use talus::{ColumnFamily, Db, ReadOptions, WriteBatch, WriteOptions};

use super::{Ctx, Fail};
use crate::fmt::{decode_input, write_blob_index, write_bytes};

/// Puts per `WriteBatch` in `load`.
const LOAD_BATCH: u32 = 1000;
/// The separator `dump` prints and `load` reads.
const DELIM: &[u8] = b" ==> ";

pub(super) fn put(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let (key, value) = (ctx.key(0)?, decode_input(ctx.arg(1), ctx.value_hex())?);
    let (db, cf) = ctx.open_family()?;
    db.put_cf(&cf, key, value)?;
    writeln!(ctx.out, "OK")?;
    Ok(())
}

pub(super) fn get(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let (key, hex) = (ctx.key(0)?, ctx.value_hex());
    if ctx.args.flag("decode_blob_index") {
        return get_blob_index(ctx, &key, hex);
    }
    let (db, cf) = ctx.open_family()?;
    match db.get_cf(&cf, &key)? {
        Some(v) => {
            write_bytes(ctx.out, &v, hex)?;
            writeln!(ctx.out)?;
            Ok(())
        }
        None => Err(Fail::Msg("Get failed: NotFound: ".into())),
    }
}

/// `get --decode_blob_index`: the key's blob index when its value lives in a blob file (the
/// value is not read), else its value.
fn get_blob_index(ctx: &mut Ctx<'_>, key: &[u8], hex: bool) -> Result<(), Fail> {
    let (db, cf) = ctx.open_family()?;
    let mut it =
        db.raw_iter_cf(&cf, &ReadOptions { fill_cache: false, ..ReadOptions::default() })?;
    it.seek(key);
    if !it.valid() || it.key() != key {
        it.status()?;
        return Err(Fail::Msg("Get failed: NotFound: ".into()));
    }
    write_value(ctx.out, &it, true, hex)?;
    it.status()?;
    writeln!(ctx.out)?;
    Ok(())
}

/// Writes the iterator's current value: its decoded blob index if `decode_blob_index` and the
/// value lives in a blob file (not read then), else the value (hex if `hex`).
fn write_value(
    out: &mut dyn std::io::Write,
    it: &talus::RawIter,
    decode_blob_index: bool,
    hex: bool,
) -> std::io::Result<()> {
    match it.blob_index().filter(|_| decode_blob_index) {
        Some(index) => write_blob_index(out, index),
        None => write_bytes(out, it.value(), hex),
    }
}

pub(super) fn delete(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let key = ctx.key(0)?;
    let (db, cf) = ctx.open_family()?;
    db.delete_cf(&cf, key)?;
    writeln!(ctx.out, "OK")?;
    Ok(())
}

pub(super) fn delete_range(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let (begin, end) = (ctx.key(0)?, ctx.key(1)?);
    if begin > end {
        // RocksDB's ldb: "Failed: Invalid argument: end key comes before start key".
        return Err(Fail::Msg("Invalid argument: end key comes before start key".into()));
    }
    let (db, cf) = ctx.open_family()?;
    db.delete_range_cf(&cf, begin, end)?;
    writeln!(ctx.out, "OK")?;
    Ok(())
}

/// The `--from`/`--to`/`--max_keys` range of `scan` and `dump`.
struct Range {
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
    max_keys: Option<u64>,
}

impl Range {
    fn parse(ctx: &Ctx<'_>) -> Result<Range, Fail> {
        Ok(Range {
            from: ctx.key_opt("from")?,
            to: ctx.key_opt("to")?,
            max_keys: ctx.args.number("max_keys")?,
        })
    }

    /// Calls `f(iterator)` at every live key in `[from, to)`, at most `max_keys` times;
    /// returns the count. `f` reads the key and (lazily) the value.
    fn for_each(
        &self,
        db: &Db,
        cf: &ColumnFamily,
        mut f: impl FnMut(&talus::RawIter) -> Result<(), Fail>,
    ) -> Result<u64, Fail> {
        let opts = ReadOptions {
            iterate_lower_bound: self.from.clone(),
            iterate_upper_bound: self.to.clone(),
            fill_cache: false,
            ..ReadOptions::default()
        };
        let mut it = db.raw_iter_cf(cf, &opts)?;
        match &self.from {
            Some(k) => it.seek(k),
            None => it.seek_to_first(),
        }
        let mut n = 0u64;
        while it.valid() && self.max_keys.is_none_or(|m| n < m) {
            if self.to.as_deref().is_some_and(|to| it.key() >= to) {
                break;
            }
            f(&it)?;
            n += 1;
            it.next();
        }
        it.status()?;
        Ok(n)
    }
}

pub(super) fn scan(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let range = Range::parse(ctx)?;
    let (kh, vh, no_value) = (ctx.key_hex(), ctx.value_hex(), ctx.args.flag("no_value"));
    let decode = ctx.args.flag("decode_blob_index");
    let (db, cf) = ctx.open_family()?;
    let out = &mut *ctx.out;
    range.for_each(&db, &cf, |it| {
        write_bytes(out, it.key(), kh)?;
        if !no_value {
            out.write_all(b" : ")?;
            write_value(out, it, decode, vh)?;
        }
        out.write_all(b"\n")?;
        Ok(())
    })?;
    Ok(())
}

pub(super) fn dump(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let range = Range::parse(ctx)?;
    let (kh, vh, count_only) = (ctx.key_hex(), ctx.value_hex(), ctx.args.flag("count_only"));
    let decode = ctx.args.flag("decode_blob_index");
    let (db, cf) = ctx.open_family()?;
    let out = &mut *ctx.out;
    let n = range.for_each(&db, &cf, |it| {
        if !count_only {
            write_bytes(out, it.key(), kh)?;
            out.write_all(DELIM)?;
            write_value(out, it, decode, vh)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })?;
    writeln!(out, "Keys in range: {n}")?;
    Ok(())
}

/// What `load` made of one input line.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    /// A `key ==> value` pair, decoded (borrowed from the line unless hex-decoded).
    Pair(Cow<'a, [u8]>, Cow<'a, [u8]>),
    /// A line `dump` prints that is not data (`Keys in range: N`).
    Ignored,
    /// Anything else.
    Bad,
}

/// Parses a `dump` line (without its newline): split at the first ` ==> `, hex-decode as told.
fn parse_line(line: &[u8], key_hex: bool, value_hex: bool) -> Result<Line<'_>, Fail> {
    let Some(pos) = line.windows(DELIM.len()).position(|w| w == DELIM) else {
        return Ok(if line.starts_with(b"Keys in range:") { Line::Ignored } else { Line::Bad });
    };
    let (key, rest) = line.split_at(pos);
    let value = rest.get(DELIM.len()..).unwrap_or(&[]);
    let decode = |b, hex: bool| -> Result<Cow<'_, [u8]>, Fail> {
        if hex {
            Ok(Cow::Owned(decode_input(&String::from_utf8_lossy(b), true)?))
        } else {
            Ok(Cow::Borrowed(b))
        }
    };
    Ok(Line::Pair(decode(key, key_hex)?, decode(value, value_hex)?))
}

pub(super) fn load(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let (kh, vh) = (ctx.key_hex(), ctx.value_hex());
    let wo = WriteOptions { disable_wal: ctx.args.flag("disable_wal"), ..WriteOptions::default() };
    let (db, cf) = ctx.open_family()?;
    let mut batch = WriteBatch::new();
    let mut line = Vec::new();
    let mut bad_lines = 0u64;
    loop {
        line.clear();
        let n = ctx
            .input
            .read_until(b'\n', &mut line)
            .map_err(|e| Fail::Msg(format!("reading stdin: {e}")))?;
        if n == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        match parse_line(&line, kh, vh)? {
            Line::Pair(k, v) => batch.put_cf(&cf, k, v),
            Line::Ignored => {}
            Line::Bad => bad_lines += 1,
        }
        if batch.count() >= LOAD_BATCH {
            db.write(std::mem::take(&mut batch), &wo)?;
        }
    }
    if !batch.is_empty() {
        db.write(batch, &wo)?;
    }
    if ctx.args.flag("compact") {
        db.compact_range_cf(&cf, None, None)?;
    }
    if bad_lines > 0 {
        writeln!(ctx.out, "Warning: {bad_lines} bad lines ignored.")?;
    }
    Ok(())
}

/// `get_property NAME`: of the family `--column_family` names (RocksDB's ldb asks
/// `GetProperty` with its column family handle).
pub(super) fn get_property(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let name = ctx.arg(0).to_string();
    let (db, cf) = ctx.open_family()?;
    match db.property_cf(&cf, &name) {
        Some(v) => {
            writeln!(ctx.out, "{name}: {v}")?;
            Ok(())
        }
        None => Err(Fail::Msg(format!("property {name} not found"))),
    }
}

pub(super) fn compact(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let (from, to) = (ctx.key_opt("from")?, ctx.key_opt("to")?);
    let (db, cf) = ctx.open_family()?;
    db.compact_range_cf(&cf, from.as_deref(), to.as_deref())?;
    Ok(())
}

/// `create_column_family NAME` (RocksDB's ldb command): with the database's options.
pub(super) fn create_column_family(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let name = ctx.arg(0).to_string();
    let db = ctx.open(|_| {})?;
    if db.cf_handle(&name).is_some() {
        return Err(Fail::Msg(format!("Invalid argument: Column family already exists: {name}")));
    }
    db.create_column_family(&name, &talus::Options::default())?;
    writeln!(ctx.out, "OK")?;
    Ok(())
}

/// `drop_column_family NAME` (RocksDB's ldb command).
pub(super) fn drop_column_family(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let name = ctx.arg(0).to_string();
    let db = ctx.open(|_| {})?;
    let cf = db
        .cf_handle(&name)
        .ok_or_else(|| Fail::Msg(format!("Column family: {name} doesn't exist")))?;
    db.drop_column_family(&cf)?;
    writeln!(ctx.out, "OK")?;
    Ok(())
}

/// `checkpoint --checkpoint_dir=DIR`: `Db::create_checkpoint` (RocksDB's ldb command of the
/// name). The directory is checked before the database is opened, so a refused run changes
/// nothing.
pub(super) fn checkpoint(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let Some(dir) = ctx.args.value("checkpoint_dir").map(std::path::PathBuf::from) else {
        return Err(Fail::Msg("checkpoint needs --checkpoint_dir=<new directory>".into()));
    };
    if dir.exists() {
        return Err(Fail::Msg(format!(
            "checkpoint directory {} exists: a checkpoint goes into a new directory",
            dir.display()
        )));
    }
    ctx.open(|_| {})?.create_checkpoint(&dir)?;
    writeln!(ctx.out, "OK")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fmt::write_hex;

    fn pair<'a>(k: &'a [u8], v: &'a [u8]) -> Line<'a> {
        Line::Pair(Cow::Borrowed(k), Cow::Borrowed(v))
    }

    #[test]
    fn load_parses_what_dump_prints() {
        assert_eq!(parse_line(b"a ==> 1", false, false).unwrap(), pair(b"a", b"1"));
        assert_eq!(parse_line(b"b b ==> x ==> y", false, false).unwrap(), pair(b"b b", b"x ==> y"));
        assert_eq!(parse_line(b" ==> ", false, false).unwrap(), pair(b"", b""));
        assert_eq!(
            parse_line(b"\xff\x00 ==> \x01", false, false).unwrap(),
            pair(b"\xff\0", b"\x01")
        );
        assert_eq!(parse_line(b"Keys in range: 3", false, false).unwrap(), Line::Ignored);
        assert_eq!(parse_line(b"no delimiter", false, false).unwrap(), Line::Bad);
        assert_eq!(parse_line(b"", false, false).unwrap(), Line::Bad);
        assert_eq!(parse_line(b"0x6B31 ==> 0xFF00", true, true).unwrap(), pair(b"k1", b"\xff\0"));
        assert_eq!(parse_line(b"0x6B31 ==> v", true, false).unwrap(), pair(b"k1", b"v"));
        assert!(parse_line(b"k1 ==> 0x00", true, true).is_err());
    }

    #[test]
    fn hex_dump_lines_round_trip_random_bytes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for _ in 0..200 {
            let k: Vec<u8> = (0..rng.gen_range(0..20)).map(|_| rng.gen()).collect();
            let v: Vec<u8> = (0..rng.gen_range(0..40)).map(|_| rng.gen()).collect();
            let mut line = Vec::new();
            write_hex(&mut line, &k, true).unwrap();
            line.extend_from_slice(DELIM);
            write_hex(&mut line, &v, true).unwrap();
            assert_eq!(parse_line(&line, true, true).unwrap(), pair(&k, &v));
        }
    }
}
