//! Family-tagged batch records (WAL format version 4, `docs/format/wal.md`): a record of a
//! family other than `default` starts with RocksDB's column-family tag for its kind, then the
//! family id as a varint32, then the fields of the plain record. A `default` record keeps the
//! plain kind byte, so a batch without families is byte-for-byte a version 3 batch and old WALs
//! replay unchanged. The tags are RocksDB's (`db/dbformat.h`), so the records are RocksDB's too.
//!
//! A record carries only its family's id, so the batch also remembers which database its
//! handles came from ([`HandleOwner`], in memory only): `Db::write` refuses a batch built with
//! a handle of another database (or of two databases) with `InvalidArgument`, where the id
//! alone would land the write in whatever family has that id there.

use super::WriteBatch;
use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::key::ValueKind;

/// The database the family handles of a batch's operations came from (see the module doc):
/// `0` none (no handle, or handles made without a database), [`HandleOwner::MIXED`] handles of
/// two databases, else that database's instance number (`DbInner::instance`, from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HandleOwner(u64);

impl HandleOwner {
    /// No handle of a database.
    pub const NONE: HandleOwner = HandleOwner(0);
    /// Handles of two different databases.
    const MIXED: u64 = u64::MAX;

    /// The owner of a batch holding the operations of `self`'s and `other`'s.
    pub fn and(self, other: HandleOwner) -> HandleOwner {
        match (self.0, other.0) {
            (0, b) => HandleOwner(b),
            (a, 0) => HandleOwner(a),
            (a, b) if a == b => HandleOwner(a),
            _ => HandleOwner(Self::MIXED),
        }
    }

    /// `InvalidArgument` unless every handle came from database `instance`.
    pub fn check(self, instance: u64) -> Result<()> {
        match self.0 {
            0 => Ok(()),
            i if i == instance => Ok(()),
            Self::MIXED => Err(Error::InvalidArgument(
                "write batch: its column family handles come from two different databases".into(),
            )),
            _ => Err(Error::InvalidArgument(
                "write batch: a column family handle belongs to another database".into(),
            )),
        }
    }
}

/// RocksDB's `kTypeColumnFamilyDeletion`: a delete in a family.
pub const TAG_CF_DELETE: u8 = 0x04;
/// RocksDB's `kTypeColumnFamilyValue`: a put in a family.
pub const TAG_CF_PUT: u8 = 0x05;
/// RocksDB's `kTypeColumnFamilyMerge`: a merge operand in a family.
pub const TAG_CF_MERGE: u8 = 0x06;
/// RocksDB's `kTypeColumnFamilyRangeDeletion`: a range delete in a family.
pub const TAG_CF_RANGE_DELETE: u8 = 0x0E;

/// The tag that starts a record of `kind` in a family other than `default`.
pub fn cf_tag(kind: ValueKind) -> u8 {
    match kind {
        ValueKind::Put => TAG_CF_PUT,
        ValueKind::Merge => TAG_CF_MERGE,
        ValueKind::RangeDelete => TAG_CF_RANGE_DELETE,
        // Batches hold only the four kinds above and Delete.
        _ => TAG_CF_DELETE,
    }
}

/// The kind of a family-tagged record, or `None` if `tag` is not one.
pub fn kind_of_cf_tag(tag: u8) -> Option<ValueKind> {
    Some(match tag {
        TAG_CF_DELETE => ValueKind::Delete,
        TAG_CF_PUT => ValueKind::Put,
        TAG_CF_MERGE => ValueKind::Merge,
        TAG_CF_RANGE_DELETE => ValueKind::RangeDelete,
        _ => return None,
    })
}

impl WriteBatch {
    /// Remembers the database `cf` came from (see the module doc).
    pub(super) fn note_handle(&mut self, cf: &ColumnFamily) {
        if let Some((db, _)) = cf.state() {
            self.owner = self.owner.and(HandleOwner(db));
        }
    }

