//! The sending side: a partition group's `RaftNetworkV2` over the broker's shared channels.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream::Fuse;
use futures_util::{Stream, StreamExt as _};
use openraft::base::{BoxFuture, BoxStream};

use openraft::error::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, v2::RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, StreamAppendResult,
    TransferLeaderError, TransferLeaderRequest, TransferLeaderResponse, VoteRequest, VoteResponse,
};
use tonic::transport::Channel;

use super::proto;
use super::proto::internal_client::InternalClient;
use super::{Ballot, Peers, convert};
use crate::metrics::GroupMetrics;
use crate::state_machine::{Snapshot, SnapshotData};
use crate::types::{NodeId, TypeConfig, Vote};

/// Makes a partition group's clients to its peers.
#[derive(Clone)]
pub struct GroupNetworkFactory {
    partition_id: u32,
    peers: Peers,
    metrics: Arc<GroupMetrics>,
}

impl GroupNetworkFactory {
    pub fn new(partition_id: u32, peers: Peers) -> Self {
        Self {
            partition_id,
            peers,
            metrics: Arc::default(),
        }
    }

    /// Counts the group's snapshot sends in `metrics`.
    pub fn with_metrics(self, metrics: Arc<GroupMetrics>) -> Self {
        Self { metrics, ..self }
    }
}

impl RaftNetworkFactory<TypeConfig> for GroupNetworkFactory {
    type Network = GroupNetwork;

