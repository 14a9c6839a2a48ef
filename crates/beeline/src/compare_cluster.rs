//! `beeline bench --compare-cluster`: one broker at replication factor 1 beside three brokers
//! at factor 3, in one run on one machine, with `beeline bench`'s load:
//! 1. one broker of this binary (the partitions of `--cluster-partitions`, factor 1): its
//!    highest sustained rate (`--find-max` with the run's flags); it is then stopped;
//! 2. three brokers, the same partitions, factor 3 (started as `beeline chaos` starts its
//!    brokers, without the proxies), each partition's leadership handed to its primary
//!    (`/actuator/rebalance`): their highest sustained rate through broker 0;
//! 3. the cluster at half that rate for `--hold`: the instance latency, after
//!    `--hold-warm-up` at that rate whose figures are not taken;
//! 4. `--kills` times, under that load: the leader of a partition (seeded choice) SIGKILLed,
//!    the time to the partition's first successful command measured as `beeline chaos`
//!    measures it (a message published on the partition, tried through each broker in turn),
//!    the broker restarted and the cluster whole again;
//! 5. every broker's RSS sampled each second throughout, against its `--memory-limit`, and
//!    every replica's journal on disk (its peak), with the time each restarted broker took to
//!    have all its replicas back.
//!
//! Then a verdict per target: the cluster's rate at least half the single broker's, its p99
//! at half its rate at most 30 ms, leader kill to first success at most 3 s at p99, every
//! broker within its memory limit.
//!
//! The load enters through one broker, as Zeebe's benchmarks load a cluster through a gateway
//! of its own (every broker is a gateway to the whole cluster): broker 0, and for each kill a
//! load of its own through a broker other than the one killed, so the client keeps its
//! gateway while the partition fails over (a client whose gateway dies measures its own
//! reconnection, not the failover).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use beeline_bench::{BenchArgs, ProcessUse, Report, Sampler};
use beeline_units::{parse_duration, parse_size};
use serde::Serialize;

use crate::chaos::load::{ClusterClient, JournalSyncs, leaders};
use crate::chaos::percentile;
use crate::harness::{BrokerSettings, Node, RunStart, Xorshift, connect, free_port};

/// The flags `beeline bench` has only in this binary, which can start brokers.
#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// Compare one broker (replication factor 1) with three (factor 3) in one run: highest
    /// rate of each (--find-max with the other flags), the cluster's latency at half its rate,
    /// leader kills under that load, every broker's RSS against its memory limit. Starts its
    /// own brokers of this binary (no --gateway).
    #[arg(long)]
    pub compare_cluster: bool,

    /// --compare-cluster: leader kills (SIGKILL, then a restart) under the half-rate load.
    #[arg(long, default_value_t = 10, requires = "compare_cluster")]
    pub kills: u32,

    /// --compare-cluster: partitions of the single broker and of the cluster.
    #[arg(long, default_value_t = 3, requires = "compare_cluster",
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub cluster_partitions: u16,

    /// --compare-cluster: each broker's --memory-limit, which its RSS must stay within.
    #[arg(long, default_value = "256MiB", requires = "compare_cluster", value_parser = parse_size)]
    pub broker_memory_limit: u64,

    /// --compare-cluster: how long the cluster runs at half its highest rate for the latency.
    #[arg(long, default_value = "60s", requires = "compare_cluster", value_parser = parse_duration)]
    pub hold: Duration,

    /// --compare-cluster: the hold begins with this long at its rate, not measured: its
    /// figures are of the rate held, not of its first seconds after the search (new
    /// connections and job streams, backpressure limits the search's overloaded steps lowered).
    #[arg(long, default_value = "10s", requires = "compare_cluster", value_parser = parse_duration)]
    pub hold_warm_up: Duration,

    /// --compare-cluster: directory of the brokers' data and logs (default: a new one under
    /// the system's temporary directory, removed after the run).
    #[arg(long, requires = "compare_cluster")]
    pub dir: Option<PathBuf>,

    /// --compare-cluster: seed of the choice of partitions whose leader is killed.
    #[arg(long, requires = "compare_cluster")]
    pub seed: Option<u64>,
}

/// The targets, as the cluster issue sets them.
const MIN_RATE_RATIO: f64 = 0.5;
const MAX_P99_MS: f64 = 30.0;
const MAX_FAILOVER_P99: Duration = Duration::from_secs(3);
/// How long the leaders may take to move to their partitions' primaries when asked.
const PLACED_WITHIN: Duration = Duration::from_secs(15);

/// How long a cluster may take to have every replica up and one leader per partition.
const WHOLE_WITHIN: Duration = Duration::from_secs(120);
/// How long the probe after a kill tries before the partition counts as stuck.
const PROBE_FOR: Duration = Duration::from_secs(60);

