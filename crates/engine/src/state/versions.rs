//! The latest version of a versioned resource (processes, decisions, forms): an entry per
//! tenant and id holding the newest version and its key.

use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

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

fn deleted_latest(cf: ColumnFamily, key: &[u8]) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::DeletedLatestVersions)
        .u32(cf as u32)
        .bytes(key)
        .build()
}

/// The version a new deployment of the id under `key` gets: one above the latest, and above
/// every deleted one.
pub(super) fn next_version(txn: &Transaction<'_>, cf: ColumnFamily, key: &[u8]) -> Result<i32> {
    let latest = read_latest(txn, cf, key)?.map_or(0, |(v, _)| v);
    let deleted = super::read_int(
        ColumnFamily::DeletedLatestVersions,
        txn.get(&deleted_latest(cf, key))?,
        i32::from_be_bytes,
    )?
    .unwrap_or(0);
    Ok(latest.max(deleted) + 1)
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

/// `removed` (a version of the id whose versions are under `versions_prefix` in `versions_cf`)
/// is going away: if it is the latest under `key`, the newest version below it becomes the
/// latest, or there is none. Call it while the removed version is still stored.
pub(super) fn lower_latest(
    txn: &mut Transaction<'_>,
    cf: ColumnFamily,
    key: Vec<u8>,
    versions_cf: ColumnFamily,
    versions_prefix: &[u8],
    removed: i32,
) -> Result<()> {
    if read_latest(txn, cf, &key)?.is_none_or(|(v, _)| v != removed) {
        return Ok(());
    }
    let mut previous: Option<(i32, i64)> = None;
    for (version, value_key) in versions(txn, versions_cf, versions_prefix)? {
        if version < removed && previous.is_none_or(|(v, _)| v < version) {
            previous = Some((version, value_key));
        }
    }
    replace_latest(txn, cf, key, removed, previous)
}

/// The latest version `removed` under `key` is gone: `previous` (version, key) becomes the
/// latest, or there is none; `removed` is remembered so that it is never given again.
pub(super) fn replace_latest(
    txn: &mut Transaction<'_>,
    cf: ColumnFamily,
    key: Vec<u8>,
    removed: i32,
    previous: Option<(i32, i64)>,
) -> Result<()> {
    let deleted = deleted_latest(cf, &key);
    let highest = super::read_int(
        ColumnFamily::DeletedLatestVersions,
        txn.get(&deleted)?,
        i32::from_be_bytes,
    )?
    .unwrap_or(0);
    txn.put(deleted, highest.max(removed).to_be_bytes().to_vec());
    match previous {
        Some((version, value_key)) => {
            let latest = LatestVersion {
                version,
                key: value_key,
            };
            txn.put(key, beeline_protocol::protobuf::encode_to_vec(&latest));
        }
        None => txn.delete(key),
    }
    Ok(())
}

/// The (version, key) entries under `prefix` of a versions family: (tenant, id, version) ->
/// key.
fn versions(txn: &Transaction<'_>, cf: ColumnFamily, prefix: &[u8]) -> Result<Vec<(i32, i64)>> {
    let mut found = Vec::new();
    for entry in txn.scan(prefix) {
        let (entry_key, value) = entry?;
        let mut reader = KeyReader::new(cf, &entry_key)?;
        reader.str()?;
        reader.str()?;
        let stored = reader.i64()?;
        let version = i32::try_from(stored).map_err(|_| beeline_state::Error::Decode {
            cf: cf.name(),
            reason: format!("version {stored} is beyond the versions a resource can have"),
        })?;
        if let Some(key) = super::read_int(cf, Some(value), i64::from_be_bytes)? {
            found.push((version, key));
        }
    }
    Ok(found)
}
