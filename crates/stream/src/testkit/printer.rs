//! A compact, one-line-per-record view of a log, for test failures and debugging:
//!
//! ```text
//!     #3 E MESSAGE                 PUBLISHED          <#1  K1:1   {"name":"paid",...}
//! ```
//! position, C(ommand)/E(vent)/R(ejection), value type, intent, source position, key as
//! partition:counter, then the rejection or the value.

use beeline_protocol::{Record, RecordType, key};

pub fn compact(record: &Record) -> String {
    let kind = match record.record_type {
        RecordType::Command if record.processed => "c",
        RecordType::Command => "C",
        RecordType::Event => "E",
        RecordType::CommandRejection => "R",
    };
    let source = if record.source_record_position >= 0 {
        format!("<#{}", record.source_record_position)
    } else {
        String::new()
    };
    let key = match key::partition_of(record.key) {
        Some(partition) => format!("K{partition}:{}", key::counter_of(record.key)),
        None => format!("K{}", record.key),
    };
    let detail = if record.record_type == RecordType::CommandRejection {
        format!(
            "{}: {}",
            record.rejection_type.name(),
            record.rejection_reason
        )
    } else {
        let mut value = serde_json::to_string(&record.value).unwrap_or_default();
        if value.len() > 160 {
            let mut cut = 157;
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            value.truncate(cut);
            value.push_str("...");
        }
        value
    };
    format!(
        "{:>6} {kind} {:<24} {:<20} {:<6} {:<8} {detail}",
        format!("#{}", record.position),
        record.value_type().name(),
        record.intent.name(),
        source,
        key
    )
}

/// The whole log, one record per line.
pub fn compact_log(records: &[Record]) -> String {
    records.iter().map(compact).collect::<Vec<_>>().join("\n")
}
