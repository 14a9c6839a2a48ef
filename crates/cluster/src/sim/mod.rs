//! A simulated network for in-process fault tests of Raft groups (the `sim` feature, used by
//! `tests/sim.rs`): every Raft message between the groups of one process (append, vote,
//! pre-vote, snapshot) goes through a fault layer driven by a seed.
//!
//! - **Messages**: each link (sender, receiver, partition) draws its faults from its own
//!   generator, seeded from the run's seed and the link: a request may be dropped (the
//!   sender sees a timeout after the call's deadline), delayed (which reorders it against the
//!   link's other messages and every other link's), duplicated (a second copy delivered
//!   later, as a retransmission would be), or answered and the answer dropped (the request
//!   took effect, the sender sees a timeout).
//! - **Partitions**: [`SimNet::split`] puts the nodes on sides; messages between sides fail
//!   as unreachable until [`SimNet::heal`]. A node marked down ([`SimNet::down`]) is
//!   unreachable too, while the test reopens it from its directory.
//! - **Schedules**: [`Schedule::from_seed`] makes the partitions and restarts of a run, a pure
//!   function of the seed.
//! - **Snapshots** go through the same receiving code as the tonic transport
//!   (`Groups::install_snapshot`): chunked, checked, renamed into place, installed.
//!
//! What is deterministic: the fault schedule (which partitions and restarts, in which order,
//! after how many milliseconds) and each link's sequence of message faults are functions of
//! the seed alone. What is not: the interleaving of tasks with the journal's file I/O and the
//! partition's processor thread, so which message a link's `n`-th draw applies to, and the
//! wall-clock moment of each event, vary from run to run. tokio's paused clock is not used:
//! the replica's processor waits for commits on a blocking thread and the journal writes
//! synchronously, and a paused clock jumps ahead while they work (elections time out during
//! a file write). A failing seed is rerun with `BEELINE_SIM_SEED`; it reproduces the same
//! faults, usually the same failure, not always the same instruction order.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use openraft::error::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, v2::RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::state_machine::{Snapshot, SnapshotData};
use crate::transport::{Groups, PartitionRaft, convert, proto};
use crate::types::{NodeId, TypeConfig, Vote};

/// How often each message fault happens, in thousandths of the messages, and how long a
/// delay may be.
#[derive(Debug, Clone, Copy)]
pub struct Faults {
    pub drop_request: u64,
    pub drop_response: u64,
    pub duplicate: u64,
    pub delay: u64,
    pub max_delay_ms: u64,
}

impl Faults {
    /// No message faults (partitions and restarts still apply).
    pub const NONE: Faults = Faults {
        drop_request: 0,
        drop_response: 0,
        duplicate: 0,
        delay: 0,
        max_delay_ms: 0,
    };

    /// The faults of the seeded tests: 3 % of requests and 3 % of answers lost, 2 %
    /// duplicated, a quarter delayed by up to 150 ms.
    pub const LOSSY: Faults = Faults {
        drop_request: 30,
        drop_response: 30,
        duplicate: 20,
        delay: 250,
        max_delay_ms: 150,
    };
}

/// What the network did to the messages of a run.
#[derive(Debug, Default)]
pub struct Counts {
    pub sent: AtomicU64,
    pub dropped_requests: AtomicU64,
    pub dropped_responses: AtomicU64,
    pub duplicated: AtomicU64,
    pub delayed: AtomicU64,
    /// Refused because sender and receiver were on different sides, or the receiver down.
    pub cut: AtomicU64,
    pub snapshots: AtomicU64,
}

impl Counts {
    fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Messages hit by a fault (dropped, duplicated, delayed, cut).
    pub fn faults(&self) -> u64 {
        [
            &self.dropped_requests,
            &self.dropped_responses,
            &self.duplicated,
            &self.delayed,
            &self.cut,
        ]
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .sum()
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        write!(
            f,
            "{} messages: {} requests and {} answers dropped, {} duplicated, {} delayed, {} cut; {} snapshots sent",
            n(&self.sent),
            n(&self.dropped_requests),
            n(&self.dropped_responses),
            n(&self.duplicated),
            n(&self.delayed),
            n(&self.cut),
            n(&self.snapshots)
        )
    }
}

