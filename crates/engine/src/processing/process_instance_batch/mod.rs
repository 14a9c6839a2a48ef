//! Batches of element instance commands that re-issue themselves a child at a time, so that
//! no step writes a record per child however many there are (Zeebe's
//! `ProcessInstanceBatch*Processor`): the inner instances of a parallel multi-instance body
//! are activated, the children of a terminating scope terminated. Each step's follow-ups run
//! before the next step, and a batch that fills up goes on in the next one.

mod activate;
mod terminate;

use beeline_protocol::intent::ProcessInstanceBatchIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        ProcessInstanceBatchIntent::Activate,
        activate::ProcessInstanceBatchActivateProcessor,
    );
    processors.register(
        ProcessInstanceBatchIntent::Terminate,
        terminate::ProcessInstanceBatchTerminateProcessor,
    );
}
