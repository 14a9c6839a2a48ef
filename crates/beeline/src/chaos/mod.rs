//! `beeline chaos`: real-process fault tests of a replicated cluster. Starts three brokers of
//! this binary (3 partitions, replication factor 3) with a fault-injecting TCP proxy on every
//! link between two brokers ([`proxy`]), drives continuous load from a gRPC client ([`load`]:
//! instances started with a unique id, both jobs of each completed, messages published), and
//! meanwhile, one fault at a time:
//! - kills a partition's leader (found through `Topology`) with SIGKILL, measures the time to
//!   the first successful command on that partition, and restarts the broker;
//! - isolates a broker by cutting every link to and from it, measures the time to the first
//!   successful command on each partition it led, and heals;
//! - wipes a broker's data directory, or one partition's, while it is stopped (SIGKILL), and
//!   restarts it: a lost disk;
//! - flips a byte in a stopped broker's files, in the last entry of a partition's journal or
//!   in a file of its newest snapshot ([`damage`]), and restarts it: bit rot;
//! - now and then delays a link or makes it lossy for a round.
//!
//! A wiped or damaged broker must repair its replicas from its peers: the run waits until each
//! of its replicas is a member of its group again (`raft/member`, `beeline_cluster::rejoin`)
//! before the next fault, so at most one broker is faulty at a time and a quorum stays.
//!
//! Before each fault the cluster must be whole again (every broker up, one healthy leader per
//! partition); a cluster that does not get there in [`HANG_AFTER`] is a finding (a hang).
//! After the last fault the brokers are stopped and [`check`] holds the client's history
//! against every replica's data directory.

mod archive;
mod damage;
pub(crate) mod load;
mod proxy;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::{BrokerSettings, Node, RunStart, Xorshift, connect, deployment, free_port};
use beeline_cluster::check::{self, Acknowledged, JournalShape, Verdict};
use load::{ClusterClient, History};
use proxy::{Fault, Proxies};

#[derive(clap::Args, Debug, Clone)]
pub struct ChaosArgs {
    /// Leader kills: SIGKILL of a partition's leader, then a restart of its broker.
    #[arg(long, default_value_t = 100)]
    pub kills: u32,
    /// Isolations: every link to and from a broker cut, then healed.
    #[arg(long, default_value_t = 50)]
    pub isolations: u32,
    /// Disk losses: a broker stopped with SIGKILL, its data directory (or one partition's)
    /// removed, and the broker restarted empty.
    #[arg(long, default_value_t = 5)]
    pub wipes: u32,
    /// Damaged files: a broker stopped with SIGKILL, a byte flipped in the last entry of a
    /// partition's journal or in a file of its newest snapshot, and the broker restarted.
    #[arg(long, default_value_t = 5)]
    pub corruptions: u32,
    /// Seed of the faults' order, targets and moments (default: from the clock). Every run
    /// prints it.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Directory for the brokers' data and logs (default: a new directory under the system's
    /// temporary directory, removed after a passing run).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Clients starting instances (besides one worker per job type and broker, and one
    /// client publishing messages).
    #[arg(long, default_value_t = 2)]
    pub clients: usize,
    /// The brokers' `--snapshot-period`: each replica snapshots its state this often (and
    /// whenever 4 MiB of log were written since its last, `--snapshot-log-size`) and its group
    /// purges the log below, so restarted, wiped and lagging replicas catch up through
    /// snapshots sent by their leader. The checker reads what the brokers purged from the
    /// segments archived while they ran ([`archive`]). `off` runs without snapshots (by
    /// period or size).
    #[arg(long, default_value = "10s")]
    pub snapshot_period: String,
}

const BROKERS: usize = 3;
const PARTITIONS: u16 = 3;
/// A cluster that is not whole again this long after a fault healed is a finding.
const HANG_AFTER: Duration = Duration::from_secs(60);
/// How long the probe after a fault tries before it calls the partition stuck.
const PROBE_FOR: Duration = Duration::from_secs(60);
/// The brokers' journal segments: small, so that compaction, which frees whole segments,
/// purges the log within seconds of a snapshot even in a short run.
const SHAPE: JournalShape = JournalShape {
    segment_size: 1 << 20,
    max_entry_size: 512 << 10,
};

