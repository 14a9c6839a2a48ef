//! The disk-loss guard: a replica that may have lost entries it once acknowledged neither
//! votes nor stands for election until it holds them again.
//!
//! Raft's safety assumes that what a replica acknowledged (entries, its vote) survives it. A
//! broker that comes back without its partition's directory (a lost disk, a wiped volume), or
//! with a log whose damaged tail recovery had to drop, breaks that: an entry committed by a
//! majority that included it may now be held by a minority only, and the replica's vote for a
//! candidate that lacks the entry elects a leader that overwrites it (three replicas: A and C
//! acknowledge entry e while B is down; C loses its disk; with A down, B asks C for its vote,
//! C's empty log is no more up to date than B's, and B leads without e).
//!
//! The guard (this module):
//! - **Who is rejoining.** Each replica keeps a marker file `member` beside its Raft records.
//!   It says `member` once the replica's log and vote are its own and complete, `rejoining`
//!   until then, and is written (synced) before the group starts. A replica opens as
//!   rejoining when the marker is missing and there is no vote record (a new replica, or one
//!   whose directory was lost: the two look alike), when the marker says so (a crash while
//!   rejoining), or when recovery dropped damaged entries or a damaged snapshot. A directory
//!   of an older build (a vote record but no marker) is a member. A group of one replica has
//!   nobody to rejoin from and is always a member.
//! - **What a rejoining replica does.** It follows a leader and acknowledges what it has
//!   written (it holds that), but it does not elect itself (`enable_elect` off) and refuses
//!   every vote request, so it never counts toward an election.
//! - **When it is a member again.** It asks its peers how far their logs reach (`Probe`) until
//!   `ceil(n / 2)` of the `n - 1` others have answered. Any entry committed before the loss is
//!   on a majority, so on at least `floor(n / 2)` replicas other than this one, and every set
//!   of `ceil(n / 2)` others meets them: the highest last index among the answers is at or
//!   past every such entry. The replica is a member again once its commit index (learned from
//!   a leader, so those entries are the committed ones) reaches that index; if no answer holds
//!   more than the group's initial membership entry, nothing was ever committed and it is a
//!   member at once (how a new cluster starts: every replica is new, and each learns from the
//!   others that none holds anything). A new cluster's replica then stands for election only
//!   after the replicas of higher priority could ([`FirstElection`]), so that the partition's
//!   primary leads it however far apart the brokers started.
//! - **The price.** A new cluster elects its first leaders only once `ceil(n / 2)` peers of each
//!   replica answer (for three replicas: all three brokers up). A rejoining replica whose peers
//!   do not answer stays out of elections: with one of three replicas lost and another down,
//!   the partition has no leader until one of them returns, rather than losing what only the
//!   down one holds. A log tail that was never committed raises the target until the group
//!   writes past it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use openraft::type_config::async_runtime::watch::WatchReceiver;

use crate::placement::ElectionBand;
use crate::transport::proto::internal_client::InternalClient;
use crate::transport::proto::{ProbeRequest, ProbeResponse};
use crate::transport::{PartitionRaft, Peers};
use crate::types::NodeId;

const MARKER: &str = "member";
const MEMBER: &str = "member\n";
const REJOINING: &str = "rejoining\n";

/// How often a rejoining replica asks its peers and looks at its commit index.
const PROBE_EVERY: Duration = Duration::from_millis(250);

/// How long a new cluster's replica waits, at most, for the replicas of higher priority to
/// vote before it stands for election after them anyway (they may be down for good).
const AHEAD_WITHIN: Duration = Duration::from_secs(5);

/// How a new cluster's replica stands for its first election: after the replicas of higher
/// priority could (Zeebe's priority election, kept when brokers start seconds apart).
#[derive(Debug, Clone)]
pub struct FirstElection {
    /// The replica's share of the election range; `rank` replicas stand before it.
    pub band: ElectionBand,
    /// Those replicas.
    pub ahead: Vec<NodeId>,
    /// How far apart replicas of consecutive ranks stand once all vote: longer than the
    /// election range's end, so that a replica of higher priority whose first try found the
    /// others not yet voting tries again before the next one stands.
    pub stagger: Duration,
}

