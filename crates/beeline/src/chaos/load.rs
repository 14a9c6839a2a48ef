//! The client side of a chaos run: a gateway client of the whole cluster that finds a
//! partition's leader by retrying, the load (instances started, both jobs of each completed,
//! messages published) and the history of what the cluster acknowledged.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use beeline_gateway_protocol::proto;
use beeline_gateway_protocol::proto::gateway_client::GatewayClient;
use beeline_protocol::partitioning::message_partition;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::harness::{FIRST, PROCESS_ID, SECOND, instance_id};

/// How long one call may take before the client gives up on an answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a call is retried on other brokers while the cluster answers "not written".
const RETRY_FOR: Duration = Duration::from_secs(30);
/// How long a load worker holds a job.
const JOB_TIMEOUT: Duration = Duration::from_secs(5);
/// Time to live of published messages: they correlate with nothing and only need to be
/// committed.
const MESSAGE_TTL_MS: i64 = 1_000;

/// What the cluster acknowledged, and what it answered in a way that leaves the outcome open.
#[derive(Default)]
pub struct History {
    /// Acknowledged starts: the instance's id variable and key.
    pub created: Vec<(String, i64)>,
    /// Jobs whose completion was acknowledged.
    pub completed: Vec<i64>,
    /// Keys of acknowledged published messages.
    pub published: Vec<i64>,
    /// Commands answered DEADLINE_EXCEEDED or cut off: written or not, nobody knows.
    pub uncertain: u64,
    /// Commands refused (not written) after every retry.
    pub refused: u64,
    /// Completions answered NOT_FOUND: the job had timed out and was completed by another
    /// worker (or is gone with its instance).
    pub not_found: u64,
    /// Every answer that was not an acknowledgement, by code and message (digits as `#`).
    pub answers: BTreeMap<String, u64>,
}

impl History {
    pub fn lock(history: &Mutex<History>) -> std::sync::MutexGuard<'_, History> {
        history.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn acknowledged(&self) -> usize {
        self.created.len() + self.completed.len() + self.published.len()
    }
}

/// A client of every broker, by node id.
#[derive(Clone)]
pub struct ClusterClient {
    brokers: Vec<GatewayClient<Channel>>,
    /// Each broker's monitoring port, where its metrics say which replicas it leads.
    monitoring: Vec<u16>,
}

/// Whether an error says the command was certainly not written, so another broker may take
/// it: "not the leader" (UNAVAILABLE, naming the leader when it is known), a broker that is
/// not there (UNAVAILABLE from the transport) and backpressure.
fn not_written(status: &Status) -> bool {
    matches!(status.code(), Code::Unavailable | Code::ResourceExhausted)
}