/// The simulated network between the nodes of one process.
#[derive(Clone)]
pub struct SimNet {
    inner: Arc<Mutex<Net>>,
    counts: Arc<Counts>,
}

struct Net {
    seed: u64,
    faults: Faults,
    /// Each node's groups, as its internal server would hold them.
    nodes: HashMap<NodeId, Groups>,
    down: BTreeSet<NodeId>,
    /// The side of each node while the network is split (absent: side 0).
    sides: HashMap<NodeId, usize>,
    links: HashMap<(NodeId, NodeId, u32), XorShiftRng>,
}

/// What happens to one message.
#[derive(Debug, Clone, Copy)]
struct Fate {
    drop_request: bool,
    drop_response: bool,
    duplicate: bool,
    delay: Duration,
}

/// A 64-bit mix of the seed with a link's identity (splitmix64's finalizer).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl SimNet {
    pub fn new(seed: u64, faults: Faults) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Net {
                seed,
                faults,
                nodes: HashMap::new(),
                down: BTreeSet::new(),
                sides: HashMap::new(),
                links: HashMap::new(),
            })),
            counts: Arc::default(),
        }
    }

    fn net(&self) -> MutexGuard<'_, Net> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Node `node` receives through `groups` (the groups its replicas register with).
    pub fn attach(&self, node: NodeId, groups: Groups) {
        self.net().nodes.insert(node, groups);
    }

    /// Node `node` is down (unreachable) until [`up`](Self::up).
    pub fn down(&self, node: NodeId) {
        self.net().down.insert(node);
    }

    pub fn up(&self, node: NodeId) {
        self.net().down.remove(&node);
    }

    /// Splits the network: nodes on different sides cannot reach each other.
    pub fn split(&self, sides: &[BTreeSet<NodeId>]) {
        let mut net = self.net();
        net.sides.clear();
        for (side, nodes) in sides.iter().enumerate() {
            for node in nodes {
                net.sides.insert(*node, side);
            }
        }
    }

    /// Every node reaches every other again.
    pub fn heal(&self) {
        self.net().sides.clear();
    }

    /// Message faults from now on (e.g. [`Faults::NONE`] to let a run settle).
    pub fn set_faults(&self, faults: Faults) {
        self.net().faults = faults;
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The network factory of `node`'s group of `partition`.
    pub fn factory(&self, node: NodeId, partition_id: u32) -> SimNetworkFactory {
        SimNetworkFactory {
            net: self.clone(),
            node,
            partition_id,
        }
    }

    fn fate(&self, from: NodeId, to: NodeId, partition: u32) -> Fate {
        let mut net = self.net();
        let faults = net.faults;
        let seed = net.seed;
        let rng = net.links.entry((from, to, partition)).or_insert_with(|| {
            XorShiftRng::seed_from_u64(mix(seed
                ^ mix(from.wrapping_mul(0x9e37_79b9) ^ (to << 20) ^ (u64::from(partition) << 40))))
        });
        let mut per_mille = |p: u64| rng.next_u64() % 1000 < p;
        let drop_request = per_mille(faults.drop_request);
        let drop_response = per_mille(faults.drop_response);
        let duplicate = per_mille(faults.duplicate);
        let delayed = per_mille(faults.delay);
        let delay = if delayed && faults.max_delay_ms > 0 {
            Duration::from_millis(1 + rng.next_u64() % faults.max_delay_ms)
        } else {
            Duration::ZERO
        };
        Fate {
            drop_request,
            drop_response,
            duplicate,
            delay,
        }
    }

    /// The receiver's groups, if `from` reaches `to` now.
    fn reach(&self, from: NodeId, to: NodeId) -> Option<Groups> {
        let net = self.net();
        let side = |node| net.sides.get(&node).copied().unwrap_or(0);
        if net.down.contains(&to) || net.down.contains(&from) || side(from) != side(to) {
            return None;
        }
        net.nodes.get(&to).cloned()
    }
}

/// Makes a group's clients on the simulated network.
#[derive(Clone)]
pub struct SimNetworkFactory {
    net: SimNet,
    node: NodeId,
    partition_id: u32,
}

impl RaftNetworkFactory<TypeConfig> for SimNetworkFactory {
    type Network = SimNetwork;

