use beeline_protocol::intent::{ProcessInstanceBatchIntent, ProcessInstanceIntent};
use beeline_protocol::value::ProcessInstanceBatchRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::model::deployed_element;
use crate::processing::bpmn::inner_record;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::ElementLifecycle;

/// `PROCESS_INSTANCE_BATCH ACTIVATE`: activates one more inner instance of a parallel
/// multi-instance body (`index` of them are left), then the next step, or ACTIVATED when
/// none is left, or the body stopped taking inner instances (it is being terminated).
pub(crate) struct ProcessInstanceBatchActivateProcessor;

impl CommandProcessor for ProcessInstanceBatchActivateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let batch = value_of::<ProcessInstanceBatchRecord>(command)?.clone();
        let Some(body) = ctx
            .state()
            .element_instances()
            .get(batch.batch_element_instance_key)?
        else {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to activate child for batch element instance, but no parent element instance found for key '{}'. The parent was likely terminated before processing this batch activation.",
                    batch.batch_element_instance_key
                ),
            );
            return Ok(());
        };
        let active = body.is(ElementLifecycle::Activated);
        if active && batch.index > 0 {
            let record = body.record();
            let (process, index) = deployed_element(ctx.state(), &record)?;
            let key = ctx.next_key()?;
            ctx.append_command(
                key,
                ProcessInstanceIntent::ActivateElement,
                inner_record(process.model[index].kind(), &record, body.key),
            );
        }
        if active && batch.index > 1 {
            let key = ctx.next_key()?;
            ctx.append_command(
                key,
                ProcessInstanceBatchIntent::Activate,
                ProcessInstanceBatchRecord {
                    index: batch.index - 1,
                    ..batch
                },
            );
        } else {
            ctx.append_event(command.key, ProcessInstanceBatchIntent::Activated, batch)?;
        }
        Ok(())
    }
}
