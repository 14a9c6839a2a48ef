//! The JSON form of a record, shaped like the records Zeebe's exporters write.

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::record::Record;

/// The version Beeline reports as `brokerVersion` in exported records.
pub const BROKER_VERSION: &str = env!("CARGO_PKG_VERSION");

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Record", 15)?;
        s.serialize_field("partitionId", &self.partition_id)?;
        s.serialize_field("value", &self.value)?;
        s.serialize_field("rejectionType", self.rejection_type.name())?;
        s.serialize_field("rejectionReason", &self.rejection_reason)?;
        s.serialize_field("sourceRecordPosition", &self.source_record_position)?;
        s.serialize_field("valueType", self.value_type().name())?;
        s.serialize_field("intent", self.intent.name())?;
        s.serialize_field("key", &self.key)?;
        s.serialize_field("position", &self.position)?;
        s.serialize_field("timestamp", &self.timestamp)?;
        s.serialize_field("recordType", self.record_type.name())?;
        s.serialize_field("brokerVersion", BROKER_VERSION)?;
        s.serialize_field("recordVersion", &self.record_version)?;
        s.serialize_field("operationReference", &self.operation_reference)?;
        s.serialize_field("authorizations", &serde_json::Map::new())?;
        s.end()
    }
}

impl Record {
    /// The record as one line of JSON.
    pub fn to_json(&self) -> String {
        // Serializing plain structs, strings and numbers to a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use crate::intent::MessageIntent;
    use crate::record::Record;
    use crate::value::MessageRecord;

    #[test]
    fn json_looks_like_a_zeebe_export() {
        let mut record = Record::event(
            2_251_799_813_685_249,
            MessageIntent::Published,
            MessageRecord {
                name: "paid".into(),
                correlation_key: "order-1".into(),
                time_to_live: 1000,
                message_id: "m1".into(),
                variables: br#"{"amount":3}"#.to_vec(),
                deadline: 1_700_000_001_000,
                tenant_id: "<default>".into(),
            },
        );
        record.position = 7;
        record.source_record_position = 6;
        record.timestamp = 1_700_000_000_000;
        record.partition_id = 1;
        let json: serde_json::Value = serde_json::from_str(&record.to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "partitionId": 1,
                "value": {
                    "name": "paid",
                    "correlationKey": "order-1",
                    "timeToLive": 1000,
                    "messageId": "m1",
                    "variables": {"amount": 3},
                    "deadline": 1_700_000_001_000i64,
                    "tenantId": "<default>"
                },
                "rejectionType": "NULL_VAL",
                "rejectionReason": "",
                "sourceRecordPosition": 6,
                "valueType": "MESSAGE",
                "intent": "PUBLISHED",
                "key": 2_251_799_813_685_249i64,
                "position": 7,
                "timestamp": 1_700_000_000_000i64,
                "recordType": "EVENT",
                "brokerVersion": super::BROKER_VERSION,
                "recordVersion": 1,
                "operationReference": -1,
                "authorizations": {}
            })
        );
    }
}
