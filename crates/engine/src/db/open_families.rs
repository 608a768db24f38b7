//! Which column families an open opens and creates (RocksDB's rules for `DB::Open` with
//! column families): every live family of the MANIFEST must be named (a read-only open may
//! name a subset); a named family that does not exist is created when
//! `create_missing_column_families` is set (read-write only), else refused; `default` is always
//! opened, with the database's options.
//!
//! Who calls: `open.rs`, after the MANIFEST is loaded and before anything is written. Pure:
//! no lock, no IO.

use std::sync::Arc;

use crate::column_family::DEFAULT_COLUMN_FAMILY_NAME;
use crate::column_family::{ColumnFamilyDescriptor, DEFAULT_COLUMN_FAMILY_ID};
use crate::error::{Error, Result};
use crate::options::Options;
use crate::version::VersionSet;

/// One family an open opens: its id, name and options.
pub(crate) struct OpenFamily {
    pub id: u32,
    pub name: String,
    pub opts: Arc<Options>,
}

/// What an open does with the families: those it opens (`default` first) and those it
/// creates (names and options; ids are given at the commit).
pub(crate) struct FamilyPlan {
    pub open: Vec<OpenFamily>,
    pub create: Vec<(String, Arc<Options>)>,
}

/// The plan for opening `vs`'s database with the database options `db` (also `default`'s) and
/// `named` families; `InvalidArgument` (nothing written) when the rules above refuse.
pub(crate) fn plan(
    vs: &VersionSet,
    db: &Options,
    named: &[ColumnFamilyDescriptor],
    read_only: bool,
) -> Result<FamilyPlan> {
    let dir = vs.dir().display().to_string();
    let refuse = |what: String| Err(Error::InvalidArgument(format!("{dir}: {what}")));
    for (i, d) in named.iter().enumerate() {
        if d.name.is_empty() {
            return refuse("a column family name is empty".into());
        }
        if named[..i].iter().any(|e| e.name == d.name) {
            return refuse(format!("column family {:?} is named twice", d.name));
        }
    }
    let mut plan = FamilyPlan {
        open: vec![OpenFamily {
            id: DEFAULT_COLUMN_FAMILY_ID,
            name: DEFAULT_COLUMN_FAMILY_NAME.into(),
            opts: Arc::new(db.clone()),
        }],
        create: Vec::new(),
    };
    let mut not_named = Vec::new();
    for (&id, f) in vs.families().range(DEFAULT_COLUMN_FAMILY_ID + 1..) {
        match named.iter().find(|d| d.name == f.name) {
            Some(d) => plan.open.push(OpenFamily {
                id,
                name: f.name.clone(),
                opts: family_options(db, d)?,
            }),
            None => not_named.push(f.name.as_str()),
        }
    }
    if !not_named.is_empty() && !read_only {
        return refuse(format!(
            "column families not opened: {} (every column family of the database must be \
             named to open it for writing; nothing was changed)",
            not_named.join(", ")
        ));
    }
    for d in named {
        let live = d.name == DEFAULT_COLUMN_FAMILY_NAME
            || vs.families().values().any(|f| f.name == d.name);
        if live {
            continue;
        }
        if read_only || !db.create_missing_column_families {
            return refuse(format!(
                "column family not found: {} (set create_missing_column_families to create it)",
                d.name
            ));
        }
        plan.create.push((d.name.clone(), family_options(db, d)?));
    }
    Ok(plan)
}

/// The block cache of its own a family with options `f` has (RocksDB's per-family
/// `BlockBasedTableOptions::block_cache`): `f.block_cache` unless it is the database's (`db`'s,
/// which `default` always uses) or the database has no block cache.
pub(crate) fn own_block_cache(db: &Options, f: &Options) -> Option<crate::sst::SharedBlockCache> {
    let own = f.block_cache.as_ref()?;
    let same = db.block_cache.as_ref().is_some_and(|d| d.same_cache(own));
    (!same && !db.no_block_cache).then(|| Arc::clone(own.cache()))
}

/// `d`'s options, sanitized and checked, with the database's file system (its own
/// `num_levels`: each family's version has its own levels).
pub(crate) fn family_options(db: &Options, d: &ColumnFamilyDescriptor) -> Result<Arc<Options>> {
    let mut o = d.options.clone();
    let _ = o.sanitize();
    o.validate()?;
    o.fs = db.fs.clone();
    Ok(Arc::new(o))
}