    /// `InvalidArgument` if an operation was added with a handle of a database other than
    /// `instance` (see the module doc).
    pub(crate) fn check_handles(&self, instance: u64) -> Result<()> {
        self.owner.check(instance)
    }

    /// Gives this batch `other`'s handle owner (a layer that rebuilds a batch record by record,
    /// `DbWithTtl::write`, keeps the check).
    pub(crate) fn keep_handles_of(&mut self, other: &WriteBatch) {
        self.owner = self.owner.and(other.owner);
    }

    /// Adds `op` in the family with id `cf` (for the layers that rewrite a batch record by
    /// record, keeping each record's family: `DbWithTtl::write`).
    pub(crate) fn push_op(&mut self, cf: u32, op: super::BatchOp<'_>) {
        use super::BatchOp;
        let (kind, a, b) = match op {
            BatchOp::Put(k, v) => (ValueKind::Put, k, Some(v)),
            BatchOp::Merge(k, v) => (ValueKind::Merge, k, Some(v)),
            BatchOp::Delete(k) => (ValueKind::Delete, k, None),
            BatchOp::DeleteRange(from, to) => (ValueKind::RangeDelete, from, Some(to)),
        };
        self.begin_cf_record(cf, kind, a, b);
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::{BatchOp, WriteBatch};
    use crate::column_family::ColumnFamily;

    /// The bytes `docs/format/wal.md` shows for a cross-family batch (version 4).
    #[test]
    fn cf_records_golden_bytes() {
        let cf = ColumnFamily::new(2, "two");
        let mut b = WriteBatch::new();
        b.put(b"k", b"v");
        b.put_cf(&cf, b"k", b"v");
        b.delete_cf(&cf, b"d");
        b.merge_cf(&cf, b"m", b"1");
        b.delete_range_cf(&cf, b"a", b"b");
        b.set_sequence(1);
        #[rustfmt::skip]
        let want: &[u8] = &[
            1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0,
            0x01, 0x01, b'k', 0x01, b'v',
            0x05, 0x02, 0x01, b'k', 0x01, b'v',
            0x04, 0x02, 0x01, b'd',
            0x06, 0x02, 0x01, b'm', 0x01, b'1',
            0x0E, 0x02, 0x01, b'a', 0x01, b'b',
        ];
        assert_eq!(b.data(), want);
        let c = WriteBatch::from_data(want.to_vec(), "f", 0).unwrap();
        assert_eq!(c.max_column_family_id(), 2);
        let ops: Vec<_> = c.iter_cf().collect();
        assert_eq!(
            ops,
            vec![
                (0, BatchOp::Put(b"k", b"v")),
                (2, BatchOp::Put(b"k", b"v")),
                (2, BatchOp::Delete(b"d")),
                (2, BatchOp::Merge(b"m", b"1")),
                (2, BatchOp::DeleteRange(b"a", b"b")),
            ]
        );
        // Every cut is corruption, never a shorter batch.
        for cut in 0..want.len() {
            assert!(WriteBatch::from_data(want[..cut].to_vec(), "f", 0).is_err(), "cut {cut}");
        }
    }

    /// The default family's handle writes plain records: the version 3 bytes.
    #[test]
    fn default_family_records_are_plain() {
        let mut a = WriteBatch::new();
        a.put_cf(&ColumnFamily::new(0, "default"), b"k", b"v");
        a.delete_cf(&ColumnFamily::new(0, "default"), b"k");
        let mut b = WriteBatch::new();
        b.put(b"k", b"v");
        b.delete(b"k");
        assert_eq!(a.data(), b.data());
        assert_eq!(a.max_column_family_id(), 0);
    }

    /// A family id that does not fit a varint32 is corruption.
    #[test]
    fn bad_family_id_is_corruption() {
        let mut d = vec![0u8; 8];
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&[0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, b'k', 0x01, b'v']);
        assert!(WriteBatch::from_data(d, "f", 3).unwrap_err().is_corruption());
    }
}
