//! The node's open job streams (`StreamActivatedJobs`), which the partitions' engines push new
//! jobs to (see [`beeline_engine::push`]).
//!
//! A gateway opens a [`JobStream`] per worker stream and reads pushed jobs from it. The engine
//! reserves room in one stream while it processes (round robin over the streams of the type
//! that serve the job's tenant and have room), and the partition sends the job once the batch
//! is committed. Each stream holds at most its capacity of jobs not yet read, so a worker that
//! does not read stops getting jobs pushed: its jobs stay activatable for other workers.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use beeline_engine::{JobPush, PushSlot};
use beeline_protocol::value::JobRecord;
use tokio::sync::mpsc;

/// What the worker asked for when it opened the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobStreamProperties {
    pub job_type: String,
    pub worker: String,
    /// How long the worker holds a job (ms).
    pub timeout: i64,
    /// Variables to hand out with each job; empty: all visible ones.
    pub fetch_variables: Vec<String>,
    /// Tenants whose jobs the stream takes.
    pub tenant_ids: Vec<String>,
}

/// A job activated for a stream, with its key.
#[derive(Debug, Clone, PartialEq)]
pub struct PushedJob {
    pub key: i64,
    pub job: JobRecord,
}

/// The registry of open streams, shared by the gateway and the partitions of a node.
#[derive(Default)]
pub struct JobStreams {
    by_type: Mutex<HashMap<String, TypeStreams>>,
    /// Streams open, read without the lock: most nodes most of the time have none.
    open: AtomicUsize,
    next_id: AtomicU64,
}

#[derive(Default)]
struct TypeStreams {
    streams: Vec<Registered>,
    /// Where the next round-robin search starts.
    next: usize,
}

struct Registered {
    id: u64,
    properties: Arc<JobStreamProperties>,
    jobs: mpsc::Sender<PushedJob>,
}

impl fmt::Debug for JobStreams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobStreams")
            .field("open", &self.open.load(Ordering::Relaxed))
            .finish()
    }
}

impl JobStreams {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Opens a stream that holds at most `capacity` pushed jobs not yet read. It is closed
    /// when the returned [`JobStream`] is dropped or [closed](JobStream::close).
    pub fn open(self: &Arc<Self>, properties: JobStreamProperties, capacity: usize) -> JobStream {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let job_type = properties.job_type.clone();
        self.lock()
            .entry(job_type.clone())
            .or_default()
            .streams
            .push(Registered {
                id,
                properties: Arc::new(properties),
                jobs: tx,
            });
        self.open.fetch_add(1, Ordering::Relaxed);
        JobStream {
            id,
            job_type,
            registry: Arc::downgrade(self),
            jobs: rx,
        }
    }

