//! Behaviours that kinds of elements share (Zeebe's `processing/bpmn/behavior`), and that
//! other processors reach elements through (job completion, correlation, timers).

pub(crate) mod activation;
pub(crate) mod events;
pub(crate) mod flow;
pub(crate) mod jobs;
pub(crate) mod listeners;
pub(crate) mod subscriptions;
pub(crate) mod termination;
pub(crate) mod throw;
pub(crate) mod timers;
pub(crate) mod user_tasks;
pub(crate) mod variables;
