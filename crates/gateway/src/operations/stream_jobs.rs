//! Stream activated jobs: a worker stays connected and jobs are pushed to it as they become
//! activatable, until it goes away or the gateway shuts down (gRPC's StreamActivatedJobs).
//!
//! New jobs are pushed: the stream registers in the node's [`JobStreams`], and a partition
//! that creates a job of the stream's type activates it for the stream in the same batch and
//! hands it over once committed. Jobs that were activatable before the stream opened, or that
//! become activatable again (timed out, failed, yielded), the stream activates itself
//! (`JOB_BATCH ACTIVATE`, a few at a time, only while the client reads), woken as a long poll
//! is. A job the client does not take is handed back (YIELD, or FAIL with unchanged retries),
//! never failed for good.
//!
//! In a cluster the stream also registers with every other live broker (`OpenJobStream` on the
//! internal port, again when a broker joins, comes back or restarts), whose partitions push to
//! it as to a local stream; a job from there the client does not take is handed back the same
//! way.
//!
//! [`JobStreams`]: beeline_stream::JobStreams

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use beeline_cluster::transport::proto;
use beeline_cluster::transport::proto::internal_client::InternalClient;
use beeline_cluster::transport::proto::job_stream_control::Control;
use beeline_cluster::{Membership, NodeId};
use beeline_protocol::intent::JobBatchIntent;
use beeline_protocol::value::JobBatchRecord;
use beeline_stream::{JobStream, JobStreamProperties, PushedJob};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use tracing::Instrument;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::jobs::{self, ActivatedJob, JobSink, Pass, Wake};
use crate::tenancy;
use crate::validate;

/// What the client reads: jobs, then, if the stream ends on the gateway's side, why. Dropped
/// (the client went away), it hands the jobs it still buffers back to their partitions: they
/// were never sent.
///
/// A job taken from here is the client's (as a job Zeebe's gateway passes to a ready gRPC
/// stream): it is in the connection, whose HTTP/2 flow control holds what the client does not
/// read. One job at a time is taken, so that the transport, whose encoder takes everything
/// ready into one chunk, holds at most one job beyond what the client's window takes, and the
/// rest stays here to be handed back.
pub struct Jobs {
    rx: mpsc::Receiver<Result<ActivatedJob, GatewayError>>,
    d: Arc<Dispatcher>,
    /// A job was just taken: the next poll ends the transport's chunk.
    taken: bool,
}

