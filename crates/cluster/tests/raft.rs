//! A partition's Raft group on the journal: openraft's storage conformance suite on the file
//! journal (what a broker runs) and the in-memory twin, each with the commit notifier as state
//! machine; restarts, truncation and purge; and three brokers in one process, connected by the
//! internal transport over TCP, electing, replicating and failing over.
//!
//! The suite drives the log store and the state machine as independent parts (it applies
//! entries that are not in the log), so here the notifier publishes to a commit index of its
//! own; in a partition it publishes to the journal's, which `commits_reach_the_journal` shows.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io;

use std::collections::BTreeSet;

use beeline_cluster::transport::{
    GroupNetworkFactory, Groups, InternalServer, PartitionRaft, Peers,
};
use beeline_cluster::types::{Entry, LogId, Membership, Vote, log_id};
use beeline_cluster::{
    Batch, CommitNotifier, CompactionFloor, JournalLogStore, NodeFlusher, TypeConfig,
};
use beeline_log::{
    CommitIndex, EntryKind, FileJournal, FileJournalConfig, Journal, JournalReader, MemJournal,
};
use openraft::RaftLogReader;
use openraft::StorageError;
use openraft::entry::RaftEntry;
use openraft::error::{ClientWriteError, RaftError};
use openraft::storage::{IOFlushed, RaftLogStorage, RaftStateMachine};
use openraft::testing::log::{StoreBuilder, Suite};
use openraft::type_config::TypeConfigExt;
use openraft::type_config::async_runtime::watch::WatchReceiver;

struct FileJournals;

impl StoreBuilder<TypeConfig, JournalLogStore<FileJournal>, CommitNotifier, tempfile::TempDir>
    for FileJournals
{
    async fn build(
        &self,
    ) -> Result<
        (
            tempfile::TempDir,
            JournalLogStore<FileJournal>,
            CommitNotifier,
        ),
        StorageError<TypeConfig>,
    > {
        let io = |e: io::Error| StorageError::read(TypeConfig::err_from_error(&e));
        let dir = tempfile::tempdir().map_err(io)?;
        let config = FileJournalConfig {
            segment_size: 64 * 1024,
            max_entry_size: 16 * 1024,
            commit_recovered: false,
            ..FileJournalConfig::default()
        };
        let journal = FileJournal::open(dir.path().join("log"), config)
            .map_err(|e| io(io::Error::other(e)))?;
        let notifier = CommitNotifier::new(CommitIndex::new(0));
        let store = JournalLogStore::open(
            journal,
            dir.path(),
            CompactionFloor::new(u64::MAX),
            &NodeFlusher::start().expect("flusher"),
        )
        .map_err(io)?;
        Ok((dir, store, notifier))
    }
}

struct MemJournals;

