//! Byte fields in Zeebe's JSON exports are base64 strings.

use base64::Engine;
use serde::Serializer;

pub fn base64<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}
