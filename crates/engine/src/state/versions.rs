//! The latest version of a versioned resource (processes, decisions, forms): an entry per id
//! holding the newest version and its key.

use beeline_state::{ColumnFamily, Result, Transaction};

use super::decode;
use super::values::LatestVersion;

/// The latest version under `key` in `cf`: (version, key of that version).
pub(super) fn read_latest(
    txn: &Transaction<'_>,
    cf: ColumnFamily,
    key: &[u8],
) -> Result<Option<(i32, i64)>> {
    Ok(txn
        .get(key)?
        .map(|bytes| decode::<LatestVersion>(cf, &bytes))
        .transpose()?
        .map(|l| (l.version, l.key)))
}

/// Makes `version` (with `value_key`) the latest under `key`, unless a newer one is there.
pub(super) fn raise_latest(
    txn: &mut Transaction<'_>,
    cf: ColumnFamily,
    key: Vec<u8>,
    version: i32,
    value_key: i64,
) -> Result<()> {
    if read_latest(txn, cf, &key)?.is_none_or(|(v, _)| v < version) {
        let latest = LatestVersion {
            version,
            key: value_key,
        };
        txn.put(key, beeline_protocol::protobuf::encode_to_vec(&latest));
    }
    Ok(())
}
