//! The receiving side: the internal API's server, handing each message to its partition.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, OnceLock, RwLock};

use beeline_state::snapshot::SnapshotStore;
use beeline_stream::JobStreams;
use beeline_stream::disk::DiskSpace;
use openraft::type_config::async_runtime::watch::WatchReceiver;
use tonic::{Request, Response, Status};

use super::convert;
use super::proto;
use super::proto::internal_server::{Internal, InternalServer as Generated};
use super::{Ballot, PartitionRaft};
use crate::metrics::GroupMetrics;

/// Where a partition's replica receives snapshots, and what its group counts.
type SnapshotReceiver = (SnapshotStore, Arc<GroupMetrics>);

/// The Raft groups of the partitions this broker holds a replica of.
#[derive(Clone, Default)]
pub struct Groups {
    groups: Arc<RwLock<HashMap<u32, PartitionRaft>>>,
    /// Where each partition receives snapshots, and what it counts.
    snapshots: Arc<RwLock<HashMap<u32, SnapshotReceiver>>>,
    /// The disk-loss guard of each partition's replica (absent: the replica votes).
    rejoins: Arc<RwLock<HashMap<u32, Arc<crate::rejoin::Rejoin>>>>,
    /// This broker's node id: messages for another broker are refused.
    node: Option<u64>,
    /// The free space this broker keeps for what it holds: below it, entries and snapshots
    /// from leaders are refused (`--disk-free-replication-min`).
    replication_disk: Option<Arc<DiskSpace>>,
}

impl Groups {
    /// The groups of broker `node`, which refuse messages meant for another broker.
    pub fn of_node(node: u64) -> Self {
        Self {
            node: Some(node),
            ..Self::default()
        }
    }

    /// With the replication watermark `disk` (none: never refused for space).
    pub fn with_replication_disk(self, disk: Option<Arc<DiskSpace>>) -> Self {
        Self {
            replication_disk: disk,
            ..self
        }
    }

    /// Refuses entries or a snapshot while free space is below the replication watermark, as
    /// unavailable: the leader retries with its backoff, and the replica stays in its group
    /// (its heartbeats still pass) until space is back.
    fn check_space(&self) -> Result<(), Status> {
        match &self.replication_disk {
            Some(disk) if disk.is_short() => Err(Status::unavailable(format!(
                "broker {}: {} bytes free, below the minimum for replication ({} bytes, \
                 --disk-free-replication-min): it takes no replicated entries or snapshots \
                 until space is freed",
                self.node.map_or_else(|| "?".to_string(), |n| n.to_string()),
                disk.free(),
                disk.min_free()
            ))),
            _ => Ok(()),
        }
    }

    /// Refuses a message meant for another broker.
    fn check_addressee(&self, to_node: u64) -> Result<(), Status> {
        match self.node {
            Some(node) if node != to_node => Err(Status::failed_precondition(format!(
                "this is broker {node}, not broker {to_node}: the sender knows broker \
                 {to_node} at this broker's address (a broker moved; it learns the new \
                 address from the brokers' gossip)"
            ))),
            _ => Ok(()),
        }
    }

    pub fn insert(&self, partition_id: u32, raft: PartitionRaft) {
        self.groups
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(partition_id, raft);
    }

    /// The figures of every group on this broker, by partition.
    pub fn reports(&self) -> Vec<crate::metrics::GroupReport> {
        let groups = self.groups.read().unwrap_or_else(|e| e.into_inner());
        let snapshots = self.snapshots.read().unwrap_or_else(|e| e.into_inner());
        let mut reports: Vec<_> = groups
            .iter()
            .filter_map(|(partition, raft)| {
                let (_, metrics) = snapshots.get(partition)?;
                Some(crate::metrics::GroupReport::of(*partition, raft, metrics))
            })
            .collect();
        reports.sort_by_key(|r| r.partition_id);
        reports
    }

    /// Where the partition's replica receives snapshots from its leader.
    pub fn insert_snapshots(
        &self,
        partition_id: u32,
        store: SnapshotStore,
        metrics: Arc<GroupMetrics>,
    ) {
        self.snapshots
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(partition_id, (store, metrics));
    }

