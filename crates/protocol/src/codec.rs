//! The binary form of records in the log: a batch of records is one journal entry.
//!
//! ```text
//! batch   = version u8 (=1) · count u32 · count × (length u32 · record)
//! record  = record type u8 · value type u8 · intent u8 · rejection type u8
//!           · record version u16 · partition id u16
//!           · flags u8 (bit 0: processed, bit 1: authorized tenants follow the reason)
//!           · source position i64 · key i64 · timestamp i64 · operation reference i64
//!           · rejection reason (length u32 · UTF-8)
//!           · [authorized tenants: count u16 · count × (length u16 · UTF-8)]
//!           · value (protobuf, to the end)
//! ```
//! Little endian. A record's position is not stored: record `i` of a batch has position
//! `first_position + i`, and the journal entry's asqn is `first_position`.

use crate::intent::{Intent, ValueType};
use crate::record::{Record, RecordType, RejectionType};
use crate::value::RecordValue;

/// Bump when the layout above changes; old versions stay decodable.
pub const BATCH_FORMAT_VERSION: u8 = 1;
const RECORD_FIXED_LEN: usize = 1 + 1 + 1 + 1 + 2 + 2 + 1 + 8 * 4 + 4;
const FLAG_PROCESSED: u8 = 1;
const FLAG_AUTHORIZED_TENANTS: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("record batch format version {0} is unknown to this build")]
    UnknownVersion(u8),
    #[error("record batch is truncated: {0}")]
    Truncated(&'static str),
    #[error("unknown record type {0}")]
    UnknownRecordType(u8),
    #[error("unknown value type {0}")]
    UnknownValueType(u8),
    #[error("unknown intent {1} for value type {0:?}")]
    UnknownIntent(ValueType, u8),
    #[error("unknown rejection type {0}")]
    UnknownRejectionType(u8),
    #[error("rejection reason is not UTF-8")]
    InvalidReason,
    #[error("an authorized tenant is not UTF-8")]
    InvalidTenant,
    #[error(transparent)]
    Value(#[from] crate::value::DecodeValueError),
}

/// Encodes `records` as one batch into `out` (appended).
pub fn encode_batch<'a>(records: impl ExactSizeIterator<Item = &'a Record>, out: &mut Vec<u8>) {
    out.push(BATCH_FORMAT_VERSION);
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for record in records {
        let length_at = out.len();
        out.extend_from_slice(&[0; 4]);
        encode_record(record, out);
        let length = (out.len() - length_at - 4) as u32;
        out[length_at..length_at + 4].copy_from_slice(&length.to_le_bytes());
    }
}

fn encode_record(record: &Record, out: &mut Vec<u8>) {
    out.push(record.record_type as u8);
    out.push(record.intent.value_type().value());
    out.push(record.intent.value());
    out.push(record.rejection_type as u8);
    out.extend_from_slice(&record.record_version.to_le_bytes());
    out.extend_from_slice(&record.partition_id.to_le_bytes());
    let mut flags = if record.processed { FLAG_PROCESSED } else { 0 };
    if record.authorized_tenants.is_some() {
        flags |= FLAG_AUTHORIZED_TENANTS;
    }
    out.push(flags);
    out.extend_from_slice(&record.source_record_position.to_le_bytes());
    out.extend_from_slice(&record.key.to_le_bytes());
    out.extend_from_slice(&record.timestamp.to_le_bytes());
    out.extend_from_slice(&record.operation_reference.to_le_bytes());
    out.extend_from_slice(&(record.rejection_reason.len() as u32).to_le_bytes());
    out.extend_from_slice(record.rejection_reason.as_bytes());
    if let Some(tenants) = &record.authorized_tenants {
        // Tenant ids are at most 31 characters and a caller has few: both fit in u16.
        out.extend_from_slice(&(tenants.len() as u16).to_le_bytes());
        for tenant in tenants.iter() {
            out.extend_from_slice(&(tenant.len() as u16).to_le_bytes());
            out.extend_from_slice(tenant.as_bytes());
        }
    }
    record.value.encode(out);
}

/// Bytes the authorized tenants of a record take.
fn authorized_tenants_len(record: &Record) -> usize {
    record.authorized_tenants.as_ref().map_or(0, |tenants| {
        2 + tenants.iter().map(|t| 2 + t.len()).sum::<usize>()
    })
}

