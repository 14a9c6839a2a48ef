//! The gateway's operations, transport-neutral: one file each, each a `run` function over plain
//! request and result types. `run` checks that the engine processes the operation's command,
//! validates the request (errors name the field), builds the command, routes it (`routing`),
//! sends it through the partition's in-flight limit (`dispatch`) and reads the answer.
//!
//! The gRPC adapter (`crate::grpc`) and the REST adapter (`crate::rest`) only translate their
//! wire shapes into these requests and these results back into wire shapes; each has one table
//! from [`GatewayError`] to its status codes. Nothing about a command is decided twice.
//!
//! Results are the answering event's value (a `beeline_protocol::value` record) with its key
//! where the caller needs more than "done".

pub mod activate_jobs;
pub mod assign_user_task;
pub mod broadcast_signal;
pub mod cancel_process_instance;
pub mod complete_job;
pub mod complete_user_task;
pub mod correlate_message;
pub mod create_process_instance;
pub mod delete_resource;
pub mod deploy_resources;
pub mod evaluate_decision;
pub mod fail_job;
pub mod migrate_process_instance;
pub mod modify_process_instance;
pub mod pin_clock;
pub mod publish_message;
pub mod resolve_incident;
pub mod set_variables;
pub mod status;
pub mod stream_jobs;
pub mod throw_error;
pub mod topology;
pub mod update_job;
pub mod update_user_task;

use beeline_protocol::{Intent, Record, Value};

use crate::dispatch::{Dispatcher, intent_name};
use crate::error::GatewayError;
use crate::validate;

/// An answer: the key of the event that answered the command, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<V> {
    pub key: i64,
    pub value: V,
}

/// The answer's value as `V`, or an INTERNAL error saying what came instead.
pub(crate) fn value_of<V: Value>(record: &Record) -> Result<&V, GatewayError> {
    record
        .value_as::<V>()
        .ok_or_else(|| unexpected::<V>(record.intent))
}

/// The answer's key and value, the value taken out of the record.
pub(crate) fn keyed<V: Value>(record: Record) -> Result<Keyed<V>, GatewayError> {
    let (key, intent) = (record.key, record.intent);
    match record.into_value::<V>() {
        Some(value) => Ok(Keyed { key, value }),
        None => Err(unexpected::<V>(intent)),
    }
}

fn unexpected<V: Value>(intent: Intent) -> GatewayError {
    GatewayError::Internal(format!(
        "expected a {} record in the answer, but the partition answered with {}",
        V::VALUE_TYPE.name(),
        intent_name(intent)
    ))
}

/// Sends `command` to the partition that made `key` (the request's field `field`) and returns
/// the answering event.
pub(crate) async fn execute_on_key(
    d: &Dispatcher,
    field: &str,
    key: i64,
    command: Record,
) -> Result<Record, GatewayError> {
    let partition = validate::key(field, key, d.partition_count())?;
    d.execute(partition, command).await
}

/// Sends `command` to the partition that made `key` and checks that a `V` event answered it:
/// for commands whose answer says no more than "done".
pub(crate) async fn acknowledged<V: Value>(
    d: &Dispatcher,
    field: &str,
    key: i64,
    command: Record,
) -> Result<(), GatewayError> {
    let event = execute_on_key(d, field, key, command).await?;
    value_of::<V>(&event)?;
    Ok(())
}

/// The optional `operationReference` of a request as a record carries it (-1: none).
pub(crate) fn operation_reference(reference: Option<u64>) -> i64 {
    reference.map_or(-1, |r| r as i64)
}

/// A document from a record as the JSON text a response carries (`{}` when empty).
pub fn document_text(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.trim().is_empty() => text,
        _ => "{}",
    }
}
