//! Deployed forms: by key, by id and version, and the latest version of each id.

use beeline_protocol::value::FormRecord;
use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

use super::versions::{lower_latest, next_version, raise_latest, read_latest};
use super::{decode, read_int};

fn form(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Forms).i64(key).build()
}

fn version(tenant: &str, form_id: &str, version: i32) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::FormVersions)
        .str(tenant)
        .str(form_id)
        .i64(i64::from(version))
        .build()
}

fn latest(tenant: &str, form_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::LatestFormVersions)
        .str(tenant)
        .str(form_id)
        .build()
}

pub struct FormState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> FormState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, key: i64) -> Result<Option<FormRecord>> {
        self.txn
            .get(&form(key))?
            .map(|bytes| decode(ColumnFamily::Forms, &bytes))
            .transpose()
    }

    /// The latest version of a tenant's form: (version, form key).
    pub fn latest(&self, tenant: &str, form_id: &str) -> Result<Option<(i32, i64)>> {
        read_latest(
            self.txn,
            ColumnFamily::LatestFormVersions,
            &latest(tenant, form_id),
        )
    }

    /// The version the next deployment of a tenant's form gets (deleted versions are not
    /// reused).
    pub fn next_version(&self, tenant: &str, form_id: &str) -> Result<i32> {
        next_version(
            self.txn,
            ColumnFamily::LatestFormVersions,
            &latest(tenant, form_id),
        )
    }

    pub fn by_version(
        &self,
        tenant: &str,
        form_id: &str,
        version_number: i32,
    ) -> Result<Option<i64>> {
        self.txn
            .get(&version(tenant, form_id, version_number))
            .and_then(|bytes| read_int(ColumnFamily::FormVersions, bytes, i64::from_be_bytes))
    }

    /// The latest version of a tenant's `form_id` that `matches`, newest first.
    pub fn latest_matching(
        &self,
        tenant: &str,
        form_id: &str,
        matches: impl Fn(&FormRecord) -> bool,
    ) -> Result<Option<FormRecord>> {
        let Some((latest, _)) = self.latest(tenant, form_id)? else {
            return Ok(None);
        };
        for number in (1..=latest).rev() {
            if let Some(key) = self.by_version(tenant, form_id, number)?
                && let Some(found) = self.get(key)?
                && matches(&found)
            {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }
}

pub struct MutableFormState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableFormState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// Stores a new form version and makes it the latest when it is newer.
    pub fn insert(&mut self, record: &FormRecord) -> Result<()> {
        let key = record.form_key;
        let mut stored = record.clone();
        stored.duplicate = false;
        self.txn.put(
            form(key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        self.txn.put(
            version(&record.tenant_id, &record.form_id, record.version),
            key.to_be_bytes().to_vec(),
        );
        raise_latest(
            self.txn,
            ColumnFamily::LatestFormVersions,
            latest(&record.tenant_id, &record.form_id),
            record.version,
            key,
        )
    }

    /// The form is gone; the version before it becomes the latest.
    pub fn remove(&mut self, record: &FormRecord) -> Result<()> {
        let prefix = KeyBuilder::new(ColumnFamily::FormVersions)
            .str(&record.tenant_id)
            .str(&record.form_id)
            .build();
        lower_latest(
            self.txn,
            ColumnFamily::LatestFormVersions,
            latest(&record.tenant_id, &record.form_id),
            ColumnFamily::FormVersions,
            &prefix,
            record.version,
        )?;
        self.txn.delete(form(record.form_key));
        self.txn
            .delete(version(&record.tenant_id, &record.form_id, record.version));
        Ok(())
    }
}
