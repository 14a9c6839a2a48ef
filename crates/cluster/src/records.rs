//! Records on the internal API: a record travels as a record batch of one, in the log's binary
//! form (`beeline_protocol::codec`), so that what crosses brokers is what partitions write.

use beeline_protocol::Record;
use beeline_protocol::codec;

/// A record that cannot be decoded.
#[derive(Debug, thiserror::Error)]
#[error("undecodable record on the internal API: {0}")]
pub struct BadRecord(String);

pub fn encode(record: &Record) -> Vec<u8> {
    let mut out = Vec::with_capacity(codec::BATCH_HEADER_LEN + codec::encoded_len(record));
    codec::encode_batch(std::iter::once(record), &mut out);
    out
}

/// The record of a batch of one, given its position.
pub fn decode(bytes: &[u8], position: i64) -> Result<Record, BadRecord> {
    let mut records = codec::decode_batch(bytes, position).map_err(|e| BadRecord(e.to_string()))?;
    match (records.pop(), records.is_empty()) {
        (Some(record), true) => Ok(record),
        _ => Err(BadRecord("expected exactly one record".into())),
    }
}

#[cfg(test)]
mod tests {
    use beeline_protocol::intent::JobIntent;
    use beeline_protocol::value::JobRecord;

    use super::*;

    #[test]
    fn a_record_round_trips() {
        let record = Record::command(
            42,
            JobIntent::Complete,
            JobRecord {
                retries: 3,
                ..JobRecord::default()
            },
        );
        let back = decode(&encode(&record), -1).unwrap();
        assert_eq!(back.key, 42);
        assert_eq!(back.intent, record.intent);
        assert_eq!(back.value, record.value);
        assert!(decode(b"\x01\x00", 0).is_err());
    }
}
