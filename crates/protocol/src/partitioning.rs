//! Which partition owns what, as Zeebe decides it: deployments live on the deployment
//! partition, messages and their subscriptions on the partition of a hash of the correlation
//! key, everything else on the partition encoded in its key ([`crate::key::partition_of`]).

/// The partition that owns deployments (Zeebe's `Protocol.DEPLOYMENT_PARTITION`).
pub const DEPLOYMENT_PARTITION: u16 = 1;

/// Zeebe's `SubscriptionUtil.getSubscriptionHashCode`: `java.lang.String#hashCode`, but over
/// the UTF-8 bytes of the key, each read as a *signed* byte. For ASCII it equals Java's
/// `String.hashCode`; for other characters it does not, and this is the one that counts.
pub fn subscription_hash_code(correlation_key: &[u8]) -> i32 {
    correlation_key.iter().fold(0i32, |hash, &byte| {
        hash.wrapping_mul(31).wrapping_add(i32::from(byte as i8))
    })
}

/// Zeebe's `SubscriptionUtil.getSubscriptionPartitionId`: `|hash % count| + 1`, with Java's
/// remainder (it keeps the sign of the hash).
pub fn message_partition(correlation_key: &str, partition_count: u16) -> u16 {
    let count = i32::from(partition_count.max(1));
    let hash = subscription_hash_code(correlation_key.as_bytes());
    // `hash % count` lies in (-count, count), so its absolute value fits a u16.
    (hash % count).unsigned_abs() as u16 + 1
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
    fn partitions_keep_javas_remainder_sign_and_start_at_one() {
        // -1268878963 % 3 == -1 in Java: partition |−1| + 1.
        assert_eq!(message_partition("foobar", 3), 2);
        assert_eq!(message_partition("a", 3), 97 % 3 + 1);
        assert_eq!(message_partition("anything", 1), 1);
        assert_eq!(message_partition("x", 0), 1);
    }
}