impl FirstElection {
    /// Without priorities: every replica stands as soon as it votes.
    pub const AT_ONCE: FirstElection = FirstElection {
        band: ElectionBand::WHOLE,
        ahead: Vec::new(),
        stagger: Duration::ZERO,
    };
}

/// Why a replica opens as rejoining (or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Its records are its own: the marker says member, or an older build left a vote.
    Member,
    /// No marker and no vote: new, or its directory was lost.
    Unknown,
    /// The marker says rejoining: a crash while it rejoined.
    Interrupted,
    /// Recovery dropped damaged entries of its log or a damaged snapshot.
    Damaged,
}

/// One replica's guard.
#[derive(Debug)]
pub struct Rejoin {
    marker: PathBuf,
    state: Mutex<State>,
    opening: Opening,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Member,
    /// Until its commit index reaches `target` (unknown until enough peers answered).
    Rejoining {
        target: Option<u64>,
    },
}

impl Rejoin {
    /// Reads (and writes, synced) the marker in `raft_dir`. `had_vote`: a vote record was
    /// found; `damaged`: recovery dropped damaged data; `members`: the group's size.
    pub fn open(
        raft_dir: &Path,
        had_vote: bool,
        damaged: bool,
        members: usize,
    ) -> io::Result<Self> {
        let marker = raft_dir.join(MARKER);
        let found = match std::fs::read_to_string(&marker) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let opening = if damaged {
            Opening::Damaged
        } else {
            match found.as_deref() {
                Some(MEMBER) => Opening::Member,
                Some(_) => Opening::Interrupted,
                None if had_vote => Opening::Member,
                None => Opening::Unknown,
            }
        };
        let member = opening == Opening::Member || members <= 1;
        write_marker(&marker, if member { MEMBER } else { REJOINING })?;
        let state = if member {
            State::Member
        } else {
            State::Rejoining { target: None }
        };
        Ok(Self {
            marker,
            state: Mutex::new(state),
            opening,
        })
    }

    /// Why the replica opened as it did.
    pub fn opening(&self) -> Opening {
        self.opening
    }

    /// Whether the replica may vote and stand for election.
    pub fn votes(&self) -> bool {
        *self.state() == State::Member
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn settle(&self) -> io::Result<()> {
        write_marker(&self.marker, MEMBER)?;
        *self.state() = State::Member;
        Ok(())
    }
}

fn write_marker(path: &Path, text: &str) -> io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|found| found == text) {
        return Ok(());
    }
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_data()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// How many of the other replicas must answer a probe: `ceil(n / 2)` of a group of `n`.
pub fn answers_needed(members: usize) -> usize {
    members.div_ceil(2)
}

