//! A partition's Raft group as the stream layer's [`ReplicatedLog`]: the replica reads its
//! role from here and, while it leads, writes through [`RaftJournal`].
//!
//! - **Roles** come from openraft's metrics. A leader is reported as [`Role::Leader`] only once
//!   an entry of its own term is applied (its blank entry): everything before it is then
//!   committed and in the journal, so the replica's replay of the committed log is the whole
//!   log. Until then it is reported as a follower.
//! - **Writes**: [`RaftJournal::append`] keeps the batch until the processor's turn ends
//!   ([`Journal::submit`], or a flusher is made): the turn's batches (a command written to the
//!   log and the results of processing it, say) go to a per-term writer task together, which
//!   proposes each with `raft.write(..).with_leader(term)` back to back, so that openraft
//!   appends them in one go and sends them in one AppendEntries per follower (one round, one
//!   sync on each follower, instead of one per batch). openraft refuses a write before
//!   appending anything when the term's leadership is over. The journal index of the entry
//!   is known in advance: the leader of a term is the only writer of normal entries, and its
//!   log ends at its committed blank entry when it starts, so its `n`-th batch is entry
//!   `blank + n`. Each write's outcome is checked against that index; a refusal or a
//!   mismatch ends the term for the processor.
//! - **Commits**: the commit notifier moves the journal's commit index when openraft applies
//!   an entry (after a quorum has it); [`RaftFlusher::flush`] returns once the commit index
//!   covers everything appended, so the processor's answers and side effects wait for the
//!   quorum as they wait for the fsync on a single node.
//! - **Leadership ends** when the metrics show another term or another state: the term's
//!   writer stops and every later append and flush of its journal fails at once.
//! - **Snapshots and compaction**: each snapshot the replica takes (leading:
//!   [`RaftJournal::compact`]; following: [`ReplicatedLog::snapshot_taken`]) is registered
//!   with the group as the log id it covers: the last entry before the one that holds the
//!   snapshot's next record, which replay after a restore starts from. The group is then asked
//!   to take it as its snapshot; it purges its log up to [`RaftLogConfig::kept_after_snapshot`]
//!   entries below it (and not while a replication still reads them), and the journal frees
//!   segments only below the partition's floor as well (the snapshot and the slowest
//!   exporter). A replica that needs a purged entry gets the snapshot instead
//!   (`transport::snapshot`), and rebuilds its state from it.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use beeline_log::{
    CommitIndex, Compaction, EntryKind, FileJournal, FileJournalConfig, Flusher, Journal,
    JournalReader, Recovery,
};
use beeline_state::snapshot::SnapshotStore;
use beeline_stream::{ReplicatedLog, Role, RoleState};
use futures_util::StreamExt;
use futures_util::stream::FuturesOrdered;
use openraft::impls::{BasicNode, ProgressResponder};
use openraft::network::{NetSnapshot, RaftNetworkFactory};
use openraft::type_config::async_runtime::watch::WatchReceiver;
use openraft::{Instant as _, ServerState};
use tokio::sync::{mpsc, watch};

use crate::metrics::GroupMetrics;
use crate::placement::ElectionBand;
use crate::rejoin::Rejoin;
use crate::state_machine::SnapshotData;
use crate::storage::{
    CompactionFloor, JournalLogStore, MetaDir, NodeFlusher, ReplicaReader, ReplicaReaders, Voids,
};
use crate::transport::{GroupNetworkFactory, Groups, PartitionRaft, Peers};
use crate::types::{Batch, LogId, NodeId, SnapshotMeta, log_id, term_of};
use crate::{CommitNotifier, TypeConfig};

/// The term a replica leads, while it does.
struct Leading {
    term: u64,
    over: Arc<Ended>,
}

/// Whether a term's leadership is over, with a wake-up for whoever waits for commits.
#[derive(Default)]
struct Ended {
    over: AtomicBool,
    wake: watch::Sender<()>,
}

impl Ended {
    fn end(&self) {
        self.over.store(true, Ordering::Release);
        self.wake.send_replace(());
    }

    fn is_over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }
}

/// One partition's Raft group on this broker.
pub struct RaftLog {
    partition_id: u32,
    raft: PartitionRaft,
    readers: ReplicaReaders,
    voids: Voids,
    roles: watch::Receiver<RoleState>,
    leading: Arc<Mutex<Option<Leading>>>,
    groups: Groups,
    snapshots: Arc<Snapshots>,
    metrics: Arc<GroupMetrics>,
    /// The journal's largest entry: a leader refuses a bigger batch before proposing it.
    max_entry_size: usize,
}