    pub(crate) fn snapshots(&self, partition_id: u32) -> Result<SnapshotReceiver, Status> {
        self.snapshots
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&partition_id)
            .cloned()
            .ok_or_else(|| {
                Status::unavailable(format!(
                    "this broker takes no snapshots for partition {partition_id}"
                ))
            })
    }

    /// The partition's replica votes only while `guard` lets it (see [`crate::rejoin`]).
    pub fn insert_rejoin(&self, partition_id: u32, guard: Arc<crate::rejoin::Rejoin>) {
        self.rejoins
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(partition_id, guard);
    }

    fn votes(&self, partition_id: u32) -> bool {
        self.rejoins
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&partition_id)
            .is_none_or(|guard| guard.votes())
    }

    pub fn remove(&self, partition_id: u32) -> Option<PartitionRaft> {
        self.rejoins
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&partition_id);
        self.snapshots
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&partition_id);
        self.groups
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&partition_id)
    }

    /// Receives a snapshot streamed after its `header` into the partition's snapshot store
    /// and hands it to the group (see [`super::snapshot`]).
    pub(crate) async fn install_snapshot<S>(
        &self,
        header: proto::SnapshotHeader,
        chunks: S,
    ) -> Result<proto::InstallSnapshotResponse, Status>
    where
        S: tokio_stream::Stream<Item = Result<proto::SnapshotChunk, Status>> + Unpin,
    {
        self.check_addressee(header.to_node)?;
        let raft = self.get(header.partition_id)?;
        let (store, metrics) = self.snapshots(header.partition_id)?;
        let vote = convert::vote_from(header.vote).map_err(malformed)?;
        let meta = convert::snapshot_meta_from(header.meta.clone()).map_err(malformed)?;
        let received = super::snapshot::receive(header, chunks, &store).await?;
        let snapshot = crate::state_machine::Snapshot {
            meta,
            snapshot: received.snapshot,
        };
        let position = snapshot.snapshot.position;
        let response = raft
            .install_full_snapshot(vote, snapshot)
            .await
            .map_err(raft_failed)?;
        // A stale leader's snapshot is answered with the higher vote and not installed.
        if response.vote.leader_id().term <= vote.leader_id().term {
            GroupMetrics::add(&metrics.snapshots_installed, 1);
            tracing::info!(
                partition = received.header.partition_id,
                position,
                "installed a snapshot from the leader"
            );
        }
        Ok(proto::InstallSnapshotResponse {
            vote: Some(convert::vote_to(&response.vote)),
        })
    }

    /// Answers a vote request, or a pre-vote (whether it would grant it, changing nothing).
    pub(crate) async fn answer_vote(
        &self,
        request: proto::VoteRequest,
        ballot: Ballot,
    ) -> Result<Response<proto::VoteResponse>, Status> {
        self.check_addressee(request.to_node)?;
        let raft = self.get(request.partition_id)?;
        let request_partition = request.partition_id;
        let rpc = convert::vote_request_from(request).map_err(malformed)?;
        if !self.votes(request_partition) {
            // A replica that may have lost what it acknowledged: refused, as its vote could
            // elect a leader that lacks a committed entry (see `crate::rejoin`); its pre-vote
            // too, or a candidate would count it and stand.
            // Its last applied id stands for its log's end (the candidate only counts the vote).
            let metrics = raft.metrics().borrow_watched().clone();
            let refused =
                openraft::raft::VoteResponse::new(metrics.vote, metrics.last_applied, false);
            return Ok(Response::new(convert::vote_response_to(&refused)));
        }
        let response = match ballot {
            Ballot::Vote => raft.vote(rpc).await,
            Ballot::PreVote => raft.pre_vote(rpc).await,
        }
        .map_err(raft_failed)?;
        Ok(Response::new(convert::vote_response_to(&response)))
    }

    /// Every group, by partition.
    pub fn all(&self) -> Vec<(u32, PartitionRaft)> {
        let mut all: Vec<(u32, PartitionRaft)> = self
            .groups
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(partition, raft)| (*partition, raft.clone()))
            .collect();
        all.sort_unstable_by_key(|(partition, _)| *partition);
        all
    }

    pub(crate) fn get(&self, partition_id: u32) -> Result<PartitionRaft, Status> {
        self.groups
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&partition_id)
            .cloned()
            .ok_or_else(|| {
                Status::unavailable(format!(
                    "this broker holds no replica of partition {partition_id}"
                ))
            })
    }
}

/// Runs a command another broker's gateway forwarded to a partition led here (the gateway
/// implements it: backpressure and the answer stay with the leader).
#[tonic::async_trait]
pub trait Executor: Send + Sync + 'static {
    async fn execute(&self, request: proto::ExecuteRequest) -> proto::ExecuteResponse;
}

