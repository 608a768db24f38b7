//! `Db`'s column family calls (`crate::column_family` has the handle): looking families up,
//! creating and dropping them, and the static listing of a database's families.
//!
//! Create and drop run with the write queue held (no write in flight, `with_write_lock`), then
//! take `wal`, `versions` and `state` in that order (`core.rs`): the MANIFEST edit first, then
//! the family's state and the write path's memtable table (`write_mems.rs`).

use std::path::Path;
use std::sync::Arc;

use super::cf_data::{CfState, ColumnFamilyData};
use super::core::DbInner;
use super::Db;
use crate::column_family::{ColumnFamily, ColumnFamilyDescriptor, DEFAULT_COLUMN_FAMILY_ID};
use crate::error::{Error, Result};
use crate::options::Options;
use crate::version::{Version, VersionEdit};

impl Db {
    /// The handle of the live family named `name` (RocksDB's `GetColumnFamilyHandle`), `None`
    /// if the database has none of that name.
    pub fn cf_handle(&self, name: &str) -> Option<ColumnFamily> {
        let st = self.inner().state.lock();
        st.cfs.values().find(|c| c.data.name == name).map(|c| handle_of(&c.data))
    }

    /// The handle of the `default` family (RocksDB's `DefaultColumnFamily`).
    pub fn default_column_family(&self) -> ColumnFamily {
        handle_of(&self.inner().default_cf)
    }

    /// The handles of the live families, `default` first (by id).
    pub fn column_families(&self) -> Vec<ColumnFamily> {
        let st = self.inner().state.lock();
        st.cfs.values().map(|c| handle_of(&c.data)).collect()
    }

    /// Creates the column family `name` with `options` (RocksDB's `CreateColumnFamily`): its
    /// family-level options are used (see [`ColumnFamilyDescriptor`]), its own `num_levels`
    /// included. `InvalidArgument` if a live family has that name (or it is empty).
    /// Durable when it returns (one MANIFEST record, synced).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let logs = db.create_column_family("logs", &talus::Options::default()).unwrap();
    /// db.put_cf(&logs, b"k", b"in logs").unwrap();
    /// assert_eq!(db.get_cf(&logs, b"k").unwrap().as_deref(), Some(&b"in logs"[..]));
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// ```
    pub fn create_column_family(&self, name: &str, options: &Options) -> Result<ColumnFamily> {
        let inner = self.inner();
        inner.check_writable()?;
        if name.is_empty() {
            return Err(Error::InvalidArgument("a column family name is empty".into()));
        }
        let desc = ColumnFamilyDescriptor::new(name, options.clone());
        let opts = super::open_families::family_options(&inner.opts, &desc)?;
        let cf = inner.with_write_lock(|| inner.create_family(name, opts))?;
        // RocksDB rewrites its OPTIONS file when a family comes or goes.
        inner.write_options_file();
        Ok(cf)
    }

    /// Drops the column family of `cf` (RocksDB's `DropColumnFamily`): its data becomes
    /// unreachable for new handles and writes, and its files are deleted once no reader holds
    /// them (a handle's reads still see what it held). `default` cannot be dropped
    /// (`InvalidArgument`); dropping a family twice is `InvalidArgument`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = talus::Db::open(dir.path(), talus::Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// let tmp = db.create_column_family("tmp", &talus::Options::default()).unwrap();
    /// db.put_cf(&tmp, b"k", b"v").unwrap();
    /// db.drop_column_family(&tmp).unwrap();
    /// assert!(db.cf_handle("tmp").is_none());
    /// assert!(db.put_cf(&tmp, b"k", b"w").is_err());
    /// ```
    pub fn drop_column_family(&self, cf: &ColumnFamily) -> Result<()> {
        let inner = self.inner();
        inner.check_writable()?;
        let data = inner.family(cf)?;
        if data.id == DEFAULT_COLUMN_FAMILY_ID {
            return Err(Error::InvalidArgument(
                "the default column family cannot be dropped".into(),
            ));
        }
        inner.with_write_lock(|| inner.drop_family(&data))?;
        inner.write_options_file();
        inner.delete_obsolete_files();
        Ok(())
    }

