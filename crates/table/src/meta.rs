//! Resolved table metadata ([`TableMeta`]: column positions, key column encodings, index ids
//! and states) and its catalog encoding (docs/format/table-keys.md, "Catalog", version 1).
//!
//! Pure data and codecs; the [`crate::Catalog`] owns the instances and swaps them whole (an
//! `Arc<TableMeta>` is immutable once built).

use crate::error::{Result, TableError};
use crate::keycodec::KeyCol;
use crate::schema::{ColumnDef, ColumnType, IndexDef, TableDef};

/// Index id 0 is the catalog's; ids below this are reserved.
pub(crate) const FIRST_USER_ID: u32 = 256;
/// Catalog record format version.
pub(crate) const CATALOG_VERSION: u8 = 1;
/// The name scans use for the primary key.
pub(crate) const PRIMARY: &str = "PRIMARY";

/// Whether an index is complete or still being built by `create_index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IndexState {
    /// Complete: readable, maintained by writes.
    Ready,
    /// Being built: maintained by writes with blind puts and deletes, not readable; dropped
    /// at open if found (a crash interrupted the build).
    Building,
}

/// One secondary index, resolved against its table.
#[derive(Clone, Debug)]
pub(crate) struct IndexMeta {
    pub def: IndexDef,
    pub id: u32,
    pub state: IndexState,
    /// Row positions of the index columns, in key order.
    pub cols: Vec<usize>,
    /// Their key encodings.
    pub key_cols: Vec<KeyCol>,
}

/// A table, resolved: what the write, read and scan paths need without name lookups.
#[derive(Clone, Debug)]
pub(crate) struct TableMeta {
    /// The definition as the user sees it (only ready indexes in `def.indexes`).
    pub def: TableDef,
    /// The table id, which is also the primary index id.
    pub id: u32,
    pub types: Vec<ColumnType>,
    /// Row positions of the primary key columns.
    pub pk: Vec<usize>,
    pub pk_cols: Vec<KeyCol>,
    /// Secondary indexes, ready and building.
    pub indexes: Vec<IndexMeta>,
}

fn key_col(c: &ColumnDef, desc: bool) -> KeyCol {
    KeyCol { ty: c.ty, nullable: c.nullable, desc }
}

/// Splits `"col DESC"` into `("col", true)`.
pub(crate) fn parse_col_spec(spec: &str) -> (&str, bool) {
    for suffix in [" DESC", " desc"] {
        if let Some(n) = spec.strip_suffix(suffix) {
            return (n.trim_end(), true);
        }
    }
    (spec.strip_suffix(" ASC").unwrap_or(spec), false)
}

impl TableMeta {
    /// Validates `def` and resolves it with the given ids and states (one per `def.indexes`).
    pub(crate) fn resolve(def: &TableDef, id: u32, idx: &[(u32, IndexState)]) -> Result<TableMeta> {
        if def.columns.is_empty() {
            return Err(TableError::schema("", format!("table {} has no columns", def.name)));
        }
        for (i, c) in def.columns.iter().enumerate() {
            if def.columns[..i].iter().any(|o| o.name == c.name) {
                return Err(TableError::schema(&c.name, "duplicate column name"));
            }
        }
        if def.primary_key.is_empty() {
            return Err(TableError::schema("", format!("table {} has no primary key", def.name)));
        }
        let mut pk = Vec::new();
        let mut pk_cols = Vec::new();
        for name in &def.primary_key {
            let (n, desc) = parse_col_spec(name);
            let p = def.column_index(n).ok_or_else(|| TableError::schema(n, "no such column"))?;
            if def.columns[p].nullable {
                return Err(TableError::schema(n, "a primary key column cannot be nullable"));
            }
            if pk.contains(&p) {
                return Err(TableError::schema(n, "column repeated in the primary key"));
            }
            pk.push(p);
            pk_cols.push(key_col(&def.columns[p], desc));
        }
        let mut indexes: Vec<IndexMeta> = Vec::new();
        for (d, &(iid, state)) in def.indexes.iter().zip(idx) {
            indexes.push(Self::resolve_index(def, &indexes, d, iid, state)?);
        }
        let mut user_def = def.clone();
        user_def.indexes = indexes
            .iter()
            .filter(|i| i.state == IndexState::Ready)
            .map(|i| i.def.clone())
            .collect();
        Ok(TableMeta {
            types: def.columns.iter().map(|c| c.ty).collect(),
            def: user_def,
            id,
            pk,
            pk_cols,
            indexes,
        })
    }

    /// Validates and resolves one secondary index against the table and its other indexes.
    pub(crate) fn resolve_index(
        def: &TableDef,
        others: &[IndexMeta],
        d: &IndexDef,
        id: u32,
        state: IndexState,
    ) -> Result<IndexMeta> {
        if d.name == PRIMARY || others.iter().any(|o| o.def.name == d.name) {
            return Err(TableError::IndexExists(d.name.clone()));
        }
        if d.columns.is_empty() {
            return Err(TableError::schema("", format!("index {} has no columns", d.name)));
        }
        let mut cols = Vec::new();
        let mut key_cols = Vec::new();
        for spec in &d.columns {
            let (n, desc) = parse_col_spec(spec);
            let p = def.column_index(n).ok_or_else(|| TableError::schema(n, "no such column"))?;
            if cols.contains(&p) {
                return Err(TableError::schema(n, "column repeated in the index"));
            }
            cols.push(p);
            key_cols.push(key_col(&def.columns[p], desc));
        }
        Ok(IndexMeta { def: d.clone(), id, state, cols, key_cols })
    }

