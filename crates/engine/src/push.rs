//! Job push (Zeebe's job streaming, 8.4+): a job created while a worker streams jobs of its
//! type is activated for that worker in the batch that creates it (`JOB CREATED` followed by
//! `JOB_BATCH ACTIVATED`), and handed to the stream once the batch is committed. Nobody has to
//! ask for it, so it skips a whole activation round trip (a command, its processing and a sync).
//!
//! The engine only sees this interface; the node's registry of open streams implements it.
//! Which stream (if any) gets a job is decided while processing and written down as events, so
//! replay never asks the registry.

use std::fmt;

use beeline_protocol::value::JobRecord;

/// The open job streams a new job may be pushed to.
pub trait JobPush: Send + Sync + fmt::Debug {
    /// Room for one more job in a stream for `job_type` that serves `tenant_id`, reserved until
    /// the returned slot is used or dropped; `None` when no such stream has room.
    fn reserve(&self, job_type: &str, tenant_id: &str) -> Option<Box<dyn PushSlot>>;
}

/// One reserved place in a job stream, and what the stream's worker asked for.
pub trait PushSlot: Send {
    fn worker(&self) -> &str;
    /// How long the worker holds a job (ms).
    fn timeout(&self) -> i64;
    /// The variables the worker wants; empty: all visible ones.
    fn fetch_variables(&self) -> &[String];
    /// Hands the activated job to the stream; false when the stream has closed since the slot
    /// was reserved (the job must then be yielded, or it waits for its time-out).
    fn push(self: Box<Self>, key: i64, job: JobRecord) -> bool;
}

/// A job activated for a stream in this batch, pushed once the batch is committed.
pub struct Push {
    pub slot: Box<dyn PushSlot>,
    pub key: i64,
    pub job: JobRecord,
}

impl fmt::Debug for Push {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Push")
            .field("key", &self.key)
            .field("worker", &self.slot.worker())
            .finish_non_exhaustive()
    }
}
