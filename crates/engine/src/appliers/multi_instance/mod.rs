//! Multi-instance bodies: their input collections.

mod input_collection_evaluated;

use beeline_protocol::intent::MultiInstanceIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        MultiInstanceIntent::InputCollectionEvaluated,
        1,
        input_collection_evaluated::InputCollectionEvaluatedApplier,
    );
}
