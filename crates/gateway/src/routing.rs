//! Which partition a request goes to, as Zeebe's gateway decides it:
//!
//! - new process instances (and other commands that belong to no existing key): round-robin
//!   over the partitions, trying the next one when a partition sheds the command;
//! - messages: by a hash of the correlation key, so every message with one key lands on the
//!   partition where the subscriptions for that key live;
//! - deployments: the deployment partition (1), which distributes them;
//! - everything else: the partition encoded in the key the request names.

use std::sync::atomic::{AtomicUsize, Ordering};

// One definition for the gateway and the engine: the engine opens message subscriptions on the
// partition the gateway publishes the message to.
pub use beeline_protocol::partitioning::{
    DEPLOYMENT_PARTITION, message_partition, subscription_hash_code,
};

/// Round-robin over partitions `1..=count`, shared by every request of one kind.
#[derive(Debug, Default)]
pub struct RoundRobin {
    next: AtomicUsize,
}

impl RoundRobin {
    pub const fn new() -> Self {
        Self {
            next: AtomicUsize::new(0),
        }
    }

    /// The partitions to try, in order: each partition once, starting at the next one in turn.
    pub fn order(&self, partition_count: u16) -> impl Iterator<Item = u16> + use<> {
        let count = usize::from(partition_count.max(1));
        let start = self.next.fetch_add(1, Ordering::Relaxed) % count;
        (0..count).map(move |i| ((start + i) % count) as u16 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectors of Zeebe's `SubscriptionUtilTest`.
    #[test]
    fn hash_codes_match_zeebe() {
        assert_eq!(subscription_hash_code(b"a"), 97);
        assert_eq!(subscription_hash_code(b"b"), 98);
        assert_eq!(subscription_hash_code(b"c"), 99);
        assert_eq!(subscription_hash_code(b"foobar"), -1_268_878_963);
        assert_eq!(subscription_hash_code(b""), 0);
    }

    #[test]
    fn partitions_match_zeebe() {
        assert_eq!(message_partition("a", 10), 8);
        assert_eq!(message_partition("b", 3), 3);
        assert_eq!(message_partition("c", 11), 1);
        assert_eq!(message_partition("foobar", 100), 64);
        assert_eq!(message_partition("", 3), 1);
        assert_eq!(message_partition("anything", 1), 1);
    }

    #[test]
    fn non_ascii_keys_hash_their_signed_utf8_bytes() {
        // "ä" is C3 A4 in UTF-8: 31 * -61 + -92. Java's String.hashCode would say 228.
        assert_eq!(subscription_hash_code("ä".as_bytes()), -1983);
        // -1983 % 7 = -2 in Java: partition |−2| + 1.
        assert_eq!(message_partition("ä", 7), 3);
    }

    #[test]
    fn extreme_hashes_stay_in_range() {
        // A key whose hash is i32::MIN: Java's Math.abs would stay negative, but the
        // remainder is taken first, so the result is always in range.
        for count in 1..=50u16 {
            for key in ["polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES"] {
                let partition = message_partition(key, count);
                assert!((1..=count).contains(&partition), "{key} {count}");
            }
        }
    }

    #[test]
    fn round_robin_visits_every_partition_once_per_request() {
        let rr = RoundRobin::default();
        assert_eq!(rr.order(3).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(rr.order(3).collect::<Vec<_>>(), vec![2, 3, 1]);
        assert_eq!(rr.order(3).collect::<Vec<_>>(), vec![3, 1, 2]);
        assert_eq!(rr.order(3).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(rr.order(1).collect::<Vec<_>>(), vec![1]);
    }
}