/// Bytes `record` takes in a batch (its length prefix included).
pub fn encoded_len(record: &Record) -> usize {
    4 + RECORD_FIXED_LEN
        + record.rejection_reason.len()
        + authorized_tenants_len(record)
        + record.value.encoded_len()
}

/// Bytes of a batch's header.
pub const BATCH_HEADER_LEN: usize = 5;

/// The number of records in an encoded batch, without decoding them.
pub fn batch_len(bytes: &[u8]) -> Result<u32, DecodeError> {
    let mut reader = Reader(bytes);
    let version = reader.u8()?;
    if version != BATCH_FORMAT_VERSION {
        return Err(DecodeError::UnknownVersion(version));
    }
    reader.u32()
}

/// Decodes a batch whose first record has `first_position`.
pub fn decode_batch(bytes: &[u8], first_position: i64) -> Result<Vec<Record>, DecodeError> {
    let records = batch_records(bytes, first_position)?;
    let mut decoded = Vec::with_capacity(records.size_hint().1.unwrap_or(0));
    for record in records {
        decoded.push(record?.decode()?);
    }
    Ok(decoded)
}

/// The records of a batch whose first record has `first_position`, each with the part of its
/// header that says what it is read and the rest left encoded: a reader that needs only some
/// records' values (replay applies events, not commands) decodes only those.
pub fn batch_records(bytes: &[u8], first_position: i64) -> Result<BatchRecords<'_>, DecodeError> {
    let count = batch_len(bytes)?;
    Ok(BatchRecords {
        reader: Reader(&bytes[BATCH_HEADER_LEN..]),
        remaining: count,
        next_position: first_position,
    })
}

/// The records of an encoded batch, in order: see [`batch_records`].
pub struct BatchRecords<'a> {
    reader: Reader<'a>,
    remaining: u32,
    next_position: i64,
}

impl<'a> Iterator for BatchRecords<'a> {
    type Item = Result<EncodedRecord<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let position = self.next_position;
        self.next_position += 1;
        let record = self
            .reader
            .u32()
            .and_then(|length| self.reader.take(length as usize, "record body"))
            .and_then(|body| EncodedRecord::read(body, position));
        if record.is_err() {
            // What follows a record that cannot be read cannot be found either.
            self.remaining = 0;
        }
        Some(record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Every record takes at least its fixed part: a corrupt count cannot make a collect
        // allocate more than the input could hold.
        let possible = (self.remaining as usize).min(self.reader.0.len() / RECORD_FIXED_LEN);
        (0, Some(possible.max(usize::from(self.remaining > 0))))
    }
}

/// One record of an encoded batch: its position, type, processed flag and source position,
/// with the rest (key, reason, tenants, value) decoded only by [`EncodedRecord::decode`].
#[derive(Debug, Clone, Copy)]
pub struct EncodedRecord<'a> {
    pub position: i64,
    pub record_type: RecordType,
    /// A command that was processed within the batch that wrote it (a follow-up).
    pub processed: bool,
    pub source_record_position: i64,
    body: &'a [u8],
}

impl<'a> EncodedRecord<'a> {
    fn read(body: &'a [u8], position: i64) -> Result<Self, DecodeError> {
        let mut r = Reader(body);
        let record_type = r.u8()?;
        let record_type = RecordType::from_value(record_type)
            .ok_or(DecodeError::UnknownRecordType(record_type))?;
        // Value type, intent, rejection type, record version and partition id.
        r.take(7, "record header")?;
        let flags = r.u8()?;
        let source_record_position = r.i64()?;
        Ok(Self {
            position,
            record_type,
            processed: flags & FLAG_PROCESSED != 0,
            source_record_position,
            body,
        })
    }

    /// The whole record.
    pub fn decode(&self) -> Result<Record, DecodeError> {
        decode_record(self.body, self.position)
    }

    /// The record's bytes as the batch holds them (without its length prefix), which
    /// [`decode_record`] turns into the record.
    pub fn bytes(&self) -> &'a [u8] {
        self.body
    }
}

