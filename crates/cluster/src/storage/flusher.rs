//! The node's flusher: makes every Raft group's appends durable, with one sync at a time per
//! journal.
//!
//! Each group's log store registers its journal and hands the flusher its appends (openraft's
//! callbacks) and barriers. A request joins its journal's queue; if no sync of that journal is
//! running, one starts on the blocking pool, and it goes on syncing on that thread, each sync
//! completing the requests queued before it began, in the order they arrived, for as long as
//! requests keep arriving (group commit per journal, as the single node does); it returns the
//! thread once the queue is empty. A journal has at most one sync running, so its requests
//! complete in order; a failed sync fails that journal's requests only. Journals sync
//! independently, so syncs of several journals overlap (the file system's journal folds
//! syncs that overlap into one commit).
//!
//! A request costs the thread that makes it a lock and a push; the thread that syncs
//! completes the callbacks itself: no task stands between the two, and a journal under steady
//! load keeps its blocking thread rather than taking one per sync. Idle, nothing runs: no
//! timer, no wake-up, whatever the number of groups.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use beeline_log::Flusher;
use openraft::storage::IOFlushed;
use tokio::sync::oneshot;

use crate::TypeConfig;
use crate::metrics::{Histogram, HistogramSnapshot};

/// Syncs one journal: everything written to it before the call is durable when it returns.
type SyncFn = Box<dyn Fn() -> io::Result<()> + Send + std::marker::Sync>;

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

/// What the flusher has done since it started.
#[derive(Debug, Default)]
pub struct FlushStats {
    syncs: AtomicU64,
    failed: AtomicU64,
    completed: AtomicU64,
    latency: Histogram,
}

/// A snapshot of [`FlushStats`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlushCounts {
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
            syncs: self.syncs.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            latency: self.latency.snapshot(),
        }
    }
}

/// The node's flusher, shared by every Raft group's log store on the broker: the runtime whose
/// blocking pool runs the syncs, and the figures of all of them.
#[derive(Clone)]
pub struct NodeFlusher {
    runtime: tokio::runtime::Handle,
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
    /// The flusher of the current tokio runtime: its syncs run on that runtime's blocking
    /// pool.
    pub fn start() -> io::Result<Self> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| io::Error::other(format!("the node's flusher needs a runtime: {e}")))?;
        Ok(Self {
            runtime,
            stats: Arc::new(FlushStats::default()),
        })
    }

    /// Syncs and completed requests so far (benchmarks, tests, metrics).
    pub fn counts(&self) -> FlushCounts {
        self.stats.counts()
    }

    /// Registers a journal; its store hands the returned handle its appends.
    pub(crate) fn register<F: Flusher>(&self, flusher: F) -> io::Result<JournalFlush> {
        Ok(JournalFlush {
            queue: Arc::new(Queue {
                sync: Box::new(move || flusher.flush().map(|_| ()).map_err(io::Error::other)),
                state: Mutex::default(),
                stats: self.stats.clone(),
            }),
            runtime: self.runtime.clone(),
        })
    }
}

/// One journal's place at the node's flusher. Dropped, the requests it queued are still
/// synced and completed.
pub(crate) struct JournalFlush {
    queue: Arc<Queue>,
    runtime: tokio::runtime::Handle,
}

impl JournalFlush {
    /// Completes `callback` once everything written to the journal before this call is
    /// durable.
    pub(crate) fn append(&self, callback: IOFlushed<TypeConfig>) -> io::Result<()> {
        self.wait(Waiter::Append(callback));
        Ok(())
    }

    /// Returns once every request queued before it is done, and what was written before the
    /// call is durable.
    pub(crate) async fn barrier(&self) -> io::Result<()> {
        let (done, wait) = oneshot::channel();
        self.wait(Waiter::Barrier(done));
        wait.await
            .map_err(|_| io::Error::other("the journal's sync was dropped"))?
    }

    fn wait(&self, waiter: Waiter) {
        let start = {
            let mut state = self.queue.lock();
            state.waiting.push(waiter);
            !std::mem::replace(&mut state.syncing, true)
        };
        if start {
            let queue = self.queue.clone();
            drop(self.runtime.spawn_blocking(move || queue.sync_until_idle()));
        }
    }
}

/// A journal's requests and whether a sync of it runs.
struct Queue {
    sync: SyncFn,
    state: Mutex<QueueState>,
    stats: Arc<FlushStats>,
}

#[derive(Default)]
struct QueueState {
    waiting: Vec<Waiter>,
    syncing: bool,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Syncs until no request waits: each sync completes what was queued before it began.
    fn sync_until_idle(&self) {
        loop {
            let waiters = {
                let mut state = self.lock();
                if state.waiting.is_empty() {
                    state.syncing = false;
                    return;
                }
                std::mem::take(&mut state.waiting)
            };
            let started = std::time::Instant::now();
            let result = (self.sync)();
            let stats = &self.stats;
            stats.latency.observe(started.elapsed());
            stats.syncs.fetch_add(1, Ordering::Relaxed);
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
        }
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
    async fn appends_complete_in_order_with_one_sync_at_a_time_per_journal_and_journals_sync_together()
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
    async fn a_dropped_journal_s_queued_requests_are_still_synced() {
        let flusher = NodeFlusher::start().unwrap();
        let slow = SlowJournal::default();
        let journal = flusher.register(slow.clone()).unwrap();
        let pending = append(&journal);
        drop(journal);
        pending
            .await
            .unwrap()
            .expect("queued before the drop, still synced");
        assert_eq!(slow.syncs.load(Ordering::SeqCst), 1);
        assert_eq!(flusher.counts().completed, 1);
    }
}
