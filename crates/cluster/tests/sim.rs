//! Seeded in-process fault tests: three replicas of a partition, each its Raft group over a
//! file journal and the stream layer's replica (the engine) over it, talking through the
//! simulated network of `beeline_cluster::sim`: lost, delayed, reordered and duplicated
//! messages, network partitions and restarts from the replicas' directories, all drawn from
//! one seed. A client deploys a process, starts instances, activates and completes their jobs
//! and publishes messages through whichever replica leads.
//!
//! Checked during the run (sampled every few milliseconds):
//! - **Election safety**: at most one replica leads each term.
//! - **Committed entries never change**: every committed entry seen on any replica, by index,
//!   keeps its term and content on every replica, across restarts.
//!
//! Checked after the faults stop and the network heals:
//! - every replica commits the same log and replays it into the same state (live stores
//!   equal);
//! - the checker of `beeline chaos` (`beeline_cluster::check`) over the replicas'
//!   directories: the committed logs agree, each replica's state rebuilt from its own files
//!   gives the same digest, every acknowledged start, completion and publication is in the
//!   committed log, and no job is completed twice.
//!
//! Two targeted runs without message faults: a follower cut off for ten election timeouts
//! comes back without raising its term (pre-vote), and a leader cut off from both followers
//! stops leading about a lease after its quorum last answered while the two others elect a
//! leader that serves (check-quorum).
//!
//! Seeds: `BEELINE_SIM_SEED=n` runs seed `n` alone; `BEELINE_SIM_SEEDS=n` runs seeds 1 to n;
//! the default is a handful. A failure names its seed and the command that reruns it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beeline_cluster::check::{self, Acknowledged, JournalShape};
use beeline_cluster::sim::{Event, Faults, Schedule, SimNet};
use beeline_cluster::transport::Groups;
use beeline_cluster::{ElectionBand, NodeFlusher, RaftLog, RaftLogConfig, RaftTiming};
use beeline_log::{FileJournalConfig, JournalReader};
use beeline_protocol::intent::{
    DeploymentIntent, JobBatchIntent, JobIntent, MessageIntent, ProcessInstanceCreationIntent,
};
use beeline_protocol::value::{
    DeploymentRecord, DeploymentResource, JobBatchRecord, JobRecord, MessageRecord,
    ProcessInstanceCreationRecord,
};
use beeline_protocol::{Record, RecordType};
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::{
    Partition, PartitionConfig, PartitionError, PartitionHandle, ReplicatedLog, Role, SystemClock,
};
use openraft::ServerState;
use openraft::type_config::async_runtime::watch::WatchReceiver;

const NODES: [u64; 3] = [0, 1, 2];
const PARTITION: u32 = 1;
const SHAPE: JournalShape = JournalShape {
    segment_size: 1 << 20,
    max_entry_size: 1 << 19,
};
const TIMING: RaftTiming = RaftTiming {
    heartbeat_ms: 50,
    election_timeout_ms: (300, 600),
    priority_election: false,
};
/// How long the run waits for a leader, an answer or convergence before it fails.
const PATIENCE: Duration = Duration::from_secs(30);
/// Partitions and restarts per run.
const ROUNDS: usize = 4;
const JOB_TYPE: &str = "sim-task";
const PROCESS_ID: &str = "sim";

fn logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// The seeds to run: `BEELINE_SIM_SEED`, else 1 to `BEELINE_SIM_SEEDS`, else 1 to 3.
fn seeds() -> Vec<u64> {
    let var = |name| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(seed) = var("BEELINE_SIM_SEED") {
        return vec![seed];
    }
    (1..=var("BEELINE_SIM_SEEDS").unwrap_or(3)).collect()
}

fn model() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="sim-definitions" targetNamespace="http://beeline.dev/sim">
  <bpmn:process id="{PROCESS_ID}" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="{JOB_TYPE}"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"#
    )
}

