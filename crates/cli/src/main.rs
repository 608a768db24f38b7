//! The `talus` command: `ldb`, `sst_dump` (and later `db_bench`).

mod db_bench;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("db_bench") => db_bench::run(&args[1..]),
        _ => {
            eprintln!("talus: not yet implemented");
            2
        }
    };
    std::process::exit(code);
}
