//! Commands for partitions led by another broker: forwarded over the internal port to that
//! broker, whose gateway runs them through its partition (its in-flight limit, its answer) and
//! sends back the answer or why there is none.
//!
//! Every command this gateway forwards to one broker goes on one `Execute` call to it
//! ([`Pipes`]), opened with the first and kept while the connection lasts: each command is a
//! message on it under an id of its own, and each answer comes back under that id, in the
//! order the partitions answer. A command costs two messages on a stream already open, not a
//! call of its own (an HTTP/2 stream opened and closed, a task on the other side).
//!
//! The internal API is a third transport of the gateway's errors, with its own table
//! ([`failure`] and [`from_failure`]): what was certainly not written stays "not written"
//! across the hop (so the forwarding gateway may retry it, or try another partition), and
//! what may have been written stays "maybe written" (DEADLINE_EXCEEDED, never retried here).
//! A call that cannot be opened (no connection) is "not written" for every command on it; one
//! that breaks while commands are on it is "maybe written" for those.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use beeline_cluster::records;
use beeline_cluster::transport::proto;
use beeline_cluster::transport::proto::failure::Kind;
use beeline_cluster::transport::proto::internal_client::InternalClient;
use beeline_cluster::{Executor, NodeId};
use beeline_protocol::{Record, RecordType};
use beeline_stream::PartitionError;
use tokio::sync::{mpsc, oneshot};
use tonic::transport::Channel;

use crate::backpressure::Exhausted;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::forwarding::ForwardingBudget;

/// Time the leader's own timeout has to answer before the forwarding side gives up.
const MARGIN: Duration = Duration::from_millis(500);

/// Sends `command` to `node`, the leader of `partition`, on the call `pipes` keep to it, and
/// waits for its answer.
pub(crate) async fn forward(
    pipes: &Pipes,
    node: NodeId,
    channel: Channel,
    partition: u16,
    command: &Record,
    timeout: Duration,
    budget: &ForwardingBudget,
) -> Result<Record, GatewayError> {
    let request = proto::ExecuteRequest {
        partition_id: u32::from(partition),
        command: records::encode(command),
        timeout_ms: timeout.as_millis() as u64,
    };
    let _held = budget.take(command.intent, request.command.len())?;
    let unreachable = |reason: String| {
        GatewayError::Refused(PartitionError::Unavailable {
            partition,
            reason: format!("its leader, broker {node}, cannot be reached: {reason}"),
        })
    };
    let (pipe, id, answer) = pipes.send(node, channel, request).map_err(unreachable)?;
    let answer = match tokio::time::timeout(timeout + MARGIN, answer).await {
        Err(_) => {
            pipe.abandon(id);
            return Err(GatewayError::Timeout {
                partition,
                after: timeout,
            });
        }
        // The pipe's task ended without a word (it panicked): as a break.
        Ok(Err(_)) => Err(Broken::Cut("the call to it ended".into())),
        Ok(Ok(answer)) => answer,
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(Broken::NeverOpened(reason)) => return Err(unreachable(reason)),
        Err(Broken::Cut(reason)) => {
            tracing::info!(node, partition, %reason, "the connection to a partition's leader broke with a command on its way; it may have been written");
            return Err(GatewayError::Timeout {
                partition,
                after: timeout,
            });
        }
    };
    match answer.result {
        Some(proto::execute_response::Result::Record(bytes)) => {
            records::decode(&bytes, answer.position)
                .map_err(|e| GatewayError::Internal(format!("broker {node} answered: {e}")))
        }
        Some(proto::execute_response::Result::Failure(failure)) => Err(from_failure(failure)),
        None => Err(GatewayError::Internal(format!(
            "broker {node} answered without a result"
        ))),
    }
}

/// Why a forwarded command has no answer from its call.
#[derive(Debug, Clone)]
enum Broken {
    /// The call could not be opened: nothing on it reached the other broker.
    NeverOpened(String),
    /// The call broke, or ended, with the command on it: it may have been written.
    Cut(String),
}