/// Where a replica keeps its log and how its group runs.
pub struct RaftLogConfig {
    pub node_id: NodeId,
    pub partition_id: u32,
    /// The journal's settings (`commit_recovered` is forced off: Raft decides what is
    /// committed; damage is repaired from the peers, `Recovery::TruncateCorrupt`).
    pub journal: FileJournalConfig,
    pub timing: RaftTiming,
    /// Every replica of the partition, the same on every broker. The membership names them
    /// by id only; [`Peers`] knows where each is reached.
    pub members: std::collections::BTreeSet<NodeId>,
    /// The partition's snapshots: the group's snapshot is the latest registered of them.
    pub snapshots: SnapshotStore,
    /// Entries the group keeps below its snapshot, so that a replica a little behind catches
    /// up from the log rather than by a snapshot ([`RaftLogConfig::KEPT_AFTER_SNAPSHOT`]).
    pub kept_after_snapshot: u64,
    /// Whether the replica keeps out of elections after it may have lost its log, until it
    /// holds its peers' committed log again ([`crate::rejoin`]). Always on but in the test
    /// that shows what it prevents.
    pub guard_rejoin: bool,
    /// The broker's flusher, shared by all its groups: it makes the journal's appends durable.
    pub flusher: NodeFlusher,
    /// Bytes of the latest entries appended kept in memory, so that replication and
    /// openraft's apply do not read them back from the journal
    /// ([`RaftLogConfig::RECENT_ENTRIES`]; the broker sizes it from its memory limit).
    pub recent_entries: usize,
    /// The replica's part of the election range, by its priority in the placement
    /// ([`PartitionPlacement::election_band`](crate::placement::PartitionPlacement::election_band)).
    pub election_band: ElectionBand,
    /// The replicas of higher priority than this one
    /// ([`PartitionPlacement::ahead_of`](crate::placement::PartitionPlacement::ahead_of)):
    /// in a new cluster it stands for election only once they could have.
    pub ahead: Vec<NodeId>,
}

impl RaftLogConfig {
    /// The default of [`kept_after_snapshot`](Self::kept_after_snapshot): about a second of
    /// batches at full load, far less than a snapshot's worth of state.
    pub const KEPT_AFTER_SNAPSHOT: u64 = 1000;

    /// The default of [`recent_entries`](Self::recent_entries).
    pub const RECENT_ENTRIES: usize = JournalLogStore::<FileJournal>::RECENT_ENTRIES;
}

/// How a group keeps its leader: heartbeats, and the range of time a follower waits for one
/// before it elects (each follower picks at random within it).
///
/// openraft adds a leader lease of the range's upper end: a follower grants no vote and stands
/// for none while its leader's lease lasts, so a follower that hears nothing elects between
/// `max + min` and `2 × max` after its leader's last message. The same lease bounds a leader
/// cut off from its quorum: its proposals are refused once `max` has passed since a quorum
/// last answered. With [`priority_election`](Self::priority_election) each replica waits in
/// its own band of the range ([`ElectionBand`]), and its lease is that band's end.
#[derive(Debug, Clone, Copy)]
pub struct RaftTiming {
    pub heartbeat_ms: u64,
    pub election_timeout_ms: (u64, u64),
    /// Whether each replica waits in its priority's band of the range
    /// ([`ElectionBand`]; `--priority-election`, on by default as in Zeebe) rather than
    /// anywhere in it.
    pub priority_election: bool,
}

/// Zeebe's `heartbeatInterval` default.
pub const DEFAULT_HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);
/// The default election timeout: a follower that hears nothing from its leader elects 1.5 to
/// 2 s after its last message, which keeps a leader kill to the first command on the new
/// leader within 3 s while a busy machine's stalls of a second or so elect nobody. (Zeebe's
/// default is 2.5 s, over an election that waits one to two timeouts.)
pub const DEFAULT_ELECTION_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(1000);

impl RaftTiming {
    /// The timing of Zeebe's two settings (`ZEEBE_BROKER_CLUSTER_HEARTBEATINTERVAL`,
    /// `ZEEBE_BROKER_CLUSTER_ELECTIONTIMEOUT`): heartbeats every `heartbeat`; a follower
    /// waits half to all of `election_timeout` at random, after its leader's lease (one
    /// `election_timeout`), so it elects 1.5 to 2 election timeouts after it last heard from
    /// its leader. The wait must leave room for a heartbeat: `election_timeout` is at least
    /// three heartbeat intervals.
    pub fn from_settings(
        heartbeat: std::time::Duration,
        election_timeout: std::time::Duration,
    ) -> Result<Self, String> {
        let heartbeat_ms = heartbeat.as_millis() as u64;
        let election_ms = election_timeout.as_millis() as u64;
        if heartbeat_ms == 0 {
            return Err("the heartbeat interval must be at least 1ms".into());
        }
        if election_ms < 3 * heartbeat_ms {
            return Err(format!(
                "the election timeout ({election_ms}ms) must be at least three heartbeat \
                 intervals ({}ms): a follower would elect between two heartbeats",
                3 * heartbeat_ms
            ));
        }
        Ok(Self {
            heartbeat_ms,
            election_timeout_ms: (election_ms / 2, election_ms),
            priority_election: true,
        })
    }

    /// openraft's tick: a group looks at its heartbeats and election deadlines this often
    /// (13/64 of the heartbeat interval, as openraft computes it).
    pub fn tick(&self) -> std::time::Duration {
        std::time::Duration::from_millis((self.heartbeat_ms * 13 / 64).max(1))
    }

    /// The lease a leader holds: how long after its quorum last answered it stops taking
    /// proposals, and how long followers refuse other candidates after its last message.
    pub fn leader_lease(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.election_timeout_ms.1)
    }
}

/// How long a snapshot send may make no progress (one chunk) before it is given up.
const SNAPSHOT_STALL_MS: u64 = 10_000;

