//! Tasks: the work an element does itself (a script, a decision), asks a job worker for, or
//! waits for (a message).

pub(super) mod business_rule_task;
pub(super) mod job_worker_task;
pub(super) mod receive_task;
pub(super) mod script_task;
pub(super) mod undefined_task;
pub(super) mod user_task;

use super::behavior::{jobs, subscriptions};
use super::{BpmnElementContext, Step};

/// A task that computes what it completes with itself (a script, a decision) when it
/// completes; with a `zeebe:taskDefinition` instead, a job worker's task.
fn activate_computing_or_job_worker(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
    let process = bpmn.process.clone();
    if let Some(properties) = process.model[bpmn.index].job_worker() {
        return jobs::activate_job_worker(bpmn, properties);
    }
    subscriptions::open(bpmn)?;
    bpmn.pass_through()?;
    Ok(())
}
