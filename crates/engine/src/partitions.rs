//! Partition ids read from records and state. A value no partition could have is damage and
//! an error that names what held it: it is never routed to a partition picked by default.

use beeline_protocol::key;

use crate::error::ProcessingError;

/// The partition that made `key`, which `what` holds.
pub(crate) fn of_key(key: i64, what: &str) -> Result<u16, ProcessingError> {
    key::partition_of(key).ok_or_else(|| {
        ProcessingError::Internal(format!(
            "{what} is {key}, a key no partition could have made"
        ))
    })
}

/// The partition id `id` that `what` holds.
pub(crate) fn from_id(id: i32, what: &str) -> Result<u16, ProcessingError> {
    u16::try_from(id)
        .ok()
        .filter(|partition| *partition >= 1)
        .ok_or_else(|| ProcessingError::Internal(format!("{what} is {id}, not a partition id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_ids_are_errors_naming_where_they_were_read() {
        assert_eq!(of_key(key::encode(3, 7), "the key").unwrap(), 3);
        assert_eq!(from_id(2, "the id").unwrap(), 2);
        for bad in [0, -1, 70_000] {
            let error = from_id(bad, "the subscription's partition").unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("the subscription's partition is {bad}, not a partition id")
            );
        }
        for bad in [0, -5, 42] {
            let error = of_key(bad, "the instance key").unwrap_err();
            assert!(
                error.to_string().starts_with("the instance key is"),
                "{error}"
            );
        }
    }
}
