//! One [`crate::Catalog`] per database in a process: the registry of open catalogs.
//!
//! A catalog keeps the state that makes its writes correct in memory (the uniqueness locks, the
//! conflict clock, the next index id), so two catalogs over one database would each miss the
//! other's writes and diverge. [`register`] records the storage instance a catalog was opened
//! on ([`crate::Storage::instance`], shared by every clone of a handle) and refuses a second
//! one while the first lives; the [`Registration`] it returns, kept in the catalog, removes the
//! record when the last clone of that catalog is dropped.
//!
//! Who calls: `Catalog::open_with`, once per open. Locks: the registry's mutex, held for a set
//! insert or remove only.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{LazyLock, Mutex};

use crate::error::{Result, TableError};

static OPEN: LazyLock<Mutex<HashSet<usize>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// Keeps a storage instance registered as having a catalog; unregisters it when dropped.
pub(crate) struct Registration(usize);

/// Registers `instance` (the database in `dir`); [`talus::Error::Busy`] if a catalog of it is
/// already open in this process.
pub(crate) fn register(instance: usize, dir: &Path) -> Result<Registration> {
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    if !open.insert(instance) {
        return Err(TableError::Engine(talus::Error::Busy(format!(
            "a Catalog of {} is already open in this process: clone that one (a second \
             catalog would not see the first one's uniqueness locks and transactions)",
            dir.display()
        ))));
    }
    Ok(Registration(instance))
}

impl Drop for Registration {
    fn drop(&mut self) {
        OPEN.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_registration_of_one_instance_is_refused_until_the_first_is_dropped() {
        // An address no storage has: a local's.
        let marker = 0u8;
        let id = &marker as *const u8 as usize;
        let first = register(id, Path::new("/x")).unwrap();
        let e = register(id, Path::new("/x")).err().expect("a second catalog was allowed");
        assert!(e.to_string().contains("already open"), "{e}");
        drop(first);
        register(id, Path::new("/x")).expect("the first one's drop unregistered it");
    }
}
