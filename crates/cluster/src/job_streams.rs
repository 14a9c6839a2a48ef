//! Job streams across brokers: a gateway's `StreamActivatedJobs` registers with every broker
//! (`OpenJobStream` on the internal port), and each broker's partitions push new jobs of the
//! stream's type to it as they push to a local stream.
//!
//! The broker registers the remote stream in its own [`JobStreams`] and sends what its
//! partitions push as the call takes it. When the call ends (the gateway or its client went
//! away, the connection broke), the jobs pushed and not yet sent go back to their partitions
//! (`JOB YIELD`, written by the partition's leader, or sent to it when the replica here no
//! longer leads), so none waits out its timeout; a job the gateway receives and cannot hand to
//! its client, the gateway yields. Only a job in the connection's buffers when it breaks is
//! left to its deadline, as with a local stream that closes while a push is under way.

use std::collections::BTreeMap;
use std::sync::Arc;

use beeline_protocol::key;
use beeline_protocol::protobuf::encode_to_vec;
use beeline_stream::{
    JobStream, JobStreamProperties, JobStreams, LocalRouter, PushedJob, Undelivered,
};
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
            runtime.spawn(hand_back(local, unread));
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
