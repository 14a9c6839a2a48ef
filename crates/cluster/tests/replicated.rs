//! Replicated partitions in one process: three brokers, each with a replica of partition 1
//! (its Raft group over a file journal, served on the broker's own internal port, and the
//! stream layer's replica over it). Only the leader processes; answers come after a quorum
//! commit; followers replay into their own state; a leader that goes away is replaced and
//! nothing acknowledged is lost; a replica that comes back catches up; every replica ends
//! with the same committed log and the same state.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use beeline_cluster::transport::{Groups, InternalServer, Peers};
use beeline_cluster::{ElectionBand, NodeFlusher, RaftLog, RaftLogConfig, RaftTiming};
use beeline_log::{FileJournalConfig, JournalReader};
use beeline_protocol::Record;
use beeline_protocol::codec::decode_batch;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::disk::{DiskSpace, Guard};
use beeline_stream::{
    Partition, PartitionConfig, PartitionError, PartitionHandle, ReplicatedLog, Role, SystemClock,
};
use openraft::type_config::async_runtime::watch::WatchReceiver;

/// Logs to the test's output with `RUST_LOG` set (e.g. `RUST_LOG=info`).
fn logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

const TIMEOUT: Duration = Duration::from_secs(30);

/// `future`'s output, or the test fails naming what it waited for: a lost answer shows as
/// this message, not as a test that never ends.
async fn within<T>(what: impl std::fmt::Display, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(TIMEOUT, future).await {
        Ok(output) => output,
        Err(_) => panic!("waited {TIMEOUT:?} for {what}"),
    }
}

/// Timeouts for a shared 2-core machine, not for speed.
const TIMING: RaftTiming = RaftTiming {
    heartbeat_ms: 100,
    election_timeout_ms: (600, 1200),
    priority_election: false,
};

/// A journal entry: (index, term, kind, asqn, data).
type EntryRow = (u64, u64, u8, u64, Vec<u8>);

/// How the brokers of a test keep their logs.
#[derive(Clone, Copy)]
struct Options {
    segment_size: u64,
    kept_after_snapshot: u64,
    guard_rejoin: bool,
    /// `PartitionConfig::snapshot_log_size`; the tests take their snapshots themselves but
    /// for the one that shows this.
    snapshot_log_size: Option<u64>,
}

const DEFAULTS: Options = Options {
    segment_size: 1 << 20,
    kept_after_snapshot: RaftLogConfig::KEPT_AFTER_SNAPSHOT,
    guard_rejoin: true,
    snapshot_log_size: None,
};

/// One broker: its replica of partition 1 and the internal server it answers on.
struct Broker {
    node: u64,
    dir: PathBuf,
    log: Arc<RaftLog>,
    handle: PartitionHandle,
    server: tokio::task::JoinHandle<()>,
    /// Closes the server's connections too, as a dead process's would close.
    stop_server: tokio::sync::oneshot::Sender<()>,
    /// The store the replica opened last (the follower's or the leader's state).
    store: Arc<Mutex<Option<Arc<MemStore>>>>,
    /// Its sessions with the other brokers.
    peers: Peers,
    /// Its replication watermark (1 GiB), free until the test says otherwise.
    disk: Arc<DiskSpace>,
}

async fn start(
    node: u64,
    dir: &Path,
    addr: std::net::SocketAddr,
    members: &BTreeSet<u64>,
    peers: Peers,
    options: Options,
) -> Broker {
    // The port may still be held by the broker's previous incarnation for a moment.
    let listener = {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            match tokio::net::TcpListener::bind(addr).await {
                Ok(listener) => break listener,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("bind {addr}: {e}"),
            }
        }
    };
    let disk = DiskSpace::guarding(Guard::Replication, 1 << 30);
    let groups = Groups::of_node(node).with_replication_disk(Some(disk.clone()));
    let snapshots = SnapshotStore::open(dir.join("snapshots"), 2).expect("snapshots");
    let log = RaftLog::open(
        RaftLogConfig {
            node_id: node,
            partition_id: 1,
            journal: FileJournalConfig {
                segment_size: options.segment_size,
                max_entry_size: (options.segment_size / 2) as usize,
                ..FileJournalConfig::default()
            },
            timing: TIMING,
            members: members.clone(),
            snapshots: snapshots.clone(),
            kept_after_snapshot: options.kept_after_snapshot,
            guard_rejoin: options.guard_rejoin,
            flusher: NodeFlusher::start().expect("flusher"),
            recent_entries: RaftLogConfig::RECENT_ENTRIES,
            election_band: ElectionBand::WHOLE,
            ahead: Vec::new(),
        },
        dir,
        peers.clone(),
        &groups,
    )
    .await
    .expect("raft log");
    let sessions = peers.clone();
    let service = InternalServer::service(groups.clone());
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let _ = beeline_cluster::transport::serve(listener, service, peers, async {
            let _ = stopped.await;
        })
        .await;
    });
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
    let mut config = PartitionConfig::new(1);
    config.snapshot_period = None;
    config.snapshot_log_size = options.snapshot_log_size;
    let handle = Partition::open_replica(
        config,
        log.clone(),
        snapshots,
        Arc::new(opener),
        Arc::new(SystemClock),
        None,
    )
    .expect("replica opens");
    Broker {
        node,
        dir: dir.to_path_buf(),
        log,
        handle,
        server,
        stop_server,
        store,
        peers: sessions,
        disk,
    }
}