/// What the comparison measured: the figures the verdicts are made from, and the reports of
/// the load tool's runs behind them.
#[derive(Debug, Serialize)]
struct Comparison {
    partitions: u16,
    seed: u64,
    single_max_rate: Option<f64>,
    cluster_max_rate: Option<f64>,
    rate_ratio: Option<f64>,
    /// The cluster at half its highest rate, no faults.
    half_rate: Option<f64>,
    half_rate_p50_ms: Option<f64>,
    half_rate_p99_ms: Option<f64>,
    half_rate_completed_per_s: Option<f64>,
    /// What the three brokers used per instance completed at half the rate.
    half_rate_cost: Option<HoldCost>,
    /// Leader kill to the partition's first successful command, ms.
    failover_ms: Vec<u64>,
    failover_p50_ms: Option<u64>,
    failover_p99_ms: Option<u64>,
    failover_max_ms: Option<u64>,
    /// The highest instance p99 of the loads the kills ran under, and their failed requests.
    under_kills_p99_ms: Option<f64>,
    under_kills_errors: u64,
    /// Each killed broker's restart to all its replicas up and healthy again, ms.
    back_after_restart_ms: Vec<u64>,
    memory_limit_mib: f64,
    brokers: Vec<BrokerMemory>,
    /// Each replica's largest journal on disk (its log directory) over the run.
    journals: Vec<JournalPeak>,
    /// /proc/loadavg (1 minute) when the run began and when it ended.
    load_average: [Option<f64>; 2],
    findings: Vec<String>,
    verdicts: Vec<Verdict>,
    single: Option<Report>,
    cluster: Option<Report>,
    hold: Option<Report>,
    under_kills: Vec<Report>,
}

/// The brokers' CPU and voluntary context switches (every thread's waits) per instance
/// completed in a load: below its highest rate the cluster's cost per instance is mostly
/// wake-ups (docs/benchmarks.md, "Below its highest rate the cluster's CPU is already spent").
#[derive(Debug, Clone, Copy, Serialize)]
struct HoldCost {
    cpu_ms_per_instance: f64,
    switches_per_instance: f64,
    /// The brokers' journal syncs per instance and their mean duration, from their metrics
    /// (`None` if a broker's metrics could not be read).
    syncs_per_instance: Option<f64>,
    mean_sync_ms: Option<f64>,
}

impl HoldCost {
    /// `used` and `syncs` over the instances `report` completed; `None` if none completed.
    fn of(used: ProcessUse, syncs: Option<JournalSyncs>, report: &Report) -> Option<Self> {
        // The brokers' use and syncs are taken over the warm-up too.
        let completed =
            report.result.completed + report.warm_up.as_ref().map_or(0, |w| w.completed);
        (completed > 0).then(|| Self {
            cpu_ms_per_instance: used.cpu_ms() / completed as f64,
            switches_per_instance: used.voluntary_switches as f64 / completed as f64,
            syncs_per_instance: syncs.map(|s| s.syncs as f64 / completed as f64),
            mean_sync_ms: syncs
                .filter(|s| s.syncs > 0)
                .map(|s| s.seconds * 1000.0 / s.syncs as f64),
        })
    }
}

#[derive(Debug, Serialize)]
struct BrokerMemory {
    /// `single` or `cluster-N`.
    broker: String,
    peak_rss_mib: Option<f64>,
    samples: usize,
    within_limit: Option<bool>,
}

#[derive(Debug, Serialize)]
struct JournalPeak {
    /// `single` or `cluster-N`, and the partition.
    broker: String,
    partition: u16,
    peak_mib: f64,
}

/// Each replica's journal on disk (the files of `partitions/N/log` under each broker's data
/// directory), sampled each second until dropped: the largest seen.
struct JournalSampler {
    /// (broker, partition) to the largest size seen, bytes.
    peaks: Arc<Mutex<BTreeMap<(String, u16), u64>>>,
    task: tokio::task::JoinHandle<()>,
}

impl JournalSampler {
    fn start(brokers: Vec<(String, PathBuf)>) -> Self {
        let peaks: Arc<Mutex<BTreeMap<(String, u16), u64>>> = Arc::default();
        let task = tokio::spawn({
            let peaks = peaks.clone();
            async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let sizes: Vec<_> = brokers
                        .iter()
                        .flat_map(|(broker, data)| {
                            journal_sizes(data)
                                .into_iter()
                                .map(|(partition, size)| ((broker.clone(), partition), size))
                        })
                        .collect();
                    let mut peaks = peaks.lock().unwrap_or_else(PoisonError::into_inner);
                    for (replica, size) in sizes {
                        let peak = peaks.entry(replica).or_default();
                        *peak = (*peak).max(size);
                    }
                }
            }
        });
        Self { peaks, task }
    }

    fn peaks(&self) -> Vec<JournalPeak> {
        self.peaks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|((broker, partition), peak)| JournalPeak {
                broker: broker.clone(),
                partition: *partition,
                peak_mib: *peak as f64 / (1024.0 * 1024.0),
            })
            .collect()
    }
}