/// What the run saw, checked as it goes.
#[derive(Default)]
struct Invariants {
    /// The replicas seen leading each term.
    leaders: BTreeMap<u64, BTreeSet<u64>>,
    /// Every committed entry seen: index -> (term, hash of kind, asqn and data), and who saw
    /// it first.
    committed: BTreeMap<u64, (u64, u64, u64)>,
    violations: Vec<String>,
    /// Read errors of the sampler (not invariants, reported).
    read_errors: Vec<String>,
}

type Shared = Arc<Mutex<Invariants>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Invariants> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// One replica of the partition.
struct Replica {
    node: u64,
    dir: PathBuf,
    log: Arc<RaftLog>,
    handle: PartitionHandle,
    store: Arc<Mutex<Option<Arc<MemStore>>>>,
    /// The next journal index the sampler reads.
    cursor: u64,
    watcher: tokio::task::JoinHandle<()>,
}

async fn open(node: u64, dir: &Path, net: &SimNet, groups: &Groups, seen: &Shared) -> Replica {
    let snapshots = SnapshotStore::open(dir.join("snapshots"), 2).expect("snapshots");
    let log = RaftLog::open_with(
        RaftLogConfig {
            node_id: node,
            partition_id: PARTITION,
            journal: FileJournalConfig {
                segment_size: SHAPE.segment_size,
                max_entry_size: SHAPE.max_entry_size,
                ..FileJournalConfig::default()
            },
            timing: TIMING,
            members: NODES.into_iter().collect(),
            snapshots: snapshots.clone(),
            kept_after_snapshot: RaftLogConfig::KEPT_AFTER_SNAPSHOT,
            // The simulated network carries no probes: the disk-loss guard is not simulated.
            guard_rejoin: false,
            flusher: NodeFlusher::start().expect("flusher"),
            recent_entries: RaftLogConfig::RECENT_ENTRIES,
            election_band: ElectionBand::WHOLE,
            ahead: Vec::new(),
        },
        dir,
        |_| net.factory(node, PARTITION),
        groups,
    )
    .await
    .expect("raft log");
    let store: Arc<Mutex<Option<Arc<MemStore>>>> = Arc::default();
    let opened = store.clone();
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        let store = Arc::new(match checkpoint {
            Some(dir) => MemStore::open_checkpoint(dir)?,
            None => MemStore::new(),
        });
        *opened.lock().unwrap_or_else(|e| e.into_inner()) = Some(store.clone());
        Ok(store)
    };
    let mut config = PartitionConfig::new(PARTITION as u16);
    config.snapshot_period = None;
    config.max_batch_bytes = SHAPE.max_entry_size;
    let handle = Partition::open_replica(
        config,
        log.clone(),
        snapshots,
        Arc::new(opener),
        Arc::new(SystemClock),
        None,
    )
    .expect("replica opens");
    let watcher = tokio::spawn(watch_leaders(node, log.clone(), seen.clone()));
    Replica {
        node,
        dir: dir.to_path_buf(),
        log,
        handle,
        store,
        cursor: 1,
        watcher,
    }
}

/// Records every term in which `node` leads (election safety).
async fn watch_leaders(node: u64, log: Arc<RaftLog>, seen: Shared) {
    let mut metrics = log.raft().metrics();
    loop {
        let (state, term) = {
            let m = metrics.borrow_watched();
            (m.state, m.current_term)
        };
        if state == ServerState::Leader {
            let mut seen = lock(&seen);
            let leaders = seen.leaders.entry(term).or_default();
            leaders.insert(node);
            if leaders.len() > 1 {
                let violation = format!("election safety: term {term} has leaders {leaders:?}");
                seen.violations.push(violation);
            }
        }
        if metrics.changed().await.is_err() {
            return;
        }
    }
}