type Answer = Result<proto::ExecuteResponse, Broken>;

/// The `Execute` calls this gateway keeps open, one per broker it forwards to.
#[derive(Default)]
pub(crate) struct Pipes {
    open: Mutex<HashMap<NodeId, Arc<Pipe>>>,
}

/// One `Execute` call to a broker: the commands to send on it, and the answers awaited.
struct Pipe {
    calls: mpsc::UnboundedSender<proto::ExecuteCall>,
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next_id: u64,
    answers: HashMap<u64, oneshot::Sender<Answer>>,
    /// Set once the call is over (with why): nothing more waits on it.
    over: Option<Broken>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pipes {
    /// Puts `request` on the call to `node` (opening one over `channel` when there is none,
    /// or the last one is over): the pipe, the command's id on it and where its answer comes.
    /// An error when the command certainly did not go (the call is over, cannot be opened).
    fn send(
        &self,
        node: NodeId,
        channel: Channel,
        request: proto::ExecuteRequest,
    ) -> Result<(Arc<Pipe>, u64, oneshot::Receiver<Answer>), String> {
        let pipe = {
            let mut open = lock(&self.open);
            match open.get(&node) {
                Some(pipe) if lock(&pipe.waiting).over.is_none() => pipe.clone(),
                _ => {
                    let pipe = Pipe::open(node, channel);
                    open.insert(node, pipe.clone());
                    pipe
                }
            }
        };
        let (answer, answered) = oneshot::channel();
        let id = {
            let mut waiting = lock(&pipe.waiting);
            if let Some(broken) = &waiting.over {
                return Err(match broken {
                    Broken::NeverOpened(reason) | Broken::Cut(reason) => reason.clone(),
                });
            }
            waiting.next_id += 1;
            let id = waiting.next_id;
            waiting.answers.insert(id, answer);
            id
        };
        if pipe
            .calls
            .send(proto::ExecuteCall {
                id,
                request: Some(request),
            })
            .is_err()
        {
            pipe.abandon(id);
            return Err("the call to it ended".into());
        }
        Ok((pipe, id, answered))
    }
}

impl Pipe {
    /// Opens the call to `node` on a task of its own, which hands each answer to the command
    /// waiting for it and, when the call is over, tells every command still waiting why.
    fn open(node: NodeId, channel: Channel) -> Arc<Self> {
        let (calls, to_send) = mpsc::unbounded_channel();
        let pipe = Arc::new(Pipe {
            calls,
            waiting: Mutex::default(),
        });
        let weak = Arc::downgrade(&pipe);
        tokio::spawn(async move {
            let mut client = InternalClient::new(channel)
                .max_decoding_message_size(usize::MAX)
                .max_encoding_message_size(usize::MAX);
            let requests = tokio_stream::wrappers::UnboundedReceiverStream::new(to_send);
            let why = match client.execute(requests).await {
                Err(status) if never_connected(&status) => {
                    Broken::NeverOpened(status.message().to_string())
                }
                Err(status) => Broken::Cut(status.message().to_string()),
                Ok(answers) => {
                    let mut answers = answers.into_inner();
                    loop {
                        let answer = match answers.message().await {
                            Ok(Some(answer)) => answer,
                            Ok(None) => break Broken::Cut(format!("broker {node} ended the call")),
                            Err(status) => break Broken::Cut(status.message().to_string()),
                        };
                        let Some(pipe) = weak.upgrade() else { return };
                        let waiter = lock(&pipe.waiting).answers.remove(&answer.id);
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(answer.response.ok_or_else(|| {
                                Broken::Cut(format!(
                                    "broker {node} answered forwarded command {} without a response",
                                    answer.id
                                ))
                            }));
                        }
                    }
                }
            };
            if let Some(pipe) = weak.upgrade() {
                let waiters = {
                    let mut waiting = lock(&pipe.waiting);
                    waiting.over = Some(why.clone());
                    std::mem::take(&mut waiting.answers)
                };
                for (_, waiter) in waiters {
                    let _ = waiter.send(Err(why.clone()));
                }
            }
        });
        pipe
    }