/// What a broker serves beside Raft: membership, forwarded commands, commands between
/// partitions, job streams.
pub struct BrokerServices {
    pub membership: Arc<crate::Membership>,
    pub router: Arc<crate::ClusterRouter>,
    pub job_streams: Arc<JobStreams>,
    /// Set once the gateway runs; until then forwarded commands are refused (not written).
    pub executor: OnceLock<Arc<dyn Executor>>,
}

/// The tonic service of the internal API, as [`super::serve`] serves it.
pub type InternalService = Generated<InternalServer>;

/// The internal API's service over a broker's [`Groups`] (and its [`BrokerServices`]).
#[derive(Clone)]
pub struct InternalServer {
    groups: Groups,
    broker: Option<Arc<BrokerServices>>,
}

impl InternalServer {
    /// The tonic service to add to the internal port's server: Raft only.
    pub fn service(groups: Groups) -> Generated<Self> {
        Self::serve(Self {
            groups,
            broker: None,
        })
    }

    /// The tonic service of a broker: Raft and everything between brokers.
    pub fn broker(groups: Groups, broker: Arc<BrokerServices>) -> Generated<Self> {
        Self::serve(Self {
            groups,
            broker: Some(broker),
        })
    }

    fn serve(server: Self) -> Generated<Self> {
        Generated::new(server)
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024)
    }

    fn services(&self) -> Result<&Arc<BrokerServices>, Status> {
        self.broker
            .as_ref()
            .ok_or_else(|| Status::unimplemented("this server takes Raft messages only"))
    }
}

type JobStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<proto::PushedJob, Status>> + Send>>;

type ExecuteAnswers =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<proto::ExecuteAnswer, Status>> + Send>>;

/// Answers queued for a caller that has not read them: beyond, the call reads no more
/// commands until it does.
const ANSWERS_QUEUED: usize = 256;

/// Commands of one `Execute` call running at once (as HTTP/2's limit of concurrent streams
/// bounded calls of their own): beyond, the call reads no more until one is answered, and
/// the sender's commands wait in its queue, under its forwarding budget.
const RUNNING_PER_CALL: usize = 200;

