//! RocksDB's `SanitizeOptions` for the options whose combination could stop a database for
//! good: L0's slowdown trigger below its compaction trigger (or the stop trigger below the
//! slowdown one after that) would stop writes at an L0 size no compaction is ever picked for,
//! so, as RocksDB does, the triggers are raised (slowdown to the compaction trigger, stop to the
//! slowdown trigger) and the open's LOG says so. A command line that works on RocksDB works
//! here. Called by `Db::open` before `Options::validate`.

use super::Options;

impl Options {
    /// Raises L0's slowdown and stop triggers to at least the compaction trigger, as RocksDB
    /// does; returns a LOG line for each change (none if nothing changed).
    pub fn sanitize(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        let trigger = self.level0_file_num_compaction_trigger;
        if self.level0_slowdown_writes_trigger < trigger {
            notes.push(format!(
                "[WARN] level0_slowdown_writes_trigger {} is below \
                 level0_file_num_compaction_trigger {trigger} (writes would stop before any L0 \
                 compaction is picked): raised to {trigger}, as RocksDB does",
                self.level0_slowdown_writes_trigger
            ));
            self.level0_slowdown_writes_trigger = trigger;
            if self.level0_stop_writes_trigger < trigger {
                notes.push(format!(
                    "[WARN] level0_stop_writes_trigger {} raised to {trigger} with it",
                    self.level0_stop_writes_trigger
                ));
                self.level0_stop_writes_trigger = trigger;
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_below_the_compaction_trigger_are_raised_as_rocksdb_does() {
        let mut o = Options {
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 2,
            level0_stop_writes_trigger: 3,
            ..Default::default()
        };
        let notes = o.sanitize();
        assert_eq!((o.level0_slowdown_writes_trigger, o.level0_stop_writes_trigger), (4, 4));
        assert_eq!(notes.len(), 2, "{notes:?}");
        o.validate().unwrap();
        assert!(o.sanitize().is_empty(), "sanitizing twice changes nothing");
        let mut fine = Options::default();
        assert!(fine.sanitize().is_empty());
        assert_eq!(
            fine.level0_slowdown_writes_trigger,
            Options::default().level0_slowdown_writes_trigger
        );
    }
}