    /// The names of the live column families of the database in `path`, `default` first
    /// (RocksDB's `DB::ListColumnFamilies`), read from its MANIFEST through `options.fs`;
    /// writes nothing and takes no LOCK, so it works beside an open handle. `NotFound` if there
    /// is no database there.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let opts = talus::Options { create_if_missing: true, ..Default::default() };
    /// talus::Db::open(dir.path(), opts.clone()).unwrap().close().unwrap();
    /// assert_eq!(talus::Db::list_column_families(dir.path(), &opts).unwrap(), ["default"]);
    /// ```
    pub fn list_column_families(path: impl AsRef<Path>, options: &Options) -> Result<Vec<String>> {
        crate::version::cf_edit::list_column_families(&*options.fs, path.as_ref())
    }
}

/// The handle of family `data`.
fn handle_of(data: &Arc<ColumnFamilyData>) -> ColumnFamily {
    ColumnFamily::with_state(data.id, data.name.clone(), data.db_instance, data.clone())
}

impl DbInner {
    /// The state of the family `cf` names: `InvalidArgument` for a handle of another database.
    pub(crate) fn family(&self, cf: &ColumnFamily) -> Result<Arc<ColumnFamilyData>> {
        let data = match cf.state() {
            None if cf.id() == DEFAULT_COLUMN_FAMILY_ID => return Ok(self.default_cf.clone()),
            Some((db, s)) if db == self.instance => s.clone().downcast::<ColumnFamilyData>().ok(),
            _ => None,
        };
        data.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "column family {:?} (id {}): the handle belongs to another database",
                cf.name(),
                cf.id()
            ))
        })
    }

    /// Creates family `name` (with the write queue held).
    fn create_family(&self, name: &str, opts: Arc<Options>) -> Result<ColumnFamily> {
        let wal = self.wal.lock();
        let log_number = wal.as_ref().map_or(0, |w| w.number);
        let mut vs = self.versions.lock();
        if vs.families().values().any(|f| f.name == name) {
            return Err(Error::InvalidArgument(format!("column family {name:?} exists")));
        }
        let id = vs.max_column_family() + 1;
        let mut edit = VersionEdit { log_number: Some(log_number), ..Default::default() };
        edit.cf.family = id;
        edit.cf.add = Some(name.to_string());
        vs.log_and_apply(edit)?;
        // Empty: its own level count cannot fail.
        vs.set_family_levels(id, opts.num_levels)?;
        if let Some(cache) = super::open_families::own_block_cache(&self.opts, &opts) {
            vs.set_family_block_cache(id, cache);
        }
        let current = vs.current_of(id).unwrap_or_else(|| Arc::new(Version::new(opts.num_levels)));
        let mut st = self.state.lock();
        let mut state = CfState::new(id, name.to_string(), opts, self.instance, current);
        state.mem_log_number = log_number;
        let handle = handle_of(&state.data);
        st.cfs.insert(id, state);
        self.publish_write_mems(&mut st);
        let retired = self.install_super_version(&st, id);
        drop(st);
        drop(vs);
        drop(wal);
        drop(retired);
        self.info_log.log(&format!("[column family] created {name:?} (id {id})"));
        Ok(handle)
    }

    /// Drops family `cf` (with the write queue held).
    fn drop_family(&self, cf: &ColumnFamilyData) -> Result<()> {
        let mut vs = self.versions.lock();
        if vs.current_of(cf.id).is_none() {
            return Err(Error::InvalidArgument(format!(
                "column family {:?} was dropped already",
                cf.name
            )));
        }
        let mut edit = VersionEdit::default();
        edit.cf.family = cf.id;
        edit.cf.drop = true;
        vs.log_and_apply(edit)?;
        let mut st = self.state.lock();
        let removed = st.cfs.remove(&cf.id);
        self.publish_write_mems(&mut st);
        // The stall condition no longer counts the dropped family.
        let retired = self.install_super_version(&st, DEFAULT_COLUMN_FAMILY_ID);
        drop(st);
        drop(vs);
        drop(removed);
        drop(retired);
        self.done_cv.notify_all();
        self.info_log.log(&format!("[column family] dropped {:?} (id {})", cf.name, cf.id));
        Ok(())
    }
}
