mod set;

use beeline_protocol::intent::VariableIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(VariableIntent::Created, 1, set::VariableSetApplier);
    appliers.register(VariableIntent::Updated, 1, set::VariableSetApplier);
}
