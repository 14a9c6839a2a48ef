//! Set variables in a scope: `VARIABLE_DOCUMENT UPDATE` on the partition of the scope's key.

use beeline_protocol::Record;
use beeline_protocol::intent::VariableDocumentIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::VariableDocumentRecord;

use super::{execute_on_key, keyed, operation_reference};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetVariables {
    /// The scope: a process instance or an element instance.
    pub element_instance_key: i64,
    /// A JSON object as text.
    pub variables: String,
    /// Set in this scope only, instead of where each variable is defined.
    pub local: bool,
    pub operation_reference: Option<u64>,
}

pub(crate) fn command(request: &SetVariables) -> Result<Record, GatewayError> {
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

/// The key of the variable document update.
pub async fn run(d: &Dispatcher, request: SetVariables) -> Result<i64, GatewayError> {
    d.require(VariableDocumentIntent::Update, "setting variables")?;
    let command = command(&request)?;
    let event = execute_on_key(
        d,
        "elementInstanceKey",
        request.element_instance_key,
        command,
    )
    .await?;
    Ok(keyed::<VariableDocumentRecord>(event)?.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_an_update_command() {
        let record = command(&SetVariables {
            element_instance_key: 4,
            variables: r#"{"a":1}"#.into(),
            local: true,
            operation_reference: None,
        })
        .unwrap();
        assert_eq!(record.intent, VariableDocumentIntent::Update.into());
        let document = record.value_as::<VariableDocumentRecord>().unwrap();
        assert_eq!(document.scope_key, 4);
        assert_eq!(document.update_semantics, "LOCAL");
        assert_eq!(document.variables, br#"{"a":1}"#);
        let propagate = command(&SetVariables {
            element_instance_key: 4,
            variables: "{}".into(),
            ..SetVariables::default()
        })
        .unwrap();
        assert_eq!(
            propagate
                .value_as::<VariableDocumentRecord>()
                .unwrap()
                .update_semantics,
            "PROPAGATE"
        );
    }

    #[test]
    fn variables_must_be_an_object() {
        let error = command(&SetVariables {
            element_instance_key: 4,
            variables: "[]".into(),
            ..SetVariables::default()
        })
        .unwrap_err();
        assert!(error.to_string().contains("'variables'"));
    }
}