impl RaftTiming {
    fn config(
        &self,
        partition_id: u32,
        kept: u64,
        elect: bool,
        band: ElectionBand,
    ) -> Result<Arc<openraft::Config>, String> {
        let band = if self.priority_election {
            band
        } else {
            ElectionBand::WHOLE
        };
        let (election_timeout_min, election_timeout_max) =
            band.within(self.election_timeout_ms.0, self.election_timeout_ms.1);
        let config = openraft::Config {
            cluster_name: format!("partition-{partition_id}"),
            heartbeat_interval: self.heartbeat_ms,
            // The replica's band of the range (openraft's leader lease, how long a follower
            // refuses other candidates after its leader's last message, is the band's end).
            election_timeout_min,
            election_timeout_max,
            // The partition takes its snapshots on its own schedule and registers each with
            // the group (`Snapshots::taken`); the group never builds one itself.
            snapshot_policy: openraft::SnapshotPolicy::Never,
            max_in_snapshot_log_to_keep: kept,
            install_snapshot_timeout: SNAPSHOT_STALL_MS,
            enable_elect: elect,
            // A replica whose election timer fires first asks the others whether they would
            // vote for it before it raises its term: one with a shorter log (or cut off) learns
            // that it cannot win without forcing the replica that can to wait out another
            // election timeout at a higher term.
            enable_pre_vote: Some(true),
            // A follower that lost (or dropped as damaged) entries it acknowledged is brought
            // back from where its log now ends rather than failing the leader's replication;
            // that it cannot elect a leader without them meanwhile is `crate::rejoin`'s part.
            allow_log_reversion: Some(true),
            // A leader that restarts stands for election like any replica rather than taking
            // back its old term at once (openraft's default): the journal writes appended
            // entries out at its next flush, so a kill takes the leader's unwritten tail while
            // its followers may hold those entries from its term already. Leading that term
            // again, it would write other entries at their indexes, and Raft takes an entry's
            // index and term for all of its content: the logs would part for good.
            enable_leader_restore: Some(false),
            ..Default::default()
        }
        .validate()
        .map_err(|e| format!("Raft settings: {e}"))?;
        Ok(Arc::new(config))
    }
}

impl RaftLog {
    /// Opens the partition's journal in `dir/log` and its Raft records in `dir/raft`, starts
    /// the group (initialized with `members` on first start, as every member does with the
    /// same membership), and serves it to the other brokers through `groups`.
    pub async fn open(
        config: RaftLogConfig,
        dir: &Path,
        peers: Peers,
        groups: &Groups,
    ) -> Result<Arc<Self>, String> {
        let partition_id = config.partition_id;
        crate::timers::share_grid(config.timing.tick());
        let probes = peers.clone();
        let network =
            move |metrics| GroupNetworkFactory::new(partition_id, peers).with_metrics(metrics);
        Self::open_inner(config, dir, network, groups, Some(probes)).await
    }

    /// [`open`](Self::open) with the group's network made by `network` from the group's
    /// metrics: a broker's is the tonic transport ([`GroupNetworkFactory`]); the in-process
    /// fault tests route through the simulated network of `sim`.
    pub async fn open_with<N>(
        config: RaftLogConfig,
        dir: &Path,
        network: impl FnOnce(Arc<GroupMetrics>) -> N,
        groups: &Groups,
    ) -> Result<Arc<Self>, String>
    where
        N: RaftNetworkFactory<TypeConfig>,
        N::Network: NetSnapshot<TypeConfig, SnapshotData = SnapshotData>,
    {
        Self::open_inner(config, dir, network, groups, None).await
    }

