//! Indexes of `(time, key)` entries, in time order: deadlines, back-offs, due dates.

use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

/// The first entries of a `(time, key)` index at or before `now`.
pub(super) fn due(
    txn: &Transaction<'_>,
    cf: ColumnFamily,
    now: i64,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    let prefix = KeyBuilder::new(cf).build();
    let mut found = Vec::new();
    for entry in txn.scan_queue(&prefix) {
        let (key, _) = entry?;
        let mut reader = KeyReader::new(cf, &key)?;
        let at = reader.i64()?;
        if at > now || found.len() >= limit {
            break;
        }
        found.push((at, reader.i64()?));
    }
    Ok(found)
}

pub(super) fn first_time(txn: &Transaction<'_>, cf: ColumnFamily) -> Result<Option<i64>> {
    let prefix = KeyBuilder::new(cf).build();
    match txn.scan_queue(&prefix).next() {
        None => Ok(None),
        Some(entry) => {
            let (key, _) = entry?;
            Ok(Some(KeyReader::new(cf, &key)?.i64()?))
        }
    }
}
