//! `CancelProcessInstance` → `PROCESS_INSTANCE CANCEL` on the instance's partition.

use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceIntent;
use beeline_protocol::value::ProcessInstanceRecord;

use super::{operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{CancelProcessInstanceRequest, CancelProcessInstanceResponse};
use crate::validate;

pub(crate) fn command(request: &CancelProcessInstanceRequest) -> Record {
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

pub(crate) fn response(event: &Record) -> Result<CancelProcessInstanceResponse, GatewayError> {
    value_of::<ProcessInstanceRecord>(event)?;
    Ok(CancelProcessInstanceResponse {})
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: CancelProcessInstanceRequest,
) -> Result<CancelProcessInstanceResponse, GatewayError> {
    d.require(ProcessInstanceIntent::Cancel, "canceling process instances")?;
    let partition = validate::key(
        "processInstanceKey",
        request.process_instance_key,
        d.partition_count(),
    )?;
    let event = d.execute(partition, command(&request)).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_cancel_command() {
        let record = command(&CancelProcessInstanceRequest {
            process_instance_key: 8,
            operation_reference: Some(1),
        });
        assert_eq!(record.key, 8);
        assert_eq!(record.intent, ProcessInstanceIntent::Cancel.into());
        assert_eq!(record.operation_reference, 1);
        let value = record.value_as::<ProcessInstanceRecord>().unwrap();
        assert_eq!(value.process_instance_key, 8);
        assert!(
            response(&Record::event(
                8,
                ProcessInstanceIntent::Canceling,
                value.clone()
            ))
            .is_ok()
        );
    }
}