    async fn new_client(
        &mut self,
        target: NodeId,
        _node: &openraft::impls::BasicNode,
    ) -> SimNetwork {
        SimNetwork {
            net: self.net.clone(),
            from: self.node,
            to: target,
            partition_id: self.partition_id,
        }
    }
}

/// A group's client to one peer on the simulated network.
pub struct SimNetwork {
    net: SimNet,
    from: NodeId,
    to: NodeId,
    partition_id: u32,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct SimError(String);

fn unreachable(why: &str) -> RPCError<TypeConfig> {
    RPCError::Unreachable(Unreachable::new(&SimError(why.to_string())))
}

fn timed_out() -> RPCError<TypeConfig> {
    RPCError::Network(NetworkError::new(&SimError("timed out (lost)".into())))
}

impl SimNetwork {
    /// Sends one request through the fault layer; `call` delivers it to the receiver's group.
    async fn deliver<T, F, Fut>(
        &self,
        option: &RPCOption,
        call: F,
    ) -> Result<T, RPCError<TypeConfig>>
    where
        F: Fn(PartitionRaft) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, String>> + Send + 'static,
        T: Send + 'static,
    {
        let counts = &self.net.counts;
        Counts::add(&counts.sent);
        let fate = self.net.fate(self.from, self.to, self.partition_id);
        let ttl = option.hard_ttl();
        if !fate.delay.is_zero() {
            Counts::add(&counts.delayed);
            tokio::time::sleep(fate.delay).await;
        }
        let Some(groups) = self.net.reach(self.from, self.to) else {
            Counts::add(&counts.cut);
            return Err(unreachable("partitioned or down"));
        };
        if fate.drop_request {
            Counts::add(&counts.dropped_requests);
            tokio::time::sleep(ttl).await;
            return Err(timed_out());
        }
        let raft = groups
            .get(self.partition_id)
            .map_err(|s| unreachable(s.message()))?;
        let call = Arc::new(call);
        if fate.duplicate {
            Counts::add(&counts.duplicated);
            let (raft, call) = (raft.clone(), call.clone());
            let later = fate.delay + Duration::from_millis(5);
            tokio::spawn(async move {
                tokio::time::sleep(later).await;
                let _ = call(raft).await;
            });
        }
        let answer = match tokio::time::timeout(ttl, call(raft)).await {
            Ok(answer) => answer.map_err(|e| RPCError::Network(NetworkError::new(&SimError(e))))?,
            Err(_) => return Err(timed_out()),
        };
        if fate.drop_response {
            Counts::add(&counts.dropped_responses);
            return Err(timed_out());
        }
        Ok(answer)
    }
}

impl RaftNetworkV2<TypeConfig> for SimNetwork {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.deliver(&option, move |raft| {
            let rpc = rpc.clone();
            async move { raft.append_entries(rpc).await.map_err(|e| e.to_string()) }
        })
        .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.deliver(&option, move |raft| {
            let rpc = rpc.clone();
            async move { raft.vote(rpc).await.map_err(|e| e.to_string()) }
        })
        .await
    }

    /// A cut or lost pre-vote is an error (not a grant), as on the tonic transport.
    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.deliver(&option, move |raft| {
            let rpc = rpc.clone();
            async move { raft.pre_vote(rpc).await.map_err(|e| e.to_string()) }
        })
        .await
    }

    /// The snapshot's chunks go through the receiving code of the tonic transport; a lost
    /// or cut snapshot fails as a whole (openraft sends it again).
    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: Snapshot,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let counts = &self.net.counts;
        Counts::add(&counts.sent);
        let network = |e: String| StreamingError::Network(NetworkError::new(&SimError(e)));
        let fate = self.net.fate(self.from, self.to, self.partition_id);
        if !fate.delay.is_zero() {
            Counts::add(&counts.delayed);
            tokio::time::sleep(fate.delay).await;
        }
        let Some(groups) = self.net.reach(self.from, self.to) else {
            Counts::add(&counts.cut);
            return Err(StreamingError::from(unreachable("partitioned or down")));
        };
        if fate.drop_request {
            Counts::add(&counts.dropped_requests);
            return Err(network("the snapshot was lost".into()));
        }
        let meta = convert::snapshot_meta_to(&snapshot.meta).map_err(|e| network(e.to_string()))?;
        let header = proto::SnapshotHeader {
            partition_id: self.partition_id,
            to_node: self.to,
            vote: Some(convert::vote_to(&vote)),
            meta: Some(meta),
            position: snapshot.snapshot.position,
        };
        let chunks = crate::transport::snapshot::chunks(
            header.clone(),
            &snapshot.snapshot,
            option.hard_ttl(),
        )
        .map_err(network)?;
        // The stream's first item is the header, which the server reads before the rest.
        let chunks = Box::pin(tokio_stream::StreamExt::map(
            tokio_stream::StreamExt::skip(chunks, 1),
            Ok,
        ));
        let installed = tokio::select! {
            installed = groups.install_snapshot(header, chunks) => installed,
            closed = cancel => return Err(StreamingError::Closed(closed)),
        };
        let response = installed.map_err(|status| network(status.message().to_string()))?;
        Counts::add(&counts.snapshots);
        if fate.drop_response {
            Counts::add(&counts.dropped_responses);
            return Err(network("the snapshot's answer was lost".into()));
        }
        let vote = convert::vote_from(response.vote).map_err(|e| network(e.to_string()))?;
        Ok(SnapshotResponse::new(vote))
    }
}