impl Drop for JournalSampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Each partition's journal under a broker's data directory: the partition and the bytes of
/// its log directory's files.
fn journal_sizes(data: &Path) -> Vec<(u16, u64)> {
    let Ok(partitions) = std::fs::read_dir(data.join("partitions")) else {
        return Vec::new();
    };
    partitions
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let partition = entry.file_name().to_str()?.parse().ok()?;
            let files = std::fs::read_dir(entry.path().join("log")).ok()?;
            let bytes = files
                .filter_map(Result::ok)
                .filter_map(|file| file.metadata().ok())
                .filter(|meta| meta.is_file())
                .map(|meta| meta.len())
                .sum();
            Some((partition, bytes))
        })
        .collect()
}

#[derive(Debug, Serialize)]
struct Verdict {
    target: &'static str,
    met: bool,
    figures: String,
}

/// Flags of `beeline bench` that the comparison sets itself.
fn refuse_conflicts(bench: &BenchArgs) -> Result<(), String> {
    let conflicts = [
        (bench.gateway.is_some(), "--gateway"),
        (bench.find_max, "--find-max"),
        (bench.soak.is_some(), "--soak"),
        (bench.broker_pid.is_some(), "--broker-pid"),
        (bench.restart_cmd.is_some(), "--restart-cmd"),
        (bench.rss_limit.is_some(), "--rss-limit"),
        (bench.api != beeline_bench::Api::Grpc, "--api rest"),
    ];
    match conflicts.iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(format!(
            "{flag} does not go with --compare-cluster: it starts its own brokers, loads them \
             over gRPC, runs --find-max itself and samples each broker's RSS against \
             --broker-memory-limit"
        )),
        None => Ok(()),
    }
}

