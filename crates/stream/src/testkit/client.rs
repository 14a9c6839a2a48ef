//! The harness as a Zeebe client would use the engine: deploy, create instances, work on
//! jobs, resolve incidents. Each call writes one command and returns its answer.

use beeline_protocol::intent::{
    DeploymentIntent, IncidentIntent, JobBatchIntent, JobIntent, ProcessInstanceCreationIntent,
    ProcessInstanceIntent, UserTaskIntent, VariableDocumentIntent,
};
use beeline_protocol::value::{
    DeploymentRecord, DeploymentResource, IncidentRecord, JobBatchRecord, JobRecord,
    ProcessInstanceCreationRecord, ProcessInstanceRecord, UserTaskRecord, VariableDocumentRecord,
};
use beeline_protocol::{Record, RecordType, key};
use tokio::sync::oneshot;

use super::Harness;
use super::bpmn::ProcessBuilder;
use crate::error::PartitionError;

/// An answer still to come (a creation with result, a command sent without waiting).
pub struct PendingAnswer(oneshot::Receiver<Result<Record, PartitionError>>);

impl PendingAnswer {
    pub(super) fn new(answer: oneshot::Receiver<Result<Record, PartitionError>>) -> Self {
        Self(answer)
    }

    /// Waits up to 10 s for the answer.
    pub fn wait(self, harness: &Harness) -> Result<Record, PartitionError> {
        harness.runtime.block_on(async move {
            match tokio::time::timeout(std::time::Duration::from_secs(10), self.0).await {
                Ok(Ok(answer)) => answer,
                _ => Err(PartitionError::Unavailable {
                    partition: 0,
                    reason: "no answer within 10 s".into(),
                }),
            }
        })
    }

    /// The answer, if it came already.
    pub fn try_take(&mut self) -> Option<Result<Record, PartitionError>> {
        self.0.try_recv().ok()
    }
}

fn expect_event(answer: Result<Record, PartitionError>, what: &str) -> Record {
    match answer {
        Ok(record) if record.record_type == RecordType::Event => record,
        Ok(record) => panic!(
            "{what} was rejected: {} {}",
            record.rejection_type.name(),
            record.rejection_reason
        ),
        Err(error) => panic!("{what} failed: {error}"),
    }
}

impl Harness {
    fn on_key(&self, key: i64, command: Record) -> Result<Record, PartitionError> {
        self.execute_on(key::partition_of(key).unwrap_or(1), command)
    }