    /// The replica's disk-loss guard asks its peers through `peers` ([`crate::rejoin`]); without
    /// them (the simulated network) it runs unguarded.
    async fn open_inner<N>(
        config: RaftLogConfig,
        dir: &Path,
        network: impl FnOnce(Arc<GroupMetrics>) -> N,
        groups: &Groups,
        peers: Option<Peers>,
    ) -> Result<Arc<Self>, String>
    where
        N: RaftNetworkFactory<TypeConfig>,
        N::Network: NetSnapshot<TypeConfig, SnapshotData = SnapshotData>,
    {
        let partition_id = config.partition_id;
        let max_entry_size = config.journal.max_entry_size;
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            format!("partition {partition_id}: cannot open its {what}: {e}")
        };
        let snapshots_damaged = discard_damaged_snapshots(partition_id, &config.snapshots)
            .map_err(|e| failed("snapshots", &e))?;
        let log_forgotten =
            forget_an_unservable_log(partition_id, dir, &config.snapshots, config.members.len())
                .map_err(|e| failed("Raft records", &e))?;
        let log_lost = !dir.join("log").exists() && dir.join("raft").exists();
        let journal_config = FileJournalConfig {
            commit_recovered: false,
            // A damaged entry is never served: it is dropped, and the replica fetches its log
            // again from its peers, out of elections until it has (`crate::rejoin`).
            recovery: Recovery::TruncateCorrupt,
            ..config.journal
        };
        let mut journal = FileJournal::open(dir.join("log"), journal_config.clone())
            .map_err(|e| failed("log", &e))?;
        let repaired = journal.recovery_report().repaired;
        // A cut tail is a torn write or bit rot in the entries written last, and the two look
        // alike: the cut entries may have been flushed and acknowledged, so the replica
        // rejoins as after damage (out of elections until it holds its peers' log again).
        let cut = journal.recovery_report().truncated.is_some();
        if let Some((path, offset, reason)) = &journal.recovery_report().truncated {
            tracing::warn!(partition = partition_id, path = %path.display(), offset, %reason, repaired, "cut the log");
        }
        if repaired && config.members.len() > 1 {
            // What is left before the damage may sit below the purge mark and the snapshot
            // record, which then no longer describe it: the whole log and those records go
            // (the vote stays), and the leader sends entries or its snapshot as to a new
            // replica. A group of one keeps what is left: there is nobody to fetch from.
            drop(journal);
            forget_log(dir).map_err(|e| failed("log", &e))?;
            journal = FileJournal::open(dir.join("log"), journal_config)
                .map_err(|e| failed("log", &e))?;
        }
        let files = journal.readers();
        let meta = MetaDir::new(dir.join("raft")).map_err(|e| failed("Raft records", &e))?;
        let had_vote = meta
            .read_vote()
            .map_err(|e| failed("Raft records", &e))?
            .is_some();
        let current = current_snapshot(&meta, &config.snapshots)
            .map_err(|e| failed("snapshot record", &e))?;
        let notifier = CommitNotifier::with_snapshots(journal.commit_index(), meta, current);
        let floor = CompactionFloor::new(1);
        let damaged = snapshots_damaged || log_forgotten || log_lost || repaired || cut;
        let members = config.members.len();
        let others: Vec<NodeId> = config
            .members
            .iter()
            .copied()
            .filter(|&node| node != config.node_id)
            .collect();
        let rejoin = match config.guard_rejoin && peers.is_some() {
            true => Some(Arc::new(
                Rejoin::open(&dir.join("raft"), had_vote, damaged, members)
                    .map_err(|e| failed("member marker", &e))?,
            )),
            false => None,
        };
        let store = JournalLogStore::open_keeping(
            journal,
            &dir.join("raft"),
            floor.clone(),
            &config.flusher,
            config.recent_entries,
        )
        .map_err(|e| failed("Raft records", &e))?;
        let readers = ReplicaReaders::new(files, store.recent());
        let voids = store.voids();
        let metrics = Arc::new(GroupMetrics::default());
        let network = network(metrics.clone());
        let elect = rejoin.as_ref().is_none_or(|guard| guard.votes());
        let raft_config = config.timing.config(
            partition_id,
            config.kept_after_snapshot,
            elect,
            config.election_band,
        )?;
        let raft = PartitionRaft::new(
            config.node_id,
            raft_config,
            network,
            store,
            notifier.clone(),
        )
        .await
        .map_err(|e| failed("Raft group", &e))?;
        groups.insert_snapshots(partition_id, config.snapshots.clone(), metrics.clone());
        if let Some(guard) = &rejoin {
            groups.insert_rejoin(partition_id, guard.clone());
        }
        groups.insert(partition_id, raft.clone());
        let initialized = raft
            .is_initialized()
            .await
            .map_err(|e| failed("Raft group", &e))?;
        if !initialized {
            // Every member initializes with the same membership; all but the first are
            // refused, which is fine.
            let members: BTreeMap<NodeId, BasicNode> = config
                .members
                .into_iter()
                .map(|node| (node, BasicNode::default()))
                .collect();
            if let Err(error) = raft.initialize(members).await {
                tracing::debug!(partition = partition_id, %error, "group already initialized");
            }
        }
        if let (Some(guard), Some(peers)) = (rejoin, peers) {
            tokio::spawn(crate::rejoin::run(
                guard,
                raft.clone(),
                partition_id,
                others,
                peers,
                match config.timing.priority_election {
                    true => crate::rejoin::FirstElection {
                        band: config.election_band,
                        ahead: config.ahead,
                        stagger: config.timing.leader_lease(),
                    },
                    false => crate::rejoin::FirstElection::AT_ONCE,
                },
            ));
        }
        let (roles_tx, roles) = watch::channel(RoleState {
            role: Role::Follower,
            term: 0,
            leader: None,
        });
        let leading = Arc::new(Mutex::new(None));
        tokio::spawn(watch_roles(
            raft.clone(),
            partition_id,
            config.node_id,
            config.timing.leader_lease(),
            roles_tx,
            leading.clone(),
        ));
        let snapshots = Arc::new(Snapshots {
            partition_id,
            store: config.snapshots,
            readers: readers.clone(),
            notifier,
            floor,
            raft: raft.clone(),
            registering: Mutex::new(()),
        });
        Ok(Arc::new(Self {
            partition_id,
            raft,
            readers,
            voids,
            roles,
            leading,
            groups: groups.clone(),
            snapshots,
            metrics,
            max_entry_size,
        }))
    }

    /// What the group counts (snapshot sends and installs, commit latency).
    pub fn metrics(&self) -> &Arc<GroupMetrics> {
        &self.metrics
    }

    /// The partition's Raft group (metrics, tests).
    pub fn raft(&self) -> &PartitionRaft {
        &self.raft
    }

    fn leading(&self) -> std::sync::MutexGuard<'_, Option<Leading>> {
        self.leading.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Publishes the replica's role from openraft's metrics, and ends a led term's writes when
