//! Keys identify everything the engine creates, and carry the partition that created them, so
//! any node can route a request by key alone: `key = partition_id << 51 | counter`.

/// Bits left for the per-partition counter.
pub const KEY_BITS: u32 = 51;
const COUNTER_MASK: i64 = (1 << KEY_BITS) - 1;

/// The highest partition id a key can carry.
pub const MAX_PARTITION_ID: u16 = (1 << (63 - KEY_BITS)) - 1;

/// "No key", as Zeebe writes it.
pub const NO_KEY: i64 = -1;

/// Builds the key for the `counter`-th value of `partition_id`.
pub const fn encode(partition_id: u16, counter: i64) -> i64 {
    ((partition_id as i64) << KEY_BITS) | (counter & COUNTER_MASK)
}

/// The partition a key was created on, or `None` for a value no partition could have made.
pub fn partition_of(key: i64) -> Option<u16> {
    if key <= 0 {
        return None;
    }
    let partition = (key >> KEY_BITS) as u16;
    (partition >= 1).then_some(partition)
}

/// The counter part of a key.
pub const fn counter_of(key: i64) -> i64 {
    key & COUNTER_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_zeebe() {
        // Zeebe's first key on partition 1 is 2251799813685249 (1 << 51 | 1).
        assert_eq!(encode(1, 1), 2_251_799_813_685_249);
        assert_eq!(partition_of(2_251_799_813_685_249), Some(1));
        assert_eq!(partition_of(encode(3, 42)), Some(3));
        assert_eq!(counter_of(encode(3, 42)), 42);
        assert_eq!(
            partition_of(encode(MAX_PARTITION_ID, 7)),
            Some(MAX_PARTITION_ID)
        );
    }

    #[test]
    fn keys_from_outside_that_no_partition_made_are_rejected() {
        assert_eq!(partition_of(0), None);
        assert_eq!(partition_of(-1), None);
        assert_eq!(partition_of(12345), None, "partition 0 does not exist");
    }
}
