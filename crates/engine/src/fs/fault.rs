//! Fault-injecting file system (filled in by the reliability work).
