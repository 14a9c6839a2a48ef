use beeline_protocol::Record;
use beeline_protocol::value::MessageStartEventSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::CorrelationKeyLock;

/// `MESSAGE_START_EVENT_SUBSCRIPTION CORRELATED`: a message started an instance; it is
/// correlated to the process, and its correlation key is taken until the instance ends.
pub(crate) struct MessageStartEventSubscriptionCorrelatedApplier;

impl EventApplier for MessageStartEventSubscriptionCorrelatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageStartEventSubscriptionRecord>(event)?;
        state
            .messages_mut()
            .put_correlation(record.message_key, &record.bpmn_process_id);
        if !record.correlation_key.is_empty() {
            let lock = CorrelationKeyLock {
                bpmn_process_id: record.bpmn_process_id.clone(),
                correlation_key: record.correlation_key.clone(),
                tenant_id: record.tenant_id.clone(),
            };
            state
                .messages_mut()
                .lock_correlation_key(lock, record.process_instance_key);
        }
        Ok(())
    }
}
