//! Deployed decision requirements graphs and their decisions.

use beeline_dmn::{DmnModel, Semantics};
use beeline_protocol::value::{DecisionRecord, DecisionRequirementsRecord};
use beeline_state::{ColumnFamily, Error, KeyBuilder, Result, Transaction};

use super::decode;
use super::versions::{lower_latest, next_version, raise_latest, read_latest};
use crate::model::DecisionCache;

fn requirements(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::DecisionRequirements)
        .i64(key)
        .build()
}

fn latest_requirements(tenant: &str, id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::LatestDecisionRequirementsVersions)
        .str(tenant)
        .str(id)
        .build()
}

fn decision(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Decisions).i64(key).build()
}

fn decision_version(tenant: &str, id: &str, version: i32) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::DecisionVersions)
        .str(tenant)
        .str(id)
        .i64(i64::from(version))
        .build()
}

fn latest_decision(tenant: &str, id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::LatestDecisionVersions)
        .str(tenant)
        .str(id)
        .build()
}

fn in_requirements(requirements_key: i64, decision_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::DecisionsByRequirements)
        .i64(requirements_key)
        .str(decision_id)
        .build()
}

fn read_key(cf: ColumnFamily, bytes: Option<Vec<u8>>) -> Result<Option<i64>> {
    super::read_int(cf, bytes, i64::from_be_bytes)
}

pub struct DecisionState<'t> {
    txn: &'t Transaction<'t>,
    cache: &'t DecisionCache,
}

impl<'t> DecisionState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>, cache: &'t DecisionCache) -> Self {
        Self { txn, cache }
    }

    pub fn requirements(&self, key: i64) -> Result<Option<DecisionRequirementsRecord>> {
        self.txn
            .get(&requirements(key))?
            .map(|bytes| decode(ColumnFamily::DecisionRequirements, &bytes))
            .transpose()
    }

    /// The latest version of a tenant's decision requirements graph: (version, key).
    pub fn latest_requirements(&self, tenant: &str, id: &str) -> Result<Option<(i32, i64)>> {
        read_latest(
            self.txn,
            ColumnFamily::LatestDecisionRequirementsVersions,
            &latest_requirements(tenant, id),
        )
    }

    pub fn get(&self, key: i64) -> Result<Option<DecisionRecord>> {
        self.txn
            .get(&decision(key))?
            .map(|bytes| decode(ColumnFamily::Decisions, &bytes))
            .transpose()
    }

    /// The latest version of a tenant's decision: (version, key).
    pub fn latest(&self, tenant: &str, id: &str) -> Result<Option<(i32, i64)>> {
        read_latest(
            self.txn,
            ColumnFamily::LatestDecisionVersions,
            &latest_decision(tenant, id),
        )
    }

    /// The version the next deployment of a tenant's decision requirements graph gets.
    pub fn next_requirements_version(&self, tenant: &str, id: &str) -> Result<i32> {
        next_version(
            self.txn,
            ColumnFamily::LatestDecisionRequirementsVersions,
            &latest_requirements(tenant, id),
        )
    }

    /// The version the next deployment of a tenant's decision gets.
    pub fn next_version(&self, tenant: &str, id: &str) -> Result<i32> {
        next_version(
            self.txn,
            ColumnFamily::LatestDecisionVersions,
            &latest_decision(tenant, id),
        )
    }

    /// The decisions of a decision requirements graph.
    pub fn of_requirements(&self, requirements_key: i64) -> Result<Vec<DecisionRecord>> {
        let prefix = KeyBuilder::new(ColumnFamily::DecisionsByRequirements)
            .i64(requirements_key)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (_, value) = entry?;
            if let Some(key) = read_key(ColumnFamily::DecisionsByRequirements, Some(value))?
                && let Some(decision) = self.get(key)?
            {
                found.push(decision);
            }
        }
        Ok(found)
    }

    /// The decision with this id inside a decision requirements graph.
    pub fn in_requirements(
        &self,
        requirements_key: i64,
        decision_id: &str,
    ) -> Result<Option<DecisionRecord>> {
        match read_key(
            ColumnFamily::DecisionsByRequirements,
            self.txn
                .get(&in_requirements(requirements_key, decision_id))?,
        )? {
            Some(key) => self.get(key),
            None => Ok(None),
        }
    }

    /// The parsed model of a decision requirements graph, from the cache or its stored resource.
    pub fn model(&self, requirements_key: i64) -> Result<Option<DmnModel>> {
        if let Some(model) = self.cache.get(requirements_key) {
            return Ok(Some(model));
        }
        let Some(record) = self.requirements(requirements_key)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&record.resource);
        let model = DmnModel::parse(&text)
            .map_err(|e| Error::Decode {
                cf: ColumnFamily::DecisionRequirements.name(),
                reason: format!(
                    "stored decision requirements {requirements_key} no longer parse: {e}"
                ),
            })?
            .with_semantics(Semantics::Zeebe);
        self.cache.insert(requirements_key, model.clone());
        Ok(Some(model))
    }
}