/// The leader an UNAVAILABLE answer names ("... (the leader is broker 2)").
fn leader_named(message: &str) -> Option<usize> {
    let (_, rest) = message.split_once("the leader is broker ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

impl ClusterClient {
    pub fn new(brokers: Vec<GatewayClient<Channel>>, monitoring: Vec<u16>) -> Self {
        Self {
            brokers,
            monitoring,
        }
    }

    pub fn broker(&self, node: usize) -> GatewayClient<Channel> {
        self.brokers[node % self.brokers.len()].clone()
    }

    /// Runs `call` against broker `first`, then, while the answer says the command was not
    /// written, against the broker it names as leader or the next one, for [`RETRY_FOR`]. An
    /// answer that does not come in [`REQUEST_TIMEOUT`] is DEADLINE_EXCEEDED.
    pub async fn call<T, F, Fut>(&self, first: usize, mut call: F) -> Result<T, Status>
    where
        F: FnMut(GatewayClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let count = self.brokers.len();
        let deadline = Instant::now() + RETRY_FOR;
        let mut at = first % count;
        let mut tries = 0usize;
        loop {
            let answer = tokio::time::timeout(REQUEST_TIMEOUT, call(self.broker(at))).await;
            match answer {
                Ok(Ok(response)) => return Ok(response.into_inner()),
                Ok(Err(status)) if not_written(&status) && Instant::now() < deadline => {
                    tries += 1;
                    at = leader_named(status.message())
                        .filter(|&named| named < count && named != at)
                        .unwrap_or((at + 1) % count);
                    if tries.is_multiple_of(count) {
                        tokio::time::sleep(Duration::from_millis(25)).await;
                    }
                }
                Ok(Err(status)) => return Err(status),
                Err(_) => return Err(Status::deadline_exceeded("no answer in time")),
            }
        }
    }

    /// Publishes a message on `partition` (its correlation key hashes there); its key.
    pub async fn publish(
        &self,
        first: usize,
        partition: u16,
        partitions: u16,
        name: &str,
    ) -> Result<i64, Status> {
        let key = correlation_key_on(partition, partitions);
        let answer = self
            .call(first, |mut client| {
                let request = proto::PublishMessageRequest {
                    name: name.to_owned(),
                    correlation_key: key.clone(),
                    time_to_live: MESSAGE_TTL_MS,
                    variables: "{}".into(),
                    ..Default::default()
                };
                async move { client.publish_message(request).await }
            })
            .await?;
        Ok(answer.key)
    }

    /// The first command acknowledged on `partition` after a fault at `since` (a message
    /// published there, each try through the next broker, given 2 s), tried for `give_up`:
    /// how long it took from `since`, and the last answer before it.
    pub async fn first_success(
        &self,
        partition: u16,
        partitions: u16,
        since: Instant,
        give_up: Duration,
    ) -> Result<(Duration, String), String> {
        let mut attempt = 0usize;
        let mut last = String::from("none");
        loop {
            let tried = tokio::time::timeout(
                Duration::from_secs(2),
                self.publish(attempt, partition, partitions, "chaos-probe"),
            )
            .await;
            match tried {
                Ok(Ok(_)) => return Ok((since.elapsed(), last)),
                Ok(Err(status)) => {
                    last = format!("{:?}: {}", status.code(), status.message());
                }
                Err(_) => {
                    last = format!(
                        "no answer within 2 s (tried from broker {} on)",
                        attempt % self.brokers.len()
                    );
                }
            }
            if since.elapsed() > give_up {
                return Err(format!(
                    "partition {partition} acknowledged no command within {} s; last answer: \
                     {last}",
                    give_up.as_secs()
                ));
            }
            attempt += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// `Ok` when every broker answers and reports its replicas healthy (`partitions` ×
    /// `replication_factor` in all), with exactly one leader per partition; otherwise what is
    /// missing.
    pub async fn whole(&self, partitions: u16, replication_factor: usize) -> Result<(), String> {
        let roles = self.roles().await;
        let mut leaders: BTreeMap<u16, u32> = BTreeMap::new();
        let mut healthy = 0;
        for replicas in roles.values() {
            for (&partition, replica) in replicas {
                healthy += usize::from(replica.healthy);
                if replica.leader {
                    *leaders.entry(partition).or_default() += 1;
                }
            }
        }
        let replicas: usize = roles.values().map(BTreeMap::len).sum();
        let expected = usize::from(partitions) * replication_factor;
        if roles.len() == self.monitoring.len()
            && healthy == expected
            && replicas == expected
            && leaders.len() == usize::from(partitions)
            && leaders.values().all(|&n| n == 1)
        {
            return Ok(());
        }
        Err(format!(
            "brokers answering: {:?}, leaders per partition: {leaders:?}, healthy replicas: \
             {healthy} of {expected}",
            roles.keys().collect::<Vec<_>>()
        ))
    }

    /// Asks the cluster to hand every partition's leadership to its primary (Zeebe's
    /// `POST /actuator/rebalance`, on the first broker that answers: it asks the others).
    pub async fn rebalance(&self) -> Result<(), String> {
        let mut last = String::from("no broker to ask");
        for &port in &self.monitoring {
            let asked = tokio::time::timeout(
                Duration::from_secs(2),
                monitoring_request(port, "POST /actuator/rebalance"),
            )
            .await;
            match asked {
                Ok(Ok(answer)) if answer.starts_with("HTTP/1.1 200") => return Ok(()),
                Ok(Ok(answer)) => last = answer.lines().next().unwrap_or_default().to_string(),
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "no answer within 2 s".into(),
            }
        }
        Err(format!("rebalancing could not be asked for: {last}"))
    }

    /// The journal syncs of every broker's flusher so far, summed: how many, and the seconds
    /// they took (`beeline_raft_log_syncs_total`, `beeline_raft_log_sync_duration_seconds_sum`);
    /// `None` if a broker does not answer or shows neither.
    pub async fn journal_syncs(&self) -> Option<JournalSyncs> {
        let mut total = JournalSyncs::default();
        for &port in &self.monitoring {
            let text = tokio::time::timeout(Duration::from_secs(2), get_metrics(port))
                .await
                .ok()?
                .ok()?;
            let value = |name: &str| {
                text.lines()
                    .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
                    .and_then(|value| value.trim().parse::<f64>().ok())
            };
            total.syncs += value("beeline_raft_log_syncs_total")? as u64;
            total.seconds += value("beeline_raft_log_sync_duration_seconds_sum")?;
        }
        Some(total)
    }

    /// Each answering broker's view of its replicas, by node id, from its metrics.
    pub async fn roles(&self) -> BTreeMap<usize, BTreeMap<u16, Replica>> {
        let mut found = BTreeMap::new();
        for (node, &port) in self.monitoring.iter().enumerate() {
            if let Ok(Ok(text)) =
                tokio::time::timeout(Duration::from_secs(2), get_metrics(port)).await
            {
                found.insert(node, replicas(&text));
            }
        }
        found
    }
}

/// Journal syncs counted by brokers' metrics: how many, and the seconds they took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JournalSyncs {
    pub syncs: u64,
    pub seconds: f64,
}

impl JournalSyncs {
    /// What was counted between `earlier` and these.
    pub fn since(self, earlier: Self) -> Self {
        Self {
            syncs: self.syncs.saturating_sub(earlier.syncs),
            seconds: (self.seconds - earlier.seconds).max(0.0),
        }
    }
}

/// A broker's replica of a partition, as its metrics say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Replica {
    pub leader: bool,
    pub term: u64,
    pub healthy: bool,
}

/// `GET /metrics` of the monitoring endpoint on `port`.
async fn get_metrics(port: u16) -> std::io::Result<String> {
    monitoring_request(port, "GET /metrics").await
}

/// A request without a body to a broker's monitoring port (`request`: its method and path),
/// and its whole answer.
async fn monitoring_request(port: u16, request: &str) -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let head = format!(
        "{request} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    Ok(answer)
}

/// The replicas a broker's metrics describe (`beeline_partition_role`, `_term`, `_healthy`).
fn replicas(metrics: &str) -> BTreeMap<u16, Replica> {
    let mut replicas: BTreeMap<u16, Replica> = BTreeMap::new();
    for line in metrics.lines() {
        let Some((name, rest)) = line.split_once("{partition=\"") else {
            continue;
        };
        let Some((partition, value)) = rest.split_once("\"} ") else {
            continue;
        };
        let (Ok(partition), Ok(value)) = (partition.parse::<u16>(), value.trim().parse::<u64>())
        else {
            continue;
        };
        let replica = replicas.entry(partition).or_default();
        match name {
            "beeline_partition_role" => replica.leader = value == 1,
            "beeline_partition_term" => replica.term = value,
            "beeline_partition_healthy" => replica.healthy = value == 1,
            _ => {}
        }
    }
    replicas
}

/// A correlation key whose messages live on `partition`.
pub fn correlation_key_on(partition: u16, partitions: u16) -> String {
    (0u32..)
        .map(|i| format!("probe-{i}"))
        .find(|key| message_partition(key, partitions) == partition)
        .unwrap_or_default()
}

/// The leader of each partition: the broker that reports leading it, healthy, in the highest
/// term.
pub fn leaders(roles: &BTreeMap<usize, BTreeMap<u16, Replica>>) -> BTreeMap<u16, usize> {
    let mut leaders: BTreeMap<u16, (u64, usize)> = BTreeMap::new();
    for (&node, replicas) in roles {
        for (&partition, replica) in replicas {
            if replica.leader && replica.healthy {
                let best = leaders.entry(partition).or_insert((replica.term, node));
                if replica.term > best.0 {
                    *best = (replica.term, node);
                }
            }
        }
    }
    leaders
        .into_iter()
        .map(|(p, (_, node))| (p, node))
        .collect()
}

/// Records the outcome of a command that got no acknowledgement.
fn failed(history: &Mutex<History>, status: &Status) {
    let mut history = History::lock(history);
    let message: String = status
        .message()
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    *history
        .answers
        .entry(format!("{:?}: {message}", status.code()))
        .or_default() += 1;
    match status.code() {
        Code::NotFound => history.not_found += 1,
        code if not_written(status) || code == Code::FailedPrecondition => history.refused += 1,
        _ => history.uncertain += 1,
    }
}

/// One client starting instances, each with a unique id, until stopped.
pub async fn starter(
    cluster: ClusterClient,
    name: String,
    first: usize,
    history: Arc<Mutex<History>>,
) {
    for i in 0u64.. {
        let id = format!("{name}-{i}");
        let variables = format!(r#"{{"id":"{id}"}}"#);
        let answer = cluster
            .call(first + i as usize, |mut client| {
                let request = proto::CreateProcessInstanceRequest {
                    bpmn_process_id: PROCESS_ID.into(),
                    version: -1,
                    variables: variables.clone(),
                    ..Default::default()
                };
                async move { client.create_process_instance(request).await }
            })
            .await;
        match answer {
            Ok(created) => History::lock(&history)
                .created
                .push((id, created.process_instance_key)),
            Err(status) => {
                failed(&history, &status);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// One worker: activates jobs of `job_type` at broker `node` and completes them through
/// whichever broker leads their partition, until stopped.
pub async fn worker(
    cluster: ClusterClient,
    node: usize,
    job_type: &'static str,
    history: Arc<Mutex<History>>,
) {
    loop {
        let request = proto::ActivateJobsRequest {
            r#type: job_type.into(),
            worker: format!("chaos-{node}"),
            timeout: JOB_TIMEOUT.as_millis() as i64,
            max_jobs_to_activate: 32,
            request_timeout: 500,
            fetch_variable: vec!["id".into()],
            ..Default::default()
        };
        let mut jobs = Vec::new();
        let activated = tokio::time::timeout(REQUEST_TIMEOUT, async {
            let mut answers = cluster
                .broker(node)
                .activate_jobs(request)
                .await?
                .into_inner();
            while let Some(answer) = answers.message().await? {
                jobs.extend(answer.jobs);
            }
            Ok::<_, Status>(())
        })
        .await;
        if !matches!(activated, Ok(Ok(()))) && jobs.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        for job in jobs {
            if instance_id(&job.variables).is_none() {
                continue;
            }
            let answer = cluster
                .call(node, |mut client| {
                    let request = proto::CompleteJobRequest {
                        job_key: job.key,
                        variables: "{}".into(),
                        result: None,
                    };
                    async move { client.complete_job(request).await }
                })
                .await;
            match answer {
                Ok(_) => History::lock(&history).completed.push(job.key),
                Err(status) => failed(&history, &status),
            }
        }
    }
}

/// One client publishing messages on every partition in turn, until stopped.
pub async fn publisher(cluster: ClusterClient, partitions: u16, history: Arc<Mutex<History>>) {
    for i in 0u64.. {
        let partition = (i % u64::from(partitions)) as u16 + 1;
        match cluster
            .publish(i as usize, partition, partitions, "chaos")
            .await
        {
            Ok(key) => History::lock(&history).published.push(key),
            Err(status) => {
                failed(&history, &status);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The job types of the load's workers.
pub const JOB_TYPES: [&str; 2] = [FIRST, SECOND];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_leader() {
        assert_eq!(
            leader_named("partition 2 is not led by this broker (the leader is broker 1)"),
            Some(1)
        );
        assert_eq!(leader_named("partition 2 is not led by this broker"), None);
    }

    #[test]
    fn the_metrics_name_each_replica_s_role() {
        let metrics = "# HELP beeline_partition_role ...\n\
            beeline_partition_role{partition=\"1\"} 1\n\
            beeline_partition_role{partition=\"2\"} 2\n\
            beeline_partition_term{partition=\"1\"} 4\n\
            beeline_partition_healthy{partition=\"1\"} 1\n\
            beeline_partition_healthy{partition=\"2\"} 0\n";
        let found = replicas(metrics);
        assert_eq!(
            found[&1],
            Replica {
                leader: true,
                term: 4,
                healthy: true
            }
        );
        assert!(!found[&2].leader && !found[&2].healthy);
        let mut roles = BTreeMap::new();
        roles.insert(0, found);
        let mut stale = BTreeMap::new();
        stale.insert(
            1,
            Replica {
                leader: true,
                term: 3,
                healthy: true,
            },
        );
        roles.insert(1, stale);
        assert_eq!(
            leaders(&roles),
            BTreeMap::from([(1, 0)]),
            "the highest term leads"
        );
    }

    #[test]
    fn a_correlation_key_lands_on_its_partition() {
        for partition in 1..=3 {
            let key = correlation_key_on(partition, 3);
            assert_eq!(message_partition(&key, 3), partition);
        }
    }
}