    async fn new_client(
        &mut self,
        target: NodeId,
        node: &openraft::impls::BasicNode,
    ) -> GroupNetwork {
        GroupNetwork {
            partition_id: self.partition_id,
            target,
            peers: self.peers.clone(),
            named: node.addr.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

/// A partition group's client to one peer.
pub struct GroupNetwork {
    partition_id: u32,
    target: NodeId,
    /// Looked up at every call: a broker's address may be learnt (or change) after the
    /// group's client to it is made.
    peers: Peers,
    /// The address the group's membership gives, if any (used while the broker's own is not
    /// known).
    named: String,
    metrics: Arc<GroupMetrics>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct TransportError(String);

impl GroupNetwork {
    fn client(&self) -> Result<InternalClient<Channel>, RPCError<TypeConfig>> {
        let channel = match self.peers.address(self.target) {
            None if !self.named.is_empty() => self.peers.channel_to(&self.named),
            _ => self.peers.channel(self.target),
        };
        channel
            .map(|channel| {
                InternalClient::new(channel)
                    .max_decoding_message_size(64 * 1024 * 1024)
                    .max_encoding_message_size(64 * 1024 * 1024)
            })
            .map_err(|reason| RPCError::Unreachable(Unreachable::new(&TransportError(reason))))
    }

    fn failed(&self, status: tonic::Status) -> RPCError<TypeConfig> {
        failed(self.target, self.partition_id, status)
    }
}

fn failed(target: NodeId, partition_id: u32, status: tonic::Status) -> RPCError<TypeConfig> {
    let error = TransportError(format!(
        "broker {target} (partition {partition_id}): {}",
        status.message()
    ));
    match status.code() {
        tonic::Code::Unavailable | tonic::Code::Unknown => {
            RPCError::Unreachable(Unreachable::new(&error))
        }
        _ => RPCError::Network(NetworkError::new(&error)),
    }
}

/// AppendEntries a group sends one follower without waiting for their answers (see
/// [`GroupNetwork::stream_append`]).
pub const APPENDS_IN_FLIGHT: usize = 4;

/// How long a replication stream holds back a request that carries no entries, waiting for
/// the next one to carry its news instead (see [`with_next_request`]).
pub const COMMIT_NOTICE_DELAY: Duration = Duration::from_millis(10);

/// A request without entries in the middle of a replication stream only tells the follower
/// that the commit index moved (openraft sends one to every follower each time a quorum
/// commits): under load, the next request follows within a millisecond or two and carries a
/// commit index at least as new, and its answer acknowledges at least as much (openraft
/// matches answers by log id, not one to one). So such a request waits up to
/// [`COMMIT_NOTICE_DELAY`] for the next request of the stream and gives way to it; if none
/// comes (or the stream ends), it goes as it is. This halves the messages of a round (a
/// command's batch no longer costs a second AppendEntries and answer per follower just to say
/// it committed) at the price of followers learning the commit index up to the delay later:
/// they replay that much later, the leader's own commits and answers do not wait. A stream's
/// first request (a probe after an election, a conflict or a failure; a heartbeat's only one)
/// is never held.
async fn with_next_request<S>(
    mut held: AppendEntriesRequest<TypeConfig>,
    input: &mut Fuse<S>,
) -> AppendEntriesRequest<TypeConfig>
where
    S: Stream<Item = AppendEntriesRequest<TypeConfig>> + Unpin,
{
    let deadline = tokio::time::Instant::now() + COMMIT_NOTICE_DELAY;
    while held.entries.is_empty() {
        // `next` on the stream is cancel-safe: a request it was making stays in the stream.
        match tokio::time::timeout_at(deadline, input.next()).await {
            Ok(Some(next)) => held = next,
            Ok(None) | Err(_) => break,
        }
    }
    held
}

/// What a pipelined replication stream has sent and not had answered: the window's permits
/// and when each unanswered request was sent, oldest first.
struct Unanswered {
    window: Arc<tokio::sync::Semaphore>,
    sent: Mutex<VecDeque<Instant>>,
}

impl Unanswered {
    fn sent_at(&self) -> std::sync::MutexGuard<'_, VecDeque<Instant>> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the oldest unanswered request was sent longer than `ttl` ago.
    fn overdue(&self, ttl: Duration) -> bool {
        self.sent_at().front().is_some_and(|at| at.elapsed() > ttl)
    }

    /// Whether a request sent is still unanswered.
    fn waiting(&self) -> bool {
        !self.sent_at().is_empty()
    }

    fn answered(&self) {
        self.sent_at().pop_front();
        self.window.add_permits(1);
    }
}

/// Counts an AppendEntries call in `beeline_raft_append_entries_failed_total` when it is
/// dropped without every request answered: failed, ended early by the follower, or given up
/// by openraft (a heartbeat's time-out drops the call it waits for, a hung broker's included).
struct CallOutcome {
    metrics: Arc<GroupMetrics>,
    /// The stream's requests sent and not yet answered; `None` for a single call.
    unanswered: Option<Arc<Unanswered>>,
    /// Not answered yet (a single call), or the stream not yet opened.
    open: bool,
    failed: bool,
    /// Ended by an answer (a conflict, a newer vote): what was still in flight is not lost to a
    /// failure.
    answered: bool,
}

impl CallOutcome {
    fn new(metrics: Arc<GroupMetrics>, unanswered: Option<Arc<Unanswered>>) -> Self {
        Self {
            metrics,
            unanswered,
            open: true,
            failed: false,
            answered: false,
        }
    }
}

impl Drop for CallOutcome {
    fn drop(&mut self) {
        let waiting = self.unanswered.as_ref().is_some_and(|u| u.waiting());
        if self.failed || (!self.answered && (self.open || waiting)) {
            GroupMetrics::add(&self.metrics.appends_failed, 1);
        }
    }
}

impl GroupNetwork {
    async fn ask_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
        ballot: Ballot,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let mut request = convert::vote_request_to(self.partition_id, &rpc);
        request.to_node = self.target;
        let request = with_deadline(request, &option);
        let mut client = self.client()?;
        let response = match ballot {
            Ballot::Vote => client.vote(request).await,
            Ballot::PreVote => client.pre_vote(request).await,
        }
        .map_err(|status| self.failed(status))?;
        convert::vote_response_from(response.into_inner()).map_err(malformed)
    }
}

fn with_deadline<T>(message: T, option: &RPCOption) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(option.hard_ttl());
    request
}

fn malformed(e: convert::Malformed) -> RPCError<TypeConfig> {
    RPCError::Network(NetworkError::new(&e))
}

impl RaftNetworkV2<TypeConfig> for GroupNetwork {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        let mut request = convert::append_to(self.partition_id, &rpc).map_err(malformed)?;
        request.to_node = self.target;
        GroupMetrics::add(&self.metrics.appends_sent, 1);
        GroupMetrics::add(&self.metrics.entries_sent, rpc.entries.len() as u64);
        let mut outcome = CallOutcome::new(self.metrics.clone(), None);
        let response = self
            .client()?
            .append_entries(with_deadline(request, &option))
            .await
            .map_err(|status| self.failed(status))?;
        outcome.open = false;
        convert::append_response_from(response.into_inner()).map_err(malformed)
    }

    /// Pipelined replication: the group's requests to this follower go out on one
    /// `StreamAppend` call, up to [`APPENDS_IN_FLIGHT`] of them unanswered at once; the
    /// follower appends them in the order sent and answers in that order. A next request is
    /// only taken from openraft once the window has room, so entries proposed meanwhile go
    /// together in it. An answer overdue by the call's deadline (`option.hard_ttl()`, as one
    /// `AppendEntries` call has) fails the stream.
    fn stream_append<'s, S>(
        &'s mut self,
        input: S,
        option: RPCOption,
    ) -> BoxFuture<
        's,
        Result<
            BoxStream<'s, Result<StreamAppendResult<TypeConfig>, RPCError<TypeConfig>>>,
            RPCError<TypeConfig>,
        >,
    >
    where
        S: Stream<Item = AppendEntriesRequest<TypeConfig>> + Send + Unpin + 'static,
    {
        Box::pin(async move {
            // The first request is taken before the call is made. openraft waits out its
            // backoff after a failed call in making the next request, and a call to a broker
            // that is down fails before it asks for one: without this, a dead follower's
            // replication would be tried again at once, over and over, at full speed.
            let mut input = input.fuse();
            let Some(first) = input.next().await else {
                return Ok(futures_util::stream::empty().boxed());
            };
            let unanswered = Arc::new(Unanswered {
                window: Arc::new(tokio::sync::Semaphore::new(APPENDS_IN_FLIGHT)),
                sent: Mutex::default(),
            });
            let mut outcome = CallOutcome::new(self.metrics.clone(), Some(unanswered.clone()));
            let mut client = self.client()?;
            let (partition_id, target) = (self.partition_id, self.target);
            let requests = {
                let unanswered = unanswered.clone();
                let metrics = self.metrics.clone();
                futures_util::stream::unfold((input, Some(first)), move |(mut input, first)| {
                    let unanswered = unanswered.clone();
                    let metrics = metrics.clone();
                    async move {
                        // Given back when its answer arrives.
                        unanswered
                            .window
                            .clone()
                            .acquire_owned()
                            .await
                            .ok()?
                            .forget();
                        let rpc = match first {
                            Some(first) => first,
                            None => {
                                let next = input.next().await?;
                                with_next_request(next, &mut input).await
                            }
                        };
                        let mut request = match convert::append_to(partition_id, &rpc) {
                            Ok(request) => request,
                            Err(error) => {
                                tracing::warn!(partition = partition_id, to = target, %error, "an AppendEntries cannot be sent");
                                return None;
                            }
                        };
                        request.to_node = target;
                        GroupMetrics::add(&metrics.appends_sent, 1);
                        GroupMetrics::add(&metrics.entries_sent, rpc.entries.len() as u64);
                        unanswered.sent_at().push_back(Instant::now());
                        Some((request, (input, None)))
                    }
                })
            };
            let answers = client
                .stream_append(requests)
                .await
                .map_err(|status| failed(target, partition_id, status))?
                .into_inner();
            outcome.open = false;
            let ttl = option.hard_ttl();
            let check = tokio::time::interval(ttl / 4);
            let state = (answers, unanswered, check, outcome);
            let answers = futures_util::stream::unfold(Some(state), move |state| async move {
                let (mut answers, unanswered, mut check, mut outcome) = state?;
                let answer = loop {
                    tokio::select! {
                        answer = answers.message() => break answer,
                        _ = check.tick() => if unanswered.overdue(ttl) {
                            break Err(tonic::Status::unavailable(format!(
                                "no answer to an AppendEntries within {ttl:?}"
                            )));
                        },
                    }
                };
                let result = match answer {
                    Ok(Some(answer)) => {
                        unanswered.answered();
                        convert::stream_result_from(answer).map_err(malformed)
                    }
                    // Ended: with requests unanswered, openraft takes that as a failed
                    // call too (counted as the outcome drops).
                    Ok(None) => return None,
                    Err(status) => Err(failed(target, partition_id, status)),
                };
                outcome.failed = result.is_err();
                outcome.answered = matches!(result, Ok(Err(_)));
                let go_on = matches!(result, Ok(Ok(_)));
                Some((
                    result,
                    go_on.then_some((answers, unanswered, check, outcome)),
                ))
            });
            Ok(answers.boxed())
        })
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.ask_vote(rpc, option, Ballot::Vote).await
    }

