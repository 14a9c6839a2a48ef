//! `beeline`: the node binary.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod chaos;
mod cluster;
mod compare_cluster;
mod config;
mod config_file;
mod harness;
mod monitoring;
mod node;
mod read_side;
mod replication;
mod torture;
mod zeebe_env;

// jemalloc serves every allocation of the process: Rust's through the global allocator, and
// RocksDB's C++ ones because it also provides the unprefixed `malloc` symbols. Background
// threads return freed pages to the system steadily, so the resident size follows the live
// heap instead of its high-water mark. Freed pages are kept 100 ms, then returned at once
// (`muzzy_decay_ms:0`: pages only marked free still count in the resident size): a broker
// falling behind frees and allocates fast, and with 1 s its peak resident size ran 70 MiB
// above its peak allocated size, and over its memory limit (docs/benchmarks.md, "Freed pages
// kept 100 ms").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[allow(non_upper_case_globals)]
#[unsafe(export_name = "malloc_conf")]
pub static malloc_conf: &[u8; 59] = b"background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0\0";

#[derive(Parser)]
#[command(
    name = "beeline",
    version,
    about = "A BPMN workflow engine that speaks Zeebe's protocols"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at the start: the broker's many settings make its variant the largest, which
// costs nothing here.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Runs a node: its partitions, the gRPC gateway and the monitoring endpoints.
    // A later flag overrides an earlier one: the config file's settings come first.
    #[command(args_override_self = true)]
    Broker(config::BrokerConfig),
    /// deploy, create, publish, status: a client of any Zeebe gateway.
    #[command(flatten)]
    Client(beeline_cli::Command),
    /// Loads a Zeebe gateway (this node's or a real Zeebe's) and reports throughput, latency,
    /// backpressure and the broker's memory; with --compare-cluster, starts one broker and then
    /// three replicated ones of this binary and compares them.
    Bench(BenchCommand),
    /// Crash torture: drives a broker of this binary with load, kills it with SIGKILL over and
    /// over (at random moments, and as snapshots, compactions and segment rolls begin), and
    /// after every restart checks that each acknowledged command's effect is there exactly once.
    Torture(torture::TortureArgs),
    /// Fault tests of a replicated cluster: three brokers of this binary under load, their
    /// partitions' leaders killed with SIGKILL and brokers isolated behind fault-injecting
    /// proxies, then every replica checked against the client's history (nothing
    /// acknowledged lost, nothing applied twice, replicas agreeing on the log and the state).
    Chaos(chaos::ChaosArgs),
}

/// `beeline bench`: the load tool's flags, and those only this binary has (it can start
/// brokers).
#[derive(clap::Args)]
struct BenchCommand {
    #[command(flatten)]
    bench: beeline_bench::BenchArgs,
    #[command(flatten)]
    compare: compare_cluster::CompareArgs,
}

fn main() -> ExitCode {
    let command = Cli::command();
    let Some(broker) = command.find_subcommand("broker") else {
        eprintln!("error: this build has no broker command");
        return ExitCode::FAILURE;
    };
    let args = zeebe_env::with_zeebe_environment(std::env::args_os().collect(), broker, |var| {
        std::env::var_os(var)
    })
    .and_then(|args| config_file::with_file_settings(args, broker, |var| std::env::var_os(var)));
    let args = match args {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(args);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BEELINE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match cli.command {
        Command::Broker(config) => run_broker(config),
        Command::Bench(BenchCommand { bench, compare }) if compare.compare_cluster => {
            compare_cluster::run(bench, compare)
        }
        Command::Bench(BenchCommand { bench, .. }) => run_bench(bench),
        Command::Torture(args) => torture::run(args),
        Command::Chaos(args) => chaos::run(args),
        Command::Client(command) => on_runtime(
            tokio::runtime::Builder::new_current_thread().thread_name("beeline-cli"),
            beeline_cli::run(command),
        ),
    }
}

fn run_broker(config: config::BrokerConfig) -> ExitCode {
    if let Err(e) = config.cluster() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(config.threads())
        .max_blocking_threads(16)
        .thread_name("beeline");
    on_runtime(&mut builder, async {
        match node::run(config).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

fn run_bench(args: beeline_bench::BenchArgs) -> ExitCode {
    let mut builder = match args.client_threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        threads => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(usize::from(threads));
            builder
        }
    };
    builder.thread_name("beeline-bench");
    on_runtime(&mut builder, beeline_bench::main(args))
}

/// Runs a subcommand on the runtime `builder` makes; a runtime that cannot start fails it.
fn on_runtime(
    builder: &mut tokio::runtime::Builder,
    subcommand: impl std::future::Future<Output = ExitCode>,
) -> ExitCode {
    match builder.enable_all().build() {
        Ok(runtime) => runtime.block_on(subcommand),
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
