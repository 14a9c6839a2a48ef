//! How a partition reaches the others: commands a batch sends after its commit (deployment
//! distribution, acknowledgements, later message subscriptions).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use beeline_protocol::Record;

use crate::handle::PartitionHandle;

/// Delivers a command to a partition, without waiting for its answer. Delivery may fail; the
/// sender sends again until acknowledged.
pub trait CommandRouter: Send + Sync + 'static {
    fn route(&self, partition: u16, command: Record);
}

/// Routes to the partitions of this node, as they are opened (and reopened).
#[derive(Default)]
pub struct LocalRouter {
    partitions: RwLock<Vec<Option<PartitionHandle>>>,
    /// Commands routed and not answered yet. A partition answers once the command's batch is
    /// committed, after routing what the batch sends, so the count stays above zero while a
    /// chain of commands between partitions goes on.
    in_flight: Arc<AtomicUsize>,
    /// Partitions cut off: what is routed to them is lost (tests of the resending).
    cut_off: RwLock<Vec<u16>>,
}

impl LocalRouter {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Makes `handle` the way to its partition.
    pub fn set_partition(&self, handle: PartitionHandle) {
        let index = usize::from(handle.partition_id()).saturating_sub(1);
        let mut partitions = self.partitions.write().unwrap_or_else(|e| e.into_inner());
        if partitions.len() <= index {
            partitions.resize(index + 1, None);
        }
        partitions[index] = Some(handle);
    }

    /// Commands on their way: routed, and not yet answered by their partition.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Loses every command routed to `partition` from now on (`false`: delivers again), as a
    /// broken connection would; senders resend what is not confirmed.
    pub fn cut_off(&self, partition: u16, cut: bool) {
        let mut cut_off = self.cut_off.write().unwrap_or_else(|e| e.into_inner());
        cut_off.retain(|p| *p != partition);
        if cut {
            cut_off.push(partition);
        }
    }

    /// The handle of `partition`, when it is open here.
    pub fn partition(&self, partition: u16) -> Option<PartitionHandle> {
        let partitions = self.partitions.read().unwrap_or_else(|e| e.into_inner());
        partitions
            .get(usize::from(partition).wrapping_sub(1))
            .cloned()
            .flatten()
    }
}

impl CommandRouter for LocalRouter {
    fn route(&self, partition: u16, command: Record) {
        if self
            .cut_off
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&partition)
        {
            tracing::debug!(partition, "route to a cut-off partition; command lost");
            return;
        }
        let Some(handle) = self.partition(partition) else {
            tracing::debug!(partition, "route to a partition that is not open");
            return;
        };
        // Queued here, in the order the sender routes, so a partition receives one sender's
        // commands in the order they were sent (a subscription's opening before its closing).
        let answer = match handle.submit(command) {
            Ok(answer) => answer,
            Err(error) => {
                tracing::debug!(partition, %error, "routed command not delivered; it is sent again later");
                return;
            }
        };
        let in_flight = self.in_flight.clone();
        in_flight.fetch_add(1, Ordering::AcqRel);
        tokio::spawn(async move {
            if let Ok(Err(error)) = answer.await {
                tracing::trace!(partition, %error, "routed command refused");
            }
            in_flight.fetch_sub(1, Ordering::AcqRel);
        });
    }
}
