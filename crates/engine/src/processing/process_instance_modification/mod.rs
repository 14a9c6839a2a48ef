mod modify;

use beeline_protocol::intent::ProcessInstanceModificationIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        ProcessInstanceModificationIntent::Modify,
        modify::ProcessInstanceModificationModifyProcessor,
    );
}
