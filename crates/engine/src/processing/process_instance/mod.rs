mod cancel;
mod create;

use beeline_protocol::intent::{ProcessInstanceCreationIntent, ProcessInstanceIntent};

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        ProcessInstanceCreationIntent::Create,
        create::ProcessInstanceCreateProcessor,
    );
    processors.register(
        ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        create::ProcessInstanceCreateProcessor,
    );
    processors.register(
        ProcessInstanceIntent::Cancel,
        cancel::ProcessInstanceCancelProcessor,
    );
}
