//! Job streams across brokers: a gateway's `StreamActivatedJobs` registers with every broker
//! (`OpenJobStream` on the internal port), and each broker's partitions push new jobs of the
//! stream's type to it as they push to a local stream.
//!
//! The broker registers the remote stream in its own [`JobStreams`] and sends what its
//! partitions push as the gateway's credit allows: the gateway grants one job more for each it
//! takes, so a worker that does not read fills the registration here (the engine then skips
//! it, and its jobs stay activatable for others) instead of the connection between the
//! brokers. The gateway closes the stream by ending its side of the call: the broker then
//! takes no more pushes, hands the jobs it holds back to their partitions (`JOB YIELD`,
//! written by the partition's leader, or sent to it when the replica here no longer leads),
//! and ends its answer after the jobs it sent, which the gateway hands back. When the call
//! breaks instead (the connection, the gateway's process), what the broker holds goes back;
//! only the jobs in the connection are left to their deadline.

use std::collections::BTreeMap;
use std::sync::Arc;

use beeline_protocol::key;
use beeline_protocol::protobuf::encode_to_vec;
use beeline_stream::{
    JobStream, JobStreamProperties, JobStreams, LocalRouter, PushedJob, Undelivered,
};
use tokio::sync::mpsc;
use tonic::{Status, Streaming};

use crate::transport::proto;
use crate::transport::proto::job_stream_control::Control;

/// Jobs a remote stream holds before it is full (the engine then skips it).
pub const REMOTE_STREAM_CAPACITY: usize = 16;

/// The `OpenJobStream` RPC's server side: registers the stream its first message opens and
/// sends the pushed jobs as credit comes, until the caller ends its side (or goes away). Jobs
/// are taken from the registry only as credit allows, so when it ends, what is left is handed
/// back.
pub async fn open(
    streams: &Arc<JobStreams>,
    local: Arc<LocalRouter>,
    mut control: Streaming<proto::JobStreamControl>,
) -> Result<
    impl futures_util::Stream<Item = Result<proto::PushedJob, Status>> + Send + 'static,
    Status,
> {
    let request = match control.message().await? {
        Some(proto::JobStreamControl {
            control: Some(Control::Open(request)),
        }) => request,
        _ => {
            return Err(Status::invalid_argument(
                "a job stream opens with its properties (JobStreamControl.open)",
            ));
        }
    };
    let stream = streams.open(
        JobStreamProperties {
            job_type: request.job_type,
            worker: request.worker,
            timeout: request.timeout,
            fetch_variables: request.fetch_variables,
            tenant_ids: request.tenant_ids,
        },
        REMOTE_STREAM_CAPACITY,
    );
    let registered = Registered {
        stream: Some(stream),
        local,
    };
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(send(registered, control, tx));
    Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// Sends pushed jobs to the gateway while it has credit, until it ends its side, the call
/// breaks or the registration closes.
async fn send(
    mut registered: Registered,
    mut control: Streaming<proto::JobStreamControl>,
    answer: mpsc::Sender<Result<proto::PushedJob, Status>>,
) {
    let mut credit: u64 = 0;
    loop {
        tokio::select! {
            message = control.message() => match message {
                Ok(Some(proto::JobStreamControl { control: Some(Control::Credit(more)) })) => {
                    credit += u64::from(more);
                }
                Ok(Some(_)) => {
                    let _ = answer
                        .send(Err(Status::invalid_argument("a job stream opens once")))
                        .await;
                    return;
                }
                // Closed by the gateway: what was sent reaches it before the answer's end.
                Ok(None) => return,
                Err(status) => {
                    tracing::debug!(%status, "a gateway's job stream call broke");
                    return;
                }
            },
            job = registered.recv(), if credit > 0 => {
                let Some(job) = job else { return };
                credit -= 1;
                let message = proto::PushedJob {
                    key: job.key,
                    job: encode_to_vec(&job.job),
                };
                if answer.send(Ok(message)).await.is_err() {
                    registered.hand_back(vec![job]);
                    return;
                }
            }
            () = answer.closed() => return,
        }
    }
}

/// A remote stream's registration, for as long as its call lasts.
struct Registered {
    stream: Option<JobStream>,
    local: Arc<LocalRouter>,
}

impl Registered {
    async fn recv(&mut self) -> Option<PushedJob> {
        self.stream.as_mut()?.recv().await
    }

    /// Hands `jobs` back to their partitions.
    fn hand_back(&self, jobs: Vec<PushedJob>) {
        if jobs.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(hand_back(self.local.clone(), jobs));
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            self.hand_back(stream.close());
        }
    }
}

/// Hands pushed jobs nobody took back to their partitions (pushed from here, so each has a
/// replica here, which yields it wherever the partition is led now).
async fn hand_back(local: Arc<LocalRouter>, jobs: Vec<PushedJob>) {
    let mut by_partition: BTreeMap<u16, Vec<Undelivered>> = BTreeMap::new();
    for job in jobs {
        let Some(partition) = key::partition_of(job.key) else {
            continue;
        };
        by_partition
            .entry(partition)
            .or_default()
            .push(Undelivered {
                key: job.key,
                deadline: job.job.deadline,
                after: 0,
            });
    }
    for (partition, jobs) in by_partition {
        match local.partition(partition) {
            Some(handle) => handle.hand_back(jobs).await,
            None => tracing::info!(
                partition,
                jobs = jobs.len(),
                "no replica here to hand back jobs a remote stream did not take"
            ),
        }
    }
}

/// A pushed job as it came over the internal API.
pub fn decode(job: proto::PushedJob) -> Result<PushedJob, prost::DecodeError> {
    Ok(PushedJob {
        key: job.key,
        job: prost::Message::decode(job.job.as_slice())?,
    })
}