/// its leadership ends.
///
/// **Check-quorum**: a leader whose quorum has not acknowledged anything it sent for a whole
/// `lease` (openraft's leader lease: the election timeout's upper end) is cut off; the others
/// elect a new leader about then. It stops leading for the partition at once: its term's
/// writes end (the processor steps down and answers what waits, so the gateways reroute),
/// and it reports itself a follower that knows no leader, so that no gateway sends commands
/// here. openraft keeps it the group's leader meanwhile, sending heartbeats: once a quorum
/// answers again in the same term it leads again; a leader elected meanwhile makes it a
/// follower as soon as it is heard.
///
/// The group's state changes are logged (a failover's timeline: the candidacy, the vote won,
/// the blank entry applied; the replica logs when its processor starts).
async fn watch_roles(
    raft: PartitionRaft,
    partition: u32,
    node_id: NodeId,
    lease: std::time::Duration,
    roles: watch::Sender<RoleState>,
    leading: Arc<Mutex<Option<Leading>>>,
) {
    // The server's metrics (state, vote, leader, membership) change on elections and
    // membership changes only; the data metrics at every append, commit and acknowledgement.
    // The data metrics are watched only while they can move the role: a new leader waiting for
    // its blank entry's apply, or a leader cut off (or not yet acknowledged) waiting for its
    // quorum; a leader heard by its quorum looks again when its lease would run out.
    let mut server = raft.server_metrics();
    let mut data = raft.data_metrics();
    let mut last = (ServerState::Learner, 0, None::<NodeId>);
    let mut was_cut_off = false;
    loop {
        let (state, term, leader, alone) = {
            let m = server.borrow_and_update();
            // A group of one is its own quorum.
            let alone = m
                .membership_config
                .membership()
                .voter_ids()
                .nth(1)
                .is_none();
            (m.state, m.vote.leader_id().term, m.current_leader, alone)
        };
        let (applied_term, quorum_silent) = {
            let m = data.borrow_and_update();
            // How long the quorum has been silent, for a leader with others to hear from.
            let quorum_silent = match (state, &m.last_quorum_acked) {
                (ServerState::Leader, Some(acked)) if !alone => Some(acked.elapsed()),
                _ => None,
            };
            (m.last_applied.as_ref().map(term_of), quorum_silent)
        };
        let cut_off = quorum_silent.is_some_and(|silent| silent >= lease);
        if cut_off != was_cut_off {
            match cut_off {
                true => tracing::warn!(
                    partition,
                    term,
                    lease_ms = lease.as_millis() as u64,
                    "the quorum has not answered for a lease: not leading until it does"
                ),
                // Leading again in the same term; else it follows a newer leader (logged below).
                false if state == ServerState::Leader => {
                    tracing::info!(partition, term, "the quorum answers again")
                }
                false => {}
            }
            was_cut_off = cut_off;
        }
        if (state, term, leader) != last {
            match state {
                ServerState::Candidate if last.0 != ServerState::Candidate || last.1 != term => {
                    tracing::info!(partition, term, "standing for election")
                }
                ServerState::Leader if last.0 != ServerState::Leader || last.1 != term => {
                    tracing::info!(partition, term, "won the election")
                }
                ServerState::Follower if leader != last.2 => {
                    tracing::info!(partition, term, leader, "following")
                }
                _ => {}
            }
            last = (state, term, leader);
        }
        let leads = state == ServerState::Leader && leader == Some(node_id) && !cut_off;
        let role = match state {
            ServerState::Leader if leads && applied_term == Some(term) => Role::Leader,
            ServerState::Leader | ServerState::Follower | ServerState::Candidate => Role::Follower,
            ServerState::Learner | ServerState::Shutdown => Role::Inactive,
        };
        if role == Role::Leader && roles.borrow().role != Role::Leader {
            tracing::info!(
                partition,
                term,
                "the term's blank entry is applied; the replica leads"
            );
        }
        let leader = if cut_off { None } else { leader };
        {
            let mut current = leading.lock().unwrap_or_else(|e| e.into_inner());
            if current.as_ref().is_some_and(|l| !leads || l.term != term)
                && let Some(ended) = current.take()
            {
                ended.over.end();
            }
        }
        let now = RoleState { role, term, leader };
        roles.send_if_modified(|role| {
            let changed = *role != now;
            *role = now;
            changed
        });
        // A leader looks again when its lease would run out: a cut-off leader's metrics may
        // not change at all.
        let expires = quorum_silent
            .filter(|_| !cut_off)
            .map(|silent| lease.saturating_sub(silent));
        let awaits_data = state == ServerState::Leader
            && (role != Role::Leader || (!alone && (cut_off || quorum_silent.is_none())));
        tokio::select! {
            changed = server.changed() => {
                if changed.is_err() {
                    break;
                }
            }
            changed = data.changed(), if awaits_data => {
                if changed.is_err() {
                    break;
                }
            }
            () = tokio::time::sleep(expires.unwrap_or_default()), if expires.is_some() => {}
        }
    }
    if let Some(ended) = leading.lock().unwrap_or_else(|e| e.into_inner()).take() {
        ended.over.end();
    }
    roles.send_replace(RoleState::inactive());
}

impl ReplicatedLog for RaftLog {
    type Journal = RaftJournal;

    fn roles(&self) -> watch::Receiver<RoleState> {
        self.roles.clone()
    }

    /// A term with a void batch is over too: its processor steps down (an append or flush
    /// that fails then is a lost leadership, not a failed partition).
    fn leads(&self, term: u64) -> bool {
        self.voids.first() == u64::MAX
            && self
                .leading()
                .as_ref()
                .is_some_and(|l| l.term == term && !l.over.is_over())
    }

    fn lead(&self, term: u64) -> Option<RaftJournal> {
        let now = *self.roles.borrow();
        if now.role != Role::Leader || now.term != term {
            return None;
        }
        let commit = self.readers.commit_index();
        let last = self.readers.last_appended();
        if last != commit.get() {
            tracing::warn!(
                partition = self.partition_id,
                term,
                appended = last,
                committed = commit.get(),
                "not leading: the log holds uncommitted entries beyond the term's first"
            );
            return None;
        }
        let over = Arc::new(Ended::default());
        // The term's batches start after `last`: no void of theirs yet.
        self.voids.reset();
        {
            let mut leading = self.leading();
            if let Some(previous) = leading.take() {
                previous.over.end();
            }
            *leading = Some(Leading {
                term,
                over: over.clone(),
            });
        }
        let (writes, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(
            self.raft.clone(),
            self.partition_id,
            term,
            queue,
            over.clone(),
            self.metrics.clone(),
        ));
        Some(RaftJournal {
            writes,
            voids: self.voids.clone(),
            turn: Mutex::default(),
            max_entry_size: self.max_entry_size,
            term,
            last_index: last,
            last_asqn: None,
            commit,
            readers: self.readers.clone(),
            over,
            snapshots: self.snapshots.clone(),
        })
    }

