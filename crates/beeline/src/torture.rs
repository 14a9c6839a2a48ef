//! `beeline torture`: crash torture. Starts `beeline broker` on a data directory, drives it with
//! load over the gateway (clients starting instances, workers completing jobs), kills it with
//! SIGKILL at random moments, and some right as a snapshot, a log compaction or a segment roll
//! begins (the broker's debug log says when), starts it again on the same directory and checks
//! that the effect of every acknowledged command is there exactly once.
//!
//! The check reads the engine's state through the gateway, so it holds across snapshots and
//! compaction: every instance the tool started carries a unique id in its variables and waits in
//! one of two service tasks (`a`, then `b`); the tool activates every job of both and finds
//! - each acknowledged start's instance exactly once (one job with its id), unless the tool
//!   ended it;
//! - each instance whose `a` job's completion was acknowledged at `b`, never back at `a`;
//! - no instance the tool ended, none twice, and none it never asked for.
//!
//! A command that got no answer (in flight at the kill) may or may not have been applied; the
//! next check finds out which and holds it to that from then on. The checker then hands the `a`
//! jobs back (FailJob, retries unchanged) and completes the `b` jobs (acknowledged endings
//! checked from the next round on), so every round's state stays small.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use beeline_gateway_protocol::proto;
use beeline_gateway_protocol::proto::gateway_client::GatewayClient;
use tonic::transport::Channel;

use crate::harness::{
    BrokerProcess, FIRST, PROCESS_ID, RunStart, SECOND, Xorshift, connect, deployment, free_port,
    instance_id,
};

#[derive(clap::Args, Debug, Clone)]
pub struct TortureArgs {
    /// How many SIGKILLs the broker must survive.
    #[arg(long, default_value_t = 100)]
    pub kills: u32,
    /// Seed of the kill moments (default: from the clock). A failed run prints it.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Data directory of the broker under torture (default: a new directory under the system's
    /// temporary directory, removed after a passing run).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Partitions of the broker.
    #[arg(long, default_value_t = 2)]
    pub partitions: u16,
    /// Clients starting instances, and as many workers completing jobs.
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
}

/// How long a load worker holds a job: after a kill, jobs activated before it come back this
/// much later.
const JOB_LOCK: Duration = Duration::from_millis(800);
/// A kill aimed at a snapshot, a compaction or a roll that does not come in this time falls
/// back to a random moment.
const AIM_TIMEOUT: Duration = Duration::from_secs(4);
/// How long the check waits for an expected instance's job to come back before it calls the
/// instance lost.
const SHOW_UP_TIMEOUT: Duration = Duration::from_secs(10);

/// When a kill comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Moment {
    Random,
    Snapshot,
    Compaction,
    Roll,
}

impl Moment {
    const ALL: [Moment; 4] = [
        Moment::Random,
        Moment::Snapshot,
        Moment::Compaction,
        Moment::Roll,
    ];

    /// The broker's debug line that starts the operation.
    fn marker(self) -> Option<&'static str> {
        match self {
            Moment::Random => None,
            Moment::Snapshot => Some("taking a snapshot"),
            Moment::Compaction => Some("deleting compacted log segments"),
            Moment::Roll => Some("rolling the log to a new segment"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Moment::Random => "at a random moment",
            Moment::Snapshot => "as a snapshot began",
            Moment::Compaction => "as a log compaction began",
            Moment::Roll => "as a segment roll began",
        }
    }
}

/// What the tool knows of each instance it started, by id.
#[derive(Default)]
struct Ledger {
    /// Starts acknowledged.
    created: HashSet<String>,
    /// Starts sent without an answer: applied or not, the next check tells.
    maybe_created: HashSet<String>,
    /// Completions of the first job acknowledged: the instance is at `b` (or ended).
    at_second: HashSet<String>,
    maybe_at_second: HashSet<String>,
    /// Completions of the second job acknowledged: the instance is gone.
    ended: HashSet<String>,
    maybe_ended: HashSet<String>,
    acknowledged: u64,
}