impl Broker {
    /// Stops the broker as a crash would: its group leaves, its server stops answering.
    async fn kill(self) -> (u64, PathBuf) {
        within(format!("broker {} to halt", self.node), self.handle.halt()).await;
        let _ = self.stop_server.send(());
        let _ = tokio::time::timeout(Duration::from_secs(5), self.server).await;
        (self.node, self.dir)
    }

    /// The last entry in its Raft log.
    fn last_log_index(&self) -> u64 {
        self.log
            .raft()
            .metrics()
            .borrow_watched()
            .last_log_index
            .unwrap_or(0)
    }

    fn state(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|s| s.dump())
            .unwrap_or_default()
    }

    /// Every committed record, in log order.
    fn committed(&self) -> Vec<Record> {
        let mut reader = self.log.reader();
        reader.seek(1).expect("seek");
        let mut records = Vec::new();
        while let Some(entry) = reader.next_entry() {
            let entry = entry.expect("read");
            if entry.kind.carries_records() {
                records.extend(decode_batch(&entry.data, entry.asqn as i64).expect("decode"));
            }
        }
        records
    }

    /// Every committed journal entry.
    fn entries(&self) -> Vec<EntryRow> {
        let mut reader = self.log.reader();
        reader.seek(1).expect("seek");
        let mut entries = Vec::new();
        while let Some(entry) = reader.next_entry() {
            let entry = entry.expect("read");
            entries.push((
                entry.index,
                entry.term,
                entry.kind as u8,
                entry.asqn,
                entry.data,
            ));
        }
        entries
    }
}

fn publish(name: &str) -> Record {
    Record::command(
        -1,
        MessageIntent::Publish,
        MessageRecord {
            name: name.into(),
            correlation_key: "key".into(),
            time_to_live: 3_600_000,
            message_id: String::new(),
            variables: b"{}".to_vec(),
            tenant_id: "<default>".into(),
            deadline: -1,
        },
    )
}

