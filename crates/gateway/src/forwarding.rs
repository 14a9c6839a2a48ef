//! The memory a broker's gateway may hold for commands it forwarded to partition leaders on
//! other brokers and awaits the answers of.
//!
//! A command for a partition led here waits under that partition's in-flight limit
//! (`backpressure/`). One forwarded to another broker is limited there, but only once it
//! arrives: while the other broker is slow to take its calls (a loaded machine, a backlog of
//! seconds), the calls wait here, each with its encoded command and the transport's buffers,
//! and a client sending at a fixed rate keeps adding to them. Each forwarded command takes
//! its cost from this budget until its answer comes; with the budget spent, a command is
//! refused at once with RESOURCE_EXHAUSTED, certainly not written, as the leader's own limit
//! would refuse it. Commands that finish work already started (job completions and the like,
//! [`is_never_shed`]) are never refused, as the partition's limit never refuses them; how many
//! of them wait is bounded by the jobs the workers hold.

use beeline_protocol::Intent;
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::backpressure::is_never_shed;
use crate::error::GatewayError;

/// What one forwarded command may hold beside its encoded self, counted high: found with a
/// heap profile of a broker forwarding under overload when each command had a call of its own
/// (tonic's encode buffer for the request and decode buffer for the answer, 8 KiB each, the
/// HTTP/2 stream and the call's task). On the call shared by all commands to a broker
/// (`remote::Pipes`) it holds less: its message queued for that call and its answer.
const PER_CALL: usize = 18 << 10;

/// The budget is counted in KiB.
const UNIT: usize = 1 << 10;

/// Forwarded commands in flight, by what they hold.
#[derive(Debug)]
pub(crate) struct ForwardingBudget {
    units: Semaphore,
    limit: u32,
}

impl ForwardingBudget {
    pub fn new(bytes: usize) -> Self {
        let limit = u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .clamp(1, Semaphore::MAX_PERMITS as u32);
        Self {
            units: Semaphore::new(limit as usize),
            limit,
        }
    }

    /// The budget's share for a command of `intent` and `encoded` bytes, held until the permit
    /// drops (none for a command never refused); a command larger than the whole budget takes
    /// all of it (it goes alone).
    pub fn take(
        &self,
        intent: Intent,
        encoded: usize,
    ) -> Result<Option<SemaphorePermit<'_>>, GatewayError> {
        if is_never_shed(intent) {
            return Ok(None);
        }
        let cost = u32::try_from((encoded + PER_CALL).div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .min(self.limit);
        self.units
            .try_acquire_many(cost)
            .map(Some)
            .map_err(|_| GatewayError::ForwardingFull {
                held_kib: (self.limit as usize).saturating_sub(self.units.available_permits()),
                limit_kib: self.limit as usize,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::intent::{JobIntent, ProcessInstanceCreationIntent};

    const START: Intent = Intent::ProcessInstanceCreation(ProcessInstanceCreationIntent::Create);

    #[test]
    fn forwarded_commands_take_their_share_and_give_it_back() {
        let budget = ForwardingBudget::new(100 * UNIT);
        let first = budget.take(START, 20 * UNIT).expect("room");
        let second = budget.take(START, 20 * UNIT).expect("room");
        // 2 x (20 + 18) KiB held; 38 KiB more does not fit in the 24 KiB left.
        match budget.take(START, 20 * UNIT) {
            Err(GatewayError::ForwardingFull {
                held_kib,
                limit_kib,
            }) => {
                assert_eq!((held_kib, limit_kib), (76, 100));
            }
            other => panic!("expected the budget spent, got {other:?}"),
        }
        let completion = budget
            .take(Intent::Job(JobIntent::Complete), 20 * UNIT)
            .expect("a completion is never refused");
        assert!(completion.is_none(), "and takes nothing from the budget");
        drop(first);
        let third = budget.take(START, 20 * UNIT).expect("room again");
        drop((second, third));
        assert_eq!(budget.units.available_permits(), 100);
    }

    #[test]
    fn a_command_larger_than_the_budget_goes_alone() {
        let budget = ForwardingBudget::new(64 * UNIT);
        let huge = budget.take(START, 4 << 20).expect("alone, it goes");
        assert!(budget.take(START, 0).is_err(), "nothing else meanwhile");
        drop(huge);
        drop(budget.take(START, 0).expect("room again"));
    }
}
