//! The node's flusher: one task makes every Raft group's appends durable.
//!
//! Each group's log store registers its journal and hands the flusher its appends (openraft's
//! callbacks) and barriers. The task keeps one queue per journal and works in rounds: a round
//! starts one blocking sync for every journal that has requests waiting and no sync running,
//! all at once on the blocking pool (the file system's journal folds syncs that overlap into
//! one commit); when a journal's sync returns, the requests it covered are completed in the
//! order they arrived, and whatever arrived meanwhile rides with that journal's next sync
//! (group commit per journal, as the single node does). A journal has at most one sync
//! running, so its requests complete in order; a failed sync fails that journal's requests
//! only.
//!
//! Idle, the task waits on its queue: no timer, no wake-up, whatever the number of groups.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use beeline_log::Flusher;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use openraft::storage::IOFlushed;
use tokio::sync::{mpsc, oneshot};

use crate::TypeConfig;
use crate::metrics::{Histogram, HistogramSnapshot};

/// Syncs one journal: everything written to it before the call is durable when it returns.
type SyncFn = Arc<dyn Fn() -> io::Result<()> + Send + std::marker::Sync>;

/// What a request waits for: the next sync of its journal.
enum Waiter {
    /// openraft's callback for an append.
    Append(IOFlushed<TypeConfig>),
    /// A store's barrier (before a vote, a truncation, a purge).
    Barrier(oneshot::Sender<io::Result<()>>),
}

impl Waiter {
    fn complete(self, result: &io::Result<()>) {
        let result = match result {
            Ok(()) => Ok(()),
            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
        };
        match self {
            Waiter::Append(callback) => callback.io_completed(result),
            Waiter::Barrier(done) => {
                let _ = done.send(result);
            }
        }
    }
}

enum Request {
    Register { journal: u64, sync: SyncFn },
    Wait { journal: u64, waiter: Waiter },
    Close { journal: u64 },
}

/// What the flusher has done since it started.
#[derive(Debug, Default)]
pub struct FlushStats {
    rounds: AtomicU64,
    syncs: AtomicU64,
    failed: AtomicU64,
    completed: AtomicU64,
    latency: Histogram,
}

/// A snapshot of [`FlushStats`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlushCounts {
    /// Rounds that started at least one sync.
    pub rounds: u64,
    /// Journal syncs (one `fdatasync` each for a file journal).
    pub syncs: u64,
    /// Syncs that failed.
    pub failed: u64,
    /// Appends and barriers completed.
    pub completed: u64,
    /// How long each sync took.
    pub latency: HistogramSnapshot,
}

impl FlushStats {
    fn counts(&self) -> FlushCounts {
        FlushCounts {
            rounds: self.rounds.load(Ordering::Relaxed),
            syncs: self.syncs.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            latency: self.latency.snapshot(),
        }
    }
}

/// The node's flusher, shared by every Raft group's log store on the broker. Clones share the
/// task; it ends when the last clone and the last registered journal are dropped.
#[derive(Clone)]
pub struct NodeFlusher {
    requests: mpsc::UnboundedSender<Request>,
    next_journal: Arc<AtomicU64>,
    stats: Arc<FlushStats>,
}

impl std::fmt::Debug for NodeFlusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeFlusher")
            .field("counts", &self.counts())
            .finish()
    }
}

impl NodeFlusher {
    /// Starts the flush task on the current tokio runtime.
    pub fn start() -> io::Result<Self> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| io::Error::other(format!("the node's flusher needs a runtime: {e}")))?;
        let (requests, queue) = mpsc::unbounded_channel();
        let stats = Arc::new(FlushStats::default());
        runtime.spawn(run(queue, stats.clone()));
        Ok(Self {
            requests,
            next_journal: Arc::new(AtomicU64::new(0)),
            stats,
        })
    }

    /// Rounds, syncs and completed requests so far (benchmarks, tests).
    pub fn counts(&self) -> FlushCounts {
        self.stats.counts()
    }

    /// Registers a journal; its store hands the returned handle its appends.
    pub(crate) fn register<F: Flusher>(&self, flusher: F) -> io::Result<JournalFlush> {
        let journal = self.next_journal.fetch_add(1, Ordering::Relaxed);
        let sync: SyncFn = Arc::new(move || flusher.flush().map(|_| ()).map_err(io::Error::other));
        self.requests
            .send(Request::Register { journal, sync })
            .map_err(|_| gone())?;
        Ok(JournalFlush {
            journal,
            requests: self.requests.clone(),
        })
    }
}

/// One journal's place at the node's flusher. Dropping it unregisters the journal once what
/// it queued is done.
pub(crate) struct JournalFlush {
    journal: u64,
    requests: mpsc::UnboundedSender<Request>,
}