    fn reader(&self) -> ReplicaReader {
        self.readers.reader()
    }

    fn commit_index(&self) -> Arc<CommitIndex> {
        self.readers.commit_index()
    }

    fn snapshot_taken(&self, keep_from: u64) {
        self.snapshots.taken(keep_from);
    }

    fn installed(&self) -> watch::Receiver<u64> {
        self.snapshots.notifier.installed()
    }

    fn shutdown(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            self.groups.remove(self.partition_id);
            if let Err(error) = self.raft.shutdown().await {
                tracing::warn!(partition = self.partition_id, %error, "Raft group did not stop cleanly");
            }
        })
    }
}

type WriteOutcome = Result<
    openraft::raft::ClientWriteResponse<TypeConfig>,
    openraft::error::ClientWriteError<TypeConfig>,
>;

/// Proposes one term's batches in order and checks each outcome; ends the term at the first
/// refusal.
async fn write_loop(
    raft: PartitionRaft,
    partition: u32,
    term: u64,
    mut writes: mpsc::UnboundedReceiver<Vec<(Batch, u64)>>,
    over: Arc<Ended>,
    metrics: Arc<GroupMetrics>,
) {
    let mut outcomes = FuturesOrdered::new();
    let mut ended = over.wake.subscribe();
    loop {
        tokio::select! {
            biased;
            _ = ended.changed() => break,
            Some((index, outcome)) = outcomes.next(), if !outcomes.is_empty() => {
                let outcome: Result<WriteOutcome, _> = outcome;
                let refusal = match outcome {
                    Ok(Ok(written)) => {
                        (written.log_id.index + 1 != index).then(|| {
                            format!("entry {} was expected at {index}", written.log_id.index + 1)
                        })
                    }
                    Ok(Err(error)) => Some(error.to_string()),
                    Err(_) => Some("the group stopped".to_string()),
                };
                if let Some(reason) = refusal {
                    tracing::info!(partition, term, %reason, "a write was refused; leadership ends");
                    break;
                }
            }
            turn = writes.recv() => {
                let Some(turn) = turn else { break };
                let mut gone = false;
                for (batch, index) in turn {
                    let (responder, outcome) = ProgressResponder::complete_only();
                    let proposed = raft
                        .write(batch)
                        .with_leader(term)
                        .responder(responder)
                        .await;
                    if let Err(error) = proposed {
                        tracing::info!(partition, term, %error, "the group is gone; leadership ends");
                        gone = true;
                        break;
                    }
                    let proposed_at = std::time::Instant::now();
                    let metrics = metrics.clone();
                    outcomes.push_back(async move {
                        let outcome = outcome.await;
                        metrics.commit_latency.observe(proposed_at.elapsed());
                        (index, outcome)
                    });
                }
                if gone {
                    break;
                }
            }
        }
    }
    over.end();
}

/// The journal a leader writes with in one term (see the module documentation).
pub struct RaftJournal {
    writes: mpsc::UnboundedSender<Vec<(Batch, u64)>>,
    voids: Voids,
    /// Batches appended in the processor's current turn, not yet handed to the writer.
    turn: Mutex<Vec<(Batch, u64)>>,
    max_entry_size: usize,
    term: u64,
    last_index: u64,
    last_asqn: Option<u64>,
    commit: Arc<CommitIndex>,
    readers: ReplicaReaders,
    over: Arc<Ended>,
    snapshots: Arc<Snapshots>,
}

impl RaftJournal {
    fn term_over(&self) -> beeline_log::Error {
        beeline_log::Error::Failed(format!("the leadership of term {} is over", self.term))
    }

    /// Hands the turn's batches to the writer, together.
    fn hand_on(&self) -> beeline_log::Result<()> {
        let turn = std::mem::take(&mut *self.turn.lock().unwrap_or_else(|e| e.into_inner()));
        if turn.is_empty() {
            return Ok(());
        }
        self.writes.send(turn).map_err(|_| self.term_over())
    }
}

impl Journal for RaftJournal {
    type Reader = ReplicaReader;
    type Flusher = RaftFlusher;

    fn append_entry(
        &mut self,
        _term: u64,
        kind: EntryKind,
        asqn: u64,
        data: &[u8],
    ) -> beeline_log::Result<u64> {
        if kind != EntryKind::Normal {
            return Err(beeline_log::Error::Failed(
                "a leader proposes only batches of records".into(),
            ));
        }
        if self.over.is_over() || self.voids.first() != u64::MAX {
            return Err(self.term_over());
        }
        // Every replica's journal would refuse it, the leader's own first: a storage error
        // that stops the whole group. Refused here, it is the processor's error alone.
        if data.len() > self.max_entry_size {
            return Err(beeline_log::Error::EntryTooLarge {
                size: data.len(),
                max: self.max_entry_size,
            });
        }
        let index = self.last_index + 1;
        let batch = Batch {
            asqn,
            data: bytes::Bytes::copy_from_slice(data),
            expected_index: index,
        };
        self.turn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((batch, index));
        self.last_index = index;
        self.last_asqn = Some(asqn);
        Ok(index)
    }

