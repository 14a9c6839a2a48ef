//! The state's format version ([`STATE_FORMAT_VERSION`]): written into a new state, checked
//! when a partition opens, so a state is never read in a layout it was not written in.
//!
//! - The version is a `Meta` entry (a big-endian `u32`), so it travels inside every snapshot;
//!   snapshot manifests name it too (`beeline_state::snapshot`).
//! - A state without the entry was written before the version was kept. It is version 1 when
//!   it holds any entry of a family retired by version 2 (the keys without their tenant);
//!   otherwise it already has version 2's layout and is only marked. An empty state is a new
//!   one.
//! - Version 1 is converted at open, in one write: version 1 accepted only the default tenant
//!   (`<default>`, multi-tenancy did not exist), so each of its entries moves to its family's
//!   successor with that tenant in its key, and correlation-key locks get it in their value.
//!   The entry each index points to must belong to the default tenant; one that does not
//!   (written by hand, or damaged) cannot be placed, and the state is refused with what to do.
//!   The converted state is written into the next snapshot; until then each open converts the
//!   old snapshot again, with the same result.
//! - A newer version, or an older one this build cannot convert, is refused.

use std::path::Path;

use beeline_protocol::DEFAULT_TENANT;
use beeline_protocol::value::{
    DecisionRecord, DecisionRequirementsRecord, FormRecord, MessageRecord, ProcessRecord,
};
use beeline_state::{
    ColumnFamily, Error, KeyBuilder, KeyReader, RETIRED_FAMILY_IDS, Result, STATE_FORMAT_VERSION,
    Store, WriteBatch,
};

use super::meta::{FORMAT_VERSION, meta_key};
use super::values::{CorrelationKeyLock, ElementInstance, Job, LatestVersion};
use super::{decode, read_int};

/// What opening a partition's state found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// An empty state, now marked with this build's version.
    New,
    /// A state of this build's version.
    Current,
    /// A state in this build's layout written before the version was kept, now marked.
    Marked,
    /// A state of an older version, converted: `entries` were rewritten.
    Converted { from: u32, entries: usize },
}

/// Checks the format version of the state in `store` and converts an older one it knows.
/// `location` names the state in errors (the snapshot it came from); `declared` is the
/// version the snapshot's manifest names, if it names one.
pub fn open(store: &dyn Store, location: &Path, declared: Option<u32>) -> Result<Opened> {
    let refuse = |found: u32, action: String| Error::Format {
        path: location.to_path_buf(),
        found,
        expected: STATE_FORMAT_VERSION,
        action,
    };
    let marked = read_int(
        ColumnFamily::Meta,
        store.get(&meta_key(FORMAT_VERSION))?,
        u32::from_be_bytes,
    )?;
    if let (Some(declared), Some(marked)) = (declared, marked)
        && declared != marked
    {
        return Err(refuse(
            marked,
            format!(
                "the snapshot's manifest names version {declared}: the snapshot is damaged; \
                 restore it from a backup or a replica"
            ),
        ));
    }
    match marked.or(declared) {
        Some(found) if found > STATE_FORMAT_VERSION => Err(refuse(
            found,
            "it was written by a newer Beeline; run that version (or newer) on this data \
             directory"
                .into(),
        )),
        Some(STATE_FORMAT_VERSION) if marked.is_some() => Ok(Opened::Current),
        Some(found) if found != 1 && found != STATE_FORMAT_VERSION => Err(refuse(
            found,
            "this build converts only version 1 and reads no other older version; open the \
             directory with the build that wrote it"
                .into(),
        )),
        _ if holds_version_1(store)? => {
            let entries = convert_version_1(store, &refuse)?;
            Ok(Opened::Converted { from: 1, entries })
        }
        _ => {
            let empty = is_empty(store)?;
            mark(store, WriteBatch::default())?;
            Ok(if empty { Opened::New } else { Opened::Marked })
        }
    }
}

fn mark(store: &dyn Store, mut batch: WriteBatch) -> Result<()> {
    batch.put(
        meta_key(FORMAT_VERSION),
        STATE_FORMAT_VERSION.to_be_bytes().to_vec(),
    );
    store.write(batch)
}

