use beeline_protocol::intent::ProcessInstanceIntent;
use beeline_protocol::value::ProcessInstanceRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext};

/// `PROCESS_INSTANCE CANCEL`: terminates the whole instance (every active element and job).
pub(crate) struct ProcessInstanceCancelProcessor;

impl CommandProcessor for ProcessInstanceCancelProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let instance = ctx.state().element_instances().get(command.key)?;
        // An instance of a tenant the caller may not act for is not there for it.
        let Some(instance) = instance.filter(|i| {
            let record = i.record();
            record.flow_scope_key <= 0 && command.is_authorized_for(&record.tenant_id)
        }) else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to cancel a process instance with key '{}', but no such process was found",
                    command.key
                ),
            );
            return Ok(());
        };
        let record: ProcessInstanceRecord = instance.record();
        if record.parent_process_instance_key > 0 {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to cancel a process instance with key '{}', but it is created by a parent process instance. Cancel the root process instance '{}' instead.",
                    command.key, record.parent_process_instance_key
                ),
            );
            return Ok(());
        }
        let canceling = ctx.append_event(
            command.key,
            ProcessInstanceIntent::Canceling,
            record.clone(),
        )?;
        ctx.respond(canceling);
        ctx.append_command(command.key, ProcessInstanceIntent::TerminateElement, record);
        Ok(())
    }
}
