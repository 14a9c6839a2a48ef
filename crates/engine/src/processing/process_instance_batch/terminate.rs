use beeline_protocol::Record;
use beeline_protocol::intent::{ProcessInstanceBatchIntent, ProcessInstanceIntent};
use beeline_protocol::value::ProcessInstanceBatchRecord;

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `PROCESS_INSTANCE_BATCH TERMINATE`: terminates the next child of a scope (from the child
/// `index` on) that is not terminating yet, then the next step, or TERMINATED when none is
/// left.
pub(crate) struct ProcessInstanceBatchTerminateProcessor;

impl CommandProcessor for ProcessInstanceBatchTerminateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let batch = value_of::<ProcessInstanceBatchRecord>(command)?.clone();
        let children = ctx.state().element_instances().terminable_children(
            batch.batch_element_instance_key,
            batch.index,
            2,
        )?;
        if let Some(child) = children.first() {
            ctx.append_command(
                child.key,
                ProcessInstanceIntent::TerminateElement,
                child.record(),
            );
        }
        match children.get(1) {
            Some(next) => {
                let key = ctx.next_key()?;
                ctx.append_command(
                    key,
                    ProcessInstanceBatchIntent::Terminate,
                    ProcessInstanceBatchRecord {
                        index: next.key,
                        ..batch
                    },
                );
            }
            None => {
                ctx.append_event(command.key, ProcessInstanceBatchIntent::Terminated, batch)?;
            }
        }
        Ok(())
    }
}