impl Ledger {
    fn lock(ledger: &Mutex<Ledger>) -> std::sync::MutexGuard<'_, Ledger> {
        ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A job found by the check: its type and the id of its instance.
struct Found {
    key: i64,
    job_type: &'static str,
    id: String,
    retries: i32,
}

/// Checks the jobs found against the ledger, then settles what was uncertain. Returns the
/// violations.
fn check(ledger: &mut Ledger, found: &[Found]) -> Vec<String> {
    let mut violations = Vec::new();
    let mut by_id: HashMap<&str, Vec<&'static str>> = HashMap::new();
    for job in found {
        by_id.entry(&job.id).or_default().push(job.job_type);
    }
    for (id, types) in &by_id {
        if types.len() > 1 {
            violations.push(format!(
                "instance {id} is there {} times: {types:?}",
                types.len()
            ));
        }
        let known = ledger.created.contains(*id) || ledger.maybe_created.contains(*id);
        if !known {
            violations.push(format!("instance {id} was never started"));
        }
        if ledger.ended.contains(*id) {
            violations.push(format!("instance {id} ended, but has a job at {types:?}"));
        }
        if ledger.at_second.contains(*id) && types.contains(&FIRST) {
            violations.push(format!(
                "instance {id}: the completion of its first job was acknowledged, but it is back at it"
            ));
        }
    }
    for id in &ledger.created {
        let gone = ledger.ended.contains(id) || ledger.maybe_ended.contains(id);
        if !gone && !by_id.contains_key(id.as_str()) {
            violations.push(format!(
                "instance {id}: its start was acknowledged, but it is gone"
            ));
        }
    }
    // Settle the uncertain: what is there was applied; what is not, was not.
    let present: HashMap<String, &'static str> = by_id
        .iter()
        .filter_map(|(id, types)| Some((id.to_string(), *types.first()?)))
        .collect();
    for id in std::mem::take(&mut ledger.maybe_created) {
        if present.contains_key(&id) {
            ledger.created.insert(id);
        }
    }
    for id in std::mem::take(&mut ledger.maybe_at_second) {
        if present.get(&id) == Some(&SECOND) {
            ledger.at_second.insert(id);
        }
    }
    for id in std::mem::take(&mut ledger.maybe_ended) {
        if present.contains_key(&id) {
            continue;
        }
        ledger.ended.insert(id);
    }
    violations
}

/// The broker under torture.
struct Broker {
    process: BrokerProcess,
    grpc: u16,
    /// The broker's marker lines, as they come.
    markers: mpsc::Receiver<Moment>,
}

impl Broker {
    fn start(dir: &Path, partitions: u16) -> Result<Self, String> {
        let port = |what: &str| free_port().map_err(|e| format!("no free port for {what}: {e}"));
        let grpc = port("gRPC")?;
        let mut args: Vec<String> = ["--host", "127.0.0.1", "--data-dir"]
            .map(String::from)
            .into();
        args.push(dir.display().to_string());
        args.extend([
            "--partitions".into(),
            partitions.to_string(),
            "--grpc-port".into(),
            grpc.to_string(),
            "--rest-port".into(),
            port("REST")?.to_string(),
            "--monitoring-port".into(),
            port("monitoring")?.to_string(),
        ]);
        // Small segments roll often; snapshots, and the compactions after them, come every
        // second.
        args.extend(
            [
                "--log-segment-size",
                "1MiB",
                "--snapshot-period",
                "1s",
                "--disk-free-min",
                "off",
                "--memory-limit",
                "128MiB",
            ]
            .map(String::from),
        );
        let (markers_tx, markers) = mpsc::channel();
        let process = BrokerProcess::spawn(
            &args,
            "warn,beeline_stream::processor=debug,beeline_log::file=debug",
            move |line| {
                if let Some(moment) = Moment::ALL
                    .into_iter()
                    .find(|m| m.marker().is_some_and(|marker| line.contains(marker)))
                {
                    let _ = markers_tx.send(moment);
                }
            },
        )?;
        Ok(Self {
            process,
            grpc,
            markers,
        })
    }

    fn tail(&self) -> String {
        self.process.tail()
    }

