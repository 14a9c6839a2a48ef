//! `StreamActivatedJobs`: a worker stays connected and jobs are pushed to it as they become
//! activatable, until it goes away or the gateway shuts down.
//!
//! Partitions cannot push jobs to the gateway yet, so the stream activates them itself
//! (`JOB_BATCH ACTIVATE`, a few at a time, only while the client reads) and waits between
//! looks as a long poll does. A job the client does not take is handed back (YIELD, or FAIL
//! with unchanged retries), never failed for good.

use std::sync::Arc;

use beeline_protocol::intent::JobBatchIntent;
use beeline_protocol::value::JobBatchRecord;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;
use tracing::Instrument;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::jobs::{self, JobSink, Wake};
use crate::proto::{ActivatedJob, StreamActivatedJobsRequest};
use crate::validate;

pub(crate) type Stream = ReceiverStream<Result<ActivatedJob, Status>>;

/// Jobs buffered for a slow reader, and the most activated in one look.
const BUFFER: usize = 16;

pub(crate) fn batch(request: &StreamActivatedJobsRequest) -> Result<JobBatchRecord, GatewayError> {
    validate::not_empty("type", &request.r#type)?;
    validate::at_least("timeout", request.timeout, 1)?;
    let tenant_ids = validate::tenants("StreamActivatedJobs", &request.tenant_ids)?;
    Ok(JobBatchRecord {
        r#type: request.r#type.clone(),
        worker: request.worker.clone(),
        timeout: request.timeout,
        fetch_variables: request.fetch_variable.clone(),
        tenant_ids,
        ..JobBatchRecord::default()
    })
}

struct PushSink {
    tx: mpsc::Sender<Result<ActivatedJob, Status>>,
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

pub(crate) async fn handle(
    d: Arc<Dispatcher>,
    request: StreamActivatedJobsRequest,
) -> Result<Stream, GatewayError> {
    d.require(JobBatchIntent::Activate, "streaming activated jobs")?;
    let batch = batch(&request)?;
    let (tx, rx) = mpsc::channel(BUFFER);
    tokio::spawn(push(d, batch, tx).instrument(tracing::Span::current()));
    Ok(ReceiverStream::new(rx))
}

async fn push(
    d: Arc<Dispatcher>,
    batch: JobBatchRecord,
    tx: mpsc::Sender<Result<ActivatedJob, Status>>,
) {
    let mut notifications = d.jobs_available.subscribe();
    let mut sink = PushSink { tx };
    loop {
        if d.is_stopping() {
            break;
        }
        // Activate only what the client has room for: an activated job's timeout runs.
        let room = sink.tx.capacity().min(BUFFER);
        if room > 0 {
            match jobs::activate_pass(&d, &batch, room as i32, &mut sink, true).await {
                Ok(pass) if pass.gone => return,
                Ok(pass) if pass.activated > 0 => continue,
                Ok(_) => {}
                Err(error) => {
                    let _ = sink.tx.send(Err(error.into())).await;
                    return;
                }
            }
        }
        let wake = jobs::wait_for_jobs(
            &d,
            &batch.r#type,
            &mut notifications,
            None,
            sink.tx.closed(),
        )
        .await;
        match wake {
            Wake::Retry | Wake::Deadline => {}
            Wake::ClientGone => return,
            Wake::ShuttingDown => break,
        }
    }
    let _ = sink
        .tx
        .send(Err(GatewayError::Unavailable(
            "The gateway is shutting down; open the job stream again on another gateway or \
             after the restart"
                .into(),
        )
        .into()))
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_job_batch() {
        let request = StreamActivatedJobsRequest {
            r#type: "pay".into(),
            worker: "w".into(),
            timeout: 1000,
            fetch_variable: Vec::new(),
            tenant_ids: Vec::new(),
        };
        let batch = batch(&request).unwrap();
        assert_eq!(batch.r#type, "pay");
        assert_eq!(batch.timeout, 1000);
        let error = super::batch(&StreamActivatedJobsRequest {
            r#type: String::new(),
            ..request
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "No type provided");
    }
}
