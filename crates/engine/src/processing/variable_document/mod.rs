mod update;

use beeline_protocol::intent::VariableDocumentIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        VariableDocumentIntent::Update,
        update::VariableDocumentUpdateProcessor,
    );
}
