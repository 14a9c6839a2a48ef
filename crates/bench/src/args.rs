//! The flags of `beeline bench`.

use std::time::Duration;

use beeline_units::{parse_duration, parse_size};
use clap::{Args, ValueEnum};

use crate::client::Api;

/// Which built-in model the load runs (see `models.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessKind {
    /// Start, one service task, end.
    OneTask,
    /// Ten service tasks in a row.
    TenTasks,
    /// Exclusive gateway, parallel fork and join, a message catch event, a 1 s timer and
    /// five service tasks.
    Typical,
}

impl ProcessKind {
    pub fn name(self) -> &'static str {
        match self {
            ProcessKind::OneTask => "one-task",
            ProcessKind::TenTasks => "ten-tasks",
            ProcessKind::Typical => "typical",
        }
    }
}

/// `beeline bench`: load a Zeebe gateway (Beeline's or Zeebe's) over Zeebe's gRPC protocol or
/// Camunda's REST API.
#[derive(Debug, Clone, Args)]
#[command(
    about = "Load a Zeebe gateway (Beeline or Zeebe, over gRPC or Camunda's REST API) and report throughput, latency and backpressure"
)]
pub struct BenchArgs {
    /// The API the load goes through: Zeebe's gRPC gateway protocol, or Camunda's REST API
    /// (`/v2`: creates, workers polling `/jobs/activation` and completing over REST).
    #[arg(long, value_enum, default_value = "grpc")]
    pub api: Api,

    /// Gateway address (HOST:PORT or an http:// URL); default 127.0.0.1:26500 for gRPC,
    /// 127.0.0.1:8080 for REST.
    #[arg(long, value_name = "HOST:PORT")]
    pub gateway: Option<String>,

    /// Built-in process model to deploy and start.
    #[arg(long, value_enum, default_value = "one-task")]
    pub process: ProcessKind,

    /// Process instances started per second, open loop (with --find-max: the first rate tried).
    #[arg(long, default_value_t = 100.0, value_parser = parse_rate)]
    pub rate: f64,

    /// How long instances are started (with --find-max: the length of each step), e.g. 30s, 5m.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Size of the variables JSON sent with each start and each job completion, e.g. 1KiB.
    #[arg(long, default_value = "0", value_parser = parse_size)]
    pub payload: u64,

    /// Job workers (each one poller or one stream); default: 2 per partition, at least 2.
    #[arg(long)]
    pub workers: Option<usize>,

    /// Jobs one worker holds at a time (activated and not yet completed). The workers complete
    /// at most (workers × capacity) / (one job's round trip) jobs per second, so a window too
    /// small for the rate turns a slow second into a backlog the run never recovers from.
    #[arg(long, default_value_t = 128)]
    pub worker_capacity: usize,

    /// Threads the tool's starter and workers run on. One does thousands of instances per
    /// second, and spares the machine the wake-ups of tasks moving between threads (on two
    /// shared cores, two threads cost a quarter more CPU and doubled the p99); more for rates
    /// one core of the tool cannot keep up with.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub client_threads: u16,

    /// Workers receive jobs through StreamActivatedJobs (with a slow ActivateJobs sweep for
    /// jobs created while no stream was open).
    #[arg(long, conflicts_with = "poll")]
    pub stream: bool,

    /// Workers long-poll ActivateJobs (the default).
    #[arg(long)]
    pub poll: bool,

    /// Partitions of the broker, for sizing workers; default: what Topology reports.
    #[arg(long)]
    pub partitions_hint: Option<u32>,

    /// Requests in flight at once, over starts, publishes and completions each.
    #[arg(long, default_value_t = 1000)]
    pub max_in_flight: usize,

    /// Before the measured run, start instances at --rate for this long without taking their
    /// figures: the run then measures the rate held, not its first seconds (new connections
    /// and job streams, backpressure limits a load before this one lowered).
    #[arg(long, value_parser = parse_duration, conflicts_with_all = ["find_max", "soak"])]
    pub warm_up: Option<Duration>,

    /// After the starts stop, how long to wait for started instances to complete.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub drain: Duration,

