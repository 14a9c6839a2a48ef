//! One file per RPC of `gateway_protocol.Gateway`. Each holds the pure translation of the
//! request into a command record (`command`) and of the answering event into the response
//! (`response`), with their tests, and the `handle` that checks engine support, routes and
//! sends.

pub(crate) mod activate_jobs;
pub(crate) mod broadcast_signal;
pub(crate) mod cancel_process_instance;
pub(crate) mod complete_job;
pub(crate) mod create_process_instance;
pub(crate) mod create_process_instance_with_result;
pub(crate) mod delete_resource;
pub(crate) mod deploy_process;
pub(crate) mod deploy_resource;
pub(crate) mod evaluate_decision;
pub(crate) mod fail_job;
pub(crate) mod migrate_process_instance;
pub(crate) mod modify_process_instance;
pub(crate) mod publish_message;
pub(crate) mod resolve_incident;
pub(crate) mod set_variables;
pub(crate) mod stream_activated_jobs;
pub(crate) mod throw_error;
pub(crate) mod topology;
pub(crate) mod update_job_retries;
pub(crate) mod update_job_timeout;

use beeline_protocol::{Record, Value};

use crate::dispatch::intent_name;
use crate::error::GatewayError;

/// The answer's value as `V`, or an INTERNAL error saying what came instead.
pub(crate) fn value_of<V: Value>(record: &Record) -> Result<&V, GatewayError> {
    record.value_as::<V>().ok_or_else(|| {
        GatewayError::Internal(format!(
            "expected a {} record in the answer, but the partition answered with {}",
            V::VALUE_TYPE.name(),
            intent_name(record.intent)
        ))
    })
}

/// A document from a record as the JSON text a response carries (`{}` when empty).
pub(crate) fn document_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.trim().is_empty() => text.to_owned(),
        _ => "{}".to_owned(),
    }
}

/// The optional `operationReference` of a request as a record carries it (-1: none).
pub(crate) fn operation_reference(reference: Option<u64>) -> i64 {
    reference.map_or(-1, |r| r as i64)
}