pub fn run(bench: BenchArgs, args: CompareArgs) -> ExitCode {
    if let Err(e) = refuse_conflicts(&bench) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let RunStart {
        seed,
        dir,
        temporary,
        runtime,
    } = match RunStart::new("compare", args.seed, args.dir.as_deref()) {
        Ok(start) => start,
        Err(code) => return code,
    };
    println!(
        "compare: 1 broker at replication factor 1, then 3 at factor 3, {} partitions each; \
         {} leader kills; memory limit {} MiB per broker; seed {seed}; directory {}",
        args.cluster_partitions,
        args.kills,
        args.broker_memory_limit >> 20,
        dir.display()
    );
    let outcome = runtime.block_on(compare(&bench, &args, &dir, seed));
    runtime.shutdown_timeout(Duration::from_secs(5));
    let comparison = match outcome {
        Ok(comparison) => comparison,
        Err(e) => {
            eprintln!(
                "FAILED (seed {seed}, directory {} kept): {e}",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    };
    print!("{}", text(&comparison));
    if bench.json {
        match serde_json::to_string(&comparison) {
            Ok(line) => println!("{line}"),
            Err(e) => eprintln!("error: the report is not JSON: {e}"),
        }
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if !comparison.findings.is_empty() {
        ExitCode::FAILURE
    } else if comparison.verdicts.iter().all(|v| v.met) {
        ExitCode::SUCCESS
    } else {
        // Measured, and a target missed.
        ExitCode::from(3)
    }
}

/// Brokers of one side of the comparison, each sampled while it runs.
struct Brokers {
    nodes: Vec<Node>,
    samplers: Vec<Sampler>,
    journals: JournalSampler,
    client: ClusterClient,
    /// Each broker's gRPC port.
    grpc: Vec<u16>,
    partitions: u16,
    replication_factor: usize,
}

impl Brokers {
    /// Starts `count` brokers at `replication_factor` under `dir` and waits until every
    /// replica is up and each partition has a leader.
    async fn start(
        dir: &Path,
        count: usize,
        replication_factor: usize,
        partitions: u16,
        memory_limit: u64,
    ) -> Result<Self, String> {
        let port = |what: &str| free_port().map_err(|e| format!("no free port for {what}: {e}"));
        let mut internal = Vec::new();
        for _ in 0..count {
            internal.push(format!("127.0.0.1:{}", port("internal")?));
        }
        let memory_limit = memory_limit.to_string();
        let mut nodes = Vec::new();
        let mut clients = Vec::new();
        let mut monitoring = Vec::new();
        let mut grpc_ports = Vec::new();
        for node in 0..count {
            let data = dir.join(format!("broker-{node}"));
            std::fs::create_dir_all(&data)
                .map_err(|e| format!("cannot create {}: {e}", data.display()))?;
            let internal_port = internal[node]
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or_default();
            let (grpc, monitor) = (port("gRPC")?, port("monitoring")?);
            let args = BrokerSettings {
                node,
                cluster_size: count,
                replication_factor,
                partitions,
                contact_points: &internal,
                internal_port,
                grpc_port: grpc,
                monitoring_port: monitor,
                data_dir: &data,
                memory_limit: &memory_limit,
            }
            .args(&[])?;
            let mut broker = Node {
                args,
                log: dir.join(format!("broker-{node}.log")),
                process: None,
            };
            broker.start()?;
            grpc_ports.push(grpc);
            nodes.push(broker);
            clients.push(connect(grpc)?);
            monitoring.push(monitor);
        }
        let samplers = nodes
            .iter()
            .map(|n| Sampler::start(n.pid().unwrap_or_default(), Duration::from_secs(1)))
            .collect();
        let journals = JournalSampler::start(
            (0..count)
                .map(|node| {
                    let name = if count == 1 {
                        "single".to_string()
                    } else {
                        format!("cluster-{node}")
                    };
                    (name, dir.join(format!("broker-{node}")))
                })
                .collect(),
        );
        let mut brokers = Self {
            nodes,
            samplers,
            journals,
            client: ClusterClient::new(clients, monitoring),
            grpc: grpc_ports,
            partitions,
            replication_factor,
        };
        let took = brokers.whole(WHOLE_WITHIN).await?;
        println!(
            "{count} broker(s) at replication factor {replication_factor} up in {} ms",
            took.as_millis()
        );
        Ok(brokers)
    }

    /// Hands each partition's leadership to its primary (Zeebe's rebalancing: its benchmarks
    /// run with the leaders spread over the brokers as the round-robin placement puts the
    /// primaries) and waits until the brokers' metrics show every partition led there, or
    /// `within` passes: a first election may leave two partitions led by one broker, and
    /// where the leaders are changes what the load through broker 0 forwards. Says where the
    /// leaders are either way.
    async fn lead_at_primaries(&self, within: Duration) -> String {
        let members: Vec<u64> = (0..self.nodes.len() as u64).collect();
        let primaries: BTreeMap<u16, usize> = beeline_cluster::placement::round_robin(
            &members,
            u32::from(self.partitions),
            self.replication_factor as u32,
        )
        .iter()
        .filter_map(|p| Some((p.partition_id as u16, p.primary()? as usize)))
        .collect();
        let started = Instant::now();
        let asked = self.client.rebalance().await;
        let placed = loop {
            let now = leaders(&self.client.roles().await);
            if now == primaries || started.elapsed() > within || asked.is_err() {
                break now;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let listed = placed
            .iter()
            .map(|(partition, node)| format!("partition {partition} on broker {node}"))
            .collect::<Vec<_>>()
            .join(", ");
        match asked {
            Err(why) => format!("leaders: {listed} ({why})"),
            Ok(()) if placed == primaries => format!(
                "leaders: {listed}, each partition's primary ({} ms after asking)",
                started.elapsed().as_millis()
            ),
            Ok(()) => format!(
                "leaders: {listed}; not all at their primaries within {} s of asking",
                within.as_secs()
            ),
        }
    }

    /// Waits until every replica is up and healthy with one leader per partition; a broker
    /// that exits meanwhile fails the run.
    async fn whole(&mut self, within: Duration) -> Result<Duration, String> {
        let started = Instant::now();
        loop {
            for (node, broker) in self.nodes.iter_mut().enumerate() {
                if let Some(crash) = broker.crashed() {
                    return Err(format!("broker {node} {crash}"));
                }
            }
            let missing = match self
                .client
                .whole(self.partitions, self.replication_factor)
                .await
            {
                Ok(()) => return Ok(started.elapsed()),
                Err(missing) => missing,
            };
            if started.elapsed() > within {
                return Err(format!(
                    "the brokers were not all up with a leader per partition within {} s \
                     ({missing}); their logs are under the run's directory",
                    within.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The gRPC address of broker `node`.
    fn gateway(&self, node: usize) -> String {
        format!("127.0.0.1:{}", self.grpc[node % self.grpc.len()])
    }

    /// `beeline bench` with `bench`'s flags, changed by `change`, through broker 0.
    async fn load(
        &self,
        bench: &BenchArgs,
        change: impl FnOnce(&mut BenchArgs),
    ) -> Result<Report, String> {
        load(&self.gateway(0), bench, change, never(), || {}).await
    }

    /// What the brokers have used so far, summed (`None` if one cannot be read).
    fn used(&self) -> Option<ProcessUse> {
        self.samplers
            .iter()
            .map(|sampler| ProcessUse::of(sampler.pid()))
            .sum()
    }

    /// Each broker's peak RSS over the samples taken, against `limit`.
    fn memory(&self, side: &str, limit: u64) -> Vec<BrokerMemory> {
        self.samplers
            .iter()
            .enumerate()
            .map(|(node, sampler)| {
                let report = sampler.report(0.0);
                BrokerMemory {
                    broker: if self.nodes.len() == 1 {
                        side.to_string()
                    } else {
                        format!("{side}-{node}")
                    },
                    within_limit: report
                        .peak_rss_mib
                        .map(|peak| peak * 1024.0 * 1024.0 <= limit as f64),
                    peak_rss_mib: report.peak_rss_mib,
                    samples: report.samples,
                }
            })
            .collect()
    }

    /// Stops every broker cleanly (SIGKILL after 15 s).
    fn stop(&mut self) {
        for node in &mut self.nodes {
            node.stop(Duration::from_secs(15));
        }
    }
}

impl Drop for Brokers {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
    }
}

fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn never() -> std::future::Pending<()> {
    std::future::pending()
}

/// `beeline bench` with `bench`'s flags, changed by `change`, against `gateway`, until its
/// phases are over or `until` completes; `began` is called when its load begins.
async fn load(
    gateway: &str,
    bench: &BenchArgs,
    change: impl FnOnce(&mut BenchArgs),
    until: impl std::future::Future<Output = ()>,
    began: impl FnOnce(),
) -> Result<Report, String> {
    let mut args = bench.clone();
    args.gateway = Some(gateway.to_string());
    args.json = false;
    // Only the hold warms up (`--hold-warm-up`).
    args.warm_up = None;
    change(&mut args);
    beeline_bench::run_until(args, until, began)
        .await
        .map_err(|e| e.to_string())
}

async fn compare(
    bench: &BenchArgs,
    args: &CompareArgs,
    dir: &Path,
    seed: u64,
) -> Result<Comparison, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let load_before = load_average();
    let partitions = args.cluster_partitions;
    let limit = args.broker_memory_limit;

    // 1. One broker, factor 1.
    let mut single = Brokers::start(&dir.join("single"), 1, 1, partitions, limit).await?;
    let single_report = single.load(bench, |a| a.find_max = true).await?;
    let single_max = single_report
        .find_max
        .as_ref()
        .and_then(|f| f.max_sustained_rate);
    println!(
        "single broker: highest sustained rate {}",
        rate_text(single_max)
    );
    single.stop();
    let mut memory = single.memory("single", limit);
    let mut journals = single.journals.peaks();
    drop(single);

    // 2. Three brokers, factor 3, each partition led by its primary.
    let mut cluster = Brokers::start(&dir.join("cluster"), 3, 3, partitions, limit).await?;
    println!("{}", cluster.lead_at_primaries(PLACED_WITHIN).await);
    let cluster_report = cluster.load(bench, |a| a.find_max = true).await?;
    let cluster_max = cluster_report
        .find_max
        .as_ref()
        .and_then(|f| f.max_sustained_rate);
    println!(
        "three brokers: highest sustained rate {}",
        rate_text(cluster_max)
    );

    // 3. Half the cluster's rate, no faults.
    let half = cluster_max.map(|r| (r / 2.0 * 10.0).round() / 10.0);
    let mut findings = Vec::new();
    let mut hold = None;
    let mut hold_cost = None;
    let mut under_kills = Vec::new();
    let mut failover = Vec::new();
    let mut back_after_restart = Vec::new();
    if let Some(half) = half {
        cluster.whole(WHOLE_WITHIN).await?;
        let before = cluster.used();
        let syncs_before = cluster.client.journal_syncs().await;
        let report = cluster
            .load(bench, |a| {
                a.rate = half;
                a.duration = args.hold;
                a.warm_up = (!args.hold_warm_up.is_zero()).then_some(args.hold_warm_up);
            })
            .await?;
        let syncs = cluster
            .client
            .journal_syncs()
            .await
            .zip(syncs_before)
            .map(|(after, before)| after.since(before));
        hold_cost = cluster
            .used()
            .zip(before)
            .and_then(|(after, before)| HoldCost::of(after.since(before), syncs, &report));
        println!(
            "three brokers at {half}/s: p50 {}, p99 {}{}",
            ms_text(report.result.latency.p50_ms),
            ms_text(report.result.latency.p99_ms),
            report.warm_up.as_ref().map_or(String::new(), |w| format!(
                " (after {:.0} s at that rate not measured, whose p50 {}, p99 {})",
                w.seconds,
                ms_text(w.latency.p50_ms),
                ms_text(w.latency.p99_ms)
            ))
        );
        hold = Some(report);

        // 4. Leader kills under that load.
        let mut random = Xorshift(seed);
        for kill in 1..=args.kills {
            match kill_leader(&mut cluster, bench, half, &mut random).await {
                Ok(Killed {
                    first_success,
                    back,
                    report,
                    line,
                }) => {
                    println!("kill {kill}/{}: {line}", args.kills);
                    failover.push(first_success);
                    back_after_restart.push(back.as_millis() as u64);
                    under_kills.push(report);
                }
                Err(finding) => {
                    findings.push(format!("kill {kill}: {finding}"));
                    break;
                }
            }
        }
    } else {
        findings.push("the cluster sustained no rate: nothing to run at half of it".into());
    }
    cluster.stop();
    memory.extend(cluster.memory("cluster", limit));
    journals.extend(cluster.journals.peaks());
    drop(cluster);

    let failover_ms: Vec<u64> = failover.iter().map(|d| d.as_millis() as u64).collect();
    let ms = |p: f64| percentile(&failover, p).map(|d| d.as_millis() as u64);
    let mut comparison = Comparison {
        partitions,
        seed,
        single_max_rate: single_max,
        cluster_max_rate: cluster_max,
        rate_ratio: single_max
            .zip(cluster_max)
            .map(|(s, c)| ((c / s) * 1000.0).round() / 1000.0),
        half_rate: half,
        half_rate_p50_ms: hold.as_ref().and_then(|r| r.result.latency.p50_ms),
        half_rate_p99_ms: hold.as_ref().and_then(|r| r.result.latency.p99_ms),
        half_rate_completed_per_s: hold.as_ref().map(|r| r.result.completed_per_s),
        half_rate_cost: hold_cost,
        failover_p50_ms: ms(0.5),
        failover_p99_ms: ms(0.99),
        failover_max_ms: ms(1.0),
        failover_ms,
        under_kills_p99_ms: under_kills
            .iter()
            .filter_map(|r| r.result.latency.p99_ms)
            .reduce(f64::max),
        under_kills_errors: under_kills
            .iter()
            .map(|r| r.result.errors.values().sum::<u64>())
            .sum(),
        back_after_restart_ms: back_after_restart,
        memory_limit_mib: limit as f64 / (1024.0 * 1024.0),
        brokers: memory,
        journals,
        load_average: [load_before, load_average()],
        findings,
        verdicts: Vec::new(),
        single: Some(single_report),
        cluster: Some(cluster_report),
        hold,
        under_kills,
    };
    comparison.verdicts = verdicts(&comparison, args.kills);
    Ok(comparison)
}

/// What one kill measured.
struct Killed {
    /// The kill to the partition's first successful command.
    first_success: Duration,
    /// The restart to the cluster whole again (the broker's replicas up and healthy).
    back: Duration,
    /// The load's report.
    report: Report,
    /// What happened, in a line.
    line: String,
}

/// One kill under load: waits for the cluster to be whole, starts the load at `rate` through
/// a broker other than a partition's leader, lets it run steadily, kills that partition's
/// leader as it is then (or another partition's, should the leadership have moved onto the
/// load's broker), measures the time to that partition's first successful command, restarts
/// the broker (its sampler follows the new process), measures the time until the cluster is
/// whole again and then stops the load.
async fn kill_leader(
    cluster: &mut Brokers,
    bench: &BenchArgs,
    rate: f64,
    random: &mut Xorshift,
) -> Result<Killed, String> {
    cluster.whole(WHOLE_WITHIN).await?;
    let partition = random.below(u64::from(cluster.partitions)) as u16 + 1;
    let leader = *leaders(&cluster.client.roles().await)
        .get(&partition)
        .ok_or_else(|| format!("partition {partition} has no leader"))?;
    let through =
        (leader + 1 + random.below(cluster.nodes.len() as u64 - 1) as usize) % cluster.nodes.len();
    let gateway = cluster.gateway(through);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (began, load_began) = tokio::sync::oneshot::channel::<()>();
    let load = load(
        &gateway,
        bench,
        |a| {
            a.rate = rate;
            a.duration = Duration::from_secs(24 * 3600);
        },
        async {
            let _ = stopped.await;
        },
        || {
            let _ = began.send(());
        },
    );
    let kill = async {
        // A steady load before the kill: its set-up (connections, the deployment, the job
        // streams) does not count.
        if load_began.await.is_err() {
            return Err("the load ended before it began".to_string());
        }
        tokio::time::sleep(Duration::from_millis(3000 + random.below(1000))).await;
        // Leadership may have moved since the load was placed: the partition's leader now is
        // killed, or, if that is the broker the load goes through, another partition's.
        // Every partition it leads fails over with it: with all of them, the load's new
        // instances have no partition to go to until one has a new leader.
        let now = leaders(&cluster.client.roles().await);
        let (partition, leader) = now
            .get(&partition)
            .filter(|&&node| node != through)
            .map(|&node| (partition, node))
            .or_else(|| {
                now.iter()
                    .find(|&(_, &node)| node != through)
                    .map(|(&partition, &node)| (partition, node))
            })
            .unwrap_or((partition, leader));
        let led: Vec<String> = now
            .iter()
            .filter(|(_, node)| **node == leader)
            .map(|(partition, _)| partition.to_string())
            .collect();
        let killed = Instant::now();
        cluster.nodes[leader].kill();
        let probe = cluster
            .client
            .first_success(partition, cluster.partitions, killed, PROBE_FOR)
            .await;
        let restarting = Instant::now();
        let restarted = cluster.nodes[leader].start();
        if let Some(pid) = cluster.nodes[leader].pid() {
            cluster.samplers[leader].set_pid(pid);
        }
        let whole = match restarted {
            Ok(()) => cluster
                .whole(WHOLE_WITHIN)
                .await
                .map(|_| restarting.elapsed()),
            Err(e) => Err(e),
        };
        let _ = stop.send(());
        whole.and_then(|back| {
            probe.map(|(took, before)| (partition, leader, led, took, before, back))
        })
    };
    let (report, outcome) = tokio::join!(load, kill);
    let report = report?;
    let (partition, leader, led, took, before, back) = outcome?;
    let led = match led.is_empty() {
        true => "no partition".to_string(),
        false => format!("partitions {}", led.join(", ")),
    };
    let line = format!(
        "broker {leader} (leader of {led} at the kill; partition {partition} measured) killed \
         under {rate}/s through broker {through}; \
         the partition's first successful command {} ms later (the last answer before: \
         {before}); the restarted broker's replicas all back {} ms after its restart; instance \
         p99 of that load {}; its failed requests: {}",
        took.as_millis(),
        back.as_millis(),
        ms_text(report.result.latency.p99_ms),
        report.result.errors_text()
    );
    Ok(Killed {
        first_success: took,
        back,
        report,
        line,
    })
}

fn verdicts(c: &Comparison, kills: u32) -> Vec<Verdict> {
    let mut verdicts = vec![
        Verdict {
            target: "rate",
            met: c.rate_ratio.is_some_and(|r| r >= MIN_RATE_RATIO),
            figures: format!(
                "three brokers at factor 3 sustained {}, {} of one broker's {} (goal: at least \
                 {MIN_RATE_RATIO})",
                rate_text(c.cluster_max_rate),
                c.rate_ratio.map_or("-".into(), |r| format!("{r:.2}")),
                rate_text(c.single_max_rate),
            ),
        },
        Verdict {
            target: "latency",
            met: c.half_rate_p99_ms.is_some_and(|p| p <= MAX_P99_MS),
            figures: format!(
                "at {} (half the cluster's highest rate) instance p99 {}, p50 {} (goal: p99 at \
                 most {MAX_P99_MS} ms)",
                rate_text(c.half_rate),
                ms_text(c.half_rate_p99_ms),
                ms_text(c.half_rate_p50_ms),
            ),
        },
        Verdict {
            target: "failover",
            met: c.failover_ms.len() == kills as usize
                && kills > 0
                && c.failover_p99_ms
                    .is_some_and(|p| p <= MAX_FAILOVER_P99.as_millis() as u64),
            figures: format!(
                "leader kill to the partition's first successful command p50 {}, p99 {}, max {} \
                 ({} of {kills} kills measured; goal: p99 at most {} s)",
                int_ms_text(c.failover_p50_ms),
                int_ms_text(c.failover_p99_ms),
                int_ms_text(c.failover_max_ms),
                c.failover_ms.len(),
                MAX_FAILOVER_P99.as_secs(),
            ),
        },
    ];
    let peaks: Vec<String> = c
        .brokers
        .iter()
        .map(|b| {
            format!(
                "{} {}",
                b.broker,
                b.peak_rss_mib
                    .map_or("not sampled".into(), |p| format!("{p:.1} MiB"))
            )
        })
        .collect();
    verdicts.push(Verdict {
        target: "memory",
        met: !c.brokers.is_empty() && c.brokers.iter().all(|b| b.within_limit == Some(true)),
        figures: format!(
            "peak RSS {} (goal: each within its --memory-limit of {:.0} MiB)",
            peaks.join(", "),
            c.memory_limit_mib
        ),
    });
    verdicts
}

fn rate_text(rate: Option<f64>) -> String {
    rate.map_or("no rate".into(), |r| format!("{r:.1}/s"))
}

fn ms_text(ms: Option<f64>) -> String {
    ms.map_or("-".into(), |m| format!("{m:.1} ms"))
}

fn int_ms_text(ms: Option<u64>) -> String {
    ms.map_or("-".into(), |m| format!("{m} ms"))
}

fn text(c: &Comparison) -> String {
    let mut out = String::new();
    let load = |l: Option<f64>| l.map_or("-".into(), |l| format!("{l:.1}"));
    out.push_str(&format!(
        "compare: {} partitions; load average {} at the start, {} at the end{}\n",
        c.partitions,
        load(c.load_average[0]),
        load(c.load_average[1]),
        c.cluster
            .as_ref()
            .and_then(|r| r.machine.as_ref())
            .map(|m| format!(
                "; during the cluster's find-max the machine was {:.0}% busy, {:.0}% stolen \
                 ({})",
                m.busy_percent,
                m.steal_percent,
                m.cpu_model.as_deref().unwrap_or("processor unnamed")
            ))
            .unwrap_or_default()
    ));
    if let (Some(rate), Some(cost)) = (c.half_rate, c.half_rate_cost) {
        let syncs = match (cost.syncs_per_instance, cost.mean_sync_ms) {
            (Some(per_instance), Some(mean)) => {
                format!(", {per_instance:.2} journal syncs per instance (mean {mean:.2} ms)")
            }
            _ => ", journal syncs not read".to_string(),
        };
        out.push_str(&format!(
            "at {rate}/s the three brokers used {:.2} ms of CPU and {:.0} voluntary context \
             switches per instance{syncs}\n",
            cost.cpu_ms_per_instance, cost.switches_per_instance
        ));
    }
    if let Some(p99) = c.under_kills_p99_ms {
        out.push_str(&format!(
            "under the kills: instance p99 at most {p99:.1} ms, {} failed requests\n",
            c.under_kills_errors
        ));
    }
    if !c.back_after_restart_ms.is_empty() {
        let back: Vec<String> = c
            .back_after_restart_ms
            .iter()
            .map(|ms| format!("{ms} ms"))
            .collect();
        out.push_str(&format!(
            "a killed broker's replicas all back after its restart: {}\n",
            back.join(", ")
        ));
    }
    if !c.journals.is_empty() {
        let peaks: Vec<String> = c
            .journals
            .iter()
            .map(|j| format!("{} p{} {:.1}", j.broker, j.partition, j.peak_mib))
            .collect();
        out.push_str(&format!(
            "journal on disk, peak per replica (MiB): {}\n",
            peaks.join(", ")
        ));
    }
    for finding in &c.findings {
        out.push_str(&format!("FINDING: {finding}\n"));
    }
    for v in &c.verdicts {
        out.push_str(&format!(
            "{} {}: {}\n",
            if v.met { "PASS" } else { "FAIL" },
            v.target,
            v.figures
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    fn comparison() -> Comparison {
        Comparison {
            partitions: 3,
            seed: 1,
            single_max_rate: Some(1000.0),
            cluster_max_rate: Some(600.0),
            rate_ratio: Some(0.6),
            half_rate: Some(300.0),
            half_rate_p50_ms: Some(5.0),
            half_rate_p99_ms: Some(31.0),
            half_rate_completed_per_s: Some(300.0),
            half_rate_cost: None,
            failover_ms: vec![1000, 2000],
            failover_p50_ms: Some(1000),
            failover_p99_ms: Some(2000),
            failover_max_ms: Some(2000),
            under_kills_p99_ms: None,
            under_kills_errors: 0,
            back_after_restart_ms: Vec::new(),
            memory_limit_mib: 256.0,
            brokers: vec![BrokerMemory {
                broker: "single".into(),
                peak_rss_mib: Some(100.0),
                samples: 10,
                within_limit: Some(true),
            }],
            journals: Vec::new(),
            load_average: [None, None],
            findings: Vec::new(),
            verdicts: Vec::new(),
            single: None,
            cluster: None,
            hold: None,
            under_kills: Vec::new(),
        }
    }

    #[test]
    fn each_target_is_judged_by_its_figure() {
        let c = comparison();
        let met: Vec<(&str, bool)> = verdicts(&c, 2).iter().map(|v| (v.target, v.met)).collect();
        assert_eq!(
            met,
            [
                ("rate", true),
                ("latency", false),
                ("failover", true),
                ("memory", true)
            ]
        );
        // A kill not measured fails the failover target whatever the others gave.
        assert!(!verdicts(&c, 3)[2].met);
        let mut unsampled = comparison();
        unsampled.brokers[0].within_limit = None;
        assert!(
            !verdicts(&unsampled, 2)[3].met,
            "an unsampled broker passes nothing"
        );
    }

    #[test]
    fn flags_the_comparison_sets_itself_are_refused() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            bench: BenchArgs,
            #[command(flatten)]
            compare: CompareArgs,
        }
        let ok = Cli::try_parse_from(["bench", "--compare-cluster", "--kills", "2"]).unwrap();
        assert!(refuse_conflicts(&ok.bench).is_ok());
        assert_eq!(ok.compare.kills, 2);
        let gateway =
            Cli::try_parse_from(["bench", "--compare-cluster", "--gateway", "h:1"]).unwrap();
        assert!(
            refuse_conflicts(&gateway.bench)
                .unwrap_err()
                .contains("--gateway")
        );
        assert!(Cli::try_parse_from(["bench", "--kills", "2"]).is_err());
    }
}
