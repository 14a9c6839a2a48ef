//! `CreateProcessInstanceWithResult` → `PROCESS_INSTANCE_CREATION CREATE_WITH_AWAITING_RESULT`
//! on the next partition in turn; the answer is the instance's result when it completes.

use std::time::Duration;

use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceCreationIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::ProcessInstanceResultRecord;

use super::create_process_instance::creation;
use super::{document_text, operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{
    CreateProcessInstanceWithResultRequest, CreateProcessInstanceWithResultResponse,
};

pub(crate) fn command(
    request: &CreateProcessInstanceWithResultRequest,
) -> Result<Record, GatewayError> {
    let inner = request
        .request
        .as_ref()
        .ok_or_else(|| GatewayError::InvalidArgument("No request provided".into()))?;
    let mut creation = creation("CreateProcessInstanceWithResult", inner)?;
    creation.fetch_variables = request.fetch_variables.clone();
    let mut record = Record::command(
        NO_KEY,
        ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        creation,
    );
    record.operation_reference = operation_reference(inner.operation_reference);
    Ok(record)
}

pub(crate) fn response(
    event: &Record,
) -> Result<CreateProcessInstanceWithResultResponse, GatewayError> {
    let result = value_of::<ProcessInstanceResultRecord>(event)?;
    Ok(CreateProcessInstanceWithResultResponse {
        process_definition_key: result.process_definition_key,
        bpmn_process_id: result.bpmn_process_id.clone(),
        version: result.version,
        process_instance_key: result.process_instance_key,
        variables: document_text(&result.variables),
        tenant_id: result.tenant_id.clone(),
        tags: result.tags.clone(),
    })
}

/// The wait: the request's `requestTimeout` when positive, else the gateway's default.
pub(crate) fn timeout(
    request: &CreateProcessInstanceWithResultRequest,
    default: Duration,
) -> Duration {
    match u64::try_from(request.request_timeout) {
        Ok(ms) if ms > 0 => Duration::from_millis(ms),
        _ => default,
    }
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: CreateProcessInstanceWithResultRequest,
) -> Result<CreateProcessInstanceWithResultResponse, GatewayError> {
    d.require(
        ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        "creating process instances with a result",
    )?;
    let command = command(&request)?;
    let wait = timeout(&request, d.config.request_timeout);
    let mut stopping = d.stopping.clone();
    tokio::select! {
        answer = d.execute_anywhere(&d.new_instances, command, wait) => response(&answer?),
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
    use crate::proto::CreateProcessInstanceRequest;

    fn request() -> CreateProcessInstanceWithResultRequest {
        CreateProcessInstanceWithResultRequest {
            request: Some(CreateProcessInstanceRequest {
                bpmn_process_id: "order".into(),
                version: -1,
                operation_reference: Some(4),
                ..CreateProcessInstanceRequest::default()
            }),
            request_timeout: 0,
            fetch_variables: vec!["total".into()],
        }
    }

    #[test]
    fn request_becomes_a_create_with_result_command() {
        let record = command(&request()).unwrap();
        assert_eq!(
            record.intent,
            ProcessInstanceCreationIntent::CreateWithAwaitingResult.into()
        );
        assert_eq!(record.operation_reference, 4);
        let creation = record
            .value_as::<beeline_protocol::value::ProcessInstanceCreationRecord>()
            .unwrap();
        assert_eq!(creation.fetch_variables, vec!["total"]);
        assert_eq!(creation.variables, b"{}");
        let missing = command(&CreateProcessInstanceWithResultRequest {
            request: None,
            ..request()
        });
        assert_eq!(missing.unwrap_err().to_string(), "No request provided");
    }

    #[test]
    fn result_becomes_the_response() {
        let result = ProcessInstanceResultRecord {
            bpmn_process_id: "order".into(),
            process_definition_key: 1,
            version: 2,
            variables: br#"{"total":3}"#.to_vec(),
            process_instance_key: 4,
            tenant_id: "<default>".into(),
            tags: Vec::new(),
        };
        let response = response(&Record::event(
            4,
            beeline_protocol::intent::ProcessInstanceResultIntent::Completed,
            result,
        ))
        .unwrap();
        assert_eq!(response.variables, r#"{"total":3}"#);
        assert_eq!(response.process_instance_key, 4);
    }

    #[test]
    fn the_wait_is_the_request_timeout_or_the_default() {
        let default = Duration::from_secs(15);
        assert_eq!(timeout(&request(), default), default);
        let mut custom = request();
        custom.request_timeout = 2500;
        assert_eq!(timeout(&custom, default), Duration::from_millis(2500));
        custom.request_timeout = -1;
        assert_eq!(timeout(&custom, default), default);
    }
}
