//! Jobs, with their indexes: activatable by type, activated by deadline, failed by back-off.

use beeline_protocol::value::JobRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode_stored;
use super::time_index::{due, first_time};
use super::values::{Job, JobLifecycle};

fn job(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Jobs).i64(key).build()
}

fn activatable(job_type: &str, tenant: &str, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ActivatableJobs)
        .str(job_type)
        .str(tenant)
        .i64(key)
        .build()
}

fn deadline(at: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::JobDeadlines)
        .i64(at)
        .i64(key)
        .build()
}

fn backoff(at: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::JobBackoffs)
        .i64(at)
        .i64(key)
        .build()
}

pub struct JobState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> JobState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, key: i64) -> Result<Option<Job>> {
        self.txn
            .get(&job(key))?
            .map(|bytes| decode_stored(ColumnFamily::Jobs, key, &bytes))
            .transpose()
    }

    /// Keys of activatable jobs of a type belonging to one of `tenants`, oldest first, at
    /// most `limit`.
    pub fn activatable(
        &self,
        job_type: &str,
        tenants: &[String],
        limit: usize,
    ) -> Result<Vec<i64>> {
        let mut keys = Vec::new();
        for tenant in tenants {
            let prefix = KeyBuilder::new(ColumnFamily::ActivatableJobs)
                .str(job_type)
                .str(tenant)
                .build();
            for entry in self.txn.scan_queue(&prefix).take(limit) {
                let (key, _) = entry?;
                let mut reader = KeyReader::new(ColumnFamily::ActivatableJobs, &key)?;
                reader.str()?;
                reader.str()?;
                keys.push(reader.i64()?);
            }
        }
        if tenants.len() > 1 {
            // Keys grow with time on a partition: the oldest jobs of all the tenants first.
            keys.sort_unstable();
            keys.truncate(limit);
        }
        Ok(keys)
    }

    /// Activated jobs whose deadline passed: (deadline, job key).
    pub fn timed_out(&self, now: i64, limit: usize) -> Result<Vec<(i64, i64)>> {
        due(self.txn, ColumnFamily::JobDeadlines, now, limit)
    }

    /// Failed jobs whose back-off is over: (recurring time, job key).
    pub fn backoffs_over(&self, now: i64, limit: usize) -> Result<Vec<(i64, i64)>> {
        due(self.txn, ColumnFamily::JobBackoffs, now, limit)
    }

    /// The earliest deadline or back-off end.
    pub fn next_due_time(&self) -> Result<Option<i64>> {
        let deadline = first_time(self.txn, ColumnFamily::JobDeadlines)?;
        let backoff = first_time(self.txn, ColumnFamily::JobBackoffs)?;
        Ok(match (deadline, backoff) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }
}

pub struct MutableJobState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableJobState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    fn get(&self, key: i64) -> Result<Option<Job>> {
        JobState::new(self.txn).get(key)
    }

    /// Removes the job's index entries for its current state.
    fn unindex(&mut self, key: i64, current: &Job) -> Result<()> {
        let record = current.record();
        match current.lifecycle()? {
            JobLifecycle::Activatable => {
                self.txn
                    .delete(activatable(&record.r#type, &record.tenant_id, key))
            }
            JobLifecycle::Activated => self.txn.delete(deadline(record.deadline, key)),
            JobLifecycle::Failed if record.recurring_time > 0 => {
                self.txn.delete(backoff(record.recurring_time, key))
            }
            JobLifecycle::Failed | JobLifecycle::ErrorThrown => {}
        }
        Ok(())
    }

    /// Stores the job in `state`, indexed for it.
    fn store(&mut self, key: i64, record: &JobRecord, state: JobLifecycle, new: bool) {
        match state {
            JobLifecycle::Activatable => self.txn.insert(
                activatable(&record.r#type, &record.tenant_id, key),
                Vec::new(),
            ),
            JobLifecycle::Activated => self.txn.insert(deadline(record.deadline, key), Vec::new()),
            JobLifecycle::Failed if record.recurring_time > 0 => self
                .txn
                .insert(backoff(record.recurring_time, key), Vec::new()),
            JobLifecycle::Failed | JobLifecycle::ErrorThrown => {}
        }
        let value = Job {
            record: Some(record.clone()),
            state: state as u32,
        };
        let bytes = beeline_protocol::protobuf::encode_to_vec(&value);
        if new {
            self.txn.insert(job(key), bytes);
        } else {
            self.txn.put(job(key), bytes);
        }
    }

    pub fn create(&mut self, key: i64, record: &JobRecord) {
        self.store(key, record, JobLifecycle::Activatable, true);
    }

    /// Moves the job to `state` with `record` as its new data.
    pub fn transition(&mut self, key: i64, record: &JobRecord, state: JobLifecycle) -> Result<()> {
        if let Some(current) = self.get(key)? {
            self.unindex(key, &current)?;
        }
        self.store(key, record, state, false);
        Ok(())
    }

    /// Changes the record, keeping the state (and re-indexing a changed deadline).
    pub fn update(&mut self, key: i64, change: impl FnOnce(&mut JobRecord)) -> Result<()> {
        let Some(current) = self.get(key)? else {
            return Ok(());
        };
        let mut record = current.record();
        change(&mut record);
        self.unindex(key, &current)?;
        self.store(key, &record, current.lifecycle()?, false);
        Ok(())
    }

    pub fn remove(&mut self, key: i64) -> Result<()> {
        if let Some(current) = self.get(key)? {
            self.unindex(key, &current)?;
            self.txn.delete(job(key));
        }
        Ok(())
    }
}
