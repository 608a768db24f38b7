//! Range scans on the primary key or a secondary index, and `first_pk`.
//!
//! A scan reads one engine iterator bounded to the index's key range. Secondary entries are
//! decoded to `(index columns, primary key)`; the row is then fetched by primary key (a counted
//! point read) unless the requested columns are all in the entry (covering). Scans that fetch
//! rows read iterator and rows from one engine snapshot, so an entry always finds its row. No
//! table lock is taken.

use std::sync::atomic::Ordering;

use talus::ReadOptions;

use crate::error::{Result, TableError};
use crate::keycodec::{
    decode_values, encode_value, prefix_successor, put_index_id, KeyCol, INDEX_ID_LEN,
};
use crate::meta::{IndexState, TableMeta, PRIMARY};
use crate::rowcodec::decode_row;
use crate::schema::{Direction, Row, Value};
use crate::shared::index_range;
use crate::table::Table;

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

pub(crate) fn scan(
    t: &Table,
    index: &str,
    from: &[Value],
    limit: usize,
    dir: Direction,
    columns: Option<&[&str]>,
) -> Result<Vec<Row>> {
    let m = t.shared.meta();
    if t.shared.dropped.load(Ordering::Acquire) {
        return Err(TableError::NoSuchTable(m.def.name.clone()));
    }
    let ix = if index == PRIMARY {
        None
    } else {
        match m.index(index) {
            Some(ix) if ix.state == IndexState::Ready => Some(ix),
            _ => return Err(TableError::NoSuchIndex(index.to_string())),
        }
    };
    let (id, cols, key_cols) = match ix {
        None => (m.id, &m.pk, &m.pk_cols),
        Some(ix) => (ix.id, &ix.cols, &ix.key_cols),
    };
    check_prefix(&m, cols, key_cols, from)?;
    let proj: Option<Vec<usize>> = match columns {
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
    let mut prefix = Vec::with_capacity(32);
    put_index_id(&mut prefix, id);
    for (v, c) in from.iter().zip(key_cols) {
        encode_value(&mut prefix, v, c);
    }
    let (lo, hi) = index_range(id);
    let fetch = ix.is_some() && !covered;
    let ro = ReadOptions {
        snapshot: if fetch { Some(t.cat.db.snapshot()) } else { None },
        iterate_lower_bound: Some(lo),
        iterate_upper_bound: Some(hi),
        ..ReadOptions::default()
    };
    let mut it = t.cat.db.raw_iter(&ro);
    match dir {
        Direction::Forward => it.seek(&prefix),
        Direction::Reverse if from.is_empty() => it.seek_to_last(),
        Direction::Reverse => match prefix_successor(&prefix) {
            Some(u) => {
                it.seek_for_prev(&u);
                if it.valid() && it.key() >= u.as_slice() {
                    it.prev();
                }
            }
            None => it.seek_to_last(),
        },
    }
    let mut out = Vec::with_capacity(limit.min(1024));
    let pick = |full: &[Value], p: &Option<Vec<usize>>| -> Row {
        match p {
            None => full.to_vec(),
            Some(p) => p.iter().map(|&c| full[c].clone()).collect(),
        }
    };
    while it.valid() && out.len() < limit {
        let key = it.key();
        let body = &key[INDEX_ID_LEN.min(key.len())..];
        match ix {
            None => {
                let row = decode_row(it.value(), &m.types)?;
                out.push(pick(&row, &proj));
            }
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
                if covered {
                    let p = proj.as_deref().unwrap_or(&[]);
                    let row = p
                        .iter()
                        .map(|c| match ix.cols.iter().position(|x| x == c) {
                            Some(j) => ivals[j].clone(),
                            None => {
                                m.pk.iter()
                                    .position(|x| x == c)
                                    .map_or(Value::Null, |j| pk[j].clone())
                            }
                        })
                        .collect();
                    out.push(row);
                } else {
                    let mut rk = Vec::with_capacity(INDEX_ID_LEN + pk_enc.len());
                    put_index_id(&mut rk, m.id);
                    rk.extend_from_slice(pk_enc);
                    t.cat.stats.point_reads.fetch_add(1, Ordering::Relaxed);
                    let v = t.cat.db.get_opt(&rk, &ro)?.ok_or_else(|| {
                        TableError::corrupt(format!(
                            "index {}: entry {key:02x?} has no row",
                            ix.def.name
                        ))
                    })?;
                    let row = decode_row(&v, &m.types)?;
                    out.push(pick(&row, &proj));
                }
            }
        }
        match dir {
            Direction::Forward => it.next(),
            Direction::Reverse => it.prev(),
        }
    }
    it.status()?;
    t.cat.stats.rows_read_by_scans.fetch_add(out.len() as u64, Ordering::Relaxed);
    Ok(out)
}

pub(crate) fn first_pk(t: &Table) -> Result<Option<Vec<Value>>> {
    let m = t.shared.meta();
    let (lo, hi) = index_range(m.id);
    let ro = ReadOptions {
        iterate_lower_bound: Some(lo),
        iterate_upper_bound: Some(hi),
        ..ReadOptions::default()
    };
    let mut it = t.cat.db.raw_iter(&ro);
    it.seek_to_first();
    if !it.valid() {
        it.status()?;
        return Ok(None);
    }
    let key = it.key();
    decode_pk(&m, key.get(INDEX_ID_LEN..).unwrap_or(&[])).map(Some)
}

impl Table {
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

    /// The smallest primary key, if the table has rows.
    pub fn first_pk(&self) -> Result<Option<Vec<Value>>> {
        first_pk(self)
    }
}
