//! Engine scenarios through the test kit: deploy models, run instances, work on jobs, and
//! assert on the record stream (printed in compact form when an assertion fails).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod call_activity;
mod corpus;
mod decisions;
mod deployment;
mod documents;
mod events;
mod gateways;
mod incidents;
mod job_push;
mod jobs;
mod limits;
mod listeners;
mod messages;
mod modification;
mod multi_instance;
mod process_instance;
mod replay;
mod resource_deletion;
mod signals;
mod state_format;
mod task_listeners;
mod tenants;
mod timers;
mod user_tasks;
mod variables;

use beeline_protocol::Intent;
use beeline_protocol::intent::ProcessInstanceIntent as PI;

/// `(element, intent)` pairs, for comparing lifecycles.
pub fn steps(pairs: &[(&str, PI)]) -> Vec<(String, Intent)> {
    pairs
        .iter()
        .map(|(element, intent)| (element.to_string(), Intent::from(*intent)))
        .collect()
}

/// The variables of a JSON document text, parsed.
pub fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or(serde_json::Value::Null)
}