    fn kill(&mut self) {
        self.process.kill();
    }
}

/// Waits until every partition is healthy; the time it took.
async fn ready(
    client: &mut GatewayClient<Channel>,
    broker: &mut Broker,
    partitions: u16,
) -> Result<Duration, String> {
    let started = Instant::now();
    loop {
        if let Ok(topology) = client.topology(proto::TopologyRequest {}).await {
            let healthy = topology
                .into_inner()
                .brokers
                .iter()
                .flat_map(|b| &b.partitions)
                .filter(|p| p.health == proto::partition::PartitionBrokerHealth::Healthy as i32)
                .count();
            if healthy == usize::from(partitions) {
                return Ok(started.elapsed());
            }
        }
        if let Some(status) = broker.process.exited() {
            return Err(format!("the broker exited ({status}):\n{}", broker.tail()));
        }
        if started.elapsed() > Duration::from_secs(120) {
            return Err(format!(
                "the broker was not ready within 120 s:\n{}",
                broker.tail()
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Every job of both tasks, activated for the checker.
async fn all_jobs(client: &mut GatewayClient<Channel>) -> Result<Vec<Found>, String> {
    let mut found = Vec::new();
    for job_type in [FIRST, SECOND] {
        loop {
            let request = proto::ActivateJobsRequest {
                r#type: job_type.to_owned(),
                worker: "torture-checker".to_owned(),
                timeout: 600_000,
                max_jobs_to_activate: 1000,
                request_timeout: 100,
                fetch_variable: vec!["id".to_owned()],
                ..Default::default()
            };
            let mut answers = client
                .activate_jobs(request)
                .await
                .map_err(|e| format!("the check's activation failed: {e}"))?
                .into_inner();
            let mut batch = 0;
            while let Some(answer) = answers
                .message()
                .await
                .map_err(|e| format!("the check's activation failed: {e}"))?
            {
                for job in answer.jobs {
                    batch += 1;
                    found.push(Found {
                        key: job.key,
                        job_type,
                        id: instance_id(&job.variables).unwrap_or_default(),
                        retries: job.retries,
                    });
                }
            }
            if batch == 0 {
                break;
            }
        }
    }
    Ok(found)
}

/// The jobs of every instance there: activates until each instance the ledger expects has
/// shown up, or for [`SHOW_UP_TIMEOUT`] more (on a loaded machine, the time-outs of jobs that the
/// load's workers held may come late). Jobs stay activated for the checker meanwhile, so none is
/// found twice.
async fn every_instance(
    client: &mut GatewayClient<Channel>,
    ledger: &Mutex<Ledger>,
) -> Result<Vec<Found>, String> {
    let started = Instant::now();
    let mut found = all_jobs(client).await?;
    loop {
        let missing = {
            let ledger = Ledger::lock(ledger);
            let present: HashSet<&str> = found.iter().map(|job| job.id.as_str()).collect();
            ledger.created.iter().any(|id| {
                !present.contains(id.as_str())
                    && !ledger.ended.contains(id)
                    && !ledger.maybe_ended.contains(id)
            })
        };
        if !missing || started.elapsed() > SHOW_UP_TIMEOUT {
            return Ok(found);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        found.extend(all_jobs(client).await?);
    }
}

/// Hands the first jobs back to the load and ends the instances at their second.
async fn settle(
    client: &GatewayClient<Channel>,
    found: Vec<Found>,
    ledger: &Mutex<Ledger>,
) -> Result<(), String> {
    let mut work = tokio::task::JoinSet::new();
    for job in found {
        let mut client = client.clone();
        if job.job_type == FIRST {
            work.spawn(async move {
                client
                    .fail_job(proto::FailJobRequest {
                        job_key: job.key,
                        retries: job.retries,
                        error_message: "handed back by the torture check".into(),
                        ..Default::default()
                    })
                    .await
                    .map(|_| None)
                    .map_err(|e| format!("handing back job {}: {e}", job.key))
            });
        } else {
            Ledger::lock(ledger).maybe_ended.insert(job.id.clone());
            work.spawn(async move {
                client
                    .complete_job(proto::CompleteJobRequest {
                        job_key: job.key,
                        variables: "{}".into(),
                        result: None,
                    })
                    .await
                    .map(|_| Some(job.id))
                    .map_err(|e| format!("completing job {}: {e}", job.key))
            });
        }
        while work.len() >= 32 {
            settled(work.join_next().await, ledger)?;
        }
    }
    while let Some(done) = work.join_next().await {
        settled(Some(done), ledger)?;
    }
    Ok(())
}

fn settled(
    done: Option<Result<Result<Option<String>, String>, tokio::task::JoinError>>,
    ledger: &Mutex<Ledger>,
) -> Result<(), String> {
    match done {
        Some(Ok(Ok(Some(ended)))) => {
            let mut ledger = Ledger::lock(ledger);
            ledger.maybe_ended.remove(&ended);
            ledger.ended.insert(ended);
            ledger.acknowledged += 1;
            Ok(())
        }
        Some(Ok(Ok(None))) | None => Ok(()),
        Some(Ok(Err(e))) => Err(e),
        Some(Err(e)) => Err(format!("a check task failed: {e}")),
    }
}

/// One client: starts instances until the broker goes away.
async fn starter(client: GatewayClient<Channel>, prefix: String, ledger: Arc<Mutex<Ledger>>) {
    for i in 0u64.. {
        let id = format!("{prefix}-{i}");
        Ledger::lock(&ledger).maybe_created.insert(id.clone());
        let request = proto::CreateProcessInstanceRequest {
            bpmn_process_id: PROCESS_ID.into(),
            version: -1,
            variables: format!(r#"{{"id":"{id}"}}"#),
            ..Default::default()
        };
        match client.clone().create_process_instance(request).await {
            Ok(_) => {
                let mut ledger = Ledger::lock(&ledger);
                ledger.maybe_created.remove(&id);
                ledger.created.insert(id);
                ledger.acknowledged += 1;
            }
            // Refused before it was written.
            Err(status) if status.code() == tonic::Code::ResourceExhausted => {
                Ledger::lock(&ledger).maybe_created.remove(&id);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            // The broker is gone: whether the command was applied, the next check tells.
            Err(_) => return,
        }
    }
}

/// One worker: completes first jobs until the broker goes away.
async fn worker(client: GatewayClient<Channel>, ledger: Arc<Mutex<Ledger>>) {
    loop {
        let request = proto::ActivateJobsRequest {
            r#type: FIRST.into(),
            worker: "torture-worker".into(),
            timeout: JOB_LOCK.as_millis() as i64,
            max_jobs_to_activate: 16,
            request_timeout: 200,
            fetch_variable: vec!["id".into()],
            ..Default::default()
        };
        let Ok(answers) = client.clone().activate_jobs(request).await else {
            return;
        };
        let mut answers = answers.into_inner();
        let mut jobs = Vec::new();
        loop {
            match answers.message().await {
                Ok(Some(answer)) => jobs.extend(answer.jobs),
                Ok(None) => break,
                Err(_) => return,
            }
        }
        for job in jobs {
            let Some(id) = instance_id(&job.variables) else {
                continue;
            };
            Ledger::lock(&ledger).maybe_at_second.insert(id.clone());
            let request = proto::CompleteJobRequest {
                job_key: job.key,
                variables: "{}".into(),
                result: None,
            };
            match client.clone().complete_job(request).await {
                Ok(_) => {
                    let mut ledger = Ledger::lock(&ledger);
                    ledger.maybe_at_second.remove(&id);
                    ledger.at_second.insert(id);
                    ledger.acknowledged += 1;
                }
                // Its lock ran out and another worker has it: that one's answer counts.
                Err(status) if status.code() == tonic::Code::NotFound => {}
                Err(_) => return,
            }
        }
    }
}

/// What a run measured.
#[derive(Default)]
struct Figures {
    kills: BTreeMap<Moment, u32>,
    /// Kills aimed at an operation that did not come in time, made at a random moment instead.
    aim_missed: u32,
    recoveries: Vec<Duration>,
    /// Commands the broker acknowledged.
    acknowledged: u64,
    /// Instance states the checks looked at, summed over the checks.
    checked: u64,
}

pub fn run(args: TortureArgs) -> ExitCode {
    let RunStart {
        seed,
        dir,
        temporary,
        runtime,
    } = match RunStart::new("torture", args.seed, args.data_dir.as_deref()) {
        Ok(start) => start,
        Err(code) => return code,
    };
    println!(
        "crash torture: {} SIGKILLs, seed {seed}, data directory {}",
        args.kills,
        dir.display()
    );
    let started = Instant::now();
    match runtime.block_on(torture(&args, &dir, seed)) {
        Ok(figures) => {
            report(&args, &figures, started.elapsed());
            if temporary {
                let _ = std::fs::remove_dir_all(&dir);
            }
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!(
                "FAILED (seed {seed}, data directory {} kept):\n{failure}",
                dir.display()
            );
            ExitCode::FAILURE
        }
    }
}

fn report(args: &TortureArgs, figures: &Figures, took: Duration) {
    let total: u32 = figures.kills.values().sum();
    println!(
        "survived {total} SIGKILLs in {:.0} s; after every restart each acknowledged command's \
         effect was there exactly once",
        took.as_secs_f64()
    );
    for (moment, count) in &figures.kills {
        println!("  {count:>4} killed {}", moment.name());
    }
    if figures.aim_missed > 0 {
        println!(
            "       ({} aimed kills found no such operation within {} s and came at a random moment)",
            figures.aim_missed,
            AIM_TIMEOUT.as_secs()
        );
    }
    let mut recoveries = figures.recoveries.clone();
    recoveries.sort();
    if let (Some(median), Some(max)) = (recoveries.get(recoveries.len() / 2), recoveries.last()) {
        println!(
            "  restart to every partition healthy: median {} ms, max {} ms",
            median.as_millis(),
            max.as_millis()
        );
    }
    println!(
        "  {} acknowledged commands; {} instance states checked ({} partitions, {} clients)",
        figures.acknowledged, figures.checked, args.partitions, args.clients
    );
}

async fn torture(args: &TortureArgs, dir: &Path, seed: u64) -> Result<Figures, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut random = Xorshift(seed);
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut figures = Figures::default();
    let mut last = Moment::Random;
    for round in 0..=args.kills {
        let mut broker = Broker::start(dir, args.partitions)?;
        let mut client = connect(broker.grpc)?;
        let recovery = ready(&mut client, &mut broker, args.partitions).await?;
        if round == 0 {
            client
                .deploy_resource(deployment())
                .await
                .map_err(|e| format!("cannot deploy the model: {e}"))?;
        } else {
            figures.recoveries.push(recovery);
            // Jobs the load's workers held at the kill come back once their lock runs out.
            tokio::time::sleep(JOB_LOCK + Duration::from_millis(400)).await;
            let found = every_instance(&mut client, &ledger).await?;
            figures.checked += found.len() as u64;
            let violations = check(&mut Ledger::lock(&ledger), &found);
            if !violations.is_empty() {
                broker.kill();
                return Err(format!(
                    "after kill {round}: {} violations:\n  {}",
                    violations.len(),
                    violations.join("\n  ")
                ));
            }
            println!(
                "kill {round:>3}/{} ({}): healthy again after {} ms, {} instances checked",
                args.kills,
                last.name(),
                recovery.as_millis(),
                found.len()
            );
            settle(&client, found, &ledger).await?;
        }
        if round == args.kills {
            broker.kill();
            break;
        }
        // Load, then the kill.
        while broker.markers.try_recv().is_ok() {}
        let mut load = tokio::task::JoinSet::new();
        for c in 0..args.clients {
            load.spawn(starter(
                client.clone(),
                format!("r{round}c{c}"),
                ledger.clone(),
            ));
            load.spawn(worker(client.clone(), ledger.clone()));
        }
        let aimed = Moment::ALL[random.below(Moment::ALL.len() as u64) as usize];
        let moment = match aimed {
            Moment::Random => {
                tokio::time::sleep(Duration::from_millis(100 + random.below(1400))).await;
                Moment::Random
            }
            aimed => {
                let waited = Instant::now();
                let mut hit = None;
                while waited.elapsed() < AIM_TIMEOUT {
                    match broker.markers.try_recv() {
                        Ok(moment) if moment == aimed => {
                            hit = Some(moment);
                            break;
                        }
                        Ok(_) => {}
                        Err(_) => tokio::time::sleep(Duration::from_micros(200)).await,
                    }
                }
                hit.unwrap_or_else(|| {
                    figures.aim_missed += 1;
                    Moment::Random
                })
            }
        };
        broker.kill();
        last = moment;
        *figures.kills.entry(moment).or_default() += 1;
        load.shutdown().await;
    }
    figures.acknowledged = Ledger::lock(&ledger).acknowledged;
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, job_type: &'static str) -> Found {
        Found {
            key: 1,
            job_type,
            id: id.to_owned(),
            retries: 3,
        }
    }

    #[test]
    fn the_check_finds_lost_duplicated_and_phantom_instances() {
        let mut ledger = Ledger::default();
        for id in ["x", "y", "z"] {
            ledger.created.insert(id.to_owned());
        }
        ledger.at_second.insert("y".to_owned());
        ledger.created.insert("e".to_owned());
        ledger.ended.insert("e".to_owned());
        ledger.maybe_created.insert("m".to_owned());
        let found = [
            job("x", FIRST),
            job("x", SECOND),
            job("y", FIRST),
            job("e", SECOND),
            job("ghost", FIRST),
        ];
        let violations = check(&mut ledger, &found);
        let text = violations.join("\n");
        assert!(text.contains("instance x is there 2 times"), "{text}");
        assert!(text.contains("instance y: the completion"), "{text}");
        assert!(text.contains("instance e ended"), "{text}");
        assert!(text.contains("instance ghost was never started"), "{text}");
        assert!(
            text.contains("instance z: its start was acknowledged"),
            "{text}"
        );
        assert_eq!(violations.len(), 5, "{text}");
        assert!(
            !ledger.created.contains("m"),
            "not there: it was never applied"
        );
    }

    #[test]
    fn what_was_uncertain_is_settled_by_the_check() {
        let mut ledger = Ledger::default();
        ledger.maybe_created.insert("a".to_owned());
        ledger.created.insert("b".to_owned());
        ledger.maybe_at_second.insert("b".to_owned());
        let violations = check(&mut ledger, &[job("a", FIRST), job("b", SECOND)]);
        assert!(violations.is_empty(), "{violations:?}");
        assert!(ledger.created.contains("a"));
        assert!(ledger.at_second.contains("b"));
    }
}
