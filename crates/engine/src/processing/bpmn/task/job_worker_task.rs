//! Tasks a job worker does (Zeebe's `JobWorkerTaskProcessor`): service and send tasks. The
//! element waits for its job; the job's completion completes it.

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::jobs;
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Failure, Step};

pub(crate) struct JobWorkerTaskProcessor;

impl ElementProcessor for JobWorkerTaskProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        let Some(properties) = process.model[bpmn.index].job_worker() else {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "task '{}' has no job definition",
                bpmn.record.element_id
            ))));
        };
        jobs::activate_job_worker(bpmn, properties)
    }
}