impl Replica {
    /// Reads the entries committed since the last call and holds them against what every
    /// replica committed before.
    fn sample(&mut self, seen: &Shared) {
        let mut reader = self.log.reader();
        if let Err(e) = reader.seek(self.cursor) {
            lock(seen)
                .read_errors
                .push(format!("node {}: seek {}: {e}", self.node, self.cursor));
            return;
        }
        let mut seen = lock(seen);
        while let Some(entry) = reader.next_entry() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let error = format!("node {}: read after {}: {e}", self.node, self.cursor);
                    seen.read_errors.push(error);
                    return;
                }
            };
            let mut hasher = DefaultHasher::new();
            (entry.kind as u8, entry.asqn, &entry.data).hash(&mut hasher);
            let now = (entry.term, hasher.finish());
            match seen.committed.get(&entry.index) {
                Some(&(term, hash, first)) if (term, hash) != now => {
                    let violation = format!(
                        "committed entry {} changed: term {term} on node {first}, term {} on node {}{}",
                        entry.index,
                        now.0,
                        self.node,
                        if term == now.0 {
                            " (other content)"
                        } else {
                            ""
                        }
                    );
                    seen.violations.push(violation);
                }
                Some(_) => {}
                None => {
                    seen.committed
                        .insert(entry.index, (now.0, now.1, self.node));
                }
            }
            self.cursor = entry.index + 1;
        }
    }

    fn state(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|s| s.dump())
            .unwrap_or_default()
    }

    async fn stop(self) -> (u64, PathBuf) {
        self.handle.halt().await;
        self.watcher.abort();
        (self.node, self.dir)
    }
}

/// The replicas, each in its slot while it runs.
type Replicas = Arc<tokio::sync::Mutex<Vec<Option<Replica>>>>;

/// The replica that leads now, if any: its handle.
async fn leader(replicas: &Replicas) -> Option<PartitionHandle> {
    replicas
        .lock()
        .await
        .iter()
        .flatten()
        .find(|r| r.handle.role().role == Role::Leader)
        .map(|r| r.handle.clone())
}

/// Runs `command` on the leader of the moment, as a gateway would: "not leader" and
/// "unavailable" are retried; `Ok(None)` when the outcome is unknown (the leader changed
/// before the commit) or no leader answered in time.
async fn execute(replicas: &Replicas, command: Record) -> Option<Record> {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        let Some(handle) = leader(replicas).await else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        match tokio::time::timeout(Duration::from_secs(5), handle.execute(command.clone())).await {
            Ok(Ok(answer)) => return Some(answer),
            Ok(Err(PartitionError::NotLeader { .. } | PartitionError::Unavailable { .. })) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(Err(_)) | Err(_) => return None,
        }
    }
    None
}

fn event(answer: Option<Record>) -> Option<Record> {
    answer.filter(|r| r.record_type == RecordType::Event)
}

/// The client's work: one deployment, then instances started, their jobs activated and
/// completed, messages published; everything acknowledged goes into `acknowledged`.
async fn client(
    replicas: Replicas,
    seed: u64,
    acknowledged: Arc<Mutex<Acknowledged>>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let deployment = Record::command(
        -1,
        DeploymentIntent::Create,
        DeploymentRecord {
            resources: vec![DeploymentResource {
                resource: model().into_bytes(),
                resource_name: "sim.bpmn".into(),
            }],
            ..Default::default()
        },
    );
    while event(execute(&replicas, deployment.clone()).await).is_none() {
        if *stop.borrow() {
            return;
        }
    }
    let mut n = seed.wrapping_mul(1_000_003);
    while !*stop.borrow() {
        n += 1;
        let id = format!("i{n}");
        let create = Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                bpmn_process_id: PROCESS_ID.into(),
                version: -1,
                variables: format!(r#"{{"id":"{id}"}}"#).into_bytes(),
                ..Default::default()
            },
        );
        if let Some(created) = event(execute(&replicas, create).await)
            && let Some(c) = created.value_as::<ProcessInstanceCreationRecord>()
        {
            let key = c.process_instance_key;
            acknowledged.lock().unwrap().created.push((id, key));
        }
        if let Some(published) = event(execute(&replicas, publish(&format!("m{n}"))).await) {
            acknowledged.lock().unwrap().published.push(published.key);
        }
        let activate = Record::command(
            -1,
            JobBatchIntent::Activate,
            JobBatchRecord {
                r#type: JOB_TYPE.into(),
                worker: "sim".into(),
                timeout: 2_000,
                max_jobs_to_activate: 3,
                ..Default::default()
            },
        );
        let jobs = event(execute(&replicas, activate).await)
            .and_then(|batch| {
                batch
                    .value_as::<JobBatchRecord>()
                    .map(|b| b.job_keys.clone())
            })
            .unwrap_or_default();
        for key in jobs {
            let complete = Record::command(key, JobIntent::Complete, JobRecord::default());
            if event(execute(&replicas, complete).await).is_some() {
                acknowledged.lock().unwrap().completed.push(key);
            }
        }
    }
}

