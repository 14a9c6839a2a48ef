//! Create a process instance: `PROCESS_INSTANCE_CREATION CREATE` on the next partition in turn
//! (the next one again while partitions shed it), or `CREATE_WITH_AWAITING_RESULT`, answered
//! when the instance completes.

use std::time::Duration;

use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceCreationIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::{
    ProcessInstanceCreationRecord, ProcessInstanceResultRecord, StartInstruction,
};

use super::{Keyed, keyed, operation_reference};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::tenancy;
use crate::validate;

/// Which process to start.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcessSelector {
    /// By BPMN process id, at a version (-1: the latest).
    Id { process_id: String, version: i32 },
    /// By process definition key.
    Key(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateProcessInstance {
    pub process: ProcessSelector,
    /// A JSON object as text; empty for none.
    pub variables: String,
    /// Element ids to start at instead of the none start event.
    pub start_instructions: Vec<String>,
    /// "Terminate the instance after this element": ids of elements; the engine has none yet.
    pub runtime_instructions: Vec<String>,
    pub tenant_id: String,
    pub tags: Vec<String>,
    pub operation_reference: Option<u64>,
}

/// Waiting for the instance to complete.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AwaitResult {
    /// The variables the result carries (empty: all of the root scope).
    pub fetch_variables: Vec<String>,
    /// How long to wait; `None` (or zero) is the gateway's request timeout.
    pub timeout: Option<Duration>,
}

pub(crate) fn creation(
    operation: &str,
    request: &CreateProcessInstance,
) -> Result<ProcessInstanceCreationRecord, GatewayError> {
    let (bpmn_process_id, process_definition_key, version) = match &request.process {
        ProcessSelector::Id {
            process_id,
            version,
        } => {
            validate::not_empty("processDefinitionId", process_id)?;
            (process_id.clone(), NO_KEY, *version)
        }
        ProcessSelector::Key(key) => {
            validate::key_format("processDefinitionKey", *key)?;
            (String::new(), *key, -1)
        }
    };
    if !request.runtime_instructions.is_empty() {
        return Err(GatewayError::Unimplemented(
            "Beeline does not support runtime instructions (terminating an instance after an \
             element) yet; create the instance without runtimeInstructions"
                .into(),
        ));
    }
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = tenancy::tenant(operation, &request.tenant_id)?;
    let mut start_instructions = Vec::with_capacity(request.start_instructions.len());
    for (i, element_id) in request.start_instructions.iter().enumerate() {
        validate::not_empty(&format!("startInstructions[{i}].elementId"), element_id)?;
        start_instructions.push(StartInstruction {
            element_id: element_id.clone(),
        });
    }
    Ok(ProcessInstanceCreationRecord {
        bpmn_process_id,
        process_definition_key,
        version,
        variables,
        process_instance_key: NO_KEY,
        fetch_variables: Vec::new(),
        start_instructions,
        tenant_id,
        tags: request.tags.clone(),
    })
}

