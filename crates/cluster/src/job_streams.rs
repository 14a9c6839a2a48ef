//! Job streams across brokers: a gateway's `StreamActivatedJobs` registers with every broker
//! (`OpenJobStream` on the internal port), and each broker's partitions push new jobs of the
//! stream's type to it as they push to a local stream.
//!
//! The broker registers the remote stream in its own [`JobStreams`] and sends what its
//! partitions push as the call takes it. When the call ends (the gateway or its client went
//! away, the connection broke), the jobs pushed and not yet sent go back to their partitions
//! (`JOB YIELD`), so none waits out its timeout; a job the gateway receives and cannot hand to
//! its client, the gateway yields. Only a job in the connection's buffers when it breaks is
//! left to its deadline, as with a local stream that closes while a push is under way.

use std::sync::Arc;

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::key;
use beeline_protocol::protobuf::encode_to_vec;
use beeline_protocol::value::JobRecord;
use beeline_stream::{JobStream, JobStreamProperties, JobStreams, LocalRouter, PushedJob};
use tonic::Status;

use crate::transport::proto;

/// Jobs a remote stream holds before it is full (the engine then skips it).
pub const REMOTE_STREAM_CAPACITY: usize = 16;

/// The `OpenJobStream` RPC's server side: the pushed jobs, until the caller goes away. Jobs
/// are taken from the registry only as the call sends them, so when it ends, what is left is
/// handed back.
pub fn open(
    streams: &Arc<JobStreams>,
    local: Arc<LocalRouter>,
    request: proto::JobStreamRequest,
) -> impl futures_util::Stream<Item = Result<proto::PushedJob, Status>> + Send + 'static {
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
    futures_util::stream::unfold(registered, |mut registered| async move {
        let job = registered.stream.as_mut()?.recv().await?;
        let message = proto::PushedJob {
            key: job.key,
            job: encode_to_vec(&job.job),
        };
        Some((Ok(message), registered))
    })
}

/// A remote stream's registration, for as long as its call lasts.
struct Registered {
    stream: Option<JobStream>,
    local: Arc<LocalRouter>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let Some(stream) = self.stream.take() else {
            return;
        };
        let unread = stream.close();
        if unread.is_empty() {
            return;
        }
        let local = self.local.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for job in unread {
                    yield_job(&local, &job).await;
                }
            });
        }
    }
}

/// Hands a pushed job nobody took back to its partition.
pub async fn yield_job(local: &LocalRouter, job: &PushedJob) {
    let Some(handle) = key::partition_of(job.key).and_then(|p| local.partition(p)) else {
        return;
    };
    let command = Record::command(job.key, JobIntent::Yield, JobRecord::default());
    if let Err(error) = handle.execute(command).await {
        tracing::info!(job = job.key, %error, "failed to yield a job a remote stream did not take");
    }
}

/// A pushed job as it came over the internal API.
pub fn decode(job: proto::PushedJob) -> Result<PushedJob, prost::DecodeError> {
    Ok(PushedJob {
        key: job.key,
        job: prost::Message::decode(job.job.as_slice())?,
    })
}