impl JournalFlush {
    /// Completes `callback` once everything written to the journal before this call is
    /// durable.
    pub(crate) fn append(&self, callback: IOFlushed<TypeConfig>) -> io::Result<()> {
        self.wait(Waiter::Append(callback))
    }

    /// Returns once every request queued before it is done, and what was written before the
    /// call is durable.
    pub(crate) async fn barrier(&self) -> io::Result<()> {
        let (done, wait) = oneshot::channel();
        self.wait(Waiter::Barrier(done))?;
        wait.await.map_err(|_| gone())?
    }

    fn wait(&self, waiter: Waiter) -> io::Result<()> {
        self.requests
            .send(Request::Wait {
                journal: self.journal,
                waiter,
            })
            .map_err(|_| gone())
    }
}

impl Drop for JournalFlush {
    fn drop(&mut self) {
        let _ = self.requests.send(Request::Close {
            journal: self.journal,
        });
    }
}

fn gone() -> io::Error {
    io::Error::other("the node's flusher is gone")
}

/// A registered journal at the flush task.
struct Queue {
    sync: SyncFn,
    waiting: Vec<Waiter>,
    syncing: bool,
    closed: bool,
}

/// The flush task: see the module's documentation.
async fn run(mut requests: mpsc::UnboundedReceiver<Request>, stats: Arc<FlushStats>) {
    let mut journals: HashMap<u64, Queue> = HashMap::new();
    let mut syncing = FuturesUnordered::new();
    let mut batch = Vec::new();
    let mut open = true;
    while open || !syncing.is_empty() {
        tokio::select! {
            received = requests.recv_many(&mut batch, 1024), if open => {
                if received == 0 {
                    open = false;
                }
            }
            Some((journal, result, waiters)) = syncing.next(), if !syncing.is_empty() => {
                finish(&mut journals, journal, result, waiters, &stats);
            }
        }
        // Take whatever else is queued, so that it joins this round rather than the next.
        while let Ok(request) = requests.try_recv() {
            batch.push(request);
        }
        for request in batch.drain(..) {
            accept(&mut journals, request);
        }
        let mut started = 0;
        for (&journal, queue) in journals.iter_mut() {
            if queue.syncing || queue.waiting.is_empty() {
                continue;
            }
            queue.syncing = true;
            started += 1;
            let waiters = std::mem::take(&mut queue.waiting);
            let sync = queue.sync.clone();
            let stats = stats.clone();
            let task = tokio::task::spawn_blocking(move || {
                let started = std::time::Instant::now();
                let synced = sync();
                stats.latency.observe(started.elapsed());
                synced
            });
            syncing.push(async move {
                let result = task.await.map_err(io::Error::other).and_then(|r| r);
                (journal, result, waiters)
            });
        }
        if started > 0 {
            stats.rounds.fetch_add(1, Ordering::Relaxed);
            stats.syncs.fetch_add(started, Ordering::Relaxed);
        }
        journals.retain(|_, queue| !(queue.closed && !queue.syncing && queue.waiting.is_empty()));
    }
}

fn accept(journals: &mut HashMap<u64, Queue>, request: Request) {
    match request {
        Request::Register { journal, sync } => {
            journals.insert(
                journal,
                Queue {
                    sync,
                    waiting: Vec::new(),
                    syncing: false,
                    closed: false,
                },
            );
        }
        Request::Wait { journal, waiter } => match journals.get_mut(&journal) {
            Some(queue) => queue.waiting.push(waiter),
            // Registration is sent before the handle exists, so this does not happen.
            None => waiter.complete(&Err(io::Error::other("journal not registered"))),
        },
        Request::Close { journal } => {
            if let Some(queue) = journals.get_mut(&journal) {
                queue.closed = true;
            }
        }
    }
}

