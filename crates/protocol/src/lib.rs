//! Zeebe's record model, shared by every part of Beeline: records, value types and intents with
//! their fixed numbers, keys that carry their partition, record values, the versioned binary
//! encoding of the log and the JSON form of exports.

mod bytes;
pub mod codec;
pub mod document;
pub mod intent;
mod json;
pub mod key;
pub mod partitioning;
pub mod protobuf;
mod record;
pub mod value;

pub use intent::{Intent, ValueType};
pub use json::BROKER_VERSION;
pub use record::{Record, RecordType, RejectionType};
pub use value::{RecordValue, Value};

/// The tenant everything belongs to when multi-tenancy is off, as Zeebe names it.
pub const DEFAULT_TENANT: &str = "<default>";

/// The tenant a command names: none (an empty id) is the default tenant.
pub fn tenant_or_default(tenant_id: &str) -> &str {
    if tenant_id.is_empty() {
        DEFAULT_TENANT
    } else {
        tenant_id
    }
}
