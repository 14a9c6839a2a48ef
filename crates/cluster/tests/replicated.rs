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
use beeline_cluster::{NodeFlusher, RaftLog, RaftLogConfig, RaftTiming};
use beeline_log::{FileJournalConfig, JournalReader};
use beeline_protocol::Record;
use beeline_protocol::codec::decode_batch;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
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

/// Timeouts for a shared 2-core machine, not for speed.
const TIMING: RaftTiming = RaftTiming {
    heartbeat_ms: 100,
    election_timeout_ms: (600, 1200),
};

/// A journal entry: (index, term, kind, asqn, data).
type EntryRow = (u64, u64, u8, u64, Vec<u8>);

/// How the brokers of a test keep their logs.
#[derive(Clone, Copy)]
struct Options {
    segment_size: u64,
    kept_after_snapshot: u64,
}

const DEFAULTS: Options = Options {
    segment_size: 1 << 20,
    kept_after_snapshot: RaftLogConfig::KEPT_AFTER_SNAPSHOT,
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
}

async fn start(
    node: u64,
    dir: &Path,
    addr: std::net::SocketAddr,
    members: &BTreeSet<u64>,
    peers: &Peers,
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
    let groups = Groups::of_node(node);
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
            flusher: NodeFlusher::start().expect("flusher"),
        },
        dir,
        peers.clone(),
        &groups,
    )
    .await
    .expect("raft log");
    let service = InternalServer::service(groups.clone());
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let _ = tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async {
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
    }
}

impl Broker {
    /// Stops the broker as a crash would: its group leaves, its server stops answering.
    async fn kill(self) -> (u64, PathBuf) {
        self.handle.halt().await;
        let _ = self.stop_server.send(());
        let _ = tokio::time::timeout(Duration::from_secs(5), self.server).await;
        (self.node, self.dir)
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
        match brokers[at].handle.execute(publish(name)).await {
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
            "replicas did not converge: {:?}",
            brokers
                .iter()
                .map(|b| (
                    b.node,
                    b.handle.role(),
                    b.log.commit_index().get(),
                    b.handle
                        .metrics()
                        .last_position
                        .load(std::sync::atomic::Ordering::Relaxed)
                ))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn published(records: &[Record]) -> BTreeSet<i64> {
    records
        .iter()
        .filter(|r| r.intent == MessageIntent::Published.into())
        .map(|r| r.key)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicated_partition_processes_on_its_leader_and_survives_losing_it() {
    logs();
    let root = tempfile::tempdir().expect("tempdir");
    let mut addrs = Vec::new();
    let mut members = BTreeSet::new();
    for node in 0..3u64 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        members.insert(node);
        addrs.push(addr);
    }
    let peers = Peers::with_addresses(
        addrs
            .iter()
            .enumerate()
            .map(|(node, addr)| (node as u64, addr.to_string())),
    );
    let mut brokers = Vec::new();
    for node in 0..3u64 {
        let dir = root.path().join(format!("broker-{node}"));
        brokers.push(start(node, &dir, addrs[node as usize], &members, &peers, DEFAULTS).await);
    }

    let mut acknowledged = BTreeSet::new();
    for i in 0..30 {
        let answer = execute(&brokers, &format!("m{i}"))
            .await
            .expect("published");
        acknowledged.insert(answer.key);
    }
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
    let (node, dir) = brokers.remove(at).kill().await;
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
    brokers.push(start(node, &dir, addrs[node as usize], &members, &peers, DEFAULTS).await);
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
    for broker in brokers {
        broker.handle.shutdown().await;
        let _ = broker.stop_server.send(());
    }
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
    let options = Options {
        segment_size: SEGMENT,
        kept_after_snapshot: 20,
    };
    let root = tempfile::tempdir().expect("tempdir");
    let mut addrs = Vec::new();
    let mut members = BTreeSet::new();
    for node in 0..3u64 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        addrs.push(listener.local_addr().expect("addr"));
        members.insert(node);
    }
    let peers = Peers::with_addresses(
        addrs
            .iter()
            .enumerate()
            .map(|(node, addr)| (node as u64, addr.to_string())),
    );
    let mut brokers = Vec::new();
    for node in 0..3u64 {
        let dir = root.path().join(format!("broker-{node}"));
        brokers.push(start(node, &dir, addrs[node as usize], &members, &peers, options).await);
    }
    for i in 0..10 {
        execute(&brokers, &format!("before-{i}"))
            .await
            .expect("published");
    }
    // A follower goes down; the other two go on under load, taking snapshots.
    let at = leader(&brokers).await;
    let down = (at + 1) % brokers.len();
    let (node, dir) = brokers.remove(down).kill().await;
    let mut highest = 0;
    let mut written = 0;
    let mut segments_created = 0;
    for round in 0..40 {
        let commands = (0..50).map(|i| {
            let brokers = &brokers;
            async move { execute(brokers, &format!("r{round}-{i}")).await }
        });
        for outcome in futures_util::future::join_all(commands).await {
            outcome.expect("published while a replica is down");
        }
        for broker in &brokers {
            broker.handle.snapshot().await.expect("snapshot");
        }
        // The group purges in the background.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for broker in &brokers {
            highest = highest.max(log_bytes(&broker.dir));
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
    eprintln!(
        "entries written: {written} in {segments_created} segments; purged up to {purged}; \
         largest journal on disk: {highest} bytes ({} segments of {SEGMENT})",
        highest / SEGMENT
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
    let grown = log_bytes(&dir);
    assert!(
        highest <= 5 * SEGMENT,
        "a journal stays within a few segments ({highest} bytes; the stopped replica's holds \
         {grown})"
    );

    // The replica returns: the entries it needs are gone, so it gets the leader's snapshot,
    // rebuilds its state from it, and catches up from the log after it.
    brokers.push(start(node, &dir, addrs[node as usize], &members, &peers, options).await);
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
    for broker in &brokers {
        assert_eq!(
            broker.state(),
            brokers[leader_at].state(),
            "the returned replica holds the state of the committed log"
        );
    }
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
    for broker in brokers {
        broker.handle.shutdown().await;
        let _ = broker.stop_server.send(());
    }
}