fn finish(
    journals: &mut HashMap<u64, Queue>,
    journal: u64,
    result: io::Result<()>,
    waiters: Vec<Waiter>,
    stats: &FlushStats,
) {
    if let Err(error) = &result {
        stats.failed.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(%error, "journal sync failed; failing its appends");
    }
    stats
        .completed
        .fetch_add(waiters.len() as u64, Ordering::Relaxed);
    for waiter in waiters {
        waiter.complete(&result);
    }
    if let Some(queue) = journals.get_mut(&journal) {
        queue.syncing = false;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use openraft::type_config::TypeConfigExt;

    use super::*;

    /// A journal whose sync takes a while, counts itself and can be made to fail.
    #[derive(Clone, Default)]
    struct SlowJournal {
        syncs: Arc<AtomicU64>,
        running: Arc<AtomicU64>,
        most_running: Arc<AtomicU64>,
        fail: Arc<AtomicBool>,
        /// Syncs of every journal running at once, and the most seen.
        all: Arc<Mutex<(u64, u64)>>,
    }

    impl Flusher for SlowJournal {
        fn flush(&self) -> beeline_log::Result<u64> {
            let running = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_running.fetch_max(running, Ordering::SeqCst);
            {
                let mut all = self.all.lock().unwrap();
                all.0 += 1;
                all.1 = all.1.max(all.0);
            }
            std::thread::sleep(Duration::from_millis(20));
            self.all.lock().unwrap().0 -= 1;
            self.running.fetch_sub(1, Ordering::SeqCst);
            let n = self.syncs.fetch_add(1, Ordering::SeqCst) + 1;
            if self.fail.load(Ordering::SeqCst) {
                return Err(beeline_log::Error::Io {
                    path: "slow".into(),
                    source: io::Error::other("injected sync failure"),
                });
            }
            Ok(n)
        }
    }

    type Done = tokio::sync::oneshot::Receiver<io::Result<()>>;

    fn append(journal: &JournalFlush) -> Done {
        let (tx, rx) = TypeConfig::oneshot();
        journal.append(IOFlushed::signal(tx)).unwrap();
        rx
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn appends_complete_in_order_with_one_sync_at_a_time_per_journal_and_journals_share_rounds()
     {
        let flusher = NodeFlusher::start().unwrap();
        let all = Arc::new(Mutex::new((0, 0)));
        let a = SlowJournal {
            all: all.clone(),
            ..Default::default()
        };
        let b = SlowJournal {
            all: all.clone(),
            ..Default::default()
        };
        let (ja, jb) = (
            flusher.register(a.clone()).unwrap(),
            flusher.register(b.clone()).unwrap(),
        );
        let mut waits_a = Vec::new();
        let mut waits_b = Vec::new();
        for _ in 0..100 {
            waits_a.push(append(&ja));
            waits_b.push(append(&jb));
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The last completes only after every earlier one of its journal.
        let last = waits_a.pop().unwrap();
        last.await.unwrap().unwrap();
        for mut earlier in waits_a {
            earlier
                .try_recv()
                .expect("completed before a later append")
                .unwrap();
        }
        for wait in waits_b {
            wait.await.unwrap().unwrap();
        }
        assert_eq!(a.most_running.load(Ordering::SeqCst), 1);
        assert_eq!(b.most_running.load(Ordering::SeqCst), 1);
        let (syncs_a, syncs_b) = (
            a.syncs.load(Ordering::SeqCst),
            b.syncs.load(Ordering::SeqCst),
        );
        assert!(
            syncs_a < 50 && syncs_b < 50,
            "group commit: {syncs_a} and {syncs_b} syncs for 100 appends each"
        );
        assert_eq!(
            all.lock().unwrap().1,
            2,
            "the two journals' syncs run together"
        );
        let counts = flusher.counts();
        assert_eq!(counts.syncs, syncs_a + syncs_b);
        assert!(counts.rounds < counts.syncs, "{counts:?}");
        assert_eq!(counts.completed, 200);
        // Every sync timed: each of them slept 20 ms.
        let (_, timed, seconds) = counts.latency;
        assert_eq!(timed, counts.syncs);
        assert!(seconds >= 0.02 * timed as f64, "{counts:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_sync_fails_its_journals_appends_only() {
        let flusher = NodeFlusher::start().unwrap();
        let good = SlowJournal::default();
        let bad = SlowJournal::default();
        bad.fail.store(true, Ordering::SeqCst);
        let (jg, jb) = (
            flusher.register(good.clone()).unwrap(),
            flusher.register(bad.clone()).unwrap(),
        );
        let (g1, b1, g2, b2) = (append(&jg), append(&jb), append(&jg), append(&jb));
        assert!(g1.await.unwrap().is_ok());
        assert!(g2.await.unwrap().is_ok());
        assert!(b1.await.unwrap().is_err());
        assert!(b2.await.unwrap().is_err());
        assert!(jb.barrier().await.is_err());
        bad.fail.store(false, Ordering::SeqCst);
        assert!(jb.barrier().await.is_ok(), "the next sync counts again");
        assert!(flusher.counts().failed >= 2);
    }

    #[tokio::test]
    async fn a_dropped_journal_is_forgotten_once_its_requests_are_done() {
        let flusher = NodeFlusher::start().unwrap();
        let journal = flusher.register(SlowJournal::default()).unwrap();
        let pending = append(&journal);
        let id = journal.journal;
        drop(journal);
        pending
            .await
            .unwrap()
            .expect("queued before the drop, still synced");
        let (done, wait) = oneshot::channel();
        flusher
            .requests
            .send(Request::Wait {
                journal: id,
                waiter: Waiter::Barrier(done),
            })
            .unwrap();
        let refused = wait.await.unwrap().expect_err("the journal is gone");
        assert!(refused.to_string().contains("not registered"), "{refused}");
    }
}
