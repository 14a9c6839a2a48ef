//! `beeline bench` without the `beeline` binary (which needs RocksDB to build):
//! `cargo run --release -p beeline-bench --example bench -- --help`.

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(name = "bench")]
struct Cli {
    #[command(flatten)]
    args: beeline_bench::BenchArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(beeline_bench::main(cli.args)),
        Err(e) => {
            eprintln!("bench: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