/// What a run did and measured.
#[derive(Default)]
struct Figures {
    kills: u32,
    isolations: u32,
    wipes: u32,
    corruptions: u32,
    link_faults: u32,
    /// From a leader's SIGKILL to the first command its partition acknowledged.
    after_kill: Vec<Duration>,
    /// From the cut of a leader's links to the first command its partition acknowledged.
    after_isolation: Vec<Duration>,
    /// From a fault's end to the cluster being whole again.
    healing: Vec<Duration>,
    /// From the restart of a wiped or damaged broker to each of its replicas being a member
    /// of its group again.
    repair: Vec<Duration>,
    /// Hangs and crashes: each a finding.
    findings: Vec<String>,
}

pub fn run(args: ChaosArgs) -> ExitCode {
    let RunStart {
        seed,
        dir,
        temporary,
        runtime,
    } = match RunStart::new("chaos", args.seed, args.dir.as_deref()) {
        Ok(start) => start,
        Err(code) => return code,
    };
    println!(
        "chaos: 3 brokers, {PARTITIONS} partitions, replication factor 3; {} leader kills, {} \
         isolations, {} wipes, {} corruptions; seed {seed}; directory {}",
        args.kills,
        args.isolations,
        args.wipes,
        args.corruptions,
        dir.display()
    );
    let started = Instant::now();
    let history = Arc::new(Mutex::new(History::default()));
    let archive = archive::Archive::new(dir.join("archive"));
    let figures = runtime.block_on(chaos(&args, &dir, seed, history.clone(), &archive));
    runtime.shutdown_timeout(Duration::from_secs(5));
    let figures = match figures {
        Ok(figures) => figures,
        Err(e) => {
            eprintln!(
                "FAILED (seed {seed}, directory {} kept): {e}",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let history = History::lock(&history);
    let replicas: BTreeMap<u16, Vec<(u64, PathBuf)>> = (1..=PARTITIONS)
        .map(|partition| {
            let dirs = (0..BROKERS as u64)
                .map(|node| {
                    (
                        node,
                        broker_dir(&dir, node as usize)
                            .join("partitions")
                            .join(partition.to_string()),
                    )
                })
                .collect();
            (partition, dirs)
        })
        .collect();
    let scratch = dir.join("check");
    let _ = std::fs::remove_dir_all(&scratch);
    let acknowledged = Acknowledged {
        created: history.created.clone(),
        completed: history.completed.clone(),
        published: history.published.clone(),
    };
    archive.sweep(&dir);
    let archived = archive.segments(PARTITIONS);
    let verdict = check::check(
        &rocksdb_stores,
        &replicas,
        &archived,
        PARTITIONS,
        &acknowledged,
        &scratch,
        SHAPE,
    );
    let _ = std::fs::remove_dir_all(&scratch);
    report(&figures, &history, &verdict, started.elapsed());
    if verdict.passed() && figures.findings.is_empty() {
        if temporary {
            let _ = std::fs::remove_dir_all(&dir);
        }
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "FAILED: reproduce with `beeline chaos --kills {} --isolations {} --wipes {} \
             --corruptions {} --clients {} --seed {seed}`; the brokers' data and logs are in {}",
            args.kills,
            args.isolations,
            args.wipes,
            args.corruptions,
            args.clients,
            dir.display()
        );
        ExitCode::FAILURE
    }
}

fn broker_dir(root: &Path, node: usize) -> PathBuf {
    root.join(format!("broker-{node}"))
}

pub(crate) fn percentile(durations: &[Duration], p: f64) -> Option<Duration> {
    let mut sorted = durations.to_vec();
    sorted.sort();
    let at = ((sorted.len() as f64 * p).ceil() as usize).saturating_sub(1);
    sorted.get(at).copied()
}

fn millis(duration: Option<Duration>) -> String {
    duration.map_or("-".into(), |d| format!("{} ms", d.as_millis()))
}

fn report(figures: &Figures, history: &History, verdict: &Verdict, took: Duration) {
    println!(
        "{} leader kills, {} isolations, {} wipes, {} corruptions, {} link faults (delay or \
         loss) in {:.0} s",
        figures.kills,
        figures.isolations,
        figures.wipes,
        figures.corruptions,
        figures.link_faults,
        took.as_secs_f64()
    );
    println!(
        "acknowledged: {} instance starts, {} job completions, {} messages; {} answers left \
         the outcome open (DEADLINE_EXCEEDED or cut off), {} refused after retries, {} \
         completions of jobs already gone",
        history.created.len(),
        history.completed.len(),
        history.published.len(),
        history.uncertain,
        history.refused,
        history.not_found
    );
    let mut answers: Vec<(&String, &u64)> = history.answers.iter().collect();
    answers.sort_by(|a, b| b.1.cmp(a.1));
    for (answer, count) in answers.into_iter().take(8) {
        println!("  {count:>6} x {answer}");
    }
    for (kind, durations) in [
        ("leader kill", &figures.after_kill),
        ("leader isolation", &figures.after_isolation),
    ] {
        println!(
            "{kind} to the first successful command on its partition: p50 {}, p99 {}, max {} \
             ({} measured)",
            millis(percentile(durations, 0.5)),
            millis(percentile(durations, 0.99)),
            millis(percentile(durations, 1.0)),
            durations.len()
        );
    }
    println!(
        "fault over to the cluster whole again: p50 {}, max {}",
        millis(percentile(&figures.healing, 0.5)),
        millis(percentile(&figures.healing, 1.0))
    );
    println!(
        "restart of a wiped or damaged broker to all its replicas members again: p50 {}, max \
         {} ({} measured)",
        millis(percentile(&figures.repair, 0.5)),
        millis(percentile(&figures.repair, 1.0)),
        figures.repair.len()
    );
    for (partition, summary) in &verdict.partitions {
        let replicas: Vec<String> = summary
            .replicas
            .iter()
            .map(|(node, first, committed)| format!("broker {node}: {first}..={committed}"))
            .collect();
        let from = |snapshot: &Option<i64>| {
            snapshot.map_or("the start".to_string(), |s| format!("snapshot {s}"))
        };
        let states: Vec<String> = summary
            .digests
            .iter()
            .map(|(node, snapshot, keys, hash)| {
                format!(
                    "broker {node} from {}: {keys} keys {hash:016x}",
                    from(snapshot)
                )
            })
            .chain(summary.own.iter().map(|(node, end, snapshot, keys, hash)| {
                format!(
                    "broker {node} (compacted past it) at its end {end} from {}: {keys} keys \
                     {hash:016x}",
                    from(snapshot)
                )
            }))
            .collect();
        println!(
            "partition {partition}: committed entries {}; common prefix to {}; state there {}",
            replicas.join(", "),
            summary.common,
            states.join(", ")
        );
        println!(
            "partition {partition}: the whole committed log {}; replayed to {}: {}; {} \
             snapshots held against its replay",
            summary
                .whole
                .map_or("could not be put together".into(), |(last, archived)| {
                    format!("1..={last}, {archived} entries of it from the archive only")
                }),
            summary.common,
            summary.replayed.map_or("-".into(), |(keys, hash)| format!(
                "{keys} keys {hash:016x}"
            )),
            summary.snapshots.len()
        );
    }
    println!(
        "checked {} committed records: {} lost, {} duplicated, {} disagreements, {} checks \
         not made",
        verdict.records,
        verdict.lost.len(),
        verdict.duplicated.len(),
        verdict.disagreements.len(),
        verdict.not_checked.len()
    );
    for (what, lines) in [
        ("LOST", &verdict.lost),
        ("DUPLICATED", &verdict.duplicated),
        ("DISAGREE", &verdict.disagreements),
        ("NOT CHECKED", &verdict.not_checked),
        ("FINDING", &figures.findings),
    ] {
        for line in lines.iter().take(20) {
            println!("  {what}: {line}");
        }
        if lines.len() > 20 {
            println!("  {what}: ... and {} more", lines.len() - 20);
        }
    }
}

/// The cluster under test.
struct Cluster {
    nodes: Vec<Node>,
    proxies: Proxies,
    client: ClusterClient,
}

impl Cluster {
    async fn start(dir: &Path, seed: u64, snapshot_period: &str) -> Result<Self, String> {
        let port = |what: &str| free_port().map_err(|e| format!("no free port for {what}: {e}"));
        let mut internal = Vec::new();
        for _ in 0..BROKERS {
            internal.push(SocketAddr::from(([127, 0, 0, 1], port("internal")?)));
        }
        let proxies = Proxies::start(&internal, seed).await?;
        let snapshot_args = [
            "--log-segment-size",
            "1MiB",
            "--snapshot-period",
            snapshot_period,
            "--snapshot-log-size",
            if snapshot_period == "off" {
                "off"
            } else {
                "4MiB"
            },
        ];
        let mut nodes = Vec::new();
        let mut clients = Vec::new();
        let mut monitoring = Vec::new();
        for (node, own) in internal.iter().enumerate() {
            let data = broker_dir(dir, node);
            std::fs::create_dir_all(&data)
                .map_err(|e| format!("cannot create {}: {e}", data.display()))?;
            // Its own address book: itself, and every other broker through its proxy.
            let contact_points: Vec<String> = (0..BROKERS)
                .map(|other| {
                    if other == node {
                        Some(*own)
                    } else {
                        proxies.address(node as u64, other as u64)
                    }
                    .map(|a| a.to_string())
                    .unwrap_or_default()
                })
                .collect();
            let grpc = port("gRPC")?;
            let monitor = port("monitoring")?;
            monitoring.push(monitor);
            let args = BrokerSettings {
                node,
                cluster_size: BROKERS,
                replication_factor: BROKERS,
                partitions: PARTITIONS,
                contact_points: &contact_points,
                internal_port: own.port(),
                grpc_port: grpc,
                monitoring_port: monitor,
                data_dir: &data,
                memory_limit: "256MiB",
            }
            .args(&snapshot_args)?;
            let mut node = Node {
                args,
                log: dir.join(format!("broker-{node}.log")),
                process: None,
            };
            node.start()?;
            nodes.push(node);
            clients.push(connect(grpc)?);
        }
        Ok(Self {
            nodes,
            proxies,
            client: ClusterClient::new(clients, monitoring),
        })
    }

    /// Waits until every broker answers and reports each partition healthy, with exactly one
    /// leader per partition; how long it took. A broker that exits meanwhile fails the run.
    async fn whole(&mut self, within: Duration) -> Result<Duration, String> {
        let started = Instant::now();
        loop {
            for (node, broker) in self.nodes.iter_mut().enumerate() {
                if let Some(crash) = broker.crashed() {
                    return Err(format!("broker {node} {crash}"));
                }
            }
            let missing = match self.client.whole(PARTITIONS, BROKERS).await {
                Ok(()) => return Ok(started.elapsed()),
                Err(missing) => missing,
            };
            if started.elapsed() > within {
                return Err(format!(
                    "the cluster was not whole again within {} s ({missing}); last lines of \
                     each broker:\n{}",
                    within.as_secs(),
                    self.tails()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Each broker's errors (its log's first ERROR lines) and last lines.
    fn tails(&self) -> String {
        self.nodes
            .iter()
            .enumerate()
            .map(|(node, n)| {
                let errors: Vec<String> = std::fs::read_to_string(&n.log)
                    .unwrap_or_default()
                    .lines()
                    .filter(|line| line.contains(" ERROR "))
                    .take(5)
                    .map(String::from)
                    .collect();
                format!(
                    "--- broker {node}: errors:\n{}\n--- broker {node}: last lines:\n{}",
                    errors.join("\n"),
                    n.process
                        .as_ref()
                        .map_or("(not running)".into(), |p| p.tail())
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first acknowledged command on `partition` (a message published there), tried
    /// until [`PROBE_FOR`] has passed; how long it took from `since`, and the last answer
    /// before it.
    async fn probe(&self, partition: u16, since: Instant) -> Result<(Duration, String), String> {
        self.client
            .first_success(partition, PARTITIONS, since, PROBE_FOR)
            .await
    }

    /// Restarts every broker that is down or reports a replica unhealthy, then waits for
    /// the cluster to be whole; the brokers restarted.
    async fn restart_unhealthy(&mut self) -> Result<Vec<usize>, String> {
        let roles = self.client.roles().await;
        let unhealthy: Vec<usize> = (0..BROKERS)
            .filter(|node| {
                roles.get(node).is_none_or(|replicas| {
                    replicas.len() < usize::from(PARTITIONS)
                        || replicas.values().any(|r| !r.healthy)
                })
            })
            .collect();
        for &node in &unhealthy {
            self.nodes[node].kill();
            self.nodes[node].start()?;
        }
        self.whole(HANG_AFTER).await?;
        Ok(unhealthy)
    }

    /// The broker leading `partition`, waiting for one for up to [`HANG_AFTER`].
    async fn leader_of(&self, partition: u16) -> Result<usize, String> {
        let started = Instant::now();
        loop {
            if let Some(&leader) = load::leaders(&self.client.roles().await).get(&partition) {
                return Ok(leader);
            }
            if started.elapsed() > HANG_AFTER {
                return Err(format!(
                    "partition {partition} had no leader for {} s:\n{}",
                    HANG_AFTER.as_secs(),
                    self.tails()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops every broker cleanly (SIGKILL after 15 s).
    fn stop(&mut self) {
        for node in &mut self.nodes {
            node.stop(Duration::from_secs(15));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
    }
}

/// One fault of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Planned {
    Kill,
    Isolation,
    Wipe,
    Corruption,
}

/// The faults of a run, in a seeded order.
fn plan(args: &ChaosArgs, random: &mut Xorshift) -> Vec<Planned> {
    let mut plan: Vec<Planned> = [
        (Planned::Kill, args.kills),
        (Planned::Isolation, args.isolations),
        (Planned::Wipe, args.wipes),
        (Planned::Corruption, args.corruptions),
    ]
    .into_iter()
    .flat_map(|(fault, n)| std::iter::repeat_n(fault, n as usize))
    .collect();
    for i in (1..plan.len()).rev() {
        plan.swap(i, random.below(i as u64 + 1) as usize);
    }
    plan
}

async fn chaos(
    args: &ChaosArgs,
    dir: &Path,
    seed: u64,
    history: Arc<Mutex<History>>,
    archive: &archive::Archive,
) -> Result<Figures, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut random = Xorshift(seed);
    let mut figures = Figures::default();
    let mut cluster = Cluster::start(dir, seed, &args.snapshot_period).await?;
    let _archiving = archive.keep_sweeping(dir);
    let took = cluster.whole(Duration::from_secs(180)).await?;
    println!("cluster up in {} ms", took.as_millis());
    cluster
        .client
        .call(0, |mut client| async move {
            client.deploy_resource(deployment()).await
        })
        .await
        .map_err(|e| format!("cannot deploy the model: {e}"))?;

    let mut load = tokio::task::JoinSet::new();
    for c in 0..args.clients {
        load.spawn(load::starter(
            cluster.client.clone(),
            format!("c{c}"),
            c,
            history.clone(),
        ));
    }
    for node in 0..BROKERS {
        for job_type in load::JOB_TYPES {
            load.spawn(load::worker(
                cluster.client.clone(),
                node,
                job_type,
                history.clone(),
            ));
        }
    }
    load.spawn(load::publisher(
        cluster.client.clone(),
        PARTITIONS,
        history.clone(),
    ));

    let faults = plan(args, &mut random);
    let total = faults.len();
    for (round, fault) in faults.into_iter().enumerate() {
        // Now and then a link is slow or lossy for the round.
        let link_fault = match random.below(6) {
            0 => Some(Fault::Delay(Duration::from_millis(5 + random.below(45)))),
            1 => Some(Fault::Lossy(0.001 * (1 + random.below(20)) as f64)),
            _ => None,
        };
        if let Some(fault) = link_fault {
            let links = cluster.proxies.links();
            let (from, to) = links[random.below(links.len() as u64) as usize];
            cluster.proxies.set(from, to, fault);
            figures.link_faults += 1;
        }
        tokio::time::sleep(Duration::from_millis(300 + random.below(1200))).await;
        let outcome = match fault {
            Planned::Kill => kill_leader(&mut cluster, &mut random, &mut figures).await,
            Planned::Isolation => isolate(&mut cluster, &mut random, &mut figures).await,
            Planned::Wipe | Planned::Corruption => {
                damage_broker(&mut cluster, dir, fault, &mut random, &mut figures).await
            }
        };
        cluster.proxies.heal();
        let healed = Instant::now();
        let outcome = match outcome {
            Ok(line) => cluster.whole(HANG_AFTER).await.map(|_| line),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(line) => {
                figures.healing.push(healed.elapsed());
                let acknowledged = History::lock(&history).acknowledged();
                println!(
                    "{:>4}/{total} {line}; {acknowledged} acknowledged so far",
                    round + 1
                );
            }
            Err(finding) => {
                println!("{:>4}/{total} FINDING: {finding}", round + 1);
                figures.findings.push(finding);
                // The run goes on if restarting the brokers with a replica that does not
                // serve makes the cluster whole again; the finding stays (the run fails).
                match cluster.restart_unhealthy().await {
                    Ok(restarted) => println!(
                        "{:>4}/{total} restarted broker(s) {restarted:?}: the cluster is whole \
                         again, going on",
                        round + 1
                    ),
                    Err(e) => {
                        figures.findings.push(format!("after restarting: {e}"));
                        break;
                    }
                }
            }
        }
    }
    load.shutdown().await;
    cluster.proxies.heal();
    if figures.findings.is_empty()
        && let Err(finding) = cluster.whole(HANG_AFTER).await
    {
        figures.findings.push(finding);
    }
    // Let every follower learn the last commit before the stop.
    tokio::time::sleep(Duration::from_secs(3)).await;
    cluster.stop();
    Ok(figures)
}

/// Kills the leader of a random partition, measures the time to the first command its
/// partition acknowledges, and restarts the broker.
async fn kill_leader(
    cluster: &mut Cluster,
    random: &mut Xorshift,
    figures: &mut Figures,
) -> Result<String, String> {
    let partition = random.below(u64::from(PARTITIONS)) as u16 + 1;
    let leader = cluster.leader_of(partition).await?;
    let killed = Instant::now();
    let killed_at = unix_millis();
    cluster.nodes[leader].kill();
    figures.kills += 1;
    let (recovered, before) = cluster.probe(partition, killed).await?;
    figures.after_kill.push(recovered);
    tokio::time::sleep(Duration::from_millis(random.below(2000))).await;
    cluster.nodes[leader].start()?;
    Ok(format!(
        "killed broker {leader} (leader of partition {partition}) at {killed_at} ms since \
         the epoch: a command succeeded {} ms later (the last answer before: {before})",
        recovered.as_millis()
    ))
}

/// A broker to isolate or damage: two in three times a partition's leader, else any broker.
async fn victim(cluster: &Cluster, random: &mut Xorshift) -> Result<usize, String> {
    if random.below(3) < 2 {
        let partition = random.below(u64::from(PARTITIONS)) as u16 + 1;
        cluster.leader_of(partition).await
    } else {
        Ok(random.below(BROKERS as u64) as usize)
    }
}

/// Stops a broker with SIGKILL, wipes (`Planned::Wipe`) or damages (`Planned::Corruption`)
/// its files, restarts it, and waits until each of its replicas is a member of its group
/// again: it has fetched what it lost from its peers.
async fn damage_broker(
    cluster: &mut Cluster,
    dir: &Path,
    fault: Planned,
    random: &mut Xorshift,
    figures: &mut Figures,
) -> Result<String, String> {
    let node = victim(cluster, random).await?;
    let data = broker_dir(dir, node);
    let partition = random.below(u64::from(PARTITIONS)) as u16 + 1;
    let partition_dir = data.join("partitions").join(partition.to_string());
    cluster.nodes[node].kill();
    let what = if fault == Planned::Wipe {
        figures.wipes += 1;
        let (gone, what) = if random.below(2) == 0 {
            (data.clone(), "its whole data directory".to_string())
        } else {
            (partition_dir, format!("partition {partition}'s directory"))
        };
        std::fs::remove_dir_all(&gone)
            .map_err(|e| format!("cannot wipe {}: {e}", gone.display()))?;
        std::fs::create_dir_all(&data)
            .map_err(|e| format!("cannot create {}: {e}", data.display()))?;
        format!("wiped {what}")
    } else {
        figures.corruptions += 1;
        let snapshot = if random.below(2) == 0 {
            damage::corrupt_snapshot(&partition_dir, |n| random.below(n))?
        } else {
            None
        };
        match snapshot {
            Some((position, file)) => format!(
                "flipped a byte of partition {partition}'s newest snapshot (position \
                 {position}, {})",
                file.file_name().map_or("?".into(), |n| n.to_string_lossy())
            ),
            None => {
                let (index, _) = damage::corrupt_tail_entry(&partition_dir)?;
                format!("flipped a byte of partition {partition}'s last journal entry ({index})")
            }
        }
    };
    tokio::time::sleep(Duration::from_millis(random.below(1000))).await;
    cluster.nodes[node].start()?;
    let restarted = Instant::now();
    // Whole first: the broker has opened its replicas, so each marker is the one it wrote
    // at this start (rejoining after the damage), not the one it left.
    cluster.whole(HANG_AFTER).await?;
    while !damage::members_again(&data) {
        if let Some(crash) = cluster.nodes[node].crashed() {
            return Err(format!("broker {node} {crash}"));
        }
        if restarted.elapsed() > HANG_AFTER {
            return Err(format!(
                "broker {node}'s replicas were not members of their groups again within {} s \
                 after it {what}:\n{}",
                HANG_AFTER.as_secs(),
                cluster.tails()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let repaired = restarted.elapsed();
    figures.repair.push(repaired);
    Ok(format!(
        "stopped broker {node}, {what}, restarted it: its replicas were members again {} ms \
         later",
        repaired.as_millis()
    ))
}

/// Wall-clock time, to hold a fault against the brokers' log timestamps
/// (`scripts/failover-breakdown`).
fn unix_millis() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// Cuts every link of a random broker for 3 to 6 s, measuring the time to the first command
/// acknowledged on each partition it led.
async fn isolate(
    cluster: &mut Cluster,
    random: &mut Xorshift,
    figures: &mut Figures,
) -> Result<String, String> {
    let node = victim(cluster, random).await?;
    let leaders = load::leaders(&cluster.client.roles().await);
    let led: Vec<u16> = leaders
        .iter()
        .filter(|&(_, &leader)| leader == node)
        .map(|(&partition, _)| partition)
        .collect();
    let hold = Duration::from_millis(3000 + random.below(3000));
    let cut = Instant::now();
    cluster.proxies.isolate(node as u64);
    figures.isolations += 1;
    let mut recoveries = Vec::new();
    for &partition in &led {
        let (recovered, before) = cluster.probe(partition, cut).await?;
        figures.after_isolation.push(recovered);
        recoveries.push(format!(
            "{partition}: {} ms, the last answer before: {before}",
            recovered.as_millis()
        ));
    }
    tokio::time::sleep(hold.saturating_sub(cut.elapsed())).await;
    Ok(format!(
        "isolated broker {node} for {} ms (leader of {led:?}; first command after: {})",
        cut.elapsed().as_millis(),
        if recoveries.is_empty() {
            "-".into()
        } else {
            recoveries.join(", ")
        }
    ))
}

/// The checker rebuilds each replica's state in a RocksDB store, as the broker keeps it.
fn rocksdb_stores(dir: &Path) -> Box<dyn beeline_stream::StoreOpener> {
    use beeline_rocksdb::{MemoryBudget, RocksDbStoreConfig, open_partition_store};
    let runtime = RocksDbStoreConfig {
        runtime_dir: dir.to_path_buf(),
        budget: MemoryBudget::new(64 << 20, 1),
    };
    Box::new(
        move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn beeline_state::Store>> {
            Ok(Arc::new(open_partition_store(&runtime, checkpoint)?))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_holds_every_fault_in_a_seeded_order() {
        let args = ChaosArgs {
            kills: 5,
            isolations: 3,
            wipes: 2,
            corruptions: 1,
            seed: None,
            dir: None,
            clients: 1,
            snapshot_period: "off".into(),
        };
        let a = plan(&args, &mut Xorshift(9));
        let count = |f: Planned| a.iter().filter(|&&p| p == f).count();
        assert_eq!(count(Planned::Kill), 5);
        assert_eq!(count(Planned::Isolation), 3);
        assert_eq!(count(Planned::Wipe), 2);
        assert_eq!(count(Planned::Corruption), 1);
        assert_eq!(a, plan(&args, &mut Xorshift(9)));
    }

    #[test]
    fn percentiles_pick_the_rank() {
        let d: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&d, 0.5), Some(Duration::from_millis(50)));
        assert_eq!(percentile(&d, 0.99), Some(Duration::from_millis(99)));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