/// One event of a run's fault schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Split the nodes into these sides (the first holds the minority).
    Split(Vec<BTreeSet<NodeId>>),
    Heal,
    /// Stop the node's replicas, keep it down for a while (long enough, often, for the
    /// others to elect a leader without it), then reopen them from their directories.
    Restart {
        node: NodeId,
        down: Duration,
    },
}

/// A run's partitions and restarts: each event after a pause from the previous one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub events: Vec<(Duration, Event)>,
}

impl Schedule {
    /// `rounds` rounds over `nodes`, each a split (a random minority cut off, healed later)
    /// or a restart of a random node, with pauses of `pause_ms` (a range) between events.
    pub fn from_seed(seed: u64, nodes: &[NodeId], rounds: usize, pause_ms: (u64, u64)) -> Self {
        let mut rng = XorShiftRng::seed_from_u64(mix(seed));
        let pause = |rng: &mut XorShiftRng| {
            Duration::from_millis(pause_ms.0 + rng.next_u64() % (pause_ms.1 - pause_ms.0).max(1))
        };
        let mut events = Vec::new();
        for _ in 0..rounds {
            let node = nodes[(rng.next_u64() % nodes.len() as u64) as usize];
            if rng.next_u64() % 2 == 0 {
                // A minority: one node, or (of five or more) two.
                let size = if nodes.len() >= 5 {
                    1 + rng.next_u64() % 2
                } else {
                    1
                };
                let mut minority = BTreeSet::from([node]);
                while (minority.len() as u64) < size {
                    minority.insert(nodes[(rng.next_u64() % nodes.len() as u64) as usize]);
                }
                let majority = nodes
                    .iter()
                    .copied()
                    .filter(|n| !minority.contains(n))
                    .collect();
                events.push((pause(&mut rng), Event::Split(vec![minority, majority])));
                events.push((pause(&mut rng), Event::Heal));
            } else {
                let down = Duration::from_millis(rng.next_u64() % 1500);
                events.push((pause(&mut rng), Event::Restart { node, down }));
            }
        }
        Self { events }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_is_a_function_of_its_seed() {
        let nodes = [0, 1, 2];
        let a = Schedule::from_seed(7, &nodes, 8, (100, 500));
        assert_eq!(a, Schedule::from_seed(7, &nodes, 8, (100, 500)));
        assert_ne!(a, Schedule::from_seed(8, &nodes, 8, (100, 500)));
        assert!(
            a.events
                .iter()
                .any(|(_, e)| matches!(e, Event::Restart { .. }))
        );
        assert!(a.events.iter().any(|(_, e)| matches!(e, Event::Split(_))));
    }

    #[test]
    fn each_link_draws_the_same_faults_from_the_same_seed() {
        let draws = |seed| {
            let net = SimNet::new(seed, Faults::LOSSY);
            (0..200)
                .map(|_| {
                    let f = net.fate(0, 1, 1);
                    (f.drop_request, f.drop_response, f.duplicate, f.delay)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(3), draws(3));
        assert_ne!(draws(3), draws(4));
    }
}
