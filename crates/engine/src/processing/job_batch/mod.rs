mod activate;

pub(crate) use activate::job_variables;

use beeline_protocol::intent::JobBatchIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        JobBatchIntent::Activate,
        activate::JobBatchActivateProcessor,
    );
}