/// Runs a rejoining replica until it is a member: asks its peers, waits for its commit index,
/// then lets it vote and elect. Returns at once for a member.
pub async fn run(
    guard: std::sync::Arc<Rejoin>,
    raft: PartitionRaft,
    partition_id: u32,
    others: Vec<NodeId>,
    peers: Peers,
    first: FirstElection,
) {
    if guard.votes() {
        return;
    }
    tracing::warn!(
        partition = partition_id,
        opening = ?guard.opening(),
        "the replica may have lost entries it acknowledged: it neither votes nor elects until it \
         holds what its peers hold"
    );
    let needed = answers_needed(others.len() + 1);
    loop {
        let target = match *guard.state() {
            State::Member => return,
            State::Rejoining { target } => target,
        };
        let target = match target {
            Some(target) => target,
            None => {
                let answers = probe(partition_id, &others, &peers).await;
                if answers.len() < needed {
                    tokio::time::sleep(PROBE_EVERY).await;
                    continue;
                }
                // Index 0 is the group's initial membership, which every replica writes.
                let target = answers
                    .iter()
                    .filter_map(|answer| answer.last_log_index)
                    .max()
                    .unwrap_or(0);
                tracing::info!(
                    partition = partition_id,
                    target,
                    "rejoining: the peers' logs reach this far; votes again once committed here"
                );
                *guard.state() = State::Rejoining {
                    target: Some(target),
                };
                target
            }
        };
        let committed = raft
            .metrics()
            .borrow_watched()
            .local_committed
            .map_or(0, |c| c.index);
        if target == 0 || committed >= target {
            if let Err(error) = guard.settle() {
                tracing::error!(partition = partition_id, %error, "cannot record the replica as a member; it stays out of elections");
                return;
            }
            tracing::info!(
                partition = partition_id,
                committed,
                "rejoined: the replica holds its peers' committed log and votes again"
            );
            if target == 0 {
                // A new cluster: every replica's wait for an election ran out while it probed,
                // so the first to settle would stand at once whatever its priority. Each
                // votes from now on but stands only after those of higher priority could.
                stand_after_those_ahead(partition_id, &first, &peers).await;
            }
            raft.runtime_config().elect(true);
            return;
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
}

/// Waits until the replicas of higher priority vote (so that they can win an election), or
/// [`AHEAD_WITHIN`], then one stagger per rank: brokers that start seconds apart settle
/// seconds apart, and a replica of lower priority that stood at once would win.
async fn stand_after_those_ahead(partition_id: u32, first: &FirstElection, peers: &Peers) {
    let since = Instant::now();
    while !first.ahead.is_empty() && since.elapsed() < AHEAD_WITHIN {
        let answers = probe(partition_id, &first.ahead, peers).await;
        if answers.len() == first.ahead.len() && answers.iter().all(|answer| answer.member) {
            break;
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
    tokio::time::sleep(first.stagger * first.band.rank).await;
}

/// The answers of the peers that answered.
async fn probe(partition_id: u32, others: &[NodeId], peers: &Peers) -> Vec<ProbeResponse> {
    let asks = others.iter().map(|&node| {
        let peers = peers.clone();
        async move {
            let channel = peers.channel(node).ok()?;
            let mut request = tonic::Request::new(ProbeRequest {
                partition_id,
                to_node: node,
            });
            request.set_timeout(Duration::from_secs(1));
            let answer = InternalClient::new(channel).probe(request).await.ok()?;
            Some(answer.into_inner())
        }
    });
    futures_util::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_majority_of_the_others_always_meets_every_majority() {
        // ceil(n / 2) others and floor(n / 2) other holders of a committed entry always meet.
        for n in 2..=9usize {
            let needed = answers_needed(n);
            assert!(needed < n, "{n}: enough others exist");
            assert!(needed + n / 2 > n - 1, "{n}: the sets meet");
        }
    }

    #[test]
    fn the_marker_decides_how_a_replica_opens() {
        let dir = tempfile::tempdir().unwrap();
        let open = |had_vote, damaged| Rejoin::open(dir.path(), had_vote, damaged, 3).unwrap();
        assert_eq!(
            open(true, false).opening(),
            Opening::Member,
            "an older build's"
        );
        assert_eq!(open(false, false).opening(), Opening::Member, "marked");
        std::fs::remove_file(dir.path().join(MARKER)).unwrap();
        let lost = open(false, false);
        assert_eq!(lost.opening(), Opening::Unknown);
        assert!(!lost.votes());
        assert_eq!(open(true, false).opening(), Opening::Interrupted);
        lost.settle().unwrap();
        assert!(lost.votes());
        assert_eq!(open(true, false).opening(), Opening::Member);
        assert_eq!(open(true, true).opening(), Opening::Damaged);
        assert_eq!(open(true, false).opening(), Opening::Interrupted);
        assert!(
            Rejoin::open(dir.path(), false, true, 1).unwrap().votes(),
            "alone"
        );
    }
}