async fn leader(brokers: &[Broker]) -> usize {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        if let Some(i) = brokers
            .iter()
            .position(|b| b.handle.role().role == Role::Leader)
        {
            return i;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no replica leads within {TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Publishes `name` through whichever replica leads, as a gateway would: "not leader" is
/// retried on the leader of the moment; an interrupted command is reported as such (it may
/// or may not have taken effect).
async fn execute(brokers: &[Broker], name: &str) -> Result<Record, PartitionError> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let at = leader(brokers).await;
        let answer = within(
            format!(
                "the answer to publishing {name:?} on broker {} ({})",
                brokers[at].node,
                status(brokers)
            ),
            brokers[at].handle.execute(publish(name)),
        );
        match answer.await {
            Err(PartitionError::NotLeader { .. }) | Err(PartitionError::Unavailable { .. })
                if tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

async fn converged(brokers: &[Broker]) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let commits: BTreeSet<u64> = brokers.iter().map(|b| b.log.commit_index().get()).collect();
        let positions: BTreeSet<i64> = brokers
            .iter()
            .map(|b| {
                b.handle
                    .metrics()
                    .last_position
                    .load(std::sync::atomic::Ordering::Relaxed)
            })
            .collect();
        if commits.len() == 1 && positions.len() == 1 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "replicas did not converge: {}",
            status(brokers)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Each broker's node, role, commit index and last replayed or processed position.
fn status(brokers: &[Broker]) -> String {
    brokers
        .iter()
        .map(|b| {
            format!(
                "broker {}: {:?}, commit {}, position {}",
                b.node,
                b.handle.role(),
                b.log.commit_index().get(),
                b.handle
                    .metrics()
                    .last_position
                    .load(std::sync::atomic::Ordering::Relaxed)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn published(records: &[Record]) -> BTreeSet<i64> {
    records
        .iter()
        .filter(|r| r.intent == MessageIntent::Published.into())
        .map(|r| r.key)
        .collect()
}

/// Stops every broker as a clean shutdown does: its partition, then its server.
async fn shut_down(brokers: Vec<Broker>) {
    for broker in brokers {
        within(
            format!("broker {} to shut down", broker.node),
            broker.handle.shutdown(),
        )
        .await;
        let _ = broker.stop_server.send(());
    }
}

/// Every broker's state is the one of broker `at` (`what` says which state that is).
fn assert_same_state(brokers: &[Broker], at: usize, what: &str) {
    for broker in brokers {
        assert_eq!(
            broker.state(),
            brokers[at].state(),
            "{what}: broker {}",
            broker.node
        );
    }
}

/// Publishes `{prefix}{i}` for each `i` of `range`, one after another, each acknowledged;
/// their keys go into `acknowledged`.
async fn publish_each(
    brokers: &[Broker],
    prefix: &str,
    range: std::ops::Range<usize>,
    acknowledged: &mut BTreeSet<i64>,
) {
    for i in range {
        let answer = execute(brokers, &format!("{prefix}{i}"))
            .await
            .expect("published");
        acknowledged.insert(answer.key);
    }
}

/// Three brokers of partition 1, each with its directory under one temporary root and an
/// internal address fixed for the test, so a broker stopped can start again where it was.
struct Cluster {
    root: tempfile::TempDir,
    addrs: Vec<std::net::SocketAddr>,
    members: BTreeSet<u64>,
    options: Options,
}

impl Cluster {
    async fn start(options: Options) -> (Self, Vec<Broker>) {
        let addrs: Vec<_> = (0..3)
            .map(|_| {
                let port = beeline_ports::free_port().expect("a free port");
                std::net::SocketAddr::from(([127, 0, 0, 1], port))
            })
            .collect();
        let cluster = Self {
            root: tempfile::tempdir().expect("tempdir"),
            members: (0..3u64).collect(),
            addrs,
            options,
        };
        let mut brokers = Vec::new();
        for node in 0..3u64 {
            brokers.push(cluster.broker(node).await);
        }
        (cluster, brokers)
    }

    fn dir(&self, node: u64) -> PathBuf {
        self.root.path().join(format!("broker-{node}"))
    }

    /// What broker `node` knows of the others, in a new start of it.
    fn peers(&self, node: u64) -> Peers {
        Peers::with_addresses(
            node,
            self.addrs
                .iter()
                .enumerate()
                .map(|(node, addr)| (node as u64, addr.to_string())),
        )
    }

    /// Broker `node`, started (again) over its directory.
    async fn broker(&self, node: u64) -> Broker {
        let addr = self.addrs[node as usize];
        within(
            format!("broker {node} to start"),
            start(
                node,
                &self.dir(node),
                addr,
                &self.members,
                self.peers(node),
                self.options,
            ),
        )
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicated_partition_processes_on_its_leader_and_survives_losing_it() {
    logs();
    let (cluster, mut brokers) = Cluster::start(DEFAULTS).await;

    let mut acknowledged = BTreeSet::new();
    publish_each(&brokers, "m", 0..30, &mut acknowledged).await;
    // Followers refuse commands before writing anything.
    let at = leader(&brokers).await;
    for (i, broker) in brokers.iter().enumerate() {
        if i != at {
            let refused = broker.handle.execute(publish("refused")).await;
            assert!(
                matches!(refused, Err(PartitionError::NotLeader { leader: Some(l), .. }) if l == brokers[at].node),
                "a follower refuses with the leader's id: {refused:?}"
            );
        }
    }
    converged(&brokers).await;
    let reference = brokers[at].entries();
    for broker in &brokers {
        assert_eq!(
            broker.entries(),
            reference,
            "replicas agree on the committed log"
        );
        assert_eq!(
            broker.state(),
            brokers[at].state(),
            "followers replayed into the leader's state"
        );
    }

    // The leader goes away; another leads in a higher term, from the state it replayed.
    let old_term = brokers[at].handle.role().term;
    let (node, _) = brokers.remove(at).kill().await;
    for i in 30..45 {
        match execute(&brokers, &format!("m{i}")).await {
            Ok(answer) => {
                acknowledged.insert(answer.key);
            }
            Err(PartitionError::Interrupted { .. }) => {}
            Err(e) => panic!("after the failover: {e}"),
        }
    }
    let now = leader(&brokers).await;
    assert!(brokers[now].handle.role().term > old_term, "a new term");

    // The old leader comes back as a follower and catches up.
    brokers.push(cluster.broker(node).await);
    let answer = execute(&brokers, "after the restart")
        .await
        .expect("published");
    acknowledged.insert(answer.key);
    converged(&brokers).await;
    let at = leader(&brokers).await;
    let reference = brokers[at].entries();
    let records = brokers[at].committed();
    let committed = published(&records);
    assert!(
        acknowledged.is_subset(&committed),
        "nothing acknowledged is lost: missing {:?}",
        acknowledged.difference(&committed).collect::<Vec<_>>()
    );
    for broker in &brokers {
        assert_eq!(
            broker.entries(),
            reference,
            "replicas agree on the committed log"
        );
        assert_eq!(
            broker.state(),
            brokers[at].state(),
            "every replica holds the state of the committed log"
        );
    }
    shut_down(brokers).await;
}

/// Established TCP connections to the brokers' internal ports (each counted once, at the
/// accepting end), from the kernel's socket table.
fn connections_to(addrs: &[std::net::SocketAddr]) -> usize {
    let ports: BTreeSet<u16> = addrs.iter().map(|a| a.port()).collect();
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .map(|line| {
                    line.split_whitespace()
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
        .filter(|fields| fields.len() > 3 && fields[3] == "01")
        .filter(|fields| {
            let port = fields[1].rsplit(':').next().unwrap_or_default();
            u16::from_str_radix(port, 16).is_ok_and(|port| ports.contains(&port))
        })
        .count()
}

/// Waits until each broker holds exactly one connection to each other broker, the pair's
/// two ends agree on who dialled it, and the kernel counts one connection per pair.
async fn one_connection_per_pair(cluster: &Cluster, brokers: &[Broker]) {
    use beeline_cluster::transport::session::Origin;
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let held: Vec<(u64, Vec<(u64, Origin)>)> = brokers
            .iter()
            .map(|b| (b.node, b.peers.connections()))
            .collect();
        let sockets = connections_to(&cluster.addrs);
        let one_each = held.iter().all(|(node, connections)| {
            let peers: Vec<u64> = connections.iter().map(|(peer, _)| *peer).collect();
            peers == (0..3u64).filter(|n| n != node).collect::<Vec<_>>()
        });
        let agree = held.iter().all(|(node, connections)| {
            connections.iter().all(|(peer, origin)| {
                held.iter()
                    .find(|(other, _)| other == peer)
                    .is_some_and(|(_, theirs)| theirs.iter().any(|(p, o)| p == node && o != origin))
            })
        });
        if one_each && agree && sockets == 3 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "one connection per pair of brokers: the brokers hold {held:?}, the kernel counts \
             {sockets} established connections to their internal ports"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_pair_of_brokers_shares_one_connection_also_after_a_restart() {
    logs();
    let (cluster, mut brokers) = Cluster::start(DEFAULTS).await;
    for i in 0..30 {
        execute(&brokers, &format!("m{i}"))
            .await
            .expect("published");
    }
    converged(&brokers).await;
    one_connection_per_pair(&cluster, &brokers).await;

    // A broker goes (its connections close) and comes back: the pairs it is in dial again,
    // and the traffic goes on over one connection per pair.
    let at = leader(&brokers).await;
    let (node, _) = brokers.remove(at).kill().await;
    brokers.push(cluster.broker(node).await);
    for i in 30..60 {
        match execute(&brokers, &format!("m{i}")).await {
            Ok(_) | Err(PartitionError::Interrupted { .. }) => {}
            Err(e) => panic!("after the restart: {e}"),
        }
    }
    execute(&brokers, "last").await.expect("published");
    converged(&brokers).await;
    one_connection_per_pair(&cluster, &brokers).await;
    shut_down(brokers).await;
}

/// Bytes of journal segment files on disk (each preallocated to the segment size).
fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("log"))
        .expect("log dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The id of the newest journal segment (ids count up from 1).
fn last_segment(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("log"))
        .expect("log dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("segment-")?
                .strip_suffix(".log")?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

/// The committed entries every replica still holds, from the highest first index on.
fn common_suffix(brokers: &[Broker]) -> Vec<Vec<EntryRow>> {
    let all: Vec<_> = brokers.iter().map(Broker::entries).collect();
    let from = all
        .iter()
        .map(|entries| entries.first().map_or(u64::MAX, |e| e.0))
        .max()
        .unwrap_or(0);
    all.into_iter()
        .map(|entries| entries.into_iter().filter(|e| e.0 >= from).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journals_stay_bounded_with_a_replica_down_which_then_returns_through_a_snapshot() {
    logs();
    const SEGMENT: u64 = 32 * 1024;
    // Snapshots come by the log's size alone (no period, none asked for): each replica's
    // after every two segments' worth of log.
    const SNAPSHOT_LOG_SIZE: u64 = 2 * SEGMENT;
    let options = Options {
        guard_rejoin: true,
        segment_size: SEGMENT,
        kept_after_snapshot: 20,
        snapshot_log_size: Some(SNAPSHOT_LOG_SIZE),
    };
    let (cluster, mut brokers) = Cluster::start(options).await;
    for i in 0..10 {
        execute(&brokers, &format!("before-{i}"))
            .await
            .expect("published");
    }
    // A follower goes down; the other two go on under load, taking snapshots by size.
    let at = leader(&brokers).await;
    let down = (at + 1) % brokers.len();
    let (node, dir) = brokers.remove(down).kill().await;
    // A journal on disk once its group has purged: the leader's first purge waits until its
    // replication to the stopped replica, which still reads the entries the stopped replica
    // lacks, has failed (openraft does not purge below an in-flight request; a failure comes
    // within a couple of seconds). After that purge the stopped replica needs a snapshot, and
    // nothing holds the leader's compaction back.
    let mut highest = 0;
    // Each broker's largest journal before its first purge, and the rounds after it.
    let mut before_purge = [0; 2];
    let mut rounds_purged = [0; 2];
    let mut written = 0;
    let mut segments_created = 0;
    for round in 0..80 {
        let commands = (0..50).map(|i| {
            let brokers = &brokers;
            async move { execute(brokers, &format!("r{round}-{i}")).await }
        });
        for outcome in futures_util::future::join_all(commands).await {
            outcome.expect("published while a replica is down");
        }
        // The group purges in the background.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for (at, broker) in brokers.iter().enumerate() {
            let purged = broker
                .log
                .raft()
                .metrics()
                .borrow_watched()
                .purged
                .is_some();
            let bytes = log_bytes(&broker.dir);
            if purged {
                highest = highest.max(bytes);
                rounds_purged[at] += 1;
            } else {
                before_purge[at] = before_purge[at].max(bytes);
            }
            segments_created = segments_created.max(last_segment(&broker.dir));
        }
        written = brokers
            .iter()
            .map(|b| b.log.commit_index().get())
            .max()
            .unwrap_or(0);
    }
    let leader_at = leader(&brokers).await;
    let raft_metrics = brokers[leader_at]
        .log
        .raft()
        .metrics()
        .borrow_watched()
        .clone();
    let purged = raft_metrics.purged.map(|p| p.index).unwrap_or(0);
    let snapshots: Vec<u64> = brokers
        .iter()
        .map(|b| {
            b.handle
                .metrics()
                .snapshots
                .load(std::sync::atomic::Ordering::Relaxed)
        })
        .collect();
    eprintln!(
        "entries written: {written} in {segments_created} segments; purged up to {purged}; \
         largest journal on disk: {highest} bytes ({} segments of {SEGMENT}), before the first \
         purge {before_purge:?} bytes; rounds after it {rounds_purged:?}; snapshots taken by \
         size: {snapshots:?}",
        highest / SEGMENT
    );
    assert!(
        rounds_purged.iter().all(|&rounds| rounds >= 10),
        "each group purged early in the load: {rounds_purged:?} of 80 rounds after its first purge"
    );
    assert!(
        snapshots.iter().all(|&taken| taken >= 3),
        "the leader and the follower snapshot by their log's size: {snapshots:?}"
    );
    assert!(
        segments_created * SEGMENT >= 4 * highest,
        "the load wrote far more than a journal holds"
    );
    assert!(
        purged + 1 + options.kept_after_snapshot >= written / 2,
        "the leader purged its log below its snapshots although a replica is down: purged \
         {purged} of {written}"
    );
    // Measured: at most five segments (two segments' worth between snapshots, the kept
    // entries, the active segment and its spare), six when a snapshot is still being taken
    // as the load fills the next segment (other tests running beside this one).
    let grown = log_bytes(&dir);
    assert!(
        highest <= 6 * SEGMENT,
        "a journal stays within a few segments ({highest} bytes; the stopped replica's holds \
         {grown})"
    );

    // The replica returns: the entries it needs are gone, so it gets the leader's snapshot,
    // rebuilds its state from it, and catches up from the log after it.
    brokers.push(cluster.broker(node).await);
    let answer = execute(&brokers, "after the return").await;
    answer.expect("published");
    converged(&brokers).await;
    let sent: u64 = brokers
        .iter()
        .map(|b| {
            b.log
                .metrics()
                .snapshots_sent
                .load(std::sync::atomic::Ordering::Relaxed)
        })
        .sum();
    let returned = brokers.last().expect("returned");
    let installed = returned
        .log
        .metrics()
        .snapshots_installed
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        sent >= 1 && installed >= 1,
        "sent {sent}, installed {installed}"
    );
    let leader_at = leader(&brokers).await;
    assert_same_state(
        &brokers,
        leader_at,
        "the returned replica holds the state of the committed log",
    );
    let suffixes = common_suffix(&brokers);
    assert!(!suffixes[0].is_empty(), "the replicas hold common entries");
    for suffix in &suffixes {
        assert_eq!(suffix, &suffixes[0], "replicas agree on the committed log");
    }
    // And it goes on following.
    for i in 0..10 {
        execute(&brokers, &format!("after-{i}"))
            .await
            .expect("published");
    }
    converged(&brokers).await;
    for broker in &brokers {
        assert_eq!(broker.state(), brokers[leader_at].state());
    }
    shut_down(brokers).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_short_of_disk_takes_no_entries_and_catches_up_once_space_is_back() {
    logs();
    let (_cluster, brokers) = Cluster::start(DEFAULTS).await;
    let mut acknowledged = BTreeSet::new();
    publish_each(&brokers, "before", 0..5, &mut acknowledged).await;
    converged(&brokers).await;
    let at = leader(&brokers).await;
    let term = brokers[at].handle.role().term;
    let short = (at + 1) % brokers.len();

    // Below the replication watermark: the follower refuses entries; the leader and the other
    // follower go on as a quorum.
    brokers[short].disk.update(1 << 20);
    publish_each(&brokers, "first-short", 0..1, &mut acknowledged).await;
    // An AppendEntries already taken when the watermark was crossed may still land.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = brokers[short].last_log_index();
    publish_each(&brokers, "short", 0..30, &mut acknowledged).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        brokers[short].last_log_index(),
        held,
        "the follower short of disk took no entries ({})",
        status(&brokers)
    );
    assert!(
        brokers[at].last_log_index() >= held + 30,
        "the others committed without it ({})",
        status(&brokers)
    );
    // It stays in its group, hearing the leader's heartbeats: no election.
    let role = brokers[short].handle.role();
    assert_eq!(
        (role.role, role.term, role.leader),
        (Role::Follower, term, Some(brokers[at].node)),
        "the follower short of disk still follows the same leader"
    );
    assert_eq!(leader(&brokers).await, at);

    // Space is back: it catches up by itself, to the same log and state.
    brokers[short].disk.update(u64::MAX);
    publish_each(&brokers, "after", 0..5, &mut acknowledged).await;
    converged(&brokers).await;
    assert_eq!(
        brokers[short].last_log_index(),
        brokers[at].last_log_index()
    );
    assert_same_state(
        &brokers,
        at,
        "the follower caught up after the disk had space again",
    );
    let suffixes = common_suffix(&brokers);
    for suffix in &suffixes {
        assert_eq!(suffix, &suffixes[0], "replicas agree on the committed log");
    }
    assert_eq!(acknowledged.len(), 41, "every publish acknowledged once");
    shut_down(brokers).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_short_of_disk_takes_no_snapshot_and_gets_one_once_space_is_back() {
    logs();
    const SEGMENT: u64 = 32 * 1024;
    let options = Options {
        guard_rejoin: true,
        segment_size: SEGMENT,
        kept_after_snapshot: 20,
        snapshot_log_size: Some(2 * SEGMENT),
    };
    let (_cluster, brokers) = Cluster::start(options).await;
    publish_each(&brokers, "before", 0..5, &mut BTreeSet::new()).await;
    converged(&brokers).await;
    let at = leader(&brokers).await;
    let short = (at + 1) % brokers.len();
    brokers[short].disk.update(1 << 20);
    // The others go on and snapshot by size; the leader's replication to the short follower
    // fails, so it purges its log past what that follower holds.
    let installed = |broker: &Broker| {
        broker
            .log
            .metrics()
            .snapshots_installed
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let purged_past = |brokers: &[Broker]| {
        let purged = brokers[at]
            .log
            .raft()
            .metrics()
            .borrow_watched()
            .purged
            .map_or(0, |p| p.index);
        purged > brokers[short].last_log_index()
    };
    let mut round = 0;
    while !purged_past(&brokers) {
        assert_eq!(
            installed(&brokers[short]),
            0,
            "no snapshot taken while short"
        );
        assert!(round < 100, "the leader purged nothing in 100 rounds");
        let commands = (0..50).map(|i| {
            let brokers = &brokers;
            async move { execute(brokers, &format!("r{round}-{i}")).await }
        });
        for outcome in futures_util::future::join_all(commands).await {
            outcome.expect("published while a follower is short of disk");
        }
        round += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The leader now offers a snapshot, which the short follower refuses.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        installed(&brokers[short]),
        0,
        "no snapshot taken while short"
    );

    brokers[short].disk.update(u64::MAX);
    execute(&brokers, "after").await.expect("published");
    converged(&brokers).await;
    assert!(
        installed(&brokers[short]) >= 1,
        "caught up through a snapshot"
    );
    assert_same_state(
        &brokers,
        at,
        "the follower rebuilt from the leader's snapshot",
    );
    shut_down(brokers).await;
}

/// Three replicas: one (L) goes down and misses entries the other two (A, C) acknowledge;
/// then A and C go down, C's whole directory is lost, and L and C come back before A does.
/// Returns what was acknowledged and is not in the group's committed log at the end.
async fn lost_after_a_disk_loss(guard_rejoin: bool) -> Vec<i64> {
    let options = Options {
        guard_rejoin,
        ..DEFAULTS
    };
    let (cluster, mut brokers) = Cluster::start(options).await;
    let mut acknowledged = BTreeSet::new();
    for i in 0..10 {
        acknowledged.insert(
            execute(&brokers, &format!("m{i}"))
                .await
                .expect("published")
                .key,
        );
    }
    converged(&brokers).await;
    // L, a follower, goes down; A (the leader) and C acknowledge what follows.
    let a = leader(&brokers).await;
    let l = (a + 1) % 3;
    let (l_node, _) = brokers.remove(l).kill().await;
    for i in 10..30 {
        match execute(&brokers, &format!("m{i}")).await {
            Ok(answer) => {
                acknowledged.insert(answer.key);
            }
            Err(PartitionError::Interrupted { .. }) => {}
            Err(e) => panic!("with L down: {e}"),
        }
    }
    converged(&brokers).await;
    let a = leader(&brokers).await;
    let (a_node, _) = brokers.remove(a).kill().await;
    let (c_node, c_dir) = brokers.remove(0).kill().await;
    std::fs::remove_dir_all(&c_dir).expect("C loses its disk");
    let mut brokers = vec![cluster.broker(l_node).await, cluster.broker(c_node).await];
    if guard_rejoin {
        // C keeps out of elections: L, whose log lacks entries A and C acknowledged, cannot win.
        let until = tokio::time::Instant::now() + Duration::from_secs(5);
        while tokio::time::Instant::now() < until {
            assert!(
                brokers.iter().all(|b| b.handle.role().role != Role::Leader),
                "no leader without A"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    } else {
        // L leads (C's empty log is no more up to date than L's) and writes over the gap.
        execute(&brokers, "with L leading")
            .await
            .expect("published");
    }
    brokers.push(cluster.broker(a_node).await);
    let answer = execute(&brokers, "with A back").await.expect("published");
    acknowledged.insert(answer.key);
    let at = leader(&brokers).await;
    if guard_rejoin {
        converged(&brokers).await;
        let reference = brokers[at].entries();
        for broker in &brokers {
            assert_eq!(
                broker.entries(),
                reference,
                "replicas agree on the committed log"
            );
            assert_eq!(broker.state(), brokers[at].state(), "and on the state");
        }
        let marker = || std::fs::read_to_string(c_dir.join("raft/member")).expect("marker");
        let until = tokio::time::Instant::now() + TIMEOUT;
        while marker() != "member\n" && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(marker(), "member\n", "C votes again once it caught up");
    }
    // Unguarded, A cannot even rejoin: its committed entries conflict with the leader's.
    let committed = published(&brokers[at].committed());
    shut_down(brokers).await;
    acknowledged.difference(&committed).copied().collect()
}

/// The disk-loss hazard and its guard (`beeline_cluster::rejoin`): without the guard the
/// replica that lost its disk votes for the lagging one, which leads without the entries the
/// lost replica had acknowledged, and they are gone; with it, nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_lost_its_disk_votes_only_once_it_holds_the_committed_log() {
    logs();
    let unguarded = lost_after_a_disk_loss(false).await;
    assert!(
        !unguarded.is_empty(),
        "without the guard, acknowledged entries are lost (the scenario shows the hazard)"
    );
    let guarded = lost_after_a_disk_loss(true).await;
    assert!(
        guarded.is_empty(),
        "with the guard nothing acknowledged is lost: missing {guarded:?}"
    );
}

/// A batch larger than the journal's largest entry would fail every replica's journal, the
/// leader's own first, as a storage error that stops the group: the leader refuses it before
/// proposing it, and the group goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_refuses_a_batch_larger_than_a_journal_entry_and_its_group_goes_on() {
    use beeline_log::{Flusher, Journal};
    let root = tempfile::tempdir().expect("tempdir");
    let groups = Groups::of_node(0);
    let snapshots = SnapshotStore::open(root.path().join("snapshots"), 2).expect("snapshots");
    let max_entry_size = 64 * 1024;
    let log = RaftLog::open(
        RaftLogConfig {
            node_id: 0,
            partition_id: 1,
            journal: FileJournalConfig {
                segment_size: 1 << 20,
                max_entry_size,
                ..FileJournalConfig::default()
            },
            timing: TIMING,
            members: BTreeSet::from([0]),
            snapshots,
            kept_after_snapshot: RaftLogConfig::KEPT_AFTER_SNAPSHOT,
            guard_rejoin: true,
            flusher: NodeFlusher::start().expect("flusher"),
            recent_entries: RaftLogConfig::RECENT_ENTRIES,
            election_band: ElectionBand::WHOLE,
            ahead: Vec::new(),
        },
        root.path(),
        Peers::new(0),
        &groups,
    )
    .await
    .expect("raft log");
    let mut roles = log.roles();
    let role = *roles
        .wait_for(|r| r.role == Role::Leader)
        .await
        .expect("leads");
    let mut journal = log.lead(role.term).expect("a journal for the term");
    let refused = journal.append(1, &vec![7u8; max_entry_size + 1]);
    assert!(
        matches!(refused, Err(beeline_log::Error::EntryTooLarge { size, max }) if size == max_entry_size + 1 && max == max_entry_size),
        "refused with the sizes: {refused:?}"
    );
    let index = journal.append(1, b"fits").expect("appended");
    let flusher = journal.flusher();
    let committed = tokio::task::spawn_blocking(move || flusher.flush())
        .await
        .expect("joined")
        .expect("committed: the group goes on");
    assert!(committed >= index);
    assert_eq!(log.roles().borrow().role, Role::Leader);
}

/// Flips a byte at `offset` of `path`.
fn flip(path: &Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open");
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, offset).expect("read");
    file.write_all_at(&[byte[0] ^ 0x5a], offset).expect("write");
}

/// The files of a directory, sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// A follower comes back with a damaged journal entry, and a former leader with a damaged
/// journal entry and a damaged latest snapshot: the damage is dropped at open (never read into
/// state nor served), the replica keeps out of elections, gets the rest from the leader
/// (entries or its snapshot), and ends with the others' committed log and state; nothing
/// acknowledged is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_with_a_damaged_journal_and_snapshot_is_repaired_from_its_peers() {
    logs();
    repaired_after_damage(false).await;
    repaired_after_damage(true).await;
}

/// Damages a follower's journal (`former_leader` false) or a former leader's journal and
/// newest snapshot, and checks the repair.
async fn repaired_after_damage(former_leader: bool) {
    let options = Options {
        segment_size: 32 * 1024,
        kept_after_snapshot: 20,
        guard_rejoin: true,
        snapshot_log_size: None,
    };
    let (cluster, mut brokers) = Cluster::start(options).await;
    // Acknowledged messages: key and position.
    let mut acknowledged = BTreeSet::new();
    for round in 0..4 {
        let commands = (0..40).map(|i| {
            let brokers = &brokers;
            async move { execute(brokers, &format!("r{round}-{i}")).await }
        });
        for outcome in futures_util::future::join_all(commands).await {
            let answer = outcome.expect("published");
            acknowledged.insert((answer.key, answer.position));
        }
        for broker in &brokers {
            within(
                format!("a snapshot on broker {}", broker.node),
                broker.handle.snapshot(),
            )
            .await
            .expect("snapshot");
        }
    }
    converged(&brokers).await;
    let at = leader(&brokers).await;
    let damaged = if former_leader { at } else { (at + 1) % 3 };
    let (node, dir) = brokers.remove(damaged).kill().await;
    // Damage: the first frame's data in the oldest segment, and (a former leader) a data file
    // of the newest snapshot (not its manifest).
    let segments = files_in(&dir.join("log"));
    let oldest = segments
        .iter()
        .find(|p| p.to_string_lossy().ends_with(".log"))
        .expect("a segment");
    flip(oldest, 64 + 40 + 4);
    let snapshots = SnapshotStore::open(dir.join("snapshots"), 2).expect("snapshots");
    let newest = snapshots.latest().expect("list").expect("a snapshot");
    if former_leader {
        let data = files_in(&newest.data_dir())
            .into_iter()
            .next()
            .expect("a data file");
        flip(&data, 0);
    }
    for i in 0..20 {
        match execute(&brokers, &format!("while down {i}")).await {
            Ok(answer) => {
                acknowledged.insert((answer.key, answer.position));
            }
            Err(PartitionError::Interrupted { .. }) => {}
            Err(e) => panic!("with the former leader down: {e}"),
        }
    }
    brokers.push(cluster.broker(node).await);
    assert_eq!(
        newest.path.exists(),
        !former_leader,
        "the damaged snapshot is discarded, an intact one kept"
    );
    let answer = execute(&brokers, "after the return")
        .await
        .expect("published");
    acknowledged.insert((answer.key, answer.position));
    converged(&brokers).await;
    let marker = || std::fs::read_to_string(dir.join("raft/member")).expect("marker");
    let until = tokio::time::Instant::now() + TIMEOUT;
    while marker() != "member\n" && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(marker(), "member\n", "the repaired replica votes again");
    let at = leader(&brokers).await;
    assert_same_state(&brokers, at, "replicas agree on state");
    let suffixes = common_suffix(&brokers);
    assert!(!suffixes[0].is_empty(), "the replicas hold common entries");
    for suffix in &suffixes {
        assert_eq!(suffix, &suffixes[0], "replicas agree on the committed log");
    }
    // What the leader compacted away is checked through the state only (equal above); the
    // acknowledged messages at or after its log's first record are all in it.
    let records = brokers[at].committed();
    let first_held = records.first().map_or(i64::MAX, |r| r.position);
    let committed = published(&records);
    let checked: Vec<i64> = acknowledged
        .iter()
        .filter(|(_, position)| *position >= first_held)
        .map(|(key, _)| *key)
        .collect();
    assert!(
        !checked.is_empty(),
        "some acknowledged messages are in the log held"
    );
    let missing: Vec<_> = checked.iter().filter(|k| !committed.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "nothing acknowledged is lost: missing {missing:?}"
    );
    eprintln!(
        "acknowledged {}, of which {} in the log held and checked",
        acknowledged.len(),
        checked.len()
    );
    shut_down(brokers).await;
}

/// The entries of a journal segment file: each frame's offset, data length, header length
/// and index (`beeline_log`'s segment layout: a 64-byte header whose bytes 8..12 hold the
/// format version, then 8-byte aligned frames, each a header of 40 bytes (24 in version 1)
/// starting with the data length (u32) and holding the index at bytes 8..16; a header of
/// index 0 ends the written part).
fn frames(segment: &Path) -> Vec<(u64, u64, u64, u64)> {
    const SEGMENT_HEADER: usize = 64;
    let bytes = std::fs::read(segment).expect("read segment");
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let header = if word(8) == 1 { 24 } else { 40 };
    let mut frames = Vec::new();
    let mut at = SEGMENT_HEADER;
    while at + header <= bytes.len() {
        let data = word(at) as usize;
        let index = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().expect("8 bytes"));
        if index == 0 {
            break;
        }
        frames.push((at as u64, data as u64, header as u64, index));
        at += (header + data).next_multiple_of(8);
    }
    frames
}

/// Takes the last `n` entries out of the journal's newest segment as a kill takes the frames
/// appended but not yet written: zeros from the first of them on, so the journal opens with a
/// clean end before it (nothing torn, nothing damaged). The index of the first one lost.
fn lose_unwritten_tail(dir: &Path, n: usize) -> u64 {
    use std::os::unix::fs::FileExt;
    let newest = files_in(&dir.join("log"))
        .into_iter()
        .rfind(|p| p.to_string_lossy().ends_with(".log"))
        .expect("a segment");
    let frames = frames(&newest);
    assert!(
        frames.len() > n,
        "more than {n} entries in the newest segment"
    );
    let (at, _, _, index) = frames[frames.len() - n];
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&newest)
        .expect("open segment");
    let len = file.metadata().expect("metadata").len();
    file.write_all_at(&vec![0; (len - at) as usize], at)
        .expect("zeros");
    index
}

/// A leader killed before it wrote out the entries it had appended (the journal writes them
/// at its next flush) comes back without them while a follower holds them from its term. It
/// must not lead that term again: it would write other entries at those indexes, and Raft
/// takes an entry's index and term for all of its content, so the logs would part for good.
/// It follows instead, and the follower, whose log is longer, wins the next term's election.
/// The other follower is down meanwhile, so nothing but the returning leader's own choice
/// keeps it from leading its old term with the one follower left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_restarted_without_its_log_tail_does_not_lead_again_in_its_old_term() {
    logs();
    let (cluster, mut brokers) = Cluster::start(DEFAULTS).await;
    let mut acknowledged = BTreeSet::new();
    publish_each(&brokers, "before ", 0..20, &mut acknowledged).await;
    converged(&brokers).await;
    let at = leader(&brokers).await;
    let old_term = brokers[at].handle.role().term;
    let leader_node = brokers[at].node;
    // A follower first (the leader goes on with the other), then the leader.
    let follower = brokers
        .iter()
        .position(|b| b.node != leader_node)
        .expect("a follower");
    let (follower_node, _) = brokers.remove(follower).kill().await;
    let at = brokers
        .iter()
        .position(|b| b.node == leader_node)
        .expect("the leader");
    let (_, dir) = brokers.remove(at).kill().await;
    lose_unwritten_tail(&dir, 2);
    brokers.push(cluster.broker(leader_node).await);

    // Two election timeouts and more with the former leader back and one follower.
    let mut led_in_old_term = false;
    let until =
        tokio::time::Instant::now() + Duration::from_millis(3 * TIMING.election_timeout_ms.1);
    while tokio::time::Instant::now() < until {
        let returned = brokers.last().expect("the former leader").handle.role();
        led_in_old_term |= returned.role == Role::Leader && returned.term == old_term;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    brokers.push(cluster.broker(follower_node).await);
    publish_each(&brokers, "after ", 0..20, &mut acknowledged).await;
    converged(&brokers).await;

    let suffixes = common_suffix(&brokers);
    for (broker, suffix) in brokers.iter().zip(&suffixes) {
        if let Some(parted) = suffix.iter().zip(&suffixes[0]).find(|(a, b)| a != b) {
            panic!(
                "the committed logs of brokers {} and {} part at entry {} (terms {} and {})",
                broker.node, brokers[0].node, parted.0.0, parted.0.1, parted.1.1
            );
        }
        assert_eq!(
            suffix.len(),
            suffixes[0].len(),
            "replicas hold the same entries"
        );
    }
    let at = leader(&brokers).await;
    assert_same_state(&brokers, at, "replicas agree on state");
    let committed = published(&brokers[at].committed());
    let missing: Vec<_> = acknowledged
        .iter()
        .filter(|k| !committed.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "nothing acknowledged is lost: missing {missing:?}"
    );
    assert!(
        !led_in_old_term,
        "the restarted leader led again in term {old_term}"
    );
    assert!(brokers[at].handle.role().term > old_term);
    shut_down(brokers).await;
}