/// Decodes the bytes of one record ([`EncodedRecord::bytes`]) at `position`.
pub fn decode_record(bytes: &[u8], position: i64) -> Result<Record, DecodeError> {
    let mut r = Reader(bytes);
    let record_type = r.u8()?;
    let record_type =
        RecordType::from_value(record_type).ok_or(DecodeError::UnknownRecordType(record_type))?;
    let value_type = r.u8()?;
    let value_type =
        ValueType::from_value(value_type).ok_or(DecodeError::UnknownValueType(value_type))?;
    let intent = r.u8()?;
    let intent = Intent::from_parts(value_type, intent)
        .ok_or(DecodeError::UnknownIntent(value_type, intent))?;
    let rejection_type = r.u8()?;
    let rejection_type = RejectionType::from_value(rejection_type)
        .ok_or(DecodeError::UnknownRejectionType(rejection_type))?;
    let record_version = r.u16()?;
    let partition_id = r.u16()?;
    let flags = r.u8()?;
    let source_record_position = r.i64()?;
    let key = r.i64()?;
    let timestamp = r.i64()?;
    let operation_reference = r.i64()?;
    let reason_len = r.u32()? as usize;
    let reason = r.take(reason_len, "rejection reason")?;
    let rejection_reason = std::str::from_utf8(reason)
        .map_err(|_| DecodeError::InvalidReason)?
        .to_owned();
    let authorized_tenants = if flags & FLAG_AUTHORIZED_TENANTS != 0 {
        let count = r.u16()?;
        let mut tenants = Vec::with_capacity(usize::from(count).min(r.0.len() / 2));
        for _ in 0..count {
            let len = usize::from(r.u16()?);
            let tenant = r.take(len, "authorized tenant")?;
            tenants.push(
                std::str::from_utf8(tenant)
                    .map_err(|_| DecodeError::InvalidTenant)?
                    .to_owned(),
            );
        }
        Some(tenants.into())
    } else {
        None
    };
    let value = RecordValue::decode(value_type, r.0)?;
    Ok(Record {
        position,
        source_record_position,
        key,
        timestamp,
        partition_id,
        record_type,
        intent,
        record_version,
        rejection_type,
        rejection_reason,
        operation_reference,
        processed: flags & FLAG_PROCESSED != 0,
        authorized_tenants,
        value,
    })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Truncated(what));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, "record header")?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intent::MessageIntent;
    use crate::value::MessageRecord;
    use proptest::prelude::*;

    fn sample(position: i64) -> Record {
        let mut record = Record::event(
            crate::key::encode(1, position),
            MessageIntent::Published,
            MessageRecord {
                name: "order-paid".into(),
                correlation_key: format!("order-{position}"),
                time_to_live: 60_000,
                message_id: String::new(),
                variables: br#"{"amount":12.5}"#.to_vec(),
                deadline: 1_700_000_060_000,
                tenant_id: "<default>".into(),
            },
        );
        record.position = position;
        record.source_record_position = position - 1;
        record.timestamp = 1_700_000_000_000;
        record.partition_id = 1;
        record
    }

    #[test]
    fn batches_round_trip() {
        let mut records = vec![sample(10), sample(11), sample(12)];
        records[1] = Record::rejection(
            &records[1],
            RejectionType::AlreadyExists,
            "a message with id 'x' is already published".into(),
        );
        records[1].record_type = RecordType::CommandRejection;
        records[1].intent = MessageIntent::Publish.into();
        records[2].processed = true;
        records[2].authorized_tenants =
            Some(vec!["tenant-a".to_owned(), "<default>".to_owned()].into());
        let mut bytes = Vec::new();
        encode_batch(records.iter(), &mut bytes);
        assert_eq!(batch_len(&bytes), Ok(3));
        assert_eq!(
            bytes.len(),
            BATCH_HEADER_LEN + records.iter().map(encoded_len).sum::<usize>()
        );
        assert_eq!(decode_batch(&bytes, 10).unwrap(), records);
        let encoded = batch_records(&bytes, 10)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(encoded.len(), records.len());
        for (encoded, record) in encoded.iter().zip(&records) {
            assert_eq!(encoded.position, record.position);
            assert_eq!(encoded.record_type, record.record_type);
            assert_eq!(encoded.processed, record.processed);
            assert_eq!(
                encoded.source_record_position,
                record.source_record_position
            );
            assert_eq!(
                &decode_record(encoded.bytes(), encoded.position).unwrap(),
                record
            );
        }
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode_batch(&bytes, 1);
        }

        #[test]
        fn any_truncation_is_an_error(cut in 0usize..200) {
            let mut bytes = Vec::new();
            encode_batch([sample(1), sample(2)].iter(), &mut bytes);
            if cut < bytes.len() {
                let truncated = &bytes[..bytes.len() - cut - 1];
                prop_assert!(decode_batch(truncated, 1).is_err());
            }
        }
    }
}