    /// A leader's hand-over (see [`crate::rebalance`]), told to this replica.
    async fn transfer_leader(
        &mut self,
        rpc: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        let request = proto::TransferLeaderRequest {
            partition_id: self.partition_id,
            to_node: self.target,
            from_leader: Some(convert::vote_to(rpc.from_leader())),
            new_leader: *rpc.to_node_id(),
            last_log_id: convert::log_id_to(rpc.last_log_id()),
        };
        let answer = self
            .client()?
            .transfer_leader(with_deadline(request, &option))
            .await
            .map_err(|status| self.failed(status))?
            .into_inner();
        if let Some(actual) = answer.vote_changed_to {
            return Ok(Err(TransferLeaderError::VoteChanged {
                expected: *rpc.from_leader(),
                actual: convert::vote_from(Some(actual)).map_err(malformed)?,
            }));
        }
        if answer.log_not_flushed {
            return Ok(Err(TransferLeaderError::LogNotFlushed {
                expected: rpc.last_log_id().cloned(),
                actual: convert::log_id_from(answer.last_flushed),
            }));
        }
        Ok(Ok(()))
    }

    /// An unreachable peer is an error, never a grant: a replica cut off from the others must
    /// not count their pre-votes and raise its term.
    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.ask_vote(rpc, option, Ballot::PreVote).await
    }

    /// Streams the snapshot's directory in chunks (see [`super::snapshot`]); the whole call
    /// may take as long as the transfer does, each chunk at most the group's snapshot timeout.
    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: Snapshot,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let network = |e: String| StreamingError::Network(NetworkError::new(&TransportError(e)));
        let meta = convert::snapshot_meta_to(&snapshot.meta).map_err(|e| network(e.to_string()))?;
        let header = proto::SnapshotHeader {
            partition_id: self.partition_id,
            to_node: self.target,
            vote: Some(convert::vote_to(&vote)),
            meta: Some(meta),
            position: snapshot.snapshot.position,
        };
        let mut client = self.client().map_err(StreamingError::from)?;
        let chunks = super::snapshot::chunks(header, &snapshot.snapshot, option.hard_ttl())
            .map_err(network)?;
        let sent = tokio::select! {
            sent = client.install_snapshot(chunks) => sent,
            closed = cancel => return Err(StreamingError::Closed(closed)),
        };
        let response = match sent {
            Ok(response) => response.into_inner(),
            Err(status) => {
                GroupMetrics::add(&self.metrics.snapshot_sends_failed, 1);
                tracing::info!(
                    partition = self.partition_id,
                    to = self.target,
                    error = %status.message(),
                    "a snapshot send failed"
                );
                return Err(StreamingError::from(self.failed(status)));
            }
        };
        GroupMetrics::add(&self.metrics.snapshots_sent, 1);
        tracing::info!(
            partition = self.partition_id,
            to = self.target,
            position = snapshot.snapshot.position,
            last_log_id = ?snapshot.meta.last_log_id,
            "sent a snapshot"
        );
        let vote = convert::vote_from(response.vote).map_err(|e| network(e.to_string()))?;
        Ok(SnapshotResponse::new(vote))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use futures_util::StreamExt as _;
    use futures_util::stream;
    use openraft::entry::RaftEntry;
    use openraft::raft::AppendEntriesRequest;

    use super::{COMMIT_NOTICE_DELAY, CallOutcome, Unanswered, with_next_request};
    use crate::metrics::GroupMetrics;
    use crate::types::{Batch, Entry, TypeConfig, Vote, log_id};

    /// What a call's outcome counts in `appends_failed` as it drops: a call given up before
    /// its answer (a heartbeat's time-out drops it, a hung broker's included), one that failed
    /// or ended with requests in flight count once; one answered in full, or ended by an answer
    /// (a conflict), does not.
    #[test]
    fn a_call_given_up_or_failed_counts_once_and_an_answered_one_not() {
        let metrics = std::sync::Arc::new(GroupMetrics::default());
        let failed = || {
            metrics
                .appends_failed
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        let stream = || {
            let unanswered = std::sync::Arc::new(Unanswered {
                window: std::sync::Arc::new(tokio::sync::Semaphore::new(4)),
                sent: std::sync::Mutex::default(),
            });
            (
                CallOutcome::new(metrics.clone(), Some(unanswered.clone())),
                unanswered,
            )
        };

        drop(CallOutcome::new(metrics.clone(), None));
        assert_eq!(failed(), 1, "a single call dropped unanswered");
        let mut answered = CallOutcome::new(metrics.clone(), None);
        answered.open = false;
        drop(answered);
        assert_eq!(failed(), 1, "a single call answered");

        let (outcome, _) = stream();
        drop(outcome);
        assert_eq!(failed(), 2, "a stream given up before it opened");
        let (mut outcome, unanswered) = stream();
        outcome.open = false;
        unanswered.sent_at().push_back(Instant::now());
        drop(outcome);
        assert_eq!(failed(), 3, "a stream dropped with a request in flight");
        let (mut outcome, unanswered) = stream();
        outcome.open = false;
        unanswered.sent_at().push_back(Instant::now());
        unanswered.answered();
        drop(outcome);
        assert_eq!(failed(), 3, "a stream whose requests were all answered");
        let (mut outcome, unanswered) = stream();
        outcome.open = false;
        unanswered.sent_at().push_back(Instant::now());
        outcome.answered = true;
        drop(outcome);
        assert_eq!(failed(), 3, "a stream ended by a conflict's answer");
        let (mut outcome, _) = stream();
        outcome.open = false;
        outcome.failed = true;
        drop(outcome);
        assert_eq!(failed(), 4, "a stream that failed");
    }

    /// A request after `prev` carrying the commit index `commit` and entries `entries`.
    fn request(prev: u64, commit: u64, entries: u64) -> AppendEntriesRequest<TypeConfig> {
        AppendEntriesRequest {
            vote: Vote::new_committed(2, 0),
            prev_log_id: Some(log_id(2, prev)),
            leader_commit: Some(log_id(2, commit)),
            entries: (prev + 1..=prev + entries)
                .map(|index| Entry::new_normal(log_id(2, index), Batch::new(index, vec![1])))
                .collect(),
        }
    }

    fn summary(rpc: &AppendEntriesRequest<TypeConfig>) -> (u64, u64, usize) {
        let index = |id: &Option<crate::types::LogId>| id.as_ref().map_or(0, |id| id.index);
        (
            index(&rpc.prev_log_id),
            index(&rpc.leader_commit),
            rpc.entries.len(),
        )
    }

    #[tokio::test]
    async fn a_commit_notice_gives_way_to_the_requests_that_follow_it_in_time() {
        // Two notices of a moving commit index, then entries: only the entries go, with the
        // newest commit index.
        let mut next = stream::iter([request(4, 4, 0), request(4, 6, 2)]).fuse();
        let sent = with_next_request(request(4, 3, 0), &mut next).await;
        assert_eq!(summary(&sent), (4, 6, 2));
        assert!(futures_util::StreamExt::next(&mut next).await.is_none());
    }

    #[tokio::test]
    async fn entries_go_at_once_and_are_never_replaced() {
        let mut next = stream::iter([request(6, 6, 1)]).fuse();
        let sent = with_next_request(request(4, 4, 2), &mut next).await;
        assert_eq!(summary(&sent), (4, 4, 2));
        // The next request is still there for the stream's next turn.
        let after = futures_util::StreamExt::next(&mut next)
            .await
            .expect("kept");
        assert_eq!(summary(&after), (6, 6, 1));
    }

    #[tokio::test]
    async fn a_commit_notice_goes_alone_when_nothing_follows() {
        // The stream ends: the notice goes at once, without waiting for any timer.
        let sent = futures_util::FutureExt::now_or_never(with_next_request(
            request(4, 5, 0),
            &mut stream::empty().fuse(),
        ))
        .expect("sent without waiting");
        assert_eq!(summary(&sent), (4, 5, 0));
        // The stream stays open with nothing to send: the notice goes after the delay.
        let started = Instant::now();
        let sent = with_next_request(request(4, 5, 0), &mut stream::pending().fuse()).await;
        assert_eq!(summary(&sent), (4, 5, 0));
        assert!(started.elapsed() >= COMMIT_NOTICE_DELAY);
    }

    #[tokio::test]
    async fn the_stream_is_asked_again_after_a_notice_saw_it_end() {
        // openraft's input panics when polled after its end, as `unfold` does; the stream's
        // next turn asks it again after a held notice found the end.
        let mut input = Box::pin(stream::unfold(false, |done| async move {
            (!done).then(|| (request(4, 5, 0), true))
        }))
        .fuse();
        let first = futures_util::StreamExt::next(&mut input)
            .await
            .expect("one");
        let sent = with_next_request(first, &mut input).await;
        assert_eq!(summary(&sent), (4, 5, 0));
        assert!(futures_util::StreamExt::next(&mut input).await.is_none());
    }
}