    /// Deploys one resource; the answer is DEPLOYMENT CREATED or the rejection.
    pub fn deploy(&self, name: &str, content: &str) -> Result<Record, PartitionError> {
        self.execute(Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: vec![DeploymentResource {
                    resource: content.as_bytes().to_vec(),
                    resource_name: name.to_string(),
                }],
                ..Default::default()
            },
        ))
    }

    /// Deploys several resources at once (one deployment); the answer is DEPLOYMENT CREATED or
    /// the rejection.
    pub fn deploy_resources(&self, resources: &[(&str, &str)]) -> Result<Record, PartitionError> {
        self.execute(Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: resources
                    .iter()
                    .map(|(name, content)| DeploymentResource {
                        resource: content.as_bytes().to_vec(),
                        resource_name: name.to_string(),
                    })
                    .collect(),
                ..Default::default()
            },
        ))
    }

    /// Deploys a built process, which must be accepted.
    pub fn deploy_process(&self, process: &ProcessBuilder) -> Record {
        expect_event(
            self.deploy("process.bpmn", &process.build()),
            "the deployment",
        )
    }

    fn creation(
        process_id: &str,
        variables: &str,
        fetch: &[&str],
    ) -> ProcessInstanceCreationRecord {
        ProcessInstanceCreationRecord {
            bpmn_process_id: process_id.to_string(),
            version: -1,
            variables: variables.as_bytes().to_vec(),
            fetch_variables: fetch.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    /// Starts an instance of the latest version; the answer is the CREATED event or rejection.
    pub fn try_create_instance(
        &self,
        process_id: &str,
        variables: &str,
    ) -> Result<Record, PartitionError> {
        self.execute(Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            Self::creation(process_id, variables, &[]),
        ))
    }

    /// Starts an instance, which must succeed; returns its key.
    pub fn create_instance(&self, process_id: &str, variables: &str) -> i64 {
        let created = expect_event(
            self.try_create_instance(process_id, variables),
            "the creation",
        );
        created
            .value_as::<ProcessInstanceCreationRecord>()
            .map(|c| c.process_instance_key)
            .unwrap_or(-1)
    }

    /// Starts an instance on `partition` (once the deployment reached it); returns its key.
    pub fn create_instance_on(&self, partition: u16, process_id: &str, variables: &str) -> i64 {
        self.settle();
        let created = expect_event(
            self.execute_on(
                partition,
                Record::command(
                    -1,
                    ProcessInstanceCreationIntent::Create,
                    Self::creation(process_id, variables, &[]),
                ),
            ),
            "the creation",
        );
        created
            .value_as::<ProcessInstanceCreationRecord>()
            .map(|c| c.process_instance_key)
            .unwrap_or(-1)
    }

    /// Starts an instance and returns the answer to come when it completes.
    pub fn create_instance_with_result(
        &self,
        process_id: &str,
        variables: &str,
        fetch: &[&str],
    ) -> PendingAnswer {
        let handle = self.partition(1).clone();
        let command = Record::command(
            -1,
            ProcessInstanceCreationIntent::CreateWithAwaitingResult,
            Self::creation(process_id, variables, fetch),
        );
        let (tx, rx) = oneshot::channel();
        self.runtime.spawn(async move {
            let _ = tx.send(handle.execute(command).await);
        });
        PendingAnswer::new(rx)
    }

    /// Activates up to `max` jobs of a type for 60 s: (key, job with its variables).
    pub fn activate_jobs(&self, job_type: &str, max: i32) -> Vec<(i64, JobRecord)> {
        let answer = self.execute(Record::command(
            -1,
            JobBatchIntent::Activate,
            JobBatchRecord {
                r#type: job_type.to_string(),
                worker: "test-worker".to_string(),
                timeout: 60_000,
                max_jobs_to_activate: max,
                ..Default::default()
            },
        ));
        let batch = expect_event(answer, "the job activation");
        let batch = batch
            .value_as::<JobBatchRecord>()
            .cloned()
            .unwrap_or_default();
        batch.job_keys.into_iter().zip(batch.jobs).collect()
    }

    /// Activates the one job of a type, which must exist (or appear within a second: commands
    /// sent without waiting for their answer may still be on their way).
    pub fn activate_job(&self, job_type: &str) -> (i64, JobRecord) {
        for _ in 0..100 {
            if let Some(job) = self.activate_jobs(job_type, 1).pop() {
                return job;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!(
            "no activatable job of type '{job_type}'\n{}",
            self.records().log()
        )
    }

    fn job_command(
        &self,
        key: i64,
        intent: JobIntent,
        job: JobRecord,
    ) -> Result<Record, PartitionError> {
        self.on_key(key, Record::command(key, intent, job))
    }

    pub fn complete_job(&self, key: i64, variables: &str) -> Result<Record, PartitionError> {
        self.job_command(
            key,
            JobIntent::Complete,
            JobRecord {
                variables: variables.as_bytes().to_vec(),
                ..Default::default()
            },
        )
    }

    /// Completes a job with a result (a user task listener's corrections or denial).
    pub fn complete_job_with_result(
        &self,
        key: i64,
        result: beeline_protocol::value::JobResult,
    ) -> Result<Record, PartitionError> {
        self.job_command(
            key,
            JobIntent::Complete,
            JobRecord {
                result: Some(result),
                ..Default::default()
            },
        )
    }

    pub fn fail_job(
        &self,
        key: i64,
        retries: i32,
        message: &str,
        backoff_ms: i64,
    ) -> Result<Record, PartitionError> {
        self.job_command(
            key,
            JobIntent::Fail,
            JobRecord {
                retries,
                error_message: message.to_string(),
                retry_backoff: backoff_ms,
                ..Default::default()
            },
        )
    }

    pub fn throw_error(
        &self,
        key: i64,
        code: &str,
        message: &str,
    ) -> Result<Record, PartitionError> {
        self.job_command(
            key,
            JobIntent::ThrowError,
            JobRecord {
                error_code: code.to_string(),
                error_message: message.to_string(),
                ..Default::default()
            },
        )
    }

    pub fn update_retries(&self, key: i64, retries: i32) -> Result<Record, PartitionError> {
        self.job_command(
            key,
            JobIntent::UpdateRetries,
            JobRecord {
                retries,
                ..Default::default()
            },
        )
    }

    pub fn update_timeout(&self, key: i64, timeout_ms: i64) -> Result<Record, PartitionError> {
        self.job_command(
            key,
            JobIntent::UpdateTimeout,
            JobRecord {
                timeout: timeout_ms,
                ..Default::default()
            },
        )
    }

    /// `JOB UPDATE` with a changeset naming what is given.
    pub fn update_job(
        &self,
        key: i64,
        retries: Option<i32>,
        timeout_ms: Option<i64>,
    ) -> Result<Record, PartitionError> {
        let mut changed_attributes = Vec::new();
        if retries.is_some() {
            changed_attributes.push("retries".to_owned());
        }
        if timeout_ms.is_some() {
            changed_attributes.push("timeout".to_owned());
        }
        self.job_command(
            key,
            JobIntent::Update,
            JobRecord {
                retries: retries.unwrap_or_default(),
                timeout: timeout_ms.unwrap_or_default(),
                changed_attributes,
                ..Default::default()
            },
        )
    }

    pub fn resolve_incident(&self, key: i64) -> Result<Record, PartitionError> {
        self.on_key(
            key,
            Record::command(key, IncidentIntent::Resolve, IncidentRecord::default()),
        )
    }

    pub fn set_variables(
        &self,
        scope: i64,
        variables: &str,
        local: bool,
    ) -> Result<Record, PartitionError> {
        self.on_key(
            scope,
            Record::command(
                -1,
                VariableDocumentIntent::Update,
                VariableDocumentRecord {
                    scope_key: scope,
                    update_semantics: if local { "LOCAL" } else { "PROPAGATE" }.to_string(),
                    variables: variables.as_bytes().to_vec(),
                    ..Default::default()
                },
            ),
        )
    }

    /// A USER_TASK command (as the REST API sends them) for the task `key`.
    pub fn user_task_command(
        &self,
        key: i64,
        intent: UserTaskIntent,
        task: UserTaskRecord,
    ) -> Result<Record, PartitionError> {
        self.on_key(key, Record::command(key, intent, task))
    }

    pub fn complete_user_task(&self, key: i64, variables: &str) -> Result<Record, PartitionError> {
        self.user_task_command(
            key,
            UserTaskIntent::Complete,
            UserTaskRecord {
                variables: variables.as_bytes().to_vec(),
                ..Default::default()
            },
        )
    }

    pub fn assign_user_task(&self, key: i64, assignee: &str) -> Result<Record, PartitionError> {
        self.user_task_command(
            key,
            UserTaskIntent::Assign,
            UserTaskRecord {
                assignee: assignee.to_string(),
                ..Default::default()
            },
        )
    }

    pub fn claim_user_task(&self, key: i64, assignee: &str) -> Result<Record, PartitionError> {
        self.user_task_command(
            key,
            UserTaskIntent::Claim,
            UserTaskRecord {
                assignee: assignee.to_string(),
                ..Default::default()
            },
        )
    }

    pub fn cancel_instance(&self, key: i64) -> Result<Record, PartitionError> {
        self.on_key(
            key,
            Record::command(
                key,
                ProcessInstanceIntent::Cancel,
                ProcessInstanceRecord::default(),
            ),
        )
    }
}