    fn first_index(&self) -> u64 {
        1
    }

    fn last_index(&self) -> u64 {
        self.last_index
    }

    fn last_asqn(&self) -> Option<u64> {
        self.last_asqn
    }

    fn last_term(&self) -> u64 {
        self.term
    }

    fn submit(&mut self) -> beeline_log::Result<()> {
        self.hand_on()
    }

    /// Hands on what is still kept (see [`Journal::submit`]): the flusher waits for it.
    fn flusher(&self) -> RaftFlusher {
        // A failure means the writer is gone: the term is over, and the flush fails at once.
        let _ = self.hand_on();
        RaftFlusher {
            target: self.last_index,
            commit: self.commit.clone(),
            over: self.over.clone(),
            term: self.term,
            voids: self.voids.clone(),
        }
    }

    fn commit_index(&self) -> Arc<CommitIndex> {
        self.commit.clone()
    }

    fn reader(&self) -> ReplicaReader {
        self.readers.reader()
    }

    fn log_reader(&self) -> ReplicaReader {
        self.readers.log_reader()
    }

    fn truncate_after(&mut self, _index: u64) -> beeline_log::Result<()> {
        Err(beeline_log::Error::Failed(
            "a replicated log is truncated by its group only".into(),
        ))
    }

    /// The leader took a snapshot and needs entries from `index` on: the snapshot is
    /// registered with the group, which purges its log below it (see the module
    /// documentation); nothing is removed here.
    fn compact(&mut self, index: u64) -> beeline_log::Result<Compaction> {
        self.snapshots.taken(index);
        Ok(Compaction::default())
    }

    fn reset(&mut self, _next_index: u64) -> beeline_log::Result<()> {
        Err(beeline_log::Error::Failed(
            "a replicated log is reset by its group only".into(),
        ))
    }
}

/// Waits for the group's commit of everything a leader appended.
#[derive(Clone)]
pub struct RaftFlusher {
    /// The last entry appended when the flusher was made.
    target: u64,
    commit: Arc<CommitIndex>,
    over: Arc<Ended>,
    term: u64,
    /// A batch of the term stored void at or below the target: what was written after it
    /// is not what the processor wrote, so the flush fails however far the commit goes.
    voids: Voids,
}

impl RaftFlusher {
    /// Until the commit index covers the target; fails once the term is over.
    async fn committed(self) -> beeline_log::Result<u64> {
        let mut commits = self.commit.subscribe();
        let mut ended = self.over.wake.subscribe();
        let over =
            || beeline_log::Error::Failed(format!("the leadership of term {} is over", self.term));
        loop {
            if self.over.is_over() || self.voids.first() <= self.target {
                return Err(over());
            }
            let committed = *commits.borrow_and_update();
            if committed >= self.target {
                return Ok(committed.max(self.commit.get()));
            }
            tokio::select! {
                changed = commits.changed() => if changed.is_err() { return Err(over()) },
                _ = ended.changed() => {}
            }
        }
    }
}

impl Flusher for RaftFlusher {
    /// Blocks until the commit index covers what was appended when the flusher was made
    /// (call it off the runtime's worker threads); fails once the term is over. The processor
    /// awaits [`wait`](Flusher::wait) instead.
    fn flush(&self) -> beeline_log::Result<u64> {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle.block_on(self.clone().committed()),
            Err(_) => Err(beeline_log::Error::Failed(
                "waiting for the group's commit needs the runtime".into(),
            )),
        }
    }

    /// The wait for the group's commit, on the caller's task.
    fn wait(&self) -> Option<beeline_log::FlushWait> {
        Some(Box::pin(self.clone().committed()))
    }
}

/// Registers the partition's snapshots with its group (see the module documentation).
struct Snapshots {
    partition_id: u32,
    store: SnapshotStore,
    readers: ReplicaReaders,
    notifier: CommitNotifier,
    floor: CompactionFloor,
    raft: PartitionRaft,
    /// One registration at a time.
    registering: Mutex<()>,
}

impl Snapshots {
    /// The partition took a snapshot and needs the entries from `keep_from` on (its snapshot
    /// and its exporters).
    fn taken(&self, keep_from: u64) {
        self.floor.set(keep_from);
        match self.register() {
            Ok(true) => {
                let raft = self.raft.clone();
                let partition = self.partition_id;
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => {
                        runtime.spawn(async move {
                            if let Err(error) = raft.trigger().snapshot().await {
                                tracing::warn!(partition, %error, "the group did not take the snapshot");
                            }
                        });
                    }
                    Err(_) => {
                        tracing::warn!(partition, "no runtime to hand the snapshot to the group")
                    }
                }
            }
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(partition = self.partition_id, %error, "cannot register the snapshot with the group")
            }
        }
    }

    /// Makes the latest snapshot the group's, if it covers more than the current one.
    fn register(&self) -> Result<bool, String> {
        let _one = self.registering.lock().unwrap_or_else(|e| e.into_inner());
        let Some(latest) = self.store.latest().map_err(|e| e.to_string())? else {
            return Ok(false);
        };
        let current = self.notifier.current();
        if current
            .as_ref()
            .is_some_and(|(_, data)| data.position >= latest.position)
        {
            return Ok(false);
        }
        let Some(last) = covered(self.readers.reader(), latest.position)? else {
            return Ok(false);
        };
        if current
            .as_ref()
            .is_some_and(|(meta, _)| meta.last_log_id.is_some_and(|id| id >= last))
        {
            return Ok(false);
        }
        let Some(membership) = self.notifier.membership_at(&last) else {
            return Ok(false);
        };
        let meta = SnapshotMeta {
            last_log_id: Some(last),
            last_membership: membership,
        };
        let data = SnapshotData {
            position: latest.position,
            path: latest.path,
        };
        self.notifier
            .set_snapshot(meta, data)
            .map_err(|e| format!("cannot record the snapshot: {e}"))?;
        tracing::debug!(
            partition = self.partition_id,
            position = latest.position,
            ?last,
            "snapshot registered with the group"
        );
        Ok(true)
    }
}