impl StoreBuilder<TypeConfig, JournalLogStore<MemJournal>, CommitNotifier, tempfile::TempDir>
    for MemJournals
{
    async fn build(
        &self,
    ) -> Result<
        (
            tempfile::TempDir,
            JournalLogStore<MemJournal>,
            CommitNotifier,
        ),
        StorageError<TypeConfig>,
    > {
        let io = |e: io::Error| StorageError::read(TypeConfig::err_from_error(&e));
        let dir = tempfile::tempdir().map_err(io)?;
        let journal = MemJournal::new();
        let notifier = CommitNotifier::new(CommitIndex::new(0));
        let store = JournalLogStore::open(
            journal,
            dir.path(),
            CompactionFloor::new(u64::MAX),
            &NodeFlusher::start().expect("flusher"),
        )
        .map_err(io)?;
        Ok((dir, store, notifier))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_suite_passes_on_the_file_journal() {
    Suite::test_all(FileJournals)
        .await
        .expect("openraft storage suite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_suite_passes_on_the_memory_journal() {
    Suite::test_all(MemJournals)
        .await
        .expect("openraft storage suite");
}

fn file_config() -> FileJournalConfig {
    FileJournalConfig {
        segment_size: 64 * 1024,
        max_entry_size: 16 * 1024,
        commit_recovered: false,
        ..FileJournalConfig::default()
    }
}

async fn append(store: &mut JournalLogStore<FileJournal>, entries: Vec<Entry>) {
    let (done, flushed) = TypeConfig::oneshot();
    store
        .append(entries, IOFlushed::signal(done))
        .await
        .expect("append");
    flushed.await.expect("callback").expect("durable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_reach_the_journal_and_raft_state_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = || async {
        let journal = FileJournal::open(dir.path().join("log"), file_config()).expect("journal");
        let notifier = CommitNotifier::new(journal.commit_index());
        let store = JournalLogStore::open(
            journal,
            dir.path(),
            CompactionFloor::new(u64::MAX),
            &NodeFlusher::start().expect("flusher"),
        )
        .expect("store");
        (store, notifier)
    };
    let (mut store, mut notifier) = open().await;
    let members = Membership::new_with_defaults(vec![BTreeSet::from([0, 1, 2])], []);
    let batch = |asqn: u64, text: &str| Batch::new(asqn, text.as_bytes().to_vec());
    let entries = vec![
        Entry::new_membership(log_id(1, 0), members.clone()),
        Entry::new_blank(log_id(1, 1)),
        Entry::new_normal(log_id(1, 2), batch(1, "records 1-4")),
        Entry::new_normal(log_id(1, 3), batch(5, "records 5-6")),
    ];
    append(&mut store, entries.clone()).await;

    // Appended entries are readable for replication before anything is committed.
    let mut reader = store.get_log_reader().await;
    assert_eq!(
        reader.try_get_log_entries(0..10).await.expect("read"),
        entries
    );
    assert!(
        store.journal().reader().next_entry().is_none(),
        "nothing committed"
    );

    // Applying is committing: the partition's readers see the committed records.
    let applied = entries[..3].to_vec();
    notifier
        .apply(futures_util::stream::iter(
            applied.into_iter().map(|e| Ok((e, None))),
        ))
        .await
        .expect("apply");
    assert_eq!(
        store.journal().commit_index().get(),
        3,
        "Raft index 2 is journal entry 3"
    );
    let mut committed = store.journal().reader();
    committed.seek_to_asqn(1).expect("seek");
    let first = committed.next_entry().expect("an entry").expect("read");
    assert_eq!(
        (first.index, first.asqn, first.data),
        (3, 1, b"records 1-4".to_vec())
    );

    // A new leader of term 2 replaces the uncommitted tail.
    store
        .save_vote(&Vote::new_committed(2, 1))
        .await
        .expect("vote");
    store
        .truncate_after(Some(log_id(1, 2)))
        .await
        .expect("truncate");
    append(&mut store, vec![Entry::new_blank(log_id(2, 3))]).await;
    store
        .save_committed(Some(log_id(1, 2)))
        .await
        .expect("committed");
    store.purge(log_id(1, 0)).await.expect("purge");
    drop((store, notifier));

    let (mut store, _notifier) = open().await;
    let state = store.get_log_state().await.expect("state");
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 0)));
    assert_eq!(state.last_log_id, Some(log_id(2, 3)));
    let mut reader = store.get_log_reader().await;
    assert_eq!(
        reader.read_vote().await.expect("vote"),
        Some(Vote::new_committed(2, 1))
    );
    assert_eq!(
        store.read_committed().await.expect("committed"),
        Some(log_id(1, 2))
    );
    let read = reader.try_get_log_entries(0..10).await.expect("read");
    assert_eq!(
        read,
        vec![
            Entry::new_blank(log_id(1, 1)),
            Entry::new_normal(log_id(1, 2), batch(1, "records 1-4")),
            Entry::new_blank(log_id(2, 3)),
        ],
        "the purged entry is not served, the truncated one is replaced, terms survive"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_frees_segments_only_below_the_compaction_floor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = FileJournal::open(dir.path().join("log"), file_config()).expect("journal");
    let floor = CompactionFloor::new(1);
    let mut store = JournalLogStore::open(
        journal,
        dir.path(),
        floor.clone(),
        &NodeFlusher::start().expect("flusher"),
    )
    .expect("store");
    let data = vec![7u8; 8 * 1024];
    let entries: Vec<Entry> = (0..40)
        .map(|i| Entry::new_normal(log_id(1, i), Batch::new(i + 1, data.clone())))
        .collect();
    append(&mut store, entries).await;
    let segments = || {
        std::fs::read_dir(dir.path().join("log"))
            .expect("list")
            .filter(|f| {
                f.as_ref()
                    .is_ok_and(|f| f.file_name().to_string_lossy().starts_with("segment-"))
            })
            .count()
    };
    let before = segments();
    assert!(
        before >= 4,
        "40 entries of 8 KiB span several 64 KiB segments"
    );
    store.purge(log_id(1, 30)).await.expect("purge");
    assert_eq!(
        segments(),
        before,
        "an exporter still needs entry 1: nothing is freed"
    );
    let mut reader = store.get_log_reader().await;
    let served = reader.try_get_log_entries(0..100).await.expect("read");
    assert_eq!(
        served.first().map(|e| e.log_id().index),
        Some(31),
        "but Raft is served no purged entry"
    );

    floor.set(25);
    store.purge(log_id(1, 35)).await.expect("purge");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let after = segments();
    assert!(
        after < before,
        "segments below the floor are freed: {after} of {before}"
    );
    let mut all = store.journal().log_reader();
    all.seek(1).expect("seek");
    let first_kept = all.next_entry().expect("entry").expect("read").index;
    assert!(
        first_kept <= 25,
        "entry 25 and later stay on disk for the exporter: {first_kept}"
    );
}

/// One broker of an in-process cluster: partition 1's Raft group over a file journal, served
/// on its own internal port.
struct Broker {
    raft: PartitionRaft,
    groups: Groups,
    committed: <FileJournal as Journal>::Reader,
    commit: std::sync::Arc<CommitIndex>,
    server: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn start_broker(
    node: u64,
    listener: tokio::net::TcpListener,
    peers: Peers,
    config: std::sync::Arc<openraft::Config>,
) -> Broker {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = FileJournal::open(dir.path().join("log"), file_config()).expect("journal");
    let commit = journal.commit_index();
    let committed = journal.reader();
    let notifier = CommitNotifier::new(commit.clone());
    let store = JournalLogStore::open(
        journal,
        dir.path(),
        CompactionFloor::new(u64::MAX),
        &NodeFlusher::start().expect("flusher"),
    )
    .expect("store");
    let network = GroupNetworkFactory::new(1, peers.clone());
    let raft = PartitionRaft::new(node, config, network, store, notifier)
        .await
        .expect("raft");
    let groups = Groups::default();
    groups.insert(1, raft.clone());
    let service = InternalServer::service(groups.clone());
    let server = tokio::spawn(async move {
        let _ = beeline_cluster::transport::serve(listener, service, peers, std::future::pending())
            .await;
    });
    Broker {
        raft,
        groups,
        committed,
        commit,
        server,
        _dir: dir,
    }
}

async fn leader_among(brokers: &[&Broker], timeout: std::time::Duration) -> u64 {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        for broker in brokers {
            let metrics = broker.raft.metrics().borrow_watched().clone();
            if metrics.current_leader == Some(metrics.id)
                && metrics.state == openraft::ServerState::Leader
            {
                return metrics.id;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no leader elected within {timeout:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn committed_up_to(broker: &Broker, index: u64, timeout: std::time::Duration) {
    let deadline = tokio::time::Instant::now() + timeout;
    while broker.commit.get() < index {
        assert!(
            tokio::time::Instant::now() < deadline,
            "journal commit index {} did not reach {index} within {timeout:?}",
            broker.commit.get()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Writes `batch` through whichever broker leads, as a gateway would: a refusal because the
/// broker is not (or not yet, or no longer) a leader with a quorum behind it is retried on the
/// leader of the moment. Returns the leader that took it and the entry's log id.
async fn write(brokers: &[Broker], batch: Batch, timeout: std::time::Duration) -> (u64, LogId) {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let leader = leader_among(&brokers.iter().collect::<Vec<_>>(), timeout).await;
        let broker = brokers
            .iter()
            .find(|b| b.raft.metrics().borrow_watched().id == leader)
            .expect("the leader is one of the brokers");
        match broker.raft.client_write(batch.clone()).await {
            Ok(written) => return (leader, written.log_id),
            Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_))) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "no leader took a write within {timeout:?}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(error) => panic!("write on the leader: {error}"),
        }
    }
}

fn committed_entries(broker: &mut Broker) -> Vec<(u64, u64, EntryKind, u64, Vec<u8>)> {
    broker.committed.seek(1).expect("seek");
    let mut entries = Vec::new();
    while let Some(entry) = broker.committed.next_entry() {
        let entry = entry.expect("read");
        entries.push((entry.index, entry.term, entry.kind, entry.asqn, entry.data));
    }
    entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_brokers_elect_a_leader_replicate_and_fail_over() {
    let mut listeners = Vec::new();
    let mut members = std::collections::BTreeMap::new();
    for node in 0..3u64 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        members.insert(node, openraft::impls::BasicNode { addr });
        listeners.push(listener);
    }
    let config = shared_machine_config();
    let mut brokers = Vec::new();
    for (node, listener) in listeners.into_iter().enumerate() {
        let peers = Peers::new(node as u64);
        brokers.push(start_broker(node as u64, listener, peers, config.clone()).await);
    }
    // Every broker starts the group with the same members, as the placement gives them.
    for broker in &brokers {
        let _ = broker.raft.initialize(members.clone()).await;
    }
    let timeout = std::time::Duration::from_secs(20);
    let mut asqn = 1;
    let mut leader = 0;
    for i in 0..20 {
        let data = format!("batch {i}").into_bytes();
        let (by, written) = write(&brokers, Batch::new(asqn, data), timeout).await;
        leader = by;
        asqn += 5;
        assert!(written.index > 0);
    }
    let last = brokers[leader as usize].commit.get();
    for broker in &brokers {
        committed_up_to(broker, last, timeout).await;
    }
    let reference = committed_entries(&mut brokers[leader as usize]);
    assert!(
        reference.len() as u64 >= 22,
        "membership, blank, 20 batches"
    );
    assert_eq!(reference[0].2, EntryKind::Membership);
    assert_eq!(
        reference
            .iter()
            .filter(|e| e.2 == EntryKind::Normal)
            .count(),
        20
    );
    for broker in brokers.iter_mut() {
        let entries = committed_entries(broker);
        assert_eq!(
            entries[..reference.len()],
            reference[..],
            "replicas agree on the committed log"
        );
    }

    // Many batches proposed at once: the leader streams them to each follower with several
    // AppendEntries unanswered (`StreamAppend`); the followers append them in order.
    let mut outcomes = Vec::new();
    for i in 0..200u64 {
        let batch = Batch::new(asqn + 5 * i, format!("pipelined {i}").into_bytes());
        let (responder, outcome) = openraft::impls::ProgressResponder::complete_only();
        brokers[leader as usize]
            .raft
            .write(batch)
            .responder(responder)
            .await
            .expect("proposed");
        outcomes.push(outcome);
    }
    let mut indexes = Vec::new();
    for outcome in outcomes {
        let written = outcome.await.expect("answered");
        indexes.push(written.expect("the leader takes every batch").log_id.index);
    }
    asqn += 5 * 200;
    indexes.sort_unstable();
    indexes.dedup();
    assert_eq!(indexes.len(), 200, "each batch has its own entry");
    let last = brokers[leader as usize].commit.get();
    for broker in &brokers {
        committed_up_to(broker, last, timeout).await;
    }
    let reference = committed_entries(&mut brokers[leader as usize]);
    assert_eq!(
        reference
            .iter()
            .filter(|e| e.2 == EntryKind::Normal)
            .count(),
        220
    );
    for broker in brokers.iter_mut() {
        assert_eq!(
            committed_entries(broker)[..reference.len()],
            reference[..],
            "replicas agree on the pipelined log"
        );
    }

    // The leader goes away: the other two elect a new one in a higher term and go on.
    let old = brokers.remove(leader as usize);
    old.groups.remove(1);
    old.server.abort();
    old.raft.shutdown().await.expect("shutdown");
    let old_term = reference.last().map_or(0, |e| e.1);
    let batch = Batch::new(asqn, b"after the failover".to_vec());
    let (new_leader, written) = write(&brokers, batch, timeout).await;
    assert_ne!(new_leader, leader);
    let new = brokers
        .iter()
        .position(|b| b.raft.metrics().borrow_watched().id == new_leader)
        .expect("new leader");
    assert!(written.leader_id.term > old_term, "a new term");
    let last = brokers[new].commit.get();
    for broker in &brokers {
        committed_up_to(broker, last, timeout).await;
    }
    let a = committed_entries(&mut brokers[0]);
    let b = committed_entries(&mut brokers[1]);
    assert_eq!(a, b, "the two remaining replicas agree");
    assert_eq!(
        a[..reference.len()],
        reference[..],
        "nothing committed before is lost"
    );
    assert_eq!(
        a.last().map(|e| e.4.clone()),
        Some(b"after the failover".to_vec())
    );
    for broker in brokers {
        broker.server.abort();
        broker.raft.shutdown().await.expect("shutdown");
    }
}

/// A TCP proxy to `target` that forwards both ways until `dropping` is set, then reads and
/// drops every byte and closes nothing (an end's close is not passed on either): the link is
/// black-holed, packets lost with no RST or FIN, as a pulled cable or a dropping firewall
/// leaves it. It counts the connections it takes.
struct BlackHoleProxy {
    addr: String,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

async fn black_hole_proxy(
    target: String,
    dropping: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> BlackHoleProxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let (target, dropping) = (target.clone(), dropping.clone());
            tokio::spawn(async move {
                let Ok(outbound) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                let (from_in, to_in) = inbound.into_split();
                let (from_out, to_out) = outbound.into_split();
                tokio::spawn(pump(from_in, to_out, dropping.clone()));
                pump(from_out, to_in, dropping).await;
            });
        }
    });
    BlackHoleProxy { addr, accepted }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    dropping: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let black_holed = || dropping.load(std::sync::atomic::Ordering::Relaxed);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(_) if black_holed() => {}
            Ok(n) => {
                if to.write_all(&buffer[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    if black_holed() {
        // The other end hears nothing, not even the close.
        std::future::pending::<()>().await;
    }
    let _ = to.shutdown().await;
}

/// A group's Raft settings with timeouts for a shared 2-core machine, not for speed.
fn shared_machine_config() -> std::sync::Arc<openraft::Config> {
    std::sync::Arc::new(
        openraft::Config {
            cluster_name: "partition-1".into(),
            heartbeat_interval: 100,
            election_timeout_min: 500,
            election_timeout_max: 1000,
            ..Default::default()
        }
        .validate()
        .expect("config"),
    )
}

/// Waits until `peers` holds no connection with `peer`; how long that took.
async fn session_gone(peers: &Peers, peer: u64, since: std::time::Instant) -> std::time::Duration {
    loop {
        if peers.connections().iter().all(|(node, _)| *node != peer) {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < std::time::Duration::from_secs(30),
            "broker {} still holds a session with broker {peer} 30 s into a black hole",
            peers.local()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_holed_connection_is_closed_by_the_silence_watchdog_and_calls_dial_again() {
    use beeline_cluster::transport::session::{KEEPALIVE, SILENCE};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let dropping = Arc::new(AtomicBool::new(false));
    let listeners = [
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind"),
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind"),
    ];
    let internal = |i: usize| listeners[i].local_addr().expect("addr").to_string();
    // Each broker reaches the other only through a proxy; the one switch black-holes both.
    let to_1 = black_hole_proxy(internal(1), dropping.clone()).await;
    let to_0 = black_hole_proxy(internal(0), dropping.clone()).await;
    let peers = [
        Peers::with_addresses(0, [(1, to_1.addr.clone())]),
        Peers::with_addresses(1, [(0, to_0.addr.clone())]),
    ];
    let members: std::collections::BTreeMap<u64, openraft::impls::BasicNode> = [
        (
            0,
            openraft::impls::BasicNode {
                addr: to_0.addr.clone(),
            },
        ),
        (
            1,
            openraft::impls::BasicNode {
                addr: to_1.addr.clone(),
            },
        ),
    ]
    .into();
    let config = shared_machine_config();
    let mut brokers = Vec::new();
    for (node, listener) in listeners.into_iter().enumerate() {
        let node_peers = peers[node].clone();
        brokers.push(start_broker(node as u64, listener, node_peers, config.clone()).await);
    }
    for broker in &brokers {
        let _ = broker.raft.initialize(members.clone()).await;
    }
    let timeout = std::time::Duration::from_secs(20);
    let data = b"before".to_vec();
    write(&brokers, Batch::new(1, data), timeout).await;
    let dials = || to_0.accepted.load(Ordering::Relaxed) + to_1.accepted.load(Ordering::Relaxed);

    // While heartbeats and keepalives flow the watchdog leaves the one session alone. (Both
    // brokers may have dialled at start-up, when both stood for election at once: the lower
    // broker kept one connection and refused the other, so that counts two dials.)
    let dialled_at_start = dials();
    assert!(
        (1..=2).contains(&dialled_at_start),
        "{dialled_at_start} dials at start-up: at most one per side"
    );
    tokio::time::sleep(SILENCE + KEEPALIVE).await;
    for (node, peer) in [(0, 1), (1, 0)] {
        assert_eq!(
            peers[node].connections().len(),
            1,
            "broker {node} holds one session with broker {peer} while traffic flows"
        );
    }
    assert_eq!(
        dials(),
        dialled_at_start,
        "the one connection for both directions is kept, not dialled again, while traffic flows"
    );

    // Black-holed: nothing arrives and nothing says the connection is gone. Each side closes
    // the session once it has heard nothing for SILENCE (looked at every KEEPALIVE).
    dropping.store(true, Ordering::Relaxed);
    let cut = std::time::Instant::now();
    let closed = [
        session_gone(&peers[0], 1, cut).await,
        session_gone(&peers[1], 0, cut).await,
    ];
    println!("black-holed: sessions closed after {closed:?}");
    for (node, closed) in closed.into_iter().enumerate() {
        assert!(
            closed + std::time::Duration::from_millis(500) >= SILENCE
                && closed <= SILENCE + KEEPALIVE + std::time::Duration::from_secs(1),
            "broker {node} closed the black-holed session after {closed:?}: the watchdog \
             closes it after {SILENCE:?} of silence, looked at every {KEEPALIVE:?}"
        );
    }

    // Traffic flows again: the next calls dial a new connection and succeed.
    let dials_before = dials();
    dropping.store(false, Ordering::Relaxed);
    let healed = std::time::Instant::now();
    let data = b"after".to_vec();
    let (leader, written) = write(&brokers, Batch::new(6, data), timeout).await;
    let index = written.index + 1;
    for broker in &brokers {
        committed_up_to(broker, index, timeout).await;
    }
    println!(
        "healed: an entry written through broker {leader} committed on both after {:?}",
        healed.elapsed()
    );
    assert!(dials() > dials_before, "a new connection was dialled");
    for (node, peer) in [(0, 1), (1, 0)] {
        assert!(
            peers[node].connections().iter().any(|(n, _)| *n == peer),
            "broker {node} holds a session with broker {peer} again"
        );
    }
    for broker in brokers {
        broker.server.abort();
        broker.raft.shutdown().await.expect("shutdown");
    }
}

/// A batch that lands at another index than the one its leader's processor wrote it for (a
/// proposal before it was refused on an expired lease, and it was taken) holds no records on
/// any replica: the store keeps it as a blank entry, reads it back as one, marks where, and a
/// batch at its own index is kept as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_landing_at_another_index_than_written_for_is_stored_void() {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = FileJournal::open(dir.path().join("log"), file_config()).expect("journal");
    let mut store = JournalLogStore::open(
        journal,
        dir.path(),
        CompactionFloor::new(u64::MAX),
        &NodeFlusher::start().expect("flusher"),
    )
    .expect("store");
    let members = Membership::new_with_defaults(vec![BTreeSet::from([0, 1, 2])], []);
    let written_for = |expected_index: u64, asqn: u64| Batch {
        asqn,
        data: format!("records from {asqn}").into_bytes().into(),
        expected_index,
    };
    // Raft index i is journal index i + 1. The batch written for journal index 4 was refused;
    // the one written for 5 landed at 4, the one for 6 at 5.
    let entries = vec![
        Entry::new_membership(log_id(1, 0), members),
        Entry::new_blank(log_id(1, 1)),
        Entry::new_normal(log_id(1, 2), written_for(3, 1)),
        Entry::new_normal(log_id(1, 3), written_for(5, 6)),
        Entry::new_normal(log_id(1, 4), written_for(6, 7)),
    ];
    assert_eq!(store.voids().first(), u64::MAX);
    append(&mut store, entries.clone()).await;
    assert_eq!(store.voids().first(), 4, "the first void's journal index");

    let mut reader = store.get_log_reader().await;
    let read = reader.try_get_log_entries(0..10).await.expect("read");
    // The index a batch was written for is not stored: the entry is a batch or blank.
    let kept = Entry::new_normal(log_id(1, 2), Batch::new(1, b"records from 1".to_vec()));
    assert_eq!(
        read[..3],
        [entries[0].clone(), entries[1].clone(), kept],
        "what landed where written for is kept"
    );
    assert_eq!(
        read[3..],
        [
            Entry::new_blank(log_id(1, 3)),
            Entry::new_blank(log_id(1, 4))
        ],
        "what landed elsewhere is read back blank"
    );

    store.journal().commit_index().advance(5);
    let mut committed = store.journal().reader();
    committed.seek(1).expect("seek");
    let kinds: Vec<(u64, EntryKind, u64)> = std::iter::from_fn(|| committed.next_entry())
        .map(|e| e.expect("read"))
        .map(|e| (e.index, e.kind, e.asqn))
        .collect();
    assert_eq!(
        kinds[2..],
        [
            (3, EntryKind::Normal, 1),
            (4, EntryKind::Blank, 1),
            (5, EntryKind::Blank, 1)
        ],
        "the journal holds no records of the void batches (a blank entry repeats the asqn)"
    );

    store.voids().reset();
    append(
        &mut store,
        vec![Entry::new_normal(log_id(2, 5), written_for(6, 6))],
    )
    .await;
    assert_eq!(store.voids().first(), u64::MAX, "a batch at its own index");
}
