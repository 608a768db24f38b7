//! The `talus` subcommands this crate provides: `raft-kv` (a node, `kv.rs`), `raft-ctl` (a
//! client and cluster admin, `ctl.rs`) and `raft-bench` (the kill test and the throughput
//! benchmark, `crate::bench`). Each takes the arguments after its name and returns the exit
//! code, as the `talus` binary's other subcommands do.

mod bench;
mod ctl;
mod kv;

pub use bench::raft_bench;
pub use ctl::raft_ctl;
pub use kv::raft_kv;

/// `--name=value` arguments from a config file's `name = value` lines (`#` starts a comment;
/// quotes around a value are dropped), to go before the command line's (which win).
pub(crate) fn config_file_args(path: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!("{}:{}: not `name = value`", path.display(), n + 1));
        };
        let v = v.trim().trim_matches('"');
        out.push(format!("--{}={v}", k.trim().replace('_', "-")));
    }
    Ok(out)
}

/// A tokio runtime with `threads` workers.
pub(crate) fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn config_file_lines_become_flags() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("n1.conf");
        std::fs::write(
            &p,
            "# node 1\nid = 1\naddr = \"127.0.0.1:7001\"\nsnapshot_logs=5 # often\n",
        )
        .unwrap();
        let args = super::config_file_args(&p).unwrap();
        assert_eq!(args, ["--id=1", "--addr=127.0.0.1:7001", "--snapshot-logs=5"]);
        std::fs::write(&p, "id 1\n").unwrap();
        assert!(super::config_file_args(&p).unwrap_err().contains(":1: not"));
    }
}
