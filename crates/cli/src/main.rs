//! The `talus` command: `ldb`, `sst_dump` (and later `db_bench`).

fn main() {
    eprintln!("talus: not yet implemented");
    std::process::exit(2);
}