pub struct MutableDecisionState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableDecisionState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn insert_requirements(&mut self, record: &DecisionRequirementsRecord) -> Result<()> {
        let mut stored = record.clone();
        stored.duplicate = false;
        self.txn.put(
            requirements(record.decision_requirements_key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        raise_latest(
            self.txn,
            ColumnFamily::LatestDecisionRequirementsVersions,
            latest_requirements(&record.tenant_id, &record.decision_requirements_id),
            record.decision_requirements_version,
            record.decision_requirements_key,
        )
    }

    pub fn insert_decision(&mut self, record: &DecisionRecord) -> Result<()> {
        let mut stored = record.clone();
        stored.duplicate = false;
        self.txn.put(
            decision(record.decision_key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        self.txn.put(
            decision_version(&record.tenant_id, &record.decision_id, record.version),
            record.decision_key.to_be_bytes().to_vec(),
        );
        self.txn.put(
            in_requirements(record.decision_requirements_key, &record.decision_id),
            record.decision_key.to_be_bytes().to_vec(),
        );
        raise_latest(
            self.txn,
            ColumnFamily::LatestDecisionVersions,
            latest_decision(&record.tenant_id, &record.decision_id),
            record.version,
            record.decision_key,
        )
    }

    /// The decision is gone; the version before it becomes the latest.
    pub fn remove_decision(&mut self, record: &DecisionRecord) -> Result<()> {
        let prefix = KeyBuilder::new(ColumnFamily::DecisionVersions)
            .str(&record.tenant_id)
            .str(&record.decision_id)
            .build();
        lower_latest(
            self.txn,
            ColumnFamily::LatestDecisionVersions,
            latest_decision(&record.tenant_id, &record.decision_id),
            ColumnFamily::DecisionVersions,
            &prefix,
            record.version,
        )?;
        self.txn.delete(decision(record.decision_key));
        self.txn.delete(decision_version(
            &record.tenant_id,
            &record.decision_id,
            record.version,
        ));
        self.txn.delete(in_requirements(
            record.decision_requirements_key,
            &record.decision_id,
        ));
        Ok(())
    }

    /// The graph is gone (its decisions first); the version before it becomes the latest.
    /// Graphs keep no index by version: the previous one is found among all stored graphs.
    pub fn remove_requirements(&mut self, record: &DecisionRequirementsRecord) -> Result<()> {
        let latest_key = latest_requirements(&record.tenant_id, &record.decision_requirements_id);
        let is_latest = read_latest(
            self.txn,
            ColumnFamily::LatestDecisionRequirementsVersions,
            &latest_key,
        )?
        .is_some_and(|(v, _)| v == record.decision_requirements_version);
        self.txn
            .delete(requirements(record.decision_requirements_key));
        if !is_latest {
            return Ok(());
        }
        let mut previous: Option<(i32, i64)> = None;
        let prefix = KeyBuilder::new(ColumnFamily::DecisionRequirements).build();
        for entry in self.txn.scan(&prefix) {
            let (_, value) = entry?;
            let graph: DecisionRequirementsRecord =
                decode(ColumnFamily::DecisionRequirements, &value)?;
            let version = graph.decision_requirements_version;
            if graph.decision_requirements_id == record.decision_requirements_id
                && graph.tenant_id == record.tenant_id
                && version < record.decision_requirements_version
                && previous.is_none_or(|(v, _)| v < version)
            {
                previous = Some((version, graph.decision_requirements_key));
            }
        }
        super::versions::replace_latest(
            self.txn,
            ColumnFamily::LatestDecisionRequirementsVersions,
            latest_key,
            record.decision_requirements_version,
            previous,
        )
    }
}