/// Waits until every replica has committed and processed the same log.
async fn converged(replicas: &Replicas) -> Result<(), String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (commits, positions, roles) = {
            let replicas = replicas.lock().await;
            let commits: BTreeSet<u64> = replicas
                .iter()
                .flatten()
                .map(|r| r.log.commit_index().get())
                .collect();
            let positions: BTreeSet<i64> = replicas
                .iter()
                .flatten()
                .map(|r| {
                    r.handle
                        .metrics()
                        .last_position
                        .load(std::sync::atomic::Ordering::Relaxed)
                })
                .collect();
            let roles: Vec<_> = replicas
                .iter()
                .flatten()
                .map(|r| (r.node, r.handle.role()))
                .collect();
            (commits, positions, roles)
        };
        if commits.len() == 1 && positions.len() == 1 {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the replicas did not converge within {PATIENCE:?}: commits {commits:?}, \
                 processed positions {positions:?}, roles {roles:?}; {}",
                describe(replicas).await
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Each replica's role as the stream layer and as its Raft group see it.
async fn describe(replicas: &Replicas) -> String {
    let replicas = replicas.lock().await;
    replicas
        .iter()
        .flatten()
        .map(|r| {
            let m = r.log.raft().metrics().borrow_watched().clone();
            format!(
                "node {}: {:?}; raft {:?} term {} leader {:?} last log {:?} applied {:?}; journal commit {}",
                r.node,
                r.handle.role(),
                m.state,
                m.current_term,
                m.current_leader,
                m.last_log_index,
                m.last_applied,
                r.log.commit_index().get()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What one seed's run did.
struct Summary {
    events: usize,
    faults: String,
    fault_count: u64,
    acknowledged: usize,
    committed: usize,
    terms: usize,
    elapsed: Duration,
}

/// One seed's run: faults from its schedule while the client works, then heal and check.
async fn run(seed: u64) -> Result<Summary, String> {
    let started = Instant::now();
    let root = tempfile::tempdir().expect("tempdir");
    let net = SimNet::new(seed, Faults::LOSSY);
    let seen: Shared = Arc::default();
    let groups: Vec<Groups> = NODES.iter().map(|&node| Groups::of_node(node)).collect();
    let dirs: Vec<PathBuf> = NODES
        .iter()
        .map(|node| root.path().join(format!("node-{node}")))
        .collect();
    for (&node, groups) in NODES.iter().zip(&groups) {
        net.attach(node, groups.clone());
    }
    let mut opened = Vec::new();
    for &node in &NODES {
        let i = node as usize;
        opened.push(Some(open(node, &dirs[i], &net, &groups[i], &seen).await));
    }
    let replicas: Replicas = Arc::new(tokio::sync::Mutex::new(opened));

    // The sampler of committed entries.
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let sampler = {
        let (replicas, seen, mut stop) = (replicas.clone(), seen.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                for replica in replicas.lock().await.iter_mut().flatten() {
                    replica.sample(&seen);
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                    _ = stop.changed() => return,
                }
            }
        })
    };
    let acknowledged: Arc<Mutex<Acknowledged>> = Arc::default();
    let client = tokio::spawn(client(
        replicas.clone(),
        seed,
        acknowledged.clone(),
        stop.clone(),
    ));

    // The faults.
    let schedule = Schedule::from_seed(seed, &NODES, ROUNDS, (200, 1200));
    for (pause, event) in &schedule.events {
        tokio::time::sleep(*pause).await;
        tracing::info!(seed, ?event, "fault");
        match event {
            Event::Split(sides) => net.split(sides),
            Event::Heal => net.heal(),
            Event::Restart { node, down } => {
                let i = *node as usize;
                net.down(*node);
                let replica = replicas.lock().await[i].take();
                if let Some(replica) = replica {
                    let mut replica = replica;
                    replica.sample(&seen);
                    replica.stop().await;
                }
                tokio::time::sleep(*down).await;
                let mut replica = open(*node, &dirs[i], &net, &groups[i], &seen).await;
                replica.sample(&seen);
                replicas.lock().await[i] = Some(replica);
                net.up(*node);
            }
        }
    }

    // Heal, let the client be acknowledged once more, and converge.
    net.heal();
    net.set_faults(Faults::NONE);
    let settle = publish("settled");
    // A command interrupted by a last election is tried again.
    let deadline = Instant::now() + PATIENCE;
    let mut settled = None;
    while settled.is_none() && Instant::now() < deadline {
        settled = event(execute(&replicas, settle.clone()).await);
    }
    let Some(settled) = settled else {
        return Err(format!(
            "no leader acknowledged a command within {PATIENCE:?} after the network healed: {}",
            describe(&replicas).await
        ));
    };
    acknowledged.lock().unwrap().published.push(settled.key);
    let _ = stop_tx.send(true);
    let _ = client.await;
    let _ = sampler.await;
    converged(&replicas).await?;
    let mut stopped = Vec::new();
    {
        let mut replicas = replicas.lock().await;
        let states: Vec<_> = replicas
            .iter_mut()
            .flatten()
            .map(|r| {
                r.sample(&seen);
                (r.node, r.state())
            })
            .collect();
        if let Some((node, reference)) = states.first() {
            for (other, state) in &states[1..] {
                if state != reference {
                    lock(&seen).violations.push(format!(
                        "the live states of nodes {node} and {other} differ after convergence \
                         ({} and {} keys)",
                        reference.len(),
                        state.len()
                    ));
                }
            }
        }
        for replica in replicas.iter_mut() {
            if let Some(replica) = replica.take() {
                stopped.push(replica.stop().await);
            }
        }
    }

    // The checker of `beeline chaos`, over the replicas' directories.
    let acknowledged = acknowledged.lock().unwrap().clone();
    let sources: BTreeMap<u16, Vec<(u64, PathBuf)>> =
        BTreeMap::from([(PARTITION as u16, stopped.clone())]);
    let memory = |_: &Path| -> Box<dyn beeline_stream::StoreOpener> {
        Box::new(
            |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
                Ok(Arc::new(match checkpoint {
                    Some(dir) => MemStore::open_checkpoint(dir)?,
                    None => MemStore::new(),
                }))
            },
        )
    };
    let verdict = check::check(
        &memory,
        &sources,
        &BTreeMap::new(),
        1,
        &acknowledged,
        &root.path().join("check"),
        SHAPE,
    );
    let seen = lock(&seen);
    let mut findings = seen.violations.clone();
    findings.extend(verdict.lost.iter().map(|l| format!("lost: {l}")));
    findings.extend(
        verdict
            .duplicated
            .iter()
            .map(|d| format!("duplicated: {d}")),
    );
    findings.extend(verdict.disagreements.iter().cloned());
    findings.extend(
        verdict
            .not_checked
            .iter()
            .map(|n| format!("not checked: {n}")),
    );
    if !seen.read_errors.is_empty() {
        findings.push(format!("read errors: {:?}", seen.read_errors));
    }
    if acknowledged.created.is_empty() || acknowledged.completed.is_empty() {
        findings.push(format!(
            "too little work to check: {} starts, {} completions acknowledged",
            acknowledged.created.len(),
            acknowledged.completed.len()
        ));
    }
    if !findings.is_empty() {
        return Err(findings.join("\n"));
    }
    Ok(Summary {
        events: schedule.events.len(),
        faults: net.counts().to_string(),
        fault_count: net.counts().faults() + schedule.events.len() as u64,
        acknowledged: acknowledged.created.len()
            + acknowledged.completed.len()
            + acknowledged.published.len(),
        committed: seen.committed.len(),
        terms: seen.leaders.len(),
        elapsed: started.elapsed(),
    })
}

#[test]
fn replicated_partitions_keep_raft_and_engine_invariants_under_seeded_faults() {
    logs();
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut faults = 0;
    let seeds = seeds();
    for &seed in &seeds {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        match runtime.block_on(run(seed)) {
            Ok(s) => {
                faults += s.fault_count;
                eprintln!(
                    "seed {seed}: {} partitions/restarts/heals, {}; {} acknowledged, {} entries \
                     committed, {} terms, {:.1} s",
                    s.events,
                    s.faults,
                    s.acknowledged,
                    s.committed,
                    s.terms,
                    s.elapsed.as_secs_f64()
                );
            }
            Err(finding) => {
                eprintln!(
                    "seed {seed} FAILED: {finding}\nrerun: BEELINE_SIM_SEED={seed} cargo test \
                     --release -p beeline-cluster --test sim"
                );
                failures.push(seed);
            }
        }
        runtime.shutdown_timeout(Duration::from_secs(5));
    }
    eprintln!(
        "{} seeds, {} failed, {faults} faults injected, {:.1} s",
        seeds.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "seeds {failures:?} failed; rerun one with BEELINE_SIM_SEED=<seed> cargo test --release \
         -p beeline-cluster --test sim"
    );
}

/// A message published with the one correlation key of the run.
fn publish(name: &str) -> Record {
    Record::command(
        -1,
        MessageIntent::Publish,
        MessageRecord {
            name: name.into(),
            correlation_key: "key".into(),
            time_to_live: 1_000,
            message_id: String::new(),
            variables: b"{}".to_vec(),
            tenant_id: "<default>".into(),
            deadline: -1,
        },
    )
}

/// Runs `scenario` on three replicas (no message faults) once one of them leads and has
/// acknowledged a command, then holds the run's invariants and stops the replicas.
fn on_three_replicas<F, Fut>(scenario: F)
where
    F: FnOnce(Replicas, SimNet) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    logs();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let root = tempfile::tempdir().expect("tempdir");
        let net = SimNet::new(1, Faults::NONE);
        let seen: Shared = Arc::default();
        let mut opened = Vec::new();
        for &node in &NODES {
            let groups = Groups::of_node(node);
            net.attach(node, groups.clone());
            let dir = root.path().join(format!("node-{node}"));
            opened.push(Some(open(node, &dir, &net, &groups, &seen).await));
        }
        let replicas: Replicas = Arc::new(tokio::sync::Mutex::new(opened));
        assert!(
            event(execute(&replicas, publish("first")).await).is_some(),
            "no leader served: {}",
            describe(&replicas).await
        );
        scenario(replicas.clone(), net).await;
        let violations = lock(&seen).violations.clone();
        assert!(violations.is_empty(), "{violations:?}");
        for replica in replicas.lock().await.iter_mut() {
            if let Some(replica) = replica.take() {
                replica.stop().await;
            }
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
}

/// The replica that leads now: its node, term and log.
async fn leading(replicas: &Replicas) -> Option<(u64, u64, Arc<RaftLog>)> {
    replicas
        .lock()
        .await
        .iter()
        .flatten()
        .find(|r| r.handle.role().role == Role::Leader)
        .map(|r| (r.node, r.handle.role().term, r.log.clone()))
}

/// Pre-vote: a follower cut off for many election timeouts asks the others before it raises
/// its term, and they cannot answer, so it never does; healed, it follows the same leader in
/// the same term (without pre-vote its higher term would depose a healthy leader).
#[test]
fn a_follower_cut_off_for_a_while_rejoins_without_deposing_the_leader() {
    on_three_replicas(|replicas, net| async move {
        let (leader, term, _) = leading(&replicas).await.expect("a leader");
        let follower = NODES
            .into_iter()
            .find(|&n| n != leader)
            .expect("a follower");
        let follower_log = replicas.lock().await[follower as usize]
            .as_ref()
            .expect("the follower runs")
            .log
            .clone();
        let rest: BTreeSet<u64> = NODES.into_iter().filter(|&n| n != follower).collect();
        net.split(&[BTreeSet::from([follower]), rest]);
        // Ten election timeouts: without pre-vote the follower would stand again and again.
        let cut_for = Duration::from_millis(10 * TIMING.election_timeout_ms.1);
        tokio::time::sleep(cut_for).await;
        let cut_off_term = follower_log.raft().metrics().borrow_watched().current_term;
        net.heal();
        assert!(
            event(execute(&replicas, publish("healed")).await).is_some(),
            "no leader served after the heal: {}",
            describe(&replicas).await
        );
        let deadline = Instant::now() + PATIENCE;
        while follower_log
            .raft()
            .metrics()
            .borrow_watched()
            .current_leader
            != Some(leader)
        {
            assert!(
                Instant::now() < deadline,
                "healed, follower {follower} does not follow leader {leader}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let now = leading(&replicas).await.map(|(node, term, _)| (node, term));
        eprintln!(
            "follower {follower} cut off for {cut_for:?}: its term then {cut_off_term}; the \
             leader before: {leader} in term {term}, after: {now:?}"
        );
        assert_eq!(
            cut_off_term, term,
            "the cut-off follower raised its term from {term} to {cut_off_term}"
        );
        assert_eq!(now, Some((leader, term)), "the leader changed");
    });
}

/// Check-quorum: a leader cut off from both followers stops leading about a lease (the
/// election timeout's upper end) after its quorum last answered, answers the command it was
/// given after the cut with an error instead of holding it, and the two others elect a leader
/// that serves; healed, the old leader follows the new one.
#[test]
fn a_leader_cut_off_from_its_quorum_steps_down_and_the_majority_elects_another() {
    on_three_replicas(|replicas, net| async move {
        let (old, term, old_log) = leading(&replicas).await.expect("a leader");
        let old_handle = replicas.lock().await[old as usize]
            .as_ref()
            .expect("the leader runs")
            .handle
            .clone();
        let others: BTreeSet<u64> = NODES.into_iter().filter(|&n| n != old).collect();

        let cut = Instant::now();
        net.split(&[BTreeSet::from([old]), others.clone()]);
        let given = tokio::spawn({
            let handle = old_handle.clone();
            async move { (handle.execute(publish("cut off")).await, cut.elapsed()) }
        });
        let stepped_down = loop {
            let role = old_log.roles().borrow().role;
            if old_handle.role().role != Role::Leader && role != Role::Leader {
                break cut.elapsed();
            }
            assert!(
                cut.elapsed() < PATIENCE,
                "the cut-off leader {old} still leads term {term} after {PATIENCE:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let (answer, answered) = given.await.expect("the command's task");
        let served = event(execute(&replicas, publish("after")).await);
        let served_after = cut.elapsed();
        let new_leader = leading(&replicas).await.map(|(node, term, _)| (node, term));
        eprintln!(
            "leader {old} of term {term} cut off: stopped leading after {stepped_down:?}, \
             answered the command given after the cut after {answered:?} ({answer:?}); the \
             majority's leader {new_leader:?} served after {served_after:?}"
        );

        let lease = Duration::from_millis(TIMING.election_timeout_ms.1);
        assert!(
            stepped_down < lease + Duration::from_millis(500),
            "the cut-off leader stopped leading only after {stepped_down:?} (lease {lease:?})"
        );
        assert!(
            answer.is_err() && answered < lease + Duration::from_millis(500),
            "the cut-off leader answered the command given after the cut with {answer:?} after \
             {answered:?}: it cannot be committed, and must not be held"
        );
        assert!(served.is_some(), "the majority served no command");
        let (new, new_term) = new_leader.expect("a leader after the cut");
        assert!(
            others.contains(&new) && new_term > term,
            "leader {new} of term {new_term} after the cut"
        );

        net.heal();
        let deadline = Instant::now() + PATIENCE;
        loop {
            let (state, now_term, leader) = {
                let m = old_log.raft().metrics().borrow_watched().clone();
                (m.state, m.current_term, m.current_leader)
            };
            if state == ServerState::Follower && now_term >= new_term && leader.is_some() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "healed, the old leader is {state:?} in term {now_term} (leader {leader:?})"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
}
