//! Process definitions, deployments and their distribution to other partitions.

use std::sync::Arc;

use beeline_protocol::value::{CommandDistributionRecord, ProcessRecord};
use beeline_state::{ColumnFamily, Error, KeyBuilder, KeyReader, Result, Transaction};

use super::versions::{lower_latest, next_version, raise_latest, read_latest};
use super::{decode, read_int};
use crate::model::{DeployedProcess, ProcessCache, transform_bpmn};

fn definition(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ProcessDefinitions)
        .i64(key)
        .build()
}

fn version(tenant: &str, bpmn_process_id: &str, version: i32) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ProcessVersions)
        .str(tenant)
        .str(bpmn_process_id)
        .i64(i64::from(version))
        .build()
}

fn latest(tenant: &str, bpmn_process_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::LatestProcessVersions)
        .str(tenant)
        .str(bpmn_process_id)
        .build()
}

fn versions_of(tenant: &str, bpmn_process_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ProcessVersions)
        .str(tenant)
        .str(bpmn_process_id)
        .build()
}

fn running(definition_key: i64, instance_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::RunningInstancesByDefinition)
        .i64(definition_key)
        .i64(instance_key)
        .build()
}

fn pending(distribution_key: i64, partition: u16) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::PendingDistributions)
        .i64(distribution_key)
        .u32(u32::from(partition))
        .build()
}

pub struct ProcessState<'t> {
    txn: &'t Transaction<'t>,
    cache: &'t ProcessCache,
}

impl<'t> ProcessState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>, cache: &'t ProcessCache) -> Self {
        Self { txn, cache }
    }

    pub fn get(&self, key: i64) -> Result<Option<ProcessRecord>> {
        self.txn
            .get(&definition(key))?
            .map(|bytes| decode(ColumnFamily::ProcessDefinitions, &bytes))
            .transpose()
    }

    /// The latest version of a process of a tenant: (version, definition key).
    pub fn latest(&self, tenant: &str, bpmn_process_id: &str) -> Result<Option<(i32, i64)>> {
        read_latest(
            self.txn,
            ColumnFamily::LatestProcessVersions,
            &latest(tenant, bpmn_process_id),
        )
    }

    /// The version the next deployment of a tenant's process gets (deleted versions are not
    /// reused).
    pub fn next_version(&self, tenant: &str, bpmn_process_id: &str) -> Result<i32> {
        next_version(
            self.txn,
            ColumnFamily::LatestProcessVersions,
            &latest(tenant, bpmn_process_id),
        )
    }

    pub fn by_version(
        &self,
        tenant: &str,
        bpmn_process_id: &str,
        version_number: i32,
    ) -> Result<Option<i64>> {
        self.txn
            .get(&version(tenant, bpmn_process_id, version_number))
            .and_then(|bytes| read_int(ColumnFamily::ProcessVersions, bytes, i64::from_be_bytes))
    }

    /// The definition ready to run, from the cache or rebuilt from its stored resource.
    pub fn deployed(&self, key: i64) -> Result<Option<Arc<DeployedProcess>>> {
        if let Some(process) = self.cache.get(key) {
            return Ok(Some(process));
        }
        let Some(record) = self.get(key)? else {
            return Ok(None);
        };
        let transformed = transform_bpmn(&record.resource).map_err(|reason| Error::Decode {
            cf: ColumnFamily::ProcessDefinitions.name(),
            reason: format!("stored process {key} no longer transforms: {reason}"),
        })?;
        let Some(found) = transformed
            .into_iter()
            .find(|p| p.model.bpmn_process_id == record.bpmn_process_id)
        else {
            return Err(Error::Decode {
                cf: ColumnFamily::ProcessDefinitions.name(),
                reason: format!(
                    "stored process {key} lacks process '{}'",
                    record.bpmn_process_id
                ),
            });
        };
        let process = Arc::new(DeployedProcess {
            key,
            bpmn_process_id: record.bpmn_process_id,
            version: record.version,
            tenant_id: record.tenant_id,
            deployment_key: record.deployment_key,
            version_tag: record.version_tag,
            model: found.model,
            expressions: found.expressions,
        });
        self.cache.insert(process.clone());
        Ok(Some(process))
    }

    /// The process instances of a definition that run, oldest first.
    pub fn running_instances(&self, definition_key: i64) -> Result<Vec<i64>> {
        let prefix = KeyBuilder::new(ColumnFamily::RunningInstancesByDefinition)
            .i64(definition_key)
            .build();
        let mut keys = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::RunningInstancesByDefinition, &key)?;
            reader.i64()?;
            keys.push(reader.i64()?);
        }
        Ok(keys)
    }

    pub fn is_distribution_pending(&self, distribution_key: i64, partition: u16) -> Result<bool> {
        self.txn.exists(&pending(distribution_key, partition))
    }

    /// Partitions that have not acknowledged a distribution yet.
    pub fn pending_partitions(&self, distribution_key: i64) -> Result<Vec<u16>> {
        let prefix = KeyBuilder::new(ColumnFamily::PendingDistributions)
            .i64(distribution_key)
            .build();
        let mut partitions = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::PendingDistributions, &key)?;
            reader.i64()?;
            partitions.push(reader.u32()? as u16);
        }
        Ok(partitions)
    }

    /// Every unacknowledged distribution: (distribution key, partition, what was sent).
    pub fn all_pending(&self) -> Result<Vec<(i64, u16, CommandDistributionRecord)>> {
        let prefix = KeyBuilder::new(ColumnFamily::PendingDistributions).build();
        let mut all = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, value) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::PendingDistributions, &key)?;
            let distribution = reader.i64()?;
            let partition = reader.u32()? as u16;
            all.push((
                distribution,
                partition,
                decode(ColumnFamily::PendingDistributions, &value)?,
            ));
        }
        Ok(all)
    }
}

