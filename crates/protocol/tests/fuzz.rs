//! Log entries under the fuzzing harness (`beeline-fuzz`): record batches as the journal holds
//! them (`fuzz/seeds/log-entries`: batches taken from a broker's log after deployments, instances,
//! jobs, messages, signals, decisions and the clock), mutated. A batch either decodes or gets a
//! decoding error; what decodes encodes back to a batch that decodes to the same records, and
//! serializes to JSON as exporters write it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use beeline_protocol::codec::{decode_batch, encode_batch};

#[test]
fn fuzz_log_entries() {
    beeline_fuzz::fuzz("log-entries", |data| {
        let records = match decode_batch(data, 1) {
            Ok(records) => records,
            Err(error) => {
                assert!(!error.to_string().is_empty(), "an error without a message");
                return;
            }
        };
        let mut encoded = Vec::new();
        encode_batch(records.iter(), &mut encoded);
        let again = decode_batch(&encoded, 1)
            .unwrap_or_else(|e| panic!("a decoded batch encodes to one that fails: {e}"));
        assert_eq!(
            again, records,
            "a batch does not survive decoding and encoding"
        );
        for record in &records {
            let json = record.to_json();
            assert!(
                serde_json::from_str::<serde_json::Value>(&json).is_ok(),
                "a record's JSON does not parse: {json}"
            );
        }
    });
}
