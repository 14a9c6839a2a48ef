//! Whether the cluster can take commands: at least one partition has a healthy leader.

use crate::dispatch::Dispatcher;

pub fn run(d: &Dispatcher) -> bool {
    !d.is_stopping() && d.partitions().any(|(id, _)| d.has_healthy_leader(id))
}
