mod activate;

pub(crate) use activate::{job_variables, too_large_to_hand_out};

use beeline_protocol::intent::JobBatchIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        JobBatchIntent::Activate,
        activate::JobBatchActivateProcessor,
    );
}