impl tokio_stream::Stream for Jobs {
    type Item = Result<ActivatedJob, GatewayError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        if std::mem::take(&mut self.taken) {
            cx.waker().wake_by_ref();
            return std::task::Poll::Pending;
        }
        let next = self.rx.poll_recv(cx);
        self.taken = matches!(next, std::task::Poll::Ready(Some(_)));
        next
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.rx.close();
        let mut unsent = Vec::new();
        while let Ok(item) = self.rx.try_recv() {
            if let Ok(job) = item {
                unsent.push(job);
            }
        }
        if unsent.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let d = self.d.clone();
            runtime.spawn(async move { jobs::hand_back(&d, unsent, jobs::NOT_SENT, true).await });
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamJobs {
    pub job_type: String,
    pub worker: String,
    /// How long (ms) an activated job belongs to the worker.
    pub timeout: i64,
    /// The variables the jobs carry (empty: all).
    pub fetch_variables: Vec<String>,
    pub tenant_ids: Vec<String>,
}

/// Jobs buffered for a slow reader, and the most activated in one look.
const BUFFER: usize = 16;

pub(crate) fn batch(request: &StreamJobs) -> Result<JobBatchRecord, GatewayError> {
    validate::not_empty("type", &request.job_type)?;
    validate::at_least("timeout", request.timeout, 1)?;
    let tenant_ids = tenancy::tenants("StreamActivatedJobs", &request.tenant_ids)?;
    Ok(JobBatchRecord {
        r#type: request.job_type.clone(),
        worker: request.worker.clone(),
        timeout: request.timeout,
        fetch_variables: request.fetch_variables.clone(),
        tenant_ids,
        ..JobBatchRecord::default()
    })
}

struct PushSink {
    tx: mpsc::Sender<Result<ActivatedJob, GatewayError>>,
}

impl JobSink for PushSink {
    async fn deliver(&mut self, jobs: Vec<ActivatedJob>) -> Result<(), Vec<ActivatedJob>> {
        let mut jobs = jobs.into_iter();
        while let Some(job) = jobs.next() {
            if let Err(unsent) = self.tx.send(Ok(job)).await {
                let mut undelivered: Vec<ActivatedJob> = unsent.0.into_iter().collect();
                undelivered.extend(jobs);
                return Err(undelivered);
            }
        }
        Ok(())
    }
}

/// Opens the stream; it runs until the client drops what it reads from.
pub fn open(d: Arc<Dispatcher>, request: StreamJobs) -> Result<Jobs, GatewayError> {
    d.require(JobBatchIntent::Activate, "streaming activated jobs")?;
    let batch = batch(&request)?;
    let (tx, rx) = mpsc::channel(BUFFER);
    let pushed = d.job_streams.as_ref().map(|streams| {
        streams.open(
            JobStreamProperties {
                job_type: batch.r#type.clone(),
                worker: batch.worker.clone(),
                timeout: batch.timeout,
                fetch_variables: batch.fetch_variables.clone(),
                tenant_ids: batch.tenant_ids.clone(),
            },
            BUFFER,
        )
    });
    let (remote_tx, remote) = mpsc::channel(BUFFER);
    if let Some(membership) = d.membership.clone() {
        let request = proto::JobStreamRequest {
            job_type: batch.r#type.clone(),
            worker: batch.worker.clone(),
            timeout: batch.timeout,
            fetch_variables: batch.fetch_variables.clone(),
            tenant_ids: batch.tenant_ids.clone(),
        };
        tokio::spawn(
            remote_streams(d.clone(), membership, request, remote_tx)
                .instrument(tracing::Span::current()),
        );
    }
    let pushed = Pushed {
        local: pushed,
        remote,
    };
    tokio::spawn(serve(d.clone(), batch, pushed, tx).instrument(tracing::Span::current()));
    Ok(Jobs {
        rx,
        d,
        taken: false,
    })
}

/// Jobs pushed to the stream: by this broker's partitions, and by the other brokers'.
struct Pushed {
    local: Option<JobStream>,
    remote: mpsc::Receiver<PushedJob>,
}

impl Pushed {
    /// The next pushed job, from wherever it comes.
    async fn next(&mut self) -> Option<PushedJob> {
        let local = async {
            match &mut self.local {
                Some(stream) => stream.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            Some(job) = local => Some(job),
            Some(job) = self.remote.recv() => Some(job),
            else => None,
        }
    }

    /// Closes the stream everywhere; returns the jobs pushed and not yet read, to hand back.
    fn close(mut self) -> Vec<PushedJob> {
        let mut unread = self.local.take().map(JobStream::close).unwrap_or_default();
        self.remote.close();
        while let Ok(job) = self.remote.try_recv() {
            unread.push(job);
        }
        unread
    }
}

/// How long a broker that did not take the stream is left before it is asked again.
const RECONNECT: Duration = Duration::from_secs(1);

/// The stream's registration with one broker: the call, for that start of the broker.
struct Registration {
    incarnation: u64,
    call: JoinHandle<()>,
}

/// Keeps the stream registered with every other live broker while the client reads: again
/// when the call ended, and when the broker is gone or restarted (its call may hang on a
/// connection nobody answers any more; ending it makes the broker hand back what it holds).
/// When the client goes away, each call ends by itself, handing back what it holds.
async fn remote_streams(
    d: Arc<Dispatcher>,
    membership: Arc<Membership>,
    request: proto::JobStreamRequest,
    jobs: mpsc::Sender<PushedJob>,
) {
    let mut registered: HashMap<NodeId, Registration> = HashMap::new();
    let mut changes = membership.changes();
    loop {
        registered.retain(|node, registration| {
            if registration.call.is_finished() {
                return false;
            }
            let current = membership.incarnation(*node) == Some(registration.incarnation);
            if !current {
                tracing::debug!(
                    node,
                    "a broker went away or restarted; its job stream call ends"
                );
                registration.call.abort();
            }
            current
        });
        for node in membership.alive_members() {
            if registered.contains_key(&node) {
                continue;
            }
            let (Some(incarnation), Some(channel)) =
                (membership.incarnation(node), membership.channel(node))
            else {
                continue;
            };
            let call = remote_stream(d.clone(), node, channel, request.clone(), jobs.clone());
            let call = tokio::spawn(call.in_current_span());
            registered.insert(node, Registration { incarnation, call });
        }
        tokio::select! {
            () = jobs.closed() => return,
            _ = changes.changed() => {}
            () = tokio::time::sleep(RECONNECT) => {}
        }
    }
}

/// Jobs a broker may send a stream before the gateway has taken them: the gateway grants them
/// again as it passes them on (half of them at a time), so a worker that does not read leaves
/// its jobs with the brokers (whose registrations fill and are skipped), not in the
/// connections between them.
const REMOTE_CREDIT: u32 = 16;

/// How long a closed stream waits for a broker to end its answer (the jobs it sent before it
/// learned of the close, handed back as they come).
const CLOSING: Duration = Duration::from_secs(5);

/// The stream registered with one broker: what its partitions push, until the client or the
/// broker goes away. When the client goes away, the gateway ends its side of the call and hands
/// back the jobs the broker sent until it ended its own.
async fn remote_stream(
    d: Arc<Dispatcher>,
    node: NodeId,
    channel: Channel,
    request: proto::JobStreamRequest,
    jobs: mpsc::Sender<PushedJob>,
) {
    let (control, controls) = mpsc::unbounded_channel();
    let open = |control| proto::JobStreamControl {
        control: Some(control),
    };
    let _ = control.send(open(Control::Open(request)));
    let _ = control.send(open(Control::Credit(REMOTE_CREDIT)));
    let mut client = InternalClient::new(channel);
    let controls = tokio_stream::wrappers::UnboundedReceiverStream::new(controls);
    let mut stream = match client.open_job_stream(controls).await {
        Ok(stream) => stream.into_inner(),
        Err(status) => {
            tracing::debug!(node, %status, "cannot register a job stream with a broker");
            return;
        }
    };
    // Passed on and not granted again yet.
    let mut owed = 0;
    loop {
        tokio::select! {
            message = stream.message() => match message {
                Ok(Some(message)) => match beeline_cluster::job_streams::decode(message) {
                    Ok(job) => {
                        if let Err(unsent) = jobs.send(job).await {
                            hand_back_pushed(&d, vec![unsent.0]).await;
                            break;
                        }
                        owed += 1;
                        if owed >= REMOTE_CREDIT / 2 {
                            let _ = control.send(open(Control::Credit(std::mem::take(&mut owed))));
                        }
                    }
                    Err(error) => tracing::warn!(node, %error, "undecodable job from a broker"),
                },
                Ok(None) => return,
                Err(status) => {
                    tracing::debug!(node, %status, "a broker's job stream ended");
                    return;
                }
            },
            () = jobs.closed() => break,
        }
    }
    // The client went away: the broker pushes no more once it reads the end of the call, and
    // what it sent before that comes back here.
    drop(control);
    let closing = async {
        let mut sent = Vec::new();
        while let Ok(Some(message)) = stream.message().await {
            match beeline_cluster::job_streams::decode(message) {
                Ok(job) => sent.push(job),
                Err(error) => tracing::warn!(node, %error, "undecodable job from a broker"),
            }
        }
        sent
    };
    match tokio::time::timeout(CLOSING, closing).await {
        Ok(sent) => hand_back_pushed(&d, sent).await,
        Err(_) => tracing::info!(
            node,
            "a broker did not end a closed job stream; the jobs it sent wait for their deadline"
        ),
    }
}

/// Hands back pushed jobs the client never got.
async fn hand_back_pushed(d: &Dispatcher, pushed: Vec<PushedJob>) {
    if pushed.is_empty() {
        return;
    }
    let jobs = pushed
        .into_iter()
        .map(|job| ActivatedJob {
            key: job.key,
            job: job.job,
        })
        .collect();
    jobs::hand_back(d, jobs, jobs::NOT_SENT, true).await;
}

/// Why a stream ended.
#[derive(PartialEq, Eq)]
enum End {
    ClientGone,
    ShuttingDown,
    Failed,
}

/// Feeds the client: jobs the partitions push, and jobs it activates itself: those that were
/// activatable before the stream opened, and those that become activatable without being
/// pushed (timed out, failed with retries left, yielded, or created while every stream was
/// full).
///
/// Activating takes a round trip through a partition; it runs beside the forwarding of pushed
/// jobs, so a slow partition does not stop pushes (the stream would look full, and new jobs
/// would fall back to being activated, a few per round trip).
async fn serve(
    d: Arc<Dispatcher>,
    batch: JobBatchRecord,
    mut pushed: Pushed,
    tx: mpsc::Sender<Result<ActivatedJob, GatewayError>>,
) {
    let mut notifications = d.jobs_available.subscribe();
    let mut sink = PushSink { tx };
    // Whether to look for activatable jobs: at the start and whenever woken for the type. A
    // look waits for room in the client's buffer; it is not given up for the lack of it (the
    // jobs it was woken for would wait for the next wake).
    let mut look = true;
    let mut looking: Option<JoinHandle<Result<Pass, GatewayError>>> = None;
    let end = loop {
        if d.is_stopping() {
            break End::ShuttingDown;
        }
        // Activate only what the client has room for: an activated job's timeout runs.
        let room = sink.tx.capacity().min(BUFFER);
        if look && looking.is_none() && room > 0 {
            look = false;
            let (d, batch) = (d.clone(), batch.clone());
            let mut sink = PushSink {
                tx: sink.tx.clone(),
            };
            looking = Some(tokio::spawn(
                async move { jobs::activate_pass(&d, &batch, room as i32, &mut sink, true).await }
                    .in_current_span(),
            ));
        }
        tokio::select! {
            biased;
            Some(job) = pushed.next() => {
                let job = ActivatedJob { key: job.key, job: job.job };
                if let Err(undelivered) = sink.deliver(vec![job]).await {
                    jobs::hand_back(&d, undelivered, jobs::NOT_SENT, true).await;
                    break End::ClientGone;
                }
            }
            looked = finished(&mut looking), if looking.is_some() => {
                looking = None;
                match looked {
                    Ok(pass) if pass.gone => break End::ClientGone,
                    // There may be more.
                    Ok(pass) if pass.activated > 0 => look = true,
                    Ok(_) => {}
                    Err(error) => {
                        let _ = sink.tx.send(Err(error)).await;
                        break End::Failed;
                    }
                }
            }
            open = has_room(&sink.tx), if look && looking.is_none() => {
                if !open {
                    break End::ClientGone;
                }
            }
            wake = jobs::wait_for_jobs(
                &d,
                &batch.r#type,
                &mut notifications,
                None,
                sink.tx.closed(),
            ) => match wake {
                Wake::Retry | Wake::Deadline => look = true,
                Wake::ClientGone => break End::ClientGone,
                Wake::ShuttingDown => break End::ShuttingDown,
            },
        }
    };
    // A look in flight finishes on its own: it hands back what the client no longer takes.
    drop(looking);
    // No more pushes; what was pushed and not read goes back to the partitions.
    let unread: Vec<ActivatedJob> = pushed
        .close()
        .into_iter()
        .map(|job| ActivatedJob {
            key: job.key,
            job: job.job,
        })
        .collect();
    if !unread.is_empty() {
        jobs::hand_back(&d, unread, jobs::NOT_SENT, true).await;
    }
    if end == End::ShuttingDown {
        let _ = sink
            .tx
            .send(Err(GatewayError::Unavailable(
                "The gateway is shutting down; open the job stream again on another gateway or \
                 after the restart"
                    .into(),
            )))
            .await;
    }
}

/// The outcome of the look in flight.
async fn finished(
    looking: &mut Option<JoinHandle<Result<Pass, GatewayError>>>,
) -> Result<Pass, GatewayError> {
    match looking {
        Some(handle) => handle.await.unwrap_or_else(|e| {
            Err(GatewayError::Internal(format!(
                "job activation failed: {e}"
            )))
        }),
        None => std::future::pending().await,
    }
}

/// Waits until the client's buffer has room; false when the client went away.
async fn has_room<T>(tx: &mpsc::Sender<T>) -> bool {
    tx.reserve().await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_job_batch() {
        let request = StreamJobs {
            job_type: "pay".into(),
            worker: "w".into(),
            timeout: 1000,
            ..StreamJobs::default()
        };
        let batch = batch(&request).unwrap();
        assert_eq!(batch.r#type, "pay");
        assert_eq!(batch.timeout, 1000);
        let error = super::batch(&StreamJobs {
            job_type: String::new(),
            ..request
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "No type provided");
    }
}