/// Answers an `Execute` call: runs each forwarded command as it arrives, up to
/// [`RUNNING_PER_CALL`] at once, and answers each under its id as soon as its partition
/// does. When the caller ends its side, the answers end after those of the commands already
/// taken; when the caller goes, the commands already taken are left to their partitions (a
/// command written stays written) and their answers dropped.
fn answer_calls(
    services: Arc<BrokerServices>,
    mut calls: tonic::Streaming<proto::ExecuteCall>,
) -> ExecuteAnswers {
    use futures_util::StreamExt as _;
    let (answers, to_answer) = tokio::sync::mpsc::channel(ANSWERS_QUEUED);
    tokio::spawn(async move {
        let mut running = futures_util::stream::FuturesUnordered::new();
        let mut taking = true;
        loop {
            tokio::select! {
                call = calls.message(), if taking && running.len() < RUNNING_PER_CALL => match call {
                    Ok(Some(call)) => {
                        let services = services.clone();
                        running.push(async move {
                            let response = match call.request {
                                Some(request) => services.execute(request).await,
                                None => refused(0, "a forwarded call without its command"),
                            };
                            proto::ExecuteAnswer { id: call.id, response: Some(response) }
                        });
                    }
                    Ok(None) | Err(_) => taking = false,
                },
                Some(answer) = running.next(), if !running.is_empty() => {
                    if answers.send(Ok(answer)).await.is_err() {
                        return;
                    }
                }
                else => return,
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(to_answer))
}

/// A forwarded command's answer when it was not taken: certainly not written.
fn refused(partition_id: u32, message: &str) -> proto::ExecuteResponse {
    proto::ExecuteResponse {
        result: Some(proto::execute_response::Result::Failure(proto::Failure {
            kind: proto::failure::Kind::Refused.into(),
            partition_id,
            message: message.into(),
            a: 0,
            b: 0,
        })),
        position: -1,
    }
}

impl BrokerServices {
    /// Runs a forwarded command through this broker's gateway (refused while it starts).
    async fn execute(&self, request: proto::ExecuteRequest) -> proto::ExecuteResponse {
        match self.executor.get() {
            Some(executor) => executor.execute(request).await,
            None => refused(request.partition_id, "the broker is starting"),
        }
    }
}

type AppendAnswers =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<proto::StreamAppendResponse, Status>> + Send>>;

/// Answers a `StreamAppend`: hands its requests, in order, to the group the first one names,
/// which appends them pipelined (openraft's `Raft::stream_append`) and answers each in turn.
/// A request for another group or broker, a malformed one or a broken stream ends the
/// requests; the answers then end with that error after the ones already due.
fn answer_appends(
    groups: Groups,
    requests: tonic::Streaming<proto::AppendEntriesRequest>,
) -> AppendAnswers {
    use futures_util::StreamExt as _;
    let failed: Arc<std::sync::Mutex<Option<Status>>> = Arc::default();
    let fail = |failed: &Arc<std::sync::Mutex<Option<Status>>>, status| {
        *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(status);
    };
    let answers = {
        let failed = failed.clone();
        async move {
            let mut requests = requests;
            let first = match requests.message().await {
                Ok(Some(first)) => first,
                Ok(None) => return futures_util::stream::empty().boxed(),
                Err(status) => return futures_util::stream::once(async { Err(status) }).boxed(),
            };
            let (partition_id, to_node) = (first.partition_id, first.to_node);
            let raft = match groups
                .check_addressee(to_node)
                .and_then(|()| groups.get(partition_id))
            {
                Ok(raft) => raft,
                Err(status) => return futures_util::stream::once(async { Err(status) }).boxed(),
            };
            let space = groups.clone();
            let check = Arc::new(move |request: proto::AppendEntriesRequest| {
                if !request.entries.is_empty() {
                    space.check_space()?;
                }
                if (request.partition_id, request.to_node) != (partition_id, to_node) {
                    return Err(Status::invalid_argument(format!(
                        "a StreamAppend carries one partition to one broker: partition {} for \
                         broker {} after partition {partition_id} for broker {to_node}",
                        request.partition_id, request.to_node
                    )));
                }
                convert::append_from(request).map_err(malformed)
            });
            let first = match check(first) {
                Ok(first) => first,
                Err(status) => return futures_util::stream::once(async { Err(status) }).boxed(),
            };
            let rest = futures_util::stream::unfold(Some((requests, failed)), move |state| {
                let check = check.clone();
                async move {
                    let (mut requests, failed) = state?;
                    let request = match requests.message().await {
                        Ok(Some(request)) => check(request),
                        Ok(None) => return None,
                        Err(status) => Err(status),
                    };
                    match request {
                        Ok(rpc) => Some((rpc, Some((requests, failed)))),
                        Err(status) => {
                            fail(&failed, status);
                            None
                        }
                    }
                }
            });
            let input = futures_util::stream::once(async { first }).chain(rest);
            raft.stream_append(input)
                .map(|answer| match answer {
                    Ok(result) => Ok(convert::stream_result_to(&result)),
                    Err(fatal) => Err(raft_failed(fatal)),
                })
                .boxed()
        }
    };
    let last = futures_util::stream::once(async move {
        failed.lock().unwrap_or_else(|e| e.into_inner()).take()
    })
    .filter_map(|failure| async move { failure.map(Err) });
    Box::pin(futures_util::stream::once(answers).flatten().chain(last))
}

fn malformed(e: convert::Malformed) -> Status {
    Status::invalid_argument(e.to_string())
}

fn raft_failed(e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the partition's Raft group cannot answer: {e}"))
}

#[tonic::async_trait]
impl Internal for InternalServer {
    type OpenJobStreamStream = JobStream;
    type StreamAppendStream = AppendAnswers;
    type ExecuteStream = ExecuteAnswers;

    async fn gossip(
        &self,
        request: Request<proto::BrokerInfo>,
    ) -> Result<Response<proto::BrokerInfo>, Status> {
        let services = self.services()?;
        Ok(Response::new(services.membership.answer(request.get_ref())))
    }

    async fn execute(
        &self,
        request: Request<tonic::Streaming<proto::ExecuteCall>>,
    ) -> Result<Response<Self::ExecuteStream>, Status> {
        let services = self.services()?.clone();
        Ok(Response::new(answer_calls(services, request.into_inner())))
    }

    async fn route(
        &self,
        request: Request<proto::RouteRequest>,
    ) -> Result<Response<proto::Empty>, Status> {
        self.services()?.router.receive(request.into_inner());
        Ok(Response::new(proto::Empty {}))
    }

    async fn open_job_stream(
        &self,
        request: Request<tonic::Streaming<proto::JobStreamControl>>,
    ) -> Result<Response<JobStream>, Status> {
        let services = self.services()?;
        let jobs = crate::job_streams::open(
            &services.job_streams,
            services.router.local().clone(),
            request.into_inner(),
        )
        .await?;
        Ok(Response::new(Box::pin(jobs)))
    }

    async fn append_entries(
        &self,
        request: Request<proto::AppendEntriesRequest>,
    ) -> Result<Response<proto::AppendEntriesResponse>, Status> {
        let request = request.into_inner();
        self.groups.check_addressee(request.to_node)?;
        if !request.entries.is_empty() {
            self.groups.check_space()?;
        }
        let raft = self.groups.get(request.partition_id)?;
        let rpc = convert::append_from(request).map_err(malformed)?;
        let response = raft.append_entries(rpc).await.map_err(raft_failed)?;
        Ok(Response::new(convert::append_response_to(&response)))
    }

    async fn stream_append(
        &self,
        request: Request<tonic::Streaming<proto::AppendEntriesRequest>>,
    ) -> Result<Response<AppendAnswers>, Status> {
        Ok(Response::new(answer_appends(
            self.groups.clone(),
            request.into_inner(),
        )))
    }

    async fn vote(
        &self,
        request: Request<proto::VoteRequest>,
    ) -> Result<Response<proto::VoteResponse>, Status> {
        self.groups
            .answer_vote(request.into_inner(), Ballot::Vote)
            .await
    }

    async fn pre_vote(
        &self,
        request: Request<proto::VoteRequest>,
    ) -> Result<Response<proto::VoteResponse>, Status> {
        self.groups
            .answer_vote(request.into_inner(), Ballot::PreVote)
            .await
    }

    async fn transfer_leader(
        &self,
        request: Request<proto::TransferLeaderRequest>,
    ) -> Result<Response<proto::TransferLeaderResponse>, Status> {
        let request = request.into_inner();
        self.groups.check_addressee(request.to_node)?;
        let raft = self.groups.get(request.partition_id)?;
        let from = convert::vote_from(request.from_leader).map_err(malformed)?;
        let transfer = openraft::raft::TransferLeaderRequest::new(
            from,
            request.new_leader,
            convert::log_id_from(request.last_log_id),
        );
        let answer = raft
            .handle_transfer_leader(transfer)
            .await
            .map_err(raft_failed)?;
        use openraft::raft::TransferLeaderError;
        let refused = proto::TransferLeaderResponse::default();
        Ok(Response::new(match answer {
            Ok(()) => refused,
            Err(TransferLeaderError::VoteChanged { actual, .. }) => proto::TransferLeaderResponse {
                vote_changed_to: Some(convert::vote_to(&actual)),
                ..refused
            },
            Err(TransferLeaderError::LogNotFlushed { actual, .. }) => {
                proto::TransferLeaderResponse {
                    log_not_flushed: true,
                    last_flushed: convert::log_id_to(actual.as_ref()),
                    ..refused
                }
            }
        }))
    }

    async fn rebalance(
        &self,
        _request: Request<proto::Empty>,
    ) -> Result<Response<proto::Empty>, Status> {
        let services = self.services()?;
        crate::rebalance::hand_to_primaries(&self.groups, &services.membership).await;
        Ok(Response::new(proto::Empty {}))
    }

    async fn probe(
        &self,
        request: Request<proto::ProbeRequest>,
    ) -> Result<Response<proto::ProbeResponse>, Status> {
        let request = request.into_inner();
        self.groups.check_addressee(request.to_node)?;
        let raft = self.groups.get(request.partition_id)?;
        let last_log_index = raft.metrics().borrow_watched().last_log_index;
        Ok(Response::new(proto::ProbeResponse {
            last_log_index,
            member: self.groups.votes(request.partition_id),
        }))
    }

    async fn install_snapshot(
        &self,
        request: Request<tonic::Streaming<proto::SnapshotChunk>>,
    ) -> Result<Response<proto::InstallSnapshotResponse>, Status> {
        self.groups.check_space()?;
        let mut chunks = request.into_inner();
        let header = match chunks.message().await? {
            Some(proto::SnapshotChunk {
                header: Some(header),
                ..
            }) => header,
            _ => {
                return Err(Status::invalid_argument(
                    "a snapshot stream starts with its header",
                ));
            }
        };
        let response = self.groups.install_snapshot(header, chunks).await?;
        Ok(Response::new(response))
    }
}
