//! Cancel a process instance: `PROCESS_INSTANCE CANCEL` on the instance's partition.

use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceIntent;
use beeline_protocol::value::ProcessInstanceRecord;

use super::{acknowledged, operation_reference};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CancelProcessInstance {
    pub process_instance_key: i64,
    pub operation_reference: Option<u64>,
}

pub(crate) fn command(request: &CancelProcessInstance) -> Record {
    let mut record = Record::command(
        request.process_instance_key,
        ProcessInstanceIntent::Cancel,
        ProcessInstanceRecord {
            process_instance_key: request.process_instance_key,
            ..ProcessInstanceRecord::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    record
}

pub async fn run(d: &Dispatcher, request: CancelProcessInstance) -> Result<(), GatewayError> {
    d.require(ProcessInstanceIntent::Cancel, "canceling process instances")?;
    acknowledged::<ProcessInstanceRecord>(
        d,
        "processInstanceKey",
        request.process_instance_key,
        command(&request),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_cancel_command() {
        let record = command(&CancelProcessInstance {
            process_instance_key: 8,
            operation_reference: Some(1),
        });
        assert_eq!(record.key, 8);
        assert_eq!(record.intent, ProcessInstanceIntent::Cancel.into());
        assert_eq!(record.operation_reference, 1);
        let value = record.value_as::<ProcessInstanceRecord>().unwrap();
        assert_eq!(value.process_instance_key, 8);
    }
}