pub struct MutableProcessState<'t, 's> {
    txn: &'t mut Transaction<'s>,
    cache: &'t ProcessCache,
}

impl<'t, 's> MutableProcessState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>, cache: &'t ProcessCache) -> Self {
        Self { txn, cache }
    }

    /// A process instance of `definition_key` started, or ended.
    pub fn set_running(&mut self, definition_key: i64, instance_key: i64, runs: bool) {
        let key = running(definition_key, instance_key);
        if runs {
            self.txn.insert(key, Vec::new());
        } else {
            self.txn.delete(key);
        }
    }

    /// The definition is being deleted: the version before it becomes the latest.
    pub fn start_deleting(&mut self, record: &ProcessRecord) -> Result<()> {
        lower_latest(
            self.txn,
            ColumnFamily::LatestProcessVersions,
            latest(&record.tenant_id, &record.bpmn_process_id),
            ColumnFamily::ProcessVersions,
            &versions_of(&record.tenant_id, &record.bpmn_process_id),
            record.version,
        )
    }

    /// The definition is gone (its version number is never given again: versions count on
    /// from the highest ever deployed, which the deployment keeps).
    pub fn remove(&mut self, record: &ProcessRecord) -> Result<()> {
        self.start_deleting(record)?;
        self.txn.delete(definition(record.process_definition_key));
        self.txn.delete(version(
            &record.tenant_id,
            &record.bpmn_process_id,
            record.version,
        ));
        self.cache.remove(record.process_definition_key);
        Ok(())
    }

    /// Stores a new definition and makes it the latest version when it is newer.
    pub fn insert(&mut self, record: &ProcessRecord) -> Result<()> {
        let key = record.process_definition_key;
        let mut stored = record.clone();
        stored.duplicate = false;
        self.txn.put(
            definition(key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        self.txn.put(
            version(&record.tenant_id, &record.bpmn_process_id, record.version),
            key.to_be_bytes().to_vec(),
        );
        raise_latest(
            self.txn,
            ColumnFamily::LatestProcessVersions,
            latest(&record.tenant_id, &record.bpmn_process_id),
            record.version,
            key,
        )
    }

    pub fn add_pending(
        &mut self,
        distribution_key: i64,
        partition: u16,
        record: &CommandDistributionRecord,
    ) {
        self.txn.put(
            pending(distribution_key, partition),
            beeline_protocol::protobuf::encode_to_vec(record),
        );
    }

    pub fn remove_pending(&mut self, distribution_key: i64, partition: u16) {
        self.txn.delete(pending(distribution_key, partition));
    }
}