    /// Stops waiting for the answer to command `id` (its caller gave up).
    fn abandon(&self, id: u64) {
        lock(&self.waiting).answers.remove(&id);
    }
}

/// Whether the call failed before it reached the other broker: its connection could not be
/// made.
fn never_connected(status: &tonic::Status) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(status);
    while let Some(error) = source {
        if error.is::<tonic::ConnectError>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// The internal API's form of a gateway error.
pub(crate) fn failure(error: &GatewayError) -> proto::Failure {
    let message = match error {
        GatewayError::Internal(message) | GatewayError::NotFound(message) => message.clone(),
        GatewayError::Refused(PartitionError::Unavailable { reason, .. })
        | GatewayError::Partition(
            PartitionError::Unavailable { reason, .. } | PartitionError::Interrupted { reason, .. },
        ) => reason.clone(),
        other => other.message(),
    };
    let mut failure = proto::Failure {
        kind: Kind::Internal.into(),
        partition_id: 0,
        message,
        a: 0,
        b: 0,
    };
    let mut set = |kind: Kind, partition: u16, a: u64, b: u64| {
        failure.kind = kind.into();
        failure.partition_id = u32::from(partition);
        failure.a = a;
        failure.b = b;
    };
    match error {
        GatewayError::NotFound(_) => set(Kind::NotFound, 0, 0, 0),
        GatewayError::Backpressure(exhausted) => set(
            Kind::Backpressure,
            exhausted.partition,
            exhausted.inflight as u64,
            exhausted.limit as u64,
        ),
        GatewayError::Timeout { partition, after } => {
            set(Kind::Timeout, *partition, after.as_millis() as u64, 0)
        }
        GatewayError::Refused(partition_error) | GatewayError::Partition(partition_error) => {
            let refused = matches!(error, GatewayError::Refused(_));
            match partition_error {
                PartitionError::ResourceExhausted(partition) => {
                    set(Kind::QueueFull, *partition, 0, 0)
                }
                PartitionError::CommandTooLarge { size, max } => {
                    set(Kind::CommandTooLarge, 0, *size as u64, *max as u64)
                }
                PartitionError::DiskFull {
                    partition,
                    free,
                    min_free,
                } => set(Kind::DiskFull, *partition, *free, *min_free),
                PartitionError::NotLeader { partition, leader } => {
                    set(Kind::NotLeader, *partition, leader.map_or(0, |l| l + 1), 0)
                }
                PartitionError::Interrupted { partition, .. } => {
                    set(Kind::Interrupted, *partition, 0, 0)
                }
                PartitionError::Unavailable { partition, .. } => set(
                    if refused {
                        Kind::Refused
                    } else {
                        Kind::Unavailable
                    },
                    *partition,
                    0,
                    0,
                ),
            }
        }
        _ => {}
    }
    failure
}

/// A gateway error from its internal API's form.
pub(crate) fn from_failure(failure: proto::Failure) -> GatewayError {
    let partition = u16::try_from(failure.partition_id).unwrap_or(0);
    let kind = Kind::try_from(failure.kind).unwrap_or(Kind::Internal);
    match kind {
        Kind::Internal => GatewayError::Internal(failure.message),
        Kind::NotFound => GatewayError::NotFound(failure.message),
        Kind::NotLeader => GatewayError::Refused(PartitionError::NotLeader {
            partition,
            leader: failure.a.checked_sub(1),
        }),
        Kind::Interrupted => GatewayError::Partition(PartitionError::Interrupted {
            partition,
            reason: failure.message,
        }),
        Kind::Backpressure => GatewayError::Backpressure(Exhausted {
            partition,
            inflight: failure.a as usize,
            limit: failure.b as usize,
        }),
        Kind::QueueFull => GatewayError::Refused(PartitionError::ResourceExhausted(partition)),
        Kind::CommandTooLarge => GatewayError::Refused(PartitionError::CommandTooLarge {
            size: failure.a as usize,
            max: failure.b as usize,
        }),
        Kind::DiskFull => GatewayError::Refused(PartitionError::DiskFull {
            partition,
            free: failure.a,
            min_free: failure.b,
        }),
        Kind::Refused => GatewayError::Refused(PartitionError::Unavailable {
            partition,
            reason: failure.message,
        }),
        Kind::Unavailable => GatewayError::Partition(PartitionError::Unavailable {
            partition,
            reason: failure.message,
        }),
        Kind::Timeout => GatewayError::Timeout {
            partition,
            after: Duration::from_millis(failure.a),
        },
    }
}

/// Runs commands other brokers' gateways forward to partitions led here.
pub(crate) struct Forwarded {
    pub d: Arc<Dispatcher>,
}

#[tonic::async_trait]
impl Executor for Forwarded {
    async fn execute(&self, request: proto::ExecuteRequest) -> proto::ExecuteResponse {
        let answer = match records::decode(&request.command, -1) {
            Err(e) => Err(GatewayError::Internal(e.to_string())),
            Ok(command) => match u16::try_from(request.partition_id) {
                Err(_) => Err(GatewayError::NotFound(format!(
                    "partition {} does not exist",
                    request.partition_id
                ))),
                Ok(partition) => {
                    let timeout = Duration::from_millis(request.timeout_ms)
                        .min(self.d.config.request_timeout.max(Duration::from_secs(1)) * 10);
                    match self
                        .d
                        .execute_here(partition, command.clone(), timeout)
                        .await
                    {
                        // A rejection is an answer: it travels as the record it is.
                        Err(GatewayError::Rejected {
                            intent,
                            rejection,
                            reason,
                        }) => Ok(Record {
                            record_type: RecordType::CommandRejection,
                            intent,
                            rejection_type: rejection,
                            rejection_reason: reason,
                            ..command
                        }),
                        other => other,
                    }
                }
            },
        };
        match answer {
            Ok(record) => proto::ExecuteResponse {
                position: record.position,
                result: Some(proto::execute_response::Result::Record(records::encode(
                    &record,
                ))),
            },
            Err(error) => proto::ExecuteResponse {
                position: -1,
                result: Some(proto::execute_response::Result::Failure(failure(&error))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_whether_the_command_was_written_across_brokers() {
        let errors = [
            GatewayError::NotFound("no such".into()),
            GatewayError::Backpressure(Exhausted {
                partition: 2,
                inflight: 10,
                limit: 10,
            }),
            GatewayError::Refused(PartitionError::ResourceExhausted(3)),
            GatewayError::Refused(PartitionError::CommandTooLarge { size: 9, max: 4 }),
            GatewayError::Refused(PartitionError::DiskFull {
                partition: 1,
                free: 5,
                min_free: 6,
            }),
            GatewayError::Refused(PartitionError::NotLeader {
                partition: 2,
                leader: Some(0),
            }),
            GatewayError::Partition(PartitionError::Interrupted {
                partition: 1,
                reason: "stepped down".into(),
            }),
            GatewayError::Refused(PartitionError::Unavailable {
                partition: 2,
                reason: "stopped".into(),
            }),
            GatewayError::Partition(PartitionError::Unavailable {
                partition: 2,
                reason: "failed".into(),
            }),
            GatewayError::Timeout {
                partition: 3,
                after: Duration::from_millis(1500),
            },
            GatewayError::Internal("boom".into()),
        ];
        for error in errors {
            let back = from_failure(failure(&error));
            assert_eq!(back, error, "{error}");
            assert_eq!(
                back.is_retriable_elsewhere(),
                error.is_retriable_elsewhere()
            );
        }
    }
}