pub(crate) fn command(request: &CreateProcessInstance) -> Result<Record, GatewayError> {
    let mut record = Record::command(
        NO_KEY,
        ProcessInstanceCreationIntent::Create,
        creation("CreateProcessInstance", request)?,
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub(crate) fn command_awaiting(
    request: &CreateProcessInstance,
    wait: &AwaitResult,
) -> Result<Record, GatewayError> {
    let mut creation = creation("CreateProcessInstanceWithResult", request)?;
    creation.fetch_variables = wait.fetch_variables.clone();
    let mut record = Record::command(
        NO_KEY,
        ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        creation,
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

/// The instance, created: its key and the CREATED event's value.
pub async fn run(
    d: &Dispatcher,
    request: CreateProcessInstance,
) -> Result<Keyed<ProcessInstanceCreationRecord>, GatewayError> {
    d.require(
        ProcessInstanceCreationIntent::Create,
        "creating process instances",
    )?;
    let command = command(&request)?;
    let event = d
        .execute_anywhere(&d.new_instances, command, d.config.request_timeout)
        .await?;
    keyed(event)
}

/// The instance, completed: its result with the variables asked for. Past the wait, the
/// request ends with DEADLINE_EXCEEDED; the instance goes on.
pub async fn run_awaiting(
    d: &Dispatcher,
    request: CreateProcessInstance,
    wait: AwaitResult,
) -> Result<ProcessInstanceResultRecord, GatewayError> {
    d.require(
        ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        "creating process instances with a result",
    )?;
    let command = command_awaiting(&request, &wait)?;
    let timeout = wait
        .timeout
        .filter(|t| !t.is_zero())
        .unwrap_or(d.config.request_timeout);
    let mut stopping = d.stopping.clone();
    tokio::select! {
        answer = d.execute_anywhere(&d.new_instances, command, timeout) => {
            Ok(keyed::<ProcessInstanceResultRecord>(answer?)?.value)
        }
        _ = stopping.wait_for(|stopping| *stopping) => Err(GatewayError::Unavailable(
            "The gateway is shutting down; the instance may have been created, but its result \
             can no longer be awaited"
                .into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> CreateProcessInstance {
        CreateProcessInstance {
            process: ProcessSelector::Id {
                process_id: "order".into(),
                version: -1,
            },
            variables: r#"{"id":1}"#.into(),
            start_instructions: vec!["pay".into()],
            runtime_instructions: Vec::new(),
            tenant_id: String::new(),
            tags: vec!["vip".into()],
            operation_reference: Some(12),
        }
    }

    #[test]
    fn request_becomes_a_create_command() {
        let record = command(&request()).unwrap();
        assert_eq!(record.intent, ProcessInstanceCreationIntent::Create.into());
        assert_eq!(record.operation_reference, 12);
        let creation = record.value_as::<ProcessInstanceCreationRecord>().unwrap();
        assert_eq!(creation.bpmn_process_id, "order");
        assert_eq!(creation.version, -1);
        assert_eq!(creation.process_definition_key, NO_KEY);
        assert_eq!(creation.variables, br#"{"id":1}"#);
        assert_eq!(creation.start_instructions[0].element_id, "pay");
        assert_eq!(creation.tenant_id, "<default>");
        assert_eq!(creation.tags, vec!["vip"]);
    }

    #[test]
    fn by_key() {
        let record = command(&CreateProcessInstance {
            process: ProcessSelector::Key(2_251_799_813_685_249),
            ..request()
        })
        .unwrap();
        let creation = record.value_as::<ProcessInstanceCreationRecord>().unwrap();
        assert_eq!(creation.process_definition_key, 2_251_799_813_685_249);
        assert_eq!(creation.bpmn_process_id, "");
    }

    #[test]
    fn awaiting_carries_the_variables_to_fetch() {
        let record = command_awaiting(
            &request(),
            &AwaitResult {
                fetch_variables: vec!["total".into()],
                timeout: None,
            },
        )
        .unwrap();
        assert_eq!(
            record.intent,
            ProcessInstanceCreationIntent::CreateWithAwaitingResult.into()
        );
        assert_eq!(record.operation_reference, 12);
        let creation = record.value_as::<ProcessInstanceCreationRecord>().unwrap();
        assert_eq!(creation.fetch_variables, vec!["total"]);
    }

    #[test]
    fn what_cannot_be_created_is_refused() {
        let nothing = command(&CreateProcessInstance {
            process: ProcessSelector::Id {
                process_id: " ".into(),
                version: -1,
            },
            ..request()
        })
        .unwrap_err();
        assert_eq!(nothing.to_string(), "No processDefinitionId provided");
        let no_key = command(&CreateProcessInstance {
            process: ProcessSelector::Key(0),
            ..request()
        })
        .unwrap_err();
        assert!(no_key.to_string().contains("processDefinitionKey is '0'"));
        let runtime = command(&CreateProcessInstance {
            runtime_instructions: vec!["pay".into()],
            ..request()
        })
        .unwrap_err();
        assert!(matches!(runtime, GatewayError::Unimplemented(_)));
        let empty_start = command(&CreateProcessInstance {
            start_instructions: vec![String::new()],
            ..request()
        })
        .unwrap_err();
        assert_eq!(
            empty_start.to_string(),
            "No startInstructions[0].elementId provided"
        );
    }
}
