//! Range scans on the primary key or a secondary index ([`Scan`]), point reads of several
//! primary keys at once (`get_many`), and `first_pk`.
//!
//! A scan reads one engine iterator bounded to the entries whose leading index columns lie
//! between [`Scan::from`] and [`Scan::to`] (prefixes, both inclusive). Secondary entries are
//! decoded to `(index columns, primary key)`; the row is then fetched by primary key (a counted
//! point read) unless the requested columns are all in the entry (covering); those fetches go
//! in batches through the engine's `multi_get` (4 rows, doubling to 64, never past the scan's
//! limit). Rows are handed to the caller's visitor one at a time, so a scan of a whole table
//! holds one row (or one batch) in memory.
//!
//! Consistency: a scan reads at one sequence number. Scans that fetch rows read iterator and
//! rows from one engine snapshot (the caller's, or one taken here), so an entry always finds
//! its row. A transaction's scans ([`crate::Transaction::scan_range`]) read its snapshot and do
//! not see its own uncommitted writes. No table lock is taken.

use std::sync::atomic::Ordering;

use crate::error::{Result, TableError};
use crate::keycodec::{
    decode_values, encode_value, prefix_successor, put_index_id, KeyCol, INDEX_ID_LEN,
};
use crate::meta::{IndexMeta, IndexState, TableMeta, PRIMARY};
use crate::rowcodec::{decode_columns, decode_row};
use crate::schema::{Direction, Row, Value};
use crate::shared::index_range;
use crate::storage::{Cursor, Range, Storage, Walk};
use crate::table::Table;
use crate::write::pk_key;

/// What a range scan reads; see [`Table::scan_range`].
///
/// ```
/// use talus_table::*;
/// // Entries of index `by_v` whose first column is between 10 and 20 (inclusive), highest
/// // first, returning only `id` and `v`, at most 5.
/// let s = Scan {
///     from: &[Value::I32(10)],
///     to: &[Value::I32(20)],
///     dir: Direction::Reverse,
///     columns: Some(&["id", "v"]),
///     limit: 5,
///     ..Scan::index("by_v")
/// };
/// # let _ = s;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Scan<'a> {
    /// `"PRIMARY"` or the name of a ready secondary index.
    pub index: &'a str,
    /// Lower bound: entries whose leading index columns are `>=` these values (a prefix of the
    /// index columns; empty: from the first entry).
    pub from: &'a [Value],
    /// Upper bound: entries whose leading index columns are `<=` these values (a prefix;
    /// empty: to the last entry). `from == to` reads exactly the entries with that prefix.
    pub to: &'a [Value],
    /// Ascending or descending index order.
    pub dir: Direction,
    /// The columns to return, in this order (`None`: whole rows). When they are all in a
    /// secondary index's entries (index columns + primary key), rows are not fetched.
    pub columns: Option<&'a [&'a str]>,
    /// At most this many rows (the visitor can also stop the scan earlier).
    pub limit: usize,
}