    /// Print the report as JSON too: the last line of output is one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Ramp the rate from --rate (by a quarter a step, then bisecting) until backpressure or
    /// the p99 target breaks; report the highest rate sustained. A step that fails is run
    /// again: a rate fails when it fails twice in a row.
    #[arg(long, conflicts_with = "soak")]
    pub find_max: bool,

    /// p99 latency a --find-max step must stay under; default 1s (2s for `typical`, whose
    /// timer alone takes 1s).
    #[arg(long, value_parser = parse_duration)]
    pub p99_target: Option<Duration>,

    /// Share of refused starts (RESOURCE_EXHAUSTED) a --find-max step may have.
    #[arg(long, default_value_t = 0.01)]
    pub max_backpressure: f64,

    /// Rates a --find-max search tries after the first failure (bisection steps).
    #[arg(long, default_value_t = 4)]
    pub search_steps: u32,

    /// Highest rate a --find-max search tries (the ramp stops there).
    #[arg(long, default_value_t = 1_000_000.0)]
    pub max_rate: f64,

    /// Broker process to sample each second (/proc/PID/status VmRSS, /proc/PID/stat CPU, and
    /// the memory of its cgroup, page cache included, when it runs in one of its own).
    #[arg(long, value_name = "PID")]
    pub broker_pid: Option<u32>,

    /// Soak: run the load this long instead of --duration, printing the broker's RSS (and its
    /// cgroup's memory, see --broker-pid) as it goes.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub soak: Option<Duration>,

    /// Soak: how often to print a line with RSS and throughput.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub sample_every: Duration,

    /// Soak: a shell command (`sh -c`) run every --restart-every, e.g. to restart the broker.
    /// If its last line of output is a number, it is taken as the broker's new PID.
    #[arg(long, value_name = "CMD")]
    pub restart_cmd: Option<String>,

    /// Soak: how often --restart-cmd runs.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub restart_every: Duration,

    /// Soak: RSS the broker must stay under, e.g. 512MiB.
    #[arg(long, value_parser = parse_size)]
    pub rss_limit: Option<u64>,
}

impl BenchArgs {
    /// The p99 target for --find-max, defaulting by model.
    pub fn p99_target(&self) -> Duration {
        self.p99_target.unwrap_or(match self.process {
            ProcessKind::Typical => Duration::from_secs(2),
            _ => Duration::from_secs(1),
        })
    }

    /// The gateway's address: the one given, or the API's default port on this machine.
    pub fn gateway(&self) -> String {
        self.gateway.clone().unwrap_or_else(|| {
            match self.api {
                Api::Grpc => "127.0.0.1:26500",
                Api::Rest => "127.0.0.1:8080",
            }
            .to_string()
        })
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let rate: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of instances per second"))?;
    if rate.is_finite() && rate > 0.0 && rate <= 1_000_000.0 {
        Ok(rate)
    } else {
        Err(format!("rate `{s}` must be above 0 and at most 1000000"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BenchArgs,
    }

    #[test]
    fn flags_parse_and_conflict() {
        let cli = Cli::try_parse_from([
            "bench",
            "--process",
            "typical",
            "--rate",
            "200",
            "--duration",
            "20s",
            "--payload",
            "1KiB",
            "--stream",
            "--json",
        ])
        .unwrap();
        assert_eq!(cli.args.process, ProcessKind::Typical);
        assert_eq!(cli.args.rate, 200.0);
        assert_eq!(cli.args.payload, 1024);
        assert!(cli.args.stream);
        assert_eq!(cli.args.p99_target(), Duration::from_secs(2));
        assert_eq!(cli.args.api, Api::Grpc);
        assert_eq!(cli.args.gateway(), "127.0.0.1:26500");
        let rest = Cli::try_parse_from(["bench", "--api", "rest"]).unwrap();
        assert_eq!(rest.args.gateway(), "127.0.0.1:8080");
        assert!(Cli::try_parse_from(["bench", "--stream", "--poll"]).is_err());
        assert!(Cli::try_parse_from(["bench", "--rate", "0"]).is_err());
        assert!(Cli::try_parse_from(["bench", "--find-max", "--soak", "1h"]).is_err());
    }
}
