//! Deliberately broken stores, to show that the checks catch a store that breaks openraft's
//! durability contract: `talus raft-kv --unsafe-fault=NAME` and the power-loss tests run them.
//! Never for use: each one can lose acknowledged writes or elect two leaders in one term.

use std::fmt;
use std::str::FromStr;

/// A way to break the store's durability contract (or none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    /// The correct store.
    #[default]
    None,
    /// `save_vote` writes the vote without syncing it: a power loss can forget a vote the
    /// node cast (caught by the power-loss tests; a process kill keeps it).
    VoteNotSynced,
    /// `append` reports entries flushed without syncing them (caught by the power-loss tests).
    LogNotSynced,
    /// `save_vote` writes the vote past the write-ahead log (memtable only): a process kill
    /// forgets it, as a power loss forgets an unsynced vote.
    VoteNotLogged,
    /// `append` writes entries past the write-ahead log and reports them flushed at once: a
    /// process kill loses them (caught by the kill test).
    LogNotLogged,
}

impl Fault {
    /// Every fault's command-line name.
    pub const NAMES: [&'static str; 5] =
        ["none", "vote-not-synced", "log-not-synced", "vote-not-logged", "log-not-logged"];
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = match self {
            Fault::None => 0,
            Fault::VoteNotSynced => 1,
            Fault::LogNotSynced => 2,
            Fault::VoteNotLogged => 3,
            Fault::LogNotLogged => 4,
        };
        f.write_str(Fault::NAMES[i])
    }
}

impl FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Fault, String> {
        Ok(match s {
            "none" => Fault::None,
            "vote-not-synced" => Fault::VoteNotSynced,
            "log-not-synced" => Fault::LogNotSynced,
            "vote-not-logged" => Fault::VoteNotLogged,
            "log-not-logged" => Fault::LogNotLogged,
            _ => return Err(format!("unknown fault {s:?} (one of {})", Fault::NAMES.join(", "))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in Fault::NAMES {
            assert_eq!(n.parse::<Fault>().unwrap().to_string(), n);
        }
        assert!("vote".parse::<Fault>().is_err());
    }
}