    /// Streams open now.
    pub fn len(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn remove(&self, job_type: &str, id: u64) {
        let mut by_type = self.lock();
        let Some(streams) = by_type.get_mut(job_type) else {
            return;
        };
        let before = streams.streams.len();
        streams.streams.retain(|s| s.id != id);
        if streams.streams.len() < before {
            self.open.fetch_sub(1, Ordering::Relaxed);
        }
        if streams.streams.is_empty() {
            by_type.remove(job_type);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TypeStreams>> {
        // A panic while holding the lock cannot leave the map half-changed: keep using it.
        self.by_type.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl JobPush for JobStreams {
    fn reserve(&self, job_type: &str, tenant_id: &str) -> Option<Box<dyn PushSlot>> {
        if self.is_empty() {
            return None;
        }
        let mut by_type = self.lock();
        let streams = by_type.get_mut(job_type)?;
        let count = streams.streams.len();
        for i in 0..count {
            let at = (streams.next + i) % count;
            let stream = &streams.streams[at];
            if !stream.properties.tenant_ids.iter().any(|t| t == tenant_id) {
                continue;
            }
            if let Ok(permit) = stream.jobs.clone().try_reserve_owned() {
                streams.next = (at + 1) % count;
                return Some(Box::new(Slot {
                    properties: stream.properties.clone(),
                    stream: stream.jobs.clone(),
                    permit,
                }));
            }
        }
        None
    }
}

/// Room reserved in one stream.
struct Slot {
    properties: Arc<JobStreamProperties>,
    /// To see whether the stream closed (a permit cannot tell).
    stream: mpsc::Sender<PushedJob>,
    permit: mpsc::OwnedPermit<PushedJob>,
}

impl PushSlot for Slot {
    fn worker(&self) -> &str {
        &self.properties.worker
    }

    fn timeout(&self) -> i64 {
        self.properties.timeout
    }

    fn fetch_variables(&self) -> &[String] {
        &self.properties.fetch_variables
    }

    fn push(self: Box<Self>, key: i64, job: JobRecord) -> bool {
        // A stream closing between this check and the send loses the job to its time-out,
        // as a push in flight when a Zeebe stream closes does.
        if self.stream.is_closed() {
            return false;
        }
        self.permit.send(PushedJob { key, job });
        true
    }
}

/// One open stream, as its reader (the gateway) holds it.
pub struct JobStream {
    id: u64,
    job_type: String,
    registry: Weak<JobStreams>,
    jobs: mpsc::Receiver<PushedJob>,
}

impl JobStream {
    /// The next pushed job; `None` once the stream is closed and empty.
    pub async fn recv(&mut self) -> Option<PushedJob> {
        self.jobs.recv().await
    }

    /// Closes the stream: no job is pushed to it any more. Returns the jobs pushed and not yet
    /// read, which are still activated for this stream's worker and must be handed back.
    pub fn close(mut self) -> Vec<PushedJob> {
        self.deregister();
        self.jobs.close();
        let mut unread = Vec::new();
        while let Ok(job) = self.jobs.try_recv() {
            unread.push(job);
        }
        unread
    }

    fn deregister(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            registry.remove(&self.job_type, self.id);
        }
        self.registry = Weak::new();
    }
}

impl Drop for JobStream {
    fn drop(&mut self) {
        self.deregister();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn properties(job_type: &str, worker: &str) -> JobStreamProperties {
        JobStreamProperties {
            job_type: job_type.into(),
            worker: worker.into(),
            timeout: 30_000,
            fetch_variables: Vec::new(),
            tenant_ids: vec!["<default>".into()],
        }
    }

    #[tokio::test]
    async fn a_reserved_slot_pushes_to_its_stream() {
        let streams = JobStreams::new();
        let mut stream = streams.open(properties("pay", "w1"), 4);
        assert!(streams.reserve("ship", "<default>").is_none());
        assert!(streams.reserve("pay", "other-tenant").is_none());
        let slot = streams.reserve("pay", "<default>").unwrap();
        assert_eq!(slot.worker(), "w1");
        assert_eq!(slot.timeout(), 30_000);
        assert!(slot.push(7, JobRecord::default()));
        assert_eq!(stream.recv().await.unwrap().key, 7);
    }

    #[tokio::test]
    async fn streams_take_turns_and_a_full_one_is_skipped() {
        let streams = JobStreams::new();
        let mut a = streams.open(properties("pay", "a"), 1);
        let mut b = streams.open(properties("pay", "b"), 2);
        let workers: Vec<String> = (0..3)
            .map(|key| {
                let slot = streams.reserve("pay", "<default>").unwrap();
                let worker = slot.worker().to_owned();
                assert!(slot.push(key, JobRecord::default()));
                worker
            })
            .collect();
        // a holds one job: after it is full, b gets the rest.
        assert_eq!(workers, ["a", "b", "b"]);
        assert!(streams.reserve("pay", "<default>").is_none(), "both full");
        assert_eq!(a.recv().await.unwrap().key, 0);
        assert_eq!(b.recv().await.unwrap().key, 1);
        assert!(streams.reserve("pay", "<default>").is_some());
    }

    #[test]
    fn a_reservation_holds_room_until_dropped() {
        let streams = JobStreams::new();
        let _stream = streams.open(properties("pay", "w"), 1);
        let slot = streams.reserve("pay", "<default>").unwrap();
        assert!(streams.reserve("pay", "<default>").is_none());
        drop(slot);
        assert!(streams.reserve("pay", "<default>").is_some());
    }

    #[test]
    fn closing_deregisters_and_returns_unread_jobs() {
        let streams = JobStreams::new();
        let stream = streams.open(properties("pay", "w"), 4);
        let late = streams.reserve("pay", "<default>").unwrap();
        let slot = streams.reserve("pay", "<default>").unwrap();
        assert!(slot.push(1, JobRecord::default()));
        assert_eq!(streams.len(), 1);
        let unread = stream.close();
        assert_eq!(unread.iter().map(|j| j.key).collect::<Vec<_>>(), [1]);
        assert!(streams.is_empty());
        assert!(streams.reserve("pay", "<default>").is_none());
        // Reserved before the close, pushed after: given back to be yielded.
        assert!(!late.push(2, JobRecord::default()));
    }

    #[test]
    fn dropping_a_stream_deregisters_it() {
        let streams = JobStreams::new();
        let stream = streams.open(properties("pay", "w"), 4);
        drop(stream);
        assert!(streams.is_empty());
        assert!(streams.reserve("pay", "<default>").is_none());
    }
}