fn is_empty(store: &dyn Store) -> Result<bool> {
    for cf in ColumnFamily::ALL {
        if store
            .scan(&cf.prefix(), &cf.prefix())
            .next()
            .transpose()?
            .is_some()
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where version 1 kept an index whose key version 2 prefixes with the tenant.
struct Retired {
    id: u16,
    into: ColumnFamily,
    /// Key parts (strings) before the tenant in the new key.
    parts_before_tenant: usize,
    /// The entity the entry points to, which must belong to the default tenant.
    owner: Owner,
}

#[derive(Clone, Copy)]
enum Owner {
    /// Its key (an `i64`) ends the entry's key.
    KeyTail(ColumnFamily),
    /// Its key is the entry's value (a big-endian `i64`).
    Value(ColumnFamily),
    /// Its key is in the entry's value, a latest version.
    Latest(ColumnFamily),
}

const RETIRED: &[Retired] = &[
    retired(
        11,
        ColumnFamily::MessagesByNameAndCorrelationKey,
        0,
        Owner::KeyTail(ColumnFamily::Messages),
    ),
    retired(
        13,
        ColumnFamily::MessageIds,
        0,
        Owner::Value(ColumnFamily::Messages),
    ),
    retired(
        21,
        ColumnFamily::ProcessVersions,
        0,
        Owner::Value(ColumnFamily::ProcessDefinitions),
    ),
    retired(
        22,
        ColumnFamily::LatestProcessVersions,
        0,
        Owner::Latest(ColumnFamily::ProcessDefinitions),
    ),
    retired(
        51,
        ColumnFamily::ActivatableJobs,
        1,
        Owner::KeyTail(ColumnFamily::Jobs),
    ),
    retired(
        71,
        ColumnFamily::LatestDecisionRequirementsVersions,
        0,
        Owner::Latest(ColumnFamily::DecisionRequirements),
    ),
    retired(
        73,
        ColumnFamily::DecisionVersions,
        0,
        Owner::Value(ColumnFamily::Decisions),
    ),
    retired(
        74,
        ColumnFamily::LatestDecisionVersions,
        0,
        Owner::Latest(ColumnFamily::Decisions),
    ),
    retired(
        108,
        ColumnFamily::ActiveInstancesByCorrelationKey,
        0,
        Owner::Value(ColumnFamily::ElementInstances),
    ),
    retired(
        121,
        ColumnFamily::FormVersions,
        0,
        Owner::Value(ColumnFamily::Forms),
    ),
    retired(
        122,
        ColumnFamily::LatestFormVersions,
        0,
        Owner::Latest(ColumnFamily::Forms),
    ),
];

const fn retired(id: u16, into: ColumnFamily, parts_before_tenant: usize, owner: Owner) -> Retired {
    Retired {
        id,
        into,
        parts_before_tenant,
        owner,
    }
}

/// The version-2 family a retired latest-versions family's entries in `DeletedLatestVersions`
/// move to.
fn retired_latest(id: u32) -> Option<ColumnFamily> {
    RETIRED
        .iter()
        .find(|r| u32::from(r.id) == id && matches!(r.owner, Owner::Latest(_)))
        .map(|r| r.into)
}

fn holds_version_1(store: &dyn Store) -> Result<bool> {
    for id in RETIRED_FAMILY_IDS {
        let prefix = id.to_be_bytes();
        if store.scan(&prefix, &prefix).next().transpose()?.is_some() {
            return Ok(true);
        }
    }
    let prefix = ColumnFamily::DeletedLatestVersions.prefix();
    for entry in store.scan(&prefix, &prefix) {
        let (key, _) = entry?;
        let mut reader = KeyReader::new(ColumnFamily::DeletedLatestVersions, &key)?;
        if retired_latest(reader.u32()?).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn convert_version_1(store: &dyn Store, refuse: &dyn Fn(u32, String) -> Error) -> Result<usize> {
    let mut batch = WriteBatch::default();
    let mut entries = 0;
    let tenant = KeyBuilder::new(ColumnFamily::Meta)
        .str(DEFAULT_TENANT)
        .build();
    let tenant = &tenant[2..];
    for retired in RETIRED {
        let prefix = retired.id.to_be_bytes();
        for entry in store.scan(&prefix, &prefix) {
            let (key, value) = entry?;
            let owner = owner_key(retired, &key, &value)?;
            check_default_tenant(store, owner, refuse)?;
            let rest = &key[2..];
            let split =
                skip_strings(rest, retired.parts_before_tenant).ok_or_else(|| Error::Decode {
                    cf: retired.into.name(),
                    reason: format!("a key of retired family {} is too short", retired.id),
                })?;
            let mut new_key = retired.into.prefix().to_vec();
            new_key.extend_from_slice(&rest[..split]);
            new_key.extend_from_slice(tenant);
            new_key.extend_from_slice(&rest[split..]);
            batch.delete(key);
            batch.put(new_key, value);
            entries += 1;
        }
    }
    let prefix = ColumnFamily::DeletedLatestVersions.prefix();
    for entry in store.scan(&prefix, &prefix) {
        let (key, value) = entry?;
        let mut reader = KeyReader::new(ColumnFamily::DeletedLatestVersions, &key)?;
        let Some(into) = retired_latest(reader.u32()?) else {
            continue;
        };
        let latest = reader.bytes()?;
        let mut new_latest = into.prefix().to_vec();
        new_latest.extend_from_slice(tenant);
        new_latest.extend_from_slice(latest.get(2..).unwrap_or_default());
        let new_key = KeyBuilder::new(ColumnFamily::DeletedLatestVersions)
            .u32(u32::from(into.id()))
            .bytes(&new_latest)
            .build();
        batch.delete(key);
        batch.put(new_key, value);
        entries += 1;
    }
    let prefix = ColumnFamily::CorrelationKeysByInstance.prefix();
    for entry in store.scan(&prefix, &prefix) {
        let (key, value) = entry?;
        let mut lock: CorrelationKeyLock = decode(ColumnFamily::CorrelationKeysByInstance, &value)?;
        if lock.tenant_id.is_empty() {
            lock.tenant_id = DEFAULT_TENANT.to_owned();
            batch.put(key, beeline_protocol::protobuf::encode_to_vec(&lock));
            entries += 1;
        }
    }
    mark(store, batch)?;
    Ok(entries)
}

/// The length of the first `n` length-prefixed parts of `key`.
fn skip_strings(key: &[u8], n: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..n {
        let len = u32::from_be_bytes(key.get(at..at + 4)?.try_into().ok()?) as usize;
        at = at.checked_add(4 + len).filter(|&end| end <= key.len())?;
    }
    Some(at)
}

/// The family and key of the entity an entry of a retired family points to.
fn owner_key(retired: &Retired, key: &[u8], value: &[u8]) -> Result<(ColumnFamily, i64)> {
    let damaged = |what: &str| Error::Decode {
        cf: retired.into.name(),
        reason: format!("an entry of retired family {} has {what}", retired.id),
    };
    match retired.owner {
        Owner::KeyTail(cf) => {
            let tail = key
                .len()
                .checked_sub(8)
                .and_then(|at| key.get(at..))
                .ok_or_else(|| damaged("a key too short"))?;
            let mut with_family = cf.prefix().to_vec();
            with_family.extend_from_slice(tail);
            Ok((cf, KeyReader::new(cf, &with_family)?.i64()?))
        }
        Owner::Value(cf) => {
            let bytes: [u8; 8] = value
                .try_into()
                .map_err(|_| damaged("a value that is no key"))?;
            Ok((cf, i64::from_be_bytes(bytes)))
        }
        Owner::Latest(cf) => Ok((cf, decode::<LatestVersion>(retired.into, value)?.key)),
    }
}

/// Refuses the conversion if the entity `(cf, key)` is stored for another tenant than the
/// default one, which version 1 did not know.
fn check_default_tenant(
    store: &dyn Store,
    (cf, key): (ColumnFamily, i64),
    refuse: &dyn Fn(u32, String) -> Error,
) -> Result<()> {
    let Some(bytes) = store.get(&KeyBuilder::new(cf).i64(key).build())? else {
        return Ok(());
    };
    let tenant = match cf {
        ColumnFamily::Messages => decode::<MessageRecord>(cf, &bytes)?.tenant_id,
        ColumnFamily::ProcessDefinitions => decode::<ProcessRecord>(cf, &bytes)?.tenant_id,
        ColumnFamily::Decisions => decode::<DecisionRecord>(cf, &bytes)?.tenant_id,
        ColumnFamily::DecisionRequirements => {
            decode::<DecisionRequirementsRecord>(cf, &bytes)?.tenant_id
        }
        ColumnFamily::Forms => decode::<FormRecord>(cf, &bytes)?.tenant_id,
        ColumnFamily::Jobs => decode::<Job>(cf, &bytes)?
            .record
            .map(|r| r.tenant_id)
            .unwrap_or_default(),
        ColumnFamily::ElementInstances => decode::<ElementInstance>(cf, &bytes)?
            .record
            .map(|r| r.tenant_id)
            .unwrap_or_default(),
        _ => return Ok(()),
    };
    if tenant == DEFAULT_TENANT {
        return Ok(());
    }
    Err(refuse(
        1,
        format!(
            "{} entry {key} belongs to tenant '{tenant}', but version 1 kept only the default \
             tenant ('{DEFAULT_TENANT}'), so its indexes cannot be converted; open the \
             directory with the build that wrote it, or start this build on an empty data \
             directory and deploy again",
            cf.name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::JobRecord;
    use beeline_state::MemStore;

    const AT: &str = "/data/partitions/1/snapshots/00000000000000000042";

    fn put(store: &MemStore, key: Vec<u8>, value: Vec<u8>) {
        let mut batch = WriteBatch::default();
        batch.put(key, value);
        store.write(batch).unwrap();
    }

    fn marked(store: &MemStore) -> Option<Vec<u8>> {
        store.get(&meta_key(FORMAT_VERSION)).unwrap()
    }

    fn mark_as(store: &MemStore, version: u32) {
        put(
            store,
            meta_key(FORMAT_VERSION),
            version.to_be_bytes().to_vec(),
        );
    }

    fn job(tenant: &str) -> Vec<u8> {
        beeline_protocol::protobuf::encode_to_vec(&Job {
            record: Some(JobRecord {
                tenant_id: tenant.into(),
                ..Default::default()
            }),
            state: 0,
        })
    }

    /// An activatable job of type `w` in version 1's family 51: (type, job key) -> ().
    fn version_1_activatable(store: &MemStore, key: i64, tenant: &str) {
        put(
            store,
            KeyBuilder::new(ColumnFamily::Jobs).i64(key).build(),
            job(tenant),
        );
        let mut old = 51u16.to_be_bytes().to_vec();
        old.extend_from_slice(
            &KeyBuilder::new(ColumnFamily::Meta)
                .str("w")
                .i64(key)
                .build()[2..],
        );
        put(store, old, Vec::new());
    }

    #[test]
    fn an_empty_state_is_marked_and_then_current() {
        let store = MemStore::new();
        assert_eq!(open(&store, Path::new(AT), None).unwrap(), Opened::New);
        assert_eq!(
            marked(&store),
            Some(STATE_FORMAT_VERSION.to_be_bytes().to_vec())
        );
        assert_eq!(
            open(&store, Path::new(AT), Some(STATE_FORMAT_VERSION)).unwrap(),
            Opened::Current
        );
    }

    #[test]
    fn an_unmarked_state_in_todays_layout_is_only_marked() {
        let store = MemStore::new();
        put(
            &store,
            KeyBuilder::new(ColumnFamily::Jobs).i64(7).build(),
            job(DEFAULT_TENANT),
        );
        let before = store.dump();
        assert_eq!(open(&store, Path::new(AT), None).unwrap(), Opened::Marked);
        let mut after = store.dump();
        after.retain(|(key, _)| *key != meta_key(FORMAT_VERSION));
        assert_eq!(after, before);
    }

    #[test]
    fn a_version_1_index_moves_to_its_successor_with_the_default_tenant() {
        let store = MemStore::new();
        version_1_activatable(&store, 7, DEFAULT_TENANT);
        assert_eq!(
            open(&store, Path::new(AT), None).unwrap(),
            Opened::Converted {
                from: 1,
                entries: 1
            }
        );
        let converted = KeyBuilder::new(ColumnFamily::ActivatableJobs)
            .str("w")
            .str(DEFAULT_TENANT)
            .i64(7)
            .build();
        assert_eq!(store.get(&converted).unwrap(), Some(Vec::new()));
        assert!(!holds_version_1(&store).unwrap());
        assert_eq!(open(&store, Path::new(AT), None).unwrap(), Opened::Current);
    }

    fn refusal(store: &MemStore, declared: Option<u32>) -> (u32, String) {
        let error = open(store, Path::new(AT), declared).expect_err("a refusal");
        let text = error.to_string();
        let Error::Format {
            path,
            found,
            expected,
            ..
        } = error
        else {
            panic!("expected a refusal, got {text}");
        };
        assert_eq!(path, Path::new(AT));
        assert_eq!(expected, STATE_FORMAT_VERSION);
        assert!(text.contains(AT), "{text}");
        (found, text)
    }

    #[test]
    fn a_newer_or_unknown_older_version_is_refused_with_what_to_do() {
        let store = MemStore::new();
        mark_as(&store, STATE_FORMAT_VERSION + 1);
        let (found, text) = refusal(&store, None);
        assert_eq!(found, STATE_FORMAT_VERSION + 1);
        assert!(text.contains("newer Beeline"), "{text}");

        let store = MemStore::new();
        mark_as(&store, 0);
        let (found, text) = refusal(&store, None);
        assert_eq!(found, 0);
        assert!(text.contains("converts only version 1"), "{text}");

        // The manifest and the state disagree: damage.
        let store = MemStore::new();
        mark_as(&store, STATE_FORMAT_VERSION);
        let (_, text) = refusal(&store, Some(1));
        assert!(text.contains("damaged"), "{text}");
    }

    #[test]
    fn a_version_1_entry_of_another_tenant_cannot_be_converted() {
        let store = MemStore::new();
        version_1_activatable(&store, 7, "");
        let before = store.dump();
        let (found, text) = refusal(&store, None);
        assert_eq!(found, 1);
        assert!(text.contains("Jobs entry 7 belongs to tenant ''"), "{text}");
        assert_eq!(store.dump(), before, "nothing is written");
    }
}