impl<'a> Scan<'a> {
    /// A forward scan of every entry of `index`, returning whole rows.
    pub fn index(index: &'a str) -> Scan<'a> {
        Scan {
            index,
            from: &[],
            to: &[],
            dir: Direction::Forward,
            columns: None,
            limit: usize::MAX,
        }
    }
}

/// Decodes the primary key values from their encoding (without index id), checking that the
/// encoding is exactly consumed.
fn decode_pk(m: &TableMeta, enc: &[u8]) -> Result<Vec<Value>> {
    let mut pos = 0;
    let v = decode_values(enc, &mut pos, &m.pk_cols)?;
    if pos != enc.len() {
        return Err(TableError::corrupt(format!(
            "table {}: {} trailing bytes after a primary key",
            m.def.name,
            enc.len() - pos
        )));
    }
    Ok(v)
}

fn check_prefix(m: &TableMeta, cols: &[usize], key_cols: &[KeyCol], from: &[Value]) -> Result<()> {
    if from.len() > key_cols.len() {
        return Err(TableError::schema(
            "",
            format!(
                "scan prefix has {} values, the index has {} columns",
                from.len(),
                key_cols.len()
            ),
        ));
    }
    for ((p, c), v) in cols.iter().zip(key_cols).zip(from) {
        if !v.fits(c.ty) || (matches!(v, Value::Null) && !c.nullable) {
            return Err(TableError::schema(
                &m.def.columns[*p].name,
                format!("{v:?} is not a {:?} key value", c.ty),
            ));
        }
    }
    Ok(())
}

/// `index id + encoded prefix`.
fn bound(id: u32, key_cols: &[KeyCol], vals: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(32);
    put_index_id(&mut k, id);
    for (v, c) in vals.iter().zip(key_cols) {
        encode_value(&mut k, v, c);
    }
    k
}

/// Runs scan `s` of `t` at `snapshot` (None: the latest state), calling `visit` with each row
/// until it returns false or the range ends.
pub(crate) fn scan_range<S: Storage>(
    t: &Table<S>,
    s: &Scan<'_>,
    snapshot: Option<&S::Snapshot>,
    mut visit: impl FnMut(Row) -> bool,
) -> Result<()> {
    let m = t.shared.meta();
    if t.shared.dropped.load(Ordering::Acquire) {
        return Err(TableError::NoSuchTable(m.def.name.clone()));
    }
    let ix: Option<&IndexMeta> = if s.index == PRIMARY {
        None
    } else {
        match m.index(s.index) {
            Some(ix) if ix.state == IndexState::Ready => Some(ix),
            _ => return Err(TableError::NoSuchIndex(s.index.to_string())),
        }
    };
    let (id, cols, key_cols) = match ix {
        None => (m.id, &m.pk, &m.pk_cols),
        Some(ix) => (ix.id, &ix.cols, &ix.key_cols),
    };
    check_prefix(&m, cols, key_cols, s.from)?;
    check_prefix(&m, cols, key_cols, s.to)?;
    let proj: Option<Vec<usize>> = match s.columns {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|n| {
                    m.def.column_index(n).ok_or_else(|| TableError::schema(n, "no such column"))
                })
                .collect::<Result<_>>()?,
        ),
    };
    let covered = match (&proj, ix) {
        (Some(p), Some(ix)) => p.iter().all(|c| ix.cols.contains(c) || m.pk.contains(c)),
        _ => false,
    };
    let (lo, hi) = index_range(id);
    let lower = if s.from.is_empty() { lo } else { bound(id, key_cols, s.from) };
    let upper = if s.to.is_empty() {
        hi
    } else {
        prefix_successor(&bound(id, key_cols, s.to)).unwrap_or(hi)
    };
    if lower >= upper {
        return Ok(());
    }
    let fetch = ix.is_some() && !covered;
    let own;
    let snapshot = match snapshot {
        Some(s) => Some(s),
        None if fetch => {
            own = t.cat.db.take_snapshot();
            Some(&own)
        }
        None => None,
    };
    let walk = match s.dir {
        Direction::Forward => Walk::Forward,
        Direction::Reverse => Walk::Reverse,
    };
    let mut it = t.cat.db.cursor(Range { lower, upper, snapshot, fill_cache: true }, walk);
    // The view row fetches read (the cursor's snapshot), made at the first fetch.
    let mut ro: Option<S::ReadOptions> = None;
    let decode = |v: &[u8]| -> Result<Row> {
        match &proj {
            None => decode_row(v, &m.types),
            Some(p) => decode_columns(v, &m.types, p),
        }
    };
    let mut rows = 0u64;
    // Row fetches of a non-covered scan go in batches through the engine's multi_get (sorted,
    // one view: the snapshot), growing from FETCH_FIRST to FETCH_MAX entries so that a scan
    // the visitor stops early fetches few rows it does not use.
    let mut pending: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut batch = FETCH_FIRST;
    let mut stopped = false;
    let limit = s.limit as u64;
    while it.valid() && rows + (pending.len() as u64) < limit {
        let key = it.key();
        let body = &key[INDEX_ID_LEN.min(key.len())..];
        let row = match ix {
            None => decode(it.value())?,
            Some(ix) => {
                let mut pos = 0;
                let ivals = decode_values(body, &mut pos, &ix.key_cols)?;
                let unique_form = ix.def.unique && !ivals.iter().any(|v| matches!(v, Value::Null));
                let pk_enc = if unique_form { it.value() } else { &body[pos..] };
                if unique_form && pos != body.len() {
                    return Err(TableError::corrupt(format!(
                        "index {}: trailing bytes in a unique entry",
                        ix.def.name
                    )));
                }
                let pk = decode_pk(&m, pk_enc)?;
                if !covered {
                    let mut rk = Vec::with_capacity(INDEX_ID_LEN + pk_enc.len());
                    put_index_id(&mut rk, m.id);
                    rk.extend_from_slice(pk_enc);
                    pending.push((rk, key.to_vec()));
                    if pending.len() >= batch || rows + pending.len() as u64 >= limit {
                        batch = (batch * 2).min(FETCH_MAX);
                        if !fetch_batch(
                            t,
                            ro.get_or_insert_with(|| t.cat.db.read_options(snapshot)),
                            s.index,
                            &mut pending,
                            &decode,
                            &mut visit,
                            &mut rows,
                        )? {
                            stopped = true;
                            break;
                        }
                    }
                    it.advance();
                    continue;
                }
                // A plain loop (no allocation but the row's; no collect adapters, see
                // `decode_values`). The columns are found per row: a scan of one row (the
                // point lookups through an index) would pay more for a vector of them.
                let p = proj.as_deref().unwrap_or(&[]);
                let mut row = Vec::with_capacity(p.len());
                for c in p {
                    row.push(Pick::of(*c, &ix.cols, &m.pk).take(&ivals, &pk));
                }
                row
            }
        };
        rows += 1;
        if !visit(row) {
            stopped = true;
            break;
        }
        it.advance();
    }
    if !stopped && !pending.is_empty() {
        let ro = ro.get_or_insert_with(|| t.cat.db.read_options(snapshot));
        fetch_batch(t, ro, s.index, &mut pending, &decode, &mut visit, &mut rows)?;
    }
    it.status()?;
    t.cat.stats.rows_read_by_scans.fetch_add(rows, Ordering::Relaxed);
    Ok(())
}

