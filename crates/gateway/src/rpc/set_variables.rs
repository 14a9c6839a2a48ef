//! `SetVariables` → `VARIABLE_DOCUMENT UPDATE` on the partition of the scope's key.

use beeline_protocol::Record;
use beeline_protocol::intent::VariableDocumentIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::VariableDocumentRecord;

use super::{operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{SetVariablesRequest, SetVariablesResponse};
use crate::validate;

pub(crate) fn command(request: &SetVariablesRequest) -> Result<Record, GatewayError> {
    let variables = validate::variables("variables", &request.variables)?;
    let mut record = Record::command(
        NO_KEY,
        VariableDocumentIntent::Update,
        VariableDocumentRecord {
            scope_key: request.element_instance_key,
            update_semantics: if request.local { "LOCAL" } else { "PROPAGATE" }.into(),
            variables,
            ..VariableDocumentRecord::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub(crate) fn response(event: &Record) -> Result<SetVariablesResponse, GatewayError> {
    value_of::<VariableDocumentRecord>(event)?;
    Ok(SetVariablesResponse { key: event.key })
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: SetVariablesRequest,
) -> Result<SetVariablesResponse, GatewayError> {
    d.require(VariableDocumentIntent::Update, "setting variables")?;
    let partition = validate::key(
        "elementInstanceKey",
        request.element_instance_key,
        d.partition_count(),
    )?;
    let event = d.execute(partition, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_an_update_command() {
        let record = command(&SetVariablesRequest {
            element_instance_key: 6,
            variables: r#"{"x":1}"#.into(),
            local: true,
            operation_reference: None,
        })
        .unwrap();
        assert_eq!(record.intent, VariableDocumentIntent::Update.into());
        let document = record.value_as::<VariableDocumentRecord>().unwrap();
        assert_eq!(document.scope_key, 6);
        assert_eq!(document.update_semantics, "LOCAL");
        assert_eq!(document.variables, br#"{"x":1}"#);
        let mut event = Record::event(99, VariableDocumentIntent::Updated, document.clone());
        event.key = 99;
        assert_eq!(response(&event).unwrap().key, 99);
    }

    #[test]
    fn propagate_is_the_default_and_documents_must_be_objects() {
        let record = command(&SetVariablesRequest {
            element_instance_key: 6,
            variables: String::new(),
            local: false,
            operation_reference: None,
        })
        .unwrap();
        let document = record.value_as::<VariableDocumentRecord>().unwrap();
        assert_eq!(document.update_semantics, "PROPAGATE");
        let error = command(&SetVariablesRequest {
            element_instance_key: 6,
            variables: "[]".into(),
            local: false,
            operation_reference: None,
        })
        .unwrap_err();
        assert!(error.to_string().contains("'ARRAY'"));
    }
}