    /// The secondary index named `name`, ready or building.
    pub(crate) fn index(&self, name: &str) -> Option<&IndexMeta> {
        self.indexes.iter().find(|i| i.def.name == name)
    }

    /// The full definition, building indexes included (what the catalog stores).
    fn stored_def(&self) -> TableDef {
        let mut d = self.def.clone();
        d.indexes = self.indexes.iter().map(|i| i.def.clone()).collect();
        d
    }

    /// The catalog record (docs/format/table-keys.md, "Catalog").
    pub(crate) fn encode(&self) -> Vec<u8> {
        let d = self.stored_def();
        let mut out = vec![CATALOG_VERSION];
        out.extend_from_slice(&self.id.to_be_bytes());
        put_varint(&mut out, d.columns.len() as u64);
        for c in &d.columns {
            put_str(&mut out, &c.name);
            out.push(c.ty.code());
            out.push(u8::from(c.nullable));
        }
        put_varint(&mut out, d.primary_key.len() as u64);
        for n in &d.primary_key {
            put_str(&mut out, n);
        }
        put_varint(&mut out, self.indexes.len() as u64);
        for i in &self.indexes {
            put_str(&mut out, &i.def.name);
            out.extend_from_slice(&i.id.to_be_bytes());
            out.push(u8::from(i.def.unique));
            out.push(match i.state {
                IndexState::Ready => 0,
                IndexState::Building => 1,
            });
            put_varint(&mut out, i.def.columns.len() as u64);
            for c in &i.def.columns {
                put_str(&mut out, c);
            }
        }
        out
    }

    /// Decodes a catalog record of table `name`.
    pub(crate) fn decode(name: &str, buf: &[u8]) -> Result<TableMeta> {
        let mut r = Reader { buf, pos: 0, table: name };
        let v = r.byte()?;
        if v != CATALOG_VERSION {
            return Err(r.err(&format!("unknown catalog version {v}")));
        }
        let id = r.u32()?;
        let n = r.count()?;
        let mut columns = Vec::new();
        for _ in 0..n {
            let cname = r.string()?;
            let code = r.byte()?;
            let ty = ColumnType::from_code(code)
                .ok_or_else(|| r.err(&format!("bad type code {code}")))?;
            let nullable = r.bool()?;
            columns.push(ColumnDef { name: cname, ty, nullable });
        }
        let n = r.count()?;
        let mut primary_key = Vec::new();
        for _ in 0..n {
            primary_key.push(r.string()?);
        }
        let n = r.count()?;
        let mut indexes = Vec::new();
        let mut ids = Vec::new();
        for _ in 0..n {
            let iname = r.string()?;
            let iid = r.u32()?;
            let unique = r.bool()?;
            let state = match r.byte()? {
                0 => IndexState::Ready,
                1 => IndexState::Building,
                s => return Err(r.err(&format!("bad index state {s}"))),
            };
            let nc = r.count()?;
            let mut cols = Vec::new();
            for _ in 0..nc {
                cols.push(r.string()?);
            }
            indexes.push(IndexDef { name: iname, columns: cols, unique });
            ids.push((iid, state));
        }
        if r.pos != buf.len() {
            return Err(r.err("trailing bytes"));
        }
        let def = TableDef { name: name.to_string(), columns, primary_key, indexes };
        TableMeta::resolve(&def, id, &ids)
            .map_err(|e| TableError::corrupt(format!("catalog record of table {name}: {e}")))
    }
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    table: &'a str,
}

impl Reader<'_> {
    fn err(&self, what: &str) -> TableError {
        TableError::corrupt(format!(
            "catalog record of table {}: {what} at offset {}",
            self.table, self.pos
        ))
    }
    fn byte(&mut self) -> Result<u8> {
        let b = *self.buf.get(self.pos).ok_or_else(|| self.err("truncated"))?;
        self.pos += 1;
        Ok(b)
    }
    fn bool(&mut self) -> Result<bool> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.err(&format!("bad flag {b}"))),
        }
    }
    fn u32(&mut self) -> Result<u32> {
        let mut a = [0u8; 4];
        for x in &mut a {
            *x = self.byte()?;
        }
        Ok(u32::from_be_bytes(a))
    }
    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint too long"))
    }
    /// A count, bounded by the bytes left (each counted item takes at least one byte).
    fn count(&mut self) -> Result<usize> {
        let n = self.varint()?;
        if n > (self.buf.len() - self.pos) as u64 {
            return Err(self.err(&format!("count {n} exceeds the record")));
        }
        Ok(n as usize)
    }
    fn string(&mut self) -> Result<String> {
        let n = self.count()?;
        let s = self.buf.get(self.pos..self.pos + n).ok_or_else(|| self.err("truncated string"))?;
        self.pos += n;
        String::from_utf8(s.to_vec()).map_err(|_| self.err("name is not UTF-8"))
    }
}

#[cfg(test)]
mod tests;
