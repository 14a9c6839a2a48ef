//! `CompleteJob`.

use crate::error::GatewayError;
use crate::operations::complete_job::{self, CompleteJob};
use crate::proto::{CompleteJobRequest, CompleteJobResponse, JobResult};

pub(crate) fn request(request: CompleteJobRequest) -> CompleteJob {
    CompleteJob {
        job_key: request.job_key,
        variables: request.variables,
        has_result: request
            .result
            .is_some_and(|result| result != JobResult::default()),
    }
}

pub(super) async fn handle(
    d: &crate::dispatch::Dispatcher,
    r: CompleteJobRequest,
) -> Result<CompleteJobResponse, GatewayError> {
    complete_job::run(d, request(r)).await?;
    Ok(CompleteJobResponse {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_result_is_no_result() {
        let with = |result| {
            request(CompleteJobRequest {
                job_key: 1,
                variables: String::new(),
                result,
            })
        };
        assert!(!with(None).has_result);
        assert!(!with(Some(JobResult::default())).has_result);
        assert!(
            with(Some(JobResult {
                denied: Some(true),
                ..JobResult::default()
            }))
            .has_result
        );
    }
}