/// Where a covered scan finds one projected column: in the index entry's columns, in the
/// primary key it holds, or nowhere (NULL; cannot happen for a covered scan).
#[derive(Clone, Copy)]
enum Pick {
    Index(usize),
    Pk(usize),
    Null,
}

impl Pick {
    /// Column `c` of the table, looked up among the index's columns first, then the key's.
    #[inline]
    fn of(c: usize, index_cols: &[usize], pk: &[usize]) -> Pick {
        match index_cols.iter().position(|x| *x == c) {
            Some(j) => Pick::Index(j),
            None => pk.iter().position(|x| *x == c).map_or(Pick::Null, Pick::Pk),
        }
    }

    /// The value from a decoded entry (`ivals`: its index columns, `pk`: its key).
    #[inline]
    fn take(self, ivals: &[Value], pk: &[Value]) -> Value {
        match self {
            Pick::Index(j) => ivals[j].clone(),
            Pick::Pk(j) => pk[j].clone(),
            Pick::Null => Value::Null,
        }
    }
}

/// First and largest batch of row fetches of a non-covered scan.
const FETCH_FIRST: usize = 4;
const FETCH_MAX: usize = 64;

/// Fetches the rows of `pending` (row key, index entry) with one multi_get through `ro` and
/// visits them in order; false if the visitor stopped.
fn fetch_batch<S: Storage>(
    t: &Table<S>,
    ro: &S::ReadOptions,
    index: &str,
    pending: &mut Vec<(Vec<u8>, Vec<u8>)>,
    decode: &impl Fn(&[u8]) -> Result<Row>,
    visit: &mut impl FnMut(Row) -> bool,
    rows: &mut u64,
) -> Result<bool> {
    let keys: Vec<&[u8]> = pending.iter().map(|p| p.0.as_slice()).collect();
    t.cat.stats.point_reads.fetch_add(keys.len() as u64, Ordering::Relaxed);
    let vals = t.cat.db.multi_get_at(&keys, ro);
    let mut go = true;
    for ((_, entry), v) in pending.iter().zip(vals) {
        let v = v?.ok_or_else(|| {
            TableError::corrupt(format!("index {index}: entry {entry:02x?} has no row"))
        })?;
        *rows += 1;
        if !visit(decode(&v)?) {
            go = false;
            break;
        }
    }
    pending.clear();
    Ok(go)
}

/// The old `scan(index, from, limit, dir)` shape: forward from `from`, or reverse from the last
/// entry whose prefix is `<= from`.
pub(crate) fn scan<S: Storage>(
    t: &Table<S>,
    index: &str,
    from: &[Value],
    limit: usize,
    dir: Direction,
    columns: Option<&[&str]>,
) -> Result<Vec<Row>> {
    let s = match dir {
        Direction::Forward => Scan { index, from, to: &[], dir, columns, limit },
        Direction::Reverse => Scan { index, from: &[], to: from, dir, columns, limit },
    };
    let mut out = Vec::with_capacity(limit.min(1024));
    scan_range(t, &s, None, |r| {
        out.push(r);
        true
    })?;
    Ok(out)
}

