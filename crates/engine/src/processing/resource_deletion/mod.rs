mod delete;

use beeline_protocol::intent::ResourceDeletionIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        ResourceDeletionIntent::Delete,
        delete::ResourceDeletionDeleteProcessor,
    );
}
