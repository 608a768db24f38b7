//! The spellings every option shares: gflags' booleans and the one error text for a malformed
//! value (used by the command-line parser and the engine option table alike).

/// gflags' boolean spellings, in any case.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "t" | "y" => Some(true),
        "false" | "0" | "no" | "f" | "n" => Some(false),
        _ => None,
    }
}

/// The one error text for a malformed value: `invalid value "x" for flag --name: expected ...`.
pub fn bad(name: &str, value: &str, what: &str) -> String {
    format!("invalid value {value:?} for flag --{name}: expected {what}")
}
