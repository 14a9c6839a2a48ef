//! Pushed jobs nobody took, handed back to their partition (`JOB YIELD`), so that they are
//! activatable again at once instead of after their time-out. Whoever holds such a job hands it
//! back here: the processor itself (a stream that closed before the push), a stream's reader
//! ([`PartitionHandle::hand_back`]), and a leader that steps down with pushes it never made.
//!
//! - **Leading**, the partition's processor writes the yields itself.
//! - **Following** (the replica stepped down holding them, or they came back after it did),
//!   the replica sends each yield to the partition's leader once the job's activation is
//!   committed and its own state shows the job activated with that deadline; it sends again
//!   every [`RESEND`] until its state shows the job changed (yielded, completed, activated
//!   again, or the activation was never committed), the deadline passed (the time-out makes
//!   the job activatable anyway), or it leads again (then its processor writes them).
//! - Each yield names the activation by its deadline, and the partition refuses a yield whose
//!   deadline is not the job's (`JobYieldProcessor`): a yield sent twice, or late, never takes
//!   the job from a worker that was handed it since.
//!
//! [`PartitionHandle::hand_back`]: crate::PartitionHandle::hand_back

use std::collections::HashMap;
use std::time::Duration;

use beeline_engine::Engine;
use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;
use beeline_state::Store;
use tokio::time::Instant;

use crate::router::CommandRouter;

/// How long a follower waits for its yield to show in its state before sending it again (the
/// leader may have moved, or not be known yet).
pub(crate) const RESEND: Duration = Duration::from_millis(500);

/// An activated job its worker never got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Undelivered {
    pub key: i64,
    /// The activation's deadline (ms since the epoch): which activation is handed back.
    pub deadline: i64,
    /// The log entry (journal index) that holds the activation: the job is handed back once
    /// it is committed. 0: committed already.
    pub after: u64,
}

/// `JOB YIELD` for an activation, as a command of `partition`.
pub(crate) fn yield_command(partition: u16, job: &Undelivered, now: i64) -> Record {
    let mut command = Record::command(
        job.key,
        JobIntent::Yield,
        JobRecord {
            deadline: job.deadline,
            ..JobRecord::default()
        },
    );
    command.timestamp = now;
    command.partition_id = partition;
    command
}

/// The yields a follower replica owes its partition's leader, one per job.
#[derive(Debug, Default)]
pub(crate) struct Yields {
    pending: HashMap<i64, Pending>,
}

#[derive(Debug)]
struct Pending {
    job: Undelivered,
    /// When the yield was last sent.
    sent: Option<Instant>,
}

impl Yields {
    pub fn add(&mut self, jobs: impl IntoIterator<Item = Undelivered>) {
        for job in jobs {
            // A later activation of the same job replaces an earlier one.
            match self.pending.get(&job.key) {
                Some(known) if known.job.deadline >= job.deadline => {}
                _ => {
                    self.pending.insert(job.key, Pending { job, sent: None });
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Everything owed, for a processor to write (this replica leads again).
    pub fn take(&mut self) -> Vec<Undelivered> {
        self.pending.drain().map(|(_, p)| p.job).collect()
    }

    /// When a yield is next due to be sent again.
    pub fn next_resend(&self) -> Option<Instant> {
        self.pending
            .values()
            .filter_map(|p| p.sent)
            .min()
            .map(|sent| sent + RESEND)
    }

    /// Settles what the follower's state decides and sends the yields due: `store` holds
    /// everything committed up to journal index `replayed`.
    pub fn send(
        &mut self,
        engine: &Engine,
        store: &dyn Store,
        replayed: u64,
        now: i64,
        router: Option<&dyn CommandRouter>,
    ) -> Result<(), String> {
        let partition = engine.config().partition_id;
        let instant = Instant::now();
        let mut settled = Vec::new();
        for (key, pending) in &mut self.pending {
            if pending.job.after > replayed {
                continue;
            }
            let current = engine
                .activation_deadline(store, *key)
                .map_err(|e| e.to_string())?;
            if current != Some(pending.job.deadline) || pending.job.deadline <= now {
                settled.push(*key);
                continue;
            }
            if pending.sent.is_some_and(|sent| instant < sent + RESEND) {
                continue;
            }
            let Some(router) = router else {
                tracing::warn!(
                    partition,
                    job = key,
                    "no router to the leader; the job waits for its time-out"
                );
                settled.push(*key);
                continue;
            };
            router.route(partition, yield_command(partition, &pending.job, now));
            pending.sent = Some(instant);
        }
        for key in settled {
            self.pending.remove(&key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(key: i64, deadline: i64) -> Undelivered {
        Undelivered {
            key,
            deadline,
            after: 0,
        }
    }

    #[test]
    fn one_yield_per_job_for_its_latest_activation() {
        let mut yields = Yields::default();
        yields.add([job(1, 100), job(2, 100), job(1, 200), job(1, 150)]);
        let mut owed = yields.take();
        owed.sort_by_key(|j| j.key);
        assert_eq!(owed, [job(1, 200), job(2, 100)]);
        assert!(yields.is_empty());
    }
}
