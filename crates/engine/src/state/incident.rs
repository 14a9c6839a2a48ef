//! Incidents, found by key, by element instance and by job.

use beeline_protocol::value::IncidentRecord;
use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

use super::decode;

fn incident(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Incidents).i64(key).build()
}

fn by_element(element_instance: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::IncidentsByElementInstance)
        .i64(element_instance)
        .build()
}

fn by_job(job: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::IncidentsByJob)
        .i64(job)
        .build()
}

fn read_key(cf: ColumnFamily, bytes: Option<Vec<u8>>) -> Result<Option<i64>> {
    super::read_int(cf, bytes, i64::from_be_bytes)
}

pub struct IncidentState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> IncidentState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, key: i64) -> Result<Option<IncidentRecord>> {
        self.txn
            .get(&incident(key))?
            .map(|bytes| decode(ColumnFamily::Incidents, &bytes))
            .transpose()
    }

    pub fn of_element_instance(&self, element_instance: i64) -> Result<Option<i64>> {
        read_key(
            ColumnFamily::IncidentsByElementInstance,
            self.txn.get(&by_element(element_instance))?,
        )
    }

    pub fn of_job(&self, job: i64) -> Result<Option<i64>> {
        read_key(ColumnFamily::IncidentsByJob, self.txn.get(&by_job(job))?)
    }
}

pub struct MutableIncidentState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableIncidentState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn create(&mut self, key: i64, record: &IncidentRecord) {
        self.txn.insert(
            incident(key),
            beeline_protocol::protobuf::encode_to_vec(record),
        );
        if record.job_key > 0 {
            self.txn
                .put(by_job(record.job_key), key.to_be_bytes().to_vec());
        } else if record.element_instance_key > 0 {
            self.txn.put(
                by_element(record.element_instance_key),
                key.to_be_bytes().to_vec(),
            );
        }
    }

    pub fn remove(&mut self, key: i64) -> Result<()> {
        if let Some(record) = IncidentState::new(self.txn).get(key)? {
            self.txn.delete(incident(key));
            if record.job_key > 0 {
                self.txn.delete(by_job(record.job_key));
            } else if record.element_instance_key > 0 {
                self.txn.delete(by_element(record.element_instance_key));
            }
        }
        Ok(())
    }
}