/// The log id a snapshot at record `position` covers: the entry before the one replay after
/// restoring it starts from (the entry that holds `position + 1`, or `position` when nothing
/// follows it yet). `None` when that is not in the committed log (yet, or any more).
fn covered(mut reader: ReplicaReader, position: i64) -> Result<Option<LogId>, String> {
    let error = |e: beeline_log::Error| e.to_string();
    reader
        .seek_to_asqn((position + 1).max(0) as u64)
        .map_err(error)?;
    let Some(first_needed) = reader.next_entry() else {
        return Ok(None);
    };
    let first_needed = first_needed.map_err(error)?.index;
    if first_needed < 2 {
        return Ok(None);
    }
    reader.seek(first_needed - 1).map_err(error)?;
    match reader.next_entry() {
        // Raft index i is journal index i + 1.
        Some(Ok(entry)) if entry.index == first_needed - 1 => {
            Ok(Some(log_id(entry.term, entry.index - 1)))
        }
        Some(Err(e)) => Err(error(e)),
        _ => Ok(None),
    }
}

/// The group's snapshot as recorded, with the partition's snapshot directory that holds it
/// (the recorded one, or a later one when it was pruned: a snapshot covers at least its log
/// id).
/// Removes every snapshot that fails its manifest check: never read into state nor sent to
/// a peer. Whether one was removed.
fn discard_damaged_snapshots(partition_id: u32, store: &SnapshotStore) -> Result<bool, String> {
    let mut discarded = false;
    for snapshot in store.list().map_err(|e| e.to_string())? {
        match SnapshotStore::verify(&snapshot) {
            Ok(()) => {}
            Err(damage @ beeline_state::Error::CorruptSnapshot { .. }) => {
                tracing::warn!(partition = partition_id, path = %snapshot.path.display(), %damage, "discarding a damaged snapshot; the replica gets what it held from its peers");
                std::fs::remove_dir_all(&snapshot.path)
                    .map_err(|e| format!("{}: {e}", snapshot.path.display()))?;
                discarded = true;
            }
            Err(other) => return Err(other.to_string()),
        }
    }
    Ok(discarded)
}

/// A log purged below a snapshot the replica no longer holds (discarded as damaged, lost, or
/// its record damaged) cannot serve its group: the log and what the records say of it go, the
/// vote stays, and the replica fetches the log (or the leader's snapshot) again. Whether it
/// did so.
///
/// Without damage a purge mark never comes without the snapshot record: the record is synced
/// before the group is asked to take the snapshot it registers (`Snapshots::taken`), and a
/// snapshot from the leader is recorded when it is installed, which openraft does before it
/// purges the log below it. Only a lost or damaged record or snapshot directory reaches this,
/// and such a replica used to refuse to start ("no snapshot registered with its group, but
/// its log is purged").
fn forget_an_unservable_log(
    partition_id: u32,
    dir: &Path,
    store: &SnapshotStore,
    members: usize,
) -> Result<bool, String> {
    let raft = dir.join("raft");
    if !raft.exists() {
        return Ok(false);
    }
    let meta = MetaDir::new(&raft).map_err(|e| e.to_string())?;
    if meta.read_purged().map_err(|e| e.to_string())?.is_none() {
        return Ok(false);
    }
    let held = match current_snapshot(&meta, store) {
        Ok(current) => current.is_some(),
        Err(damage) => {
            tracing::warn!(partition = partition_id, %damage, "the snapshot record is damaged");
            false
        }
    };
    if held {
        return Ok(false);
    }
    if members <= 1 {
        return Err(format!(
            "the log is purged below a snapshot this replica no longer holds, and the \
             partition has no other replica to get it from: restore {} from a backup",
            dir.display()
        ));
    }
    tracing::warn!(
        partition = partition_id,
        "the log is purged below a snapshot this replica no longer holds: discarding the log; it comes again from the peers"
    );
    forget_log(dir)?;
    Ok(true)
}

/// Removes the replica's log and what its Raft records say of it, keeping its vote.
fn forget_log(dir: &Path) -> Result<(), String> {
    let log = dir.join("log");
    match std::fs::remove_dir_all(&log) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", log.display()));
        }
        _ => {}
    }
    MetaDir::new(dir.join("raft"))
        .and_then(|meta| meta.forget_log())
        .map_err(|e| e.to_string())
}

fn current_snapshot(
    meta: &MetaDir,
    store: &SnapshotStore,
) -> Result<Option<(SnapshotMeta, SnapshotData)>, String> {
    let Some(record) = meta.read_snapshot().map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let snapshots = store.list().map_err(|e| e.to_string())?;
    let held = snapshots
        .iter()
        .find(|s| s.position == record.position)
        .or_else(|| snapshots.iter().rfind(|s| s.position > record.position));
    Ok(held.map(|snapshot| {
        (
            record.meta,
            SnapshotData {
                position: snapshot.position,
                path: snapshot.path.clone(),
            },
        )
    }))
}