/// The rows with primary keys `pks`, in that order, read at `snapshot` (None: latest) from one
/// consistent view with the engine's batched `multi_get`.
pub(crate) fn get_many<S: Storage, K: AsRef<[Value]>>(
    t: &Table<S>,
    pks: &[K],
    snapshot: Option<&S::Snapshot>,
) -> Result<Vec<Option<Row>>> {
    let m = t.shared.meta();
    let keys: Vec<Vec<u8>> = pks.iter().map(|k| pk_key(&m, k.as_ref())).collect::<Result<_>>()?;
    let ro = t.cat.db.read_options(snapshot);
    t.cat.stats.point_reads.fetch_add(keys.len() as u64, Ordering::Relaxed);
    t.cat
        .db
        .multi_get_at(&keys, &ro)
        .into_iter()
        .map(|r| match r? {
            None => Ok(None),
            Some(v) => decode_row(&v, &m.types).map(Some),
        })
        .collect()
}

pub(crate) fn first_pk<S: Storage>(t: &Table<S>) -> Result<Option<Vec<Value>>> {
    let m = t.shared.meta();
    let (lower, upper) = index_range(m.id);
    let range = Range { lower, upper, snapshot: None, fill_cache: true };
    let it = t.cat.db.cursor(range, Walk::Forward);
    if !it.valid() {
        it.status()?;
        return Ok(None);
    }
    let key = it.key();
    decode_pk(&m, key.get(INDEX_ID_LEN..).unwrap_or(&[])).map(Some)
}

impl<S: Storage> Table<S> {
    /// Rows in index order (`index` = `"PRIMARY"` or a ready secondary index) from the first
    /// entry whose index columns are `>= from` (a prefix of the index columns; empty = the
    /// start), at most `limit`, in `dir` (Reverse starts from the last entry whose prefix is
    /// `<= from`, or the end if `from` is empty).
    pub fn scan(
        &self,
        index: &str,
        from: &[Value],
        limit: usize,
        dir: Direction,
    ) -> Result<Vec<Row>> {
        scan(self, index, from, limit, dir, None)
    }

    /// Like [`Table::scan`], returning only `columns` (in that order). When they are all in the
    /// index (index columns + primary key), the rows come from the index entries alone.
    pub fn scan_columns(
        &self,
        index: &str,
        from: &[Value],
        limit: usize,
        dir: Direction,
        columns: &[&str],
    ) -> Result<Vec<Row>> {
        scan(self, index, from, limit, dir, Some(columns))
    }

    /// Range scan `s` (see [`Scan`]) at the latest state: calls `visit` with each row in index
    /// order until it returns false or the range ends.
    ///
    /// ```
    /// # use talus_table::*;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// # let cat = Catalog::open(db).unwrap();
    /// # let t = cat.create_table(TableDef {
    /// #     name: "t".into(),
    /// #     columns: vec![ColumnDef { name: "id".into(), ty: ColumnType::I64, nullable: false }],
    /// #     primary_key: vec!["id".into()],
    /// #     indexes: vec![],
    /// # }).unwrap();
    /// for i in 0..10 {
    ///     t.insert(&vec![Value::I64(i)]).unwrap();
    /// }
    /// let mut ids = Vec::new();
    /// let s = Scan { from: &[Value::I64(3)], to: &[Value::I64(5)], ..Scan::index("PRIMARY") };
    /// t.scan_range(&s, |row| {
    ///     ids.push(row[0].clone());
    ///     true
    /// })
    /// .unwrap();
    /// assert_eq!(ids, vec![Value::I64(3), Value::I64(4), Value::I64(5)]);
    /// ```
    pub fn scan_range(&self, s: &Scan<'_>, visit: impl FnMut(Row) -> bool) -> Result<()> {
        scan_range(self, s, None, visit)
    }

    /// The rows with primary keys `pks` (an SQL `IN` list), in the order given, from one
    /// consistent view, read with the engine's batched `multi_get`.
    pub fn get_many<K: AsRef<[Value]>>(&self, pks: &[K]) -> Result<Vec<Option<Row>>> {
        get_many(self, pks, None)
    }

    /// The smallest primary key, if the table has rows.
    pub fn first_pk(&self) -> Result<Option<Vec<Value>>> {
        first_pk(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Pick;
    use crate::schema::Value;

    #[test]
    fn a_covered_column_comes_from_the_index_first_then_the_key() {
        // Index on columns (2, 0), primary key (0, 1): column 0 is in both.
        let (ix, pk) = ([2, 0], [0, 1]);
        let ivals = [Value::I64(20), Value::I64(10)];
        let key = [Value::I64(11), Value::I64(12)];
        let got: Vec<Value> =
            [0, 1, 2, 3].iter().map(|c| Pick::of(*c, &ix, &pk).take(&ivals, &key)).collect();
        assert_eq!(got, [Value::I64(10), Value::I64(12), Value::I64(20), Value::Null]);
    }
}
