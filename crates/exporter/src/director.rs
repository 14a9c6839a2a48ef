//! The director: one task per partition and exporter that feeds the exporter the committed
//! log in order, from after what it acknowledged, and keeps at it through failures.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use beeline_protocol::Record;
use beeline_stream::{ExporterPosition, LogStreamReader, PartitionHandle, PartitionMetrics};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{Controller, ExportError, Exporter};

#[derive(Debug, Clone)]
pub struct DirectorConfig {
    /// How often the exporter is asked to flush: at most once per interval while records
    /// come (when it has caught up with the log, or has not since the last flush), and on
    /// every tick. What it gathered waits at most this long. Default 50 ms.
    pub flush_interval: Duration,
    /// The first wait after a failed call; each further failure doubles it. Default 100 ms.
    pub min_backoff: Duration,
    /// The longest wait between two tries. Default 10 s.
    pub max_backoff: Duration,
}

impl Default for DirectorConfig {
    fn default() -> Self {
        Self {
            flush_interval: Duration::from_millis(50),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
        }
    }
}

/// What one exporter of one partition is doing, for monitoring.
#[derive(Debug)]
pub struct ExporterMetrics {
    pub partition_id: u16,
    pub exporter: String,
    /// Its acknowledged position.
    pub position: ExporterPosition,
    /// Records handed to it.
    pub exported: AtomicU64,
    /// Calls that failed (each retried).
    pub failures: AtomicU64,
    /// Whether its last call failed and waits for a retry.
    pub retrying: AtomicBool,
    /// Stopped by an error it cannot go on from (see the log).
    pub stopped: AtomicBool,
    partition: Arc<PartitionMetrics>,
}

impl ExporterMetrics {
    /// Records written to the partition's log and not acknowledged yet.
    pub fn lag(&self) -> i64 {
        let newest = self.partition.last_position.load(Ordering::Relaxed);
        (newest - self.position.get().max(0)).max(0)
    }
}

/// A running director.
pub struct ExporterTask {
    metrics: Arc<ExporterMetrics>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl ExporterTask {
    pub fn metrics(&self) -> &Arc<ExporterMetrics> {
        &self.metrics
    }

    /// Stops the director: it flushes what the exporter gathered (one try), then closes it.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }

    /// Stops the director at once, as a crash would: nothing is flushed or closed.
    pub fn abort(self) {
        self.task.abort();
    }
}

pub struct Director;

impl Director {
    /// Starts exporting `partition`'s committed records to `exporter`, on the current Tokio
    /// runtime. The exporter's id must be among the partition's configured exporters
    /// (`PartitionConfig::exporters`), which is where its position is kept.
    pub fn spawn<E: Exporter>(
        partition: PartitionHandle,
        exporter: E,
        config: DirectorConfig,
    ) -> Result<ExporterTask, String> {
        let id = exporter.id().to_owned();
        let Some(position) = partition.exporter_positions().get(&id) else {
            return Err(format!(
                "exporter '{id}' is not configured on partition {}",
                partition.partition_id()
            ));
        };
        let metrics = Arc::new(ExporterMetrics {
            partition_id: partition.partition_id(),
            exporter: id,
            position,
            exported: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            retrying: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            partition: partition.metrics_arc(),
        });
        let (stop, stopping) = watch::channel(false);
        let run = Run {
            partition,
            exporter,
            config,
            metrics: metrics.clone(),
            stopping,
        };
        let task = tokio::spawn(run.run());
        Ok(ExporterTask {
            metrics,
            stop,
            task,
        })
    }
}

struct Run<E> {
    partition: PartitionHandle,
    exporter: E,
    config: DirectorConfig,
    metrics: Arc<ExporterMetrics>,
    stopping: watch::Receiver<bool>,
}

/// One call to the exporter, repeated until it succeeds.
enum Call<'a> {
    Open(&'a Controller),
    Export(&'a Record),
    Flush,
}

impl Call<'_> {
    fn name(&self) -> &'static str {
        match self {
            Call::Open(_) => "open",
            Call::Export(_) => "export",
            Call::Flush => "flush",
        }
    }
}

/// Why the director stops.
enum Halt {
    Stopped,
    Fatal(String),
}

impl<E: Exporter> Run<E> {
    async fn run(mut self) {
        let partition = self.partition.partition_id();
        let exporter = self.metrics.exporter.clone();
        match self.export_all().await {
            Ok(()) | Err(Halt::Stopped) => {
                // One last hand-over, not retried: what it misses is exported again next time.
                if let Err(error) = self.exporter.flush().await {
                    tracing::warn!(partition, exporter, %error, "last flush failed; the records are exported again at the next start");
                }
                self.exporter.close().await;
            }
            Err(Halt::Fatal(reason)) => {
                self.metrics.stopped.store(true, Ordering::Relaxed);
                tracing::error!(
                    partition,
                    exporter,
                    %reason,
                    position = self.metrics.position.get(),
                    "exporter stopped; its position holds back log compaction until it is fixed or removed"
                );
                self.exporter.close().await;
            }
        }
    }

    async fn export_all(&mut self) -> Result<(), Halt> {
        let partition = self.partition.partition_id();
        let controller = Controller::new(partition, self.metrics.position.clone());
        let acknowledged = controller.acknowledged();
        let held = self.call(Call::Open(&controller)).await?;
        let newest = self
            .partition
            .metrics()
            .last_position
            .load(Ordering::Relaxed);
        let resume_after = match held {
            Some(held) if held > newest => {
                return Err(Halt::Fatal(format!(
                    "its store holds records up to position {held}, but partition {partition}'s \
                     log ends at {newest}: the store belongs to another data directory"
                )));
            }
            Some(held) => {
                if held < acknowledged {
                    // Deleted, restored from a backup, or its newest commits lost (a power
                    // loss, a server with fsync off): what it lacks is exported again, and
                    // compaction waits for it.
                    tracing::warn!(
                        partition,
                        exporter = self.metrics.exporter,
                        held,
                        acknowledged,
                        "the store holds less than was acknowledged (deleted, restored or its newest commits lost): exporting again from what it holds"
                    );
                    controller.rewind(held);
                } else {
                    controller.acknowledge(held);
                }
                held
            }
            None => acknowledged,
        };
        let mut reader = self
            .partition
            .reader()
            .await
            .map_err(|e| Halt::Fatal(format!("cannot read the log: {e}")))?;
        reader
            .seek(resume_after + 1)
            .map_err(|e| Halt::Fatal(format!("cannot read the log: {e}")))?;
        let mut first = true;
        let mut unflushed = false;
        let mut last_flush = Instant::now();
        let mut ticker = tokio::time::interval(self.config.flush_interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let next = reader
                .next_record()
                .map_err(|e| Halt::Fatal(format!("cannot read the log: {e}")))?;
            let record = match next {
                Some(record) => Some(record),
                None => {
                    // Caught up: hand over what was gathered, unless the last hand-over was
                    // less than an interval ago (then the tick does it): under load the
                    // exporter catches up after every append, and a store write per append
                    // costs far more than one per interval.
                    if unflushed && last_flush.elapsed() >= self.config.flush_interval {
                        self.call(Call::Flush).await?;
                        unflushed = false;
                        last_flush = Instant::now();
                    }
                    tokio::select! {
                        biased;
                        _ = self.stopping.changed() => return Err(Halt::Stopped),
                        _ = ticker.tick() => {
                            self.call(Call::Flush).await?;
                            unflushed = false;
                            last_flush = Instant::now();
                            None
                        }
                        next = next_waiting(&mut reader) => next?,
                    }
                }
            };
            let Some(record) = record else { continue };
            // Log positions start at 1: an exporter that never acknowledged anything
            // (`resume_after` -1) misses nothing when the log starts there.
            if std::mem::take(&mut first) && record.position > resume_after.max(0) + 1 {
                tracing::error!(
                    partition,
                    exporter = self.metrics.exporter,
                    from = resume_after + 1,
                    log_starts_at = record.position,
                    "records the exporter never stored were compacted away; it goes on from the oldest record the log holds, without them"
                );
            }
            if record.position <= resume_after {
                continue;
            }
            self.call(Call::Export(&record)).await?;
            self.metrics.exported.fetch_add(1, Ordering::Relaxed);
            unflushed = true;
            if last_flush.elapsed() >= self.config.flush_interval {
                self.call(Call::Flush).await?;
                unflushed = false;
                last_flush = Instant::now();
            }
            if *self.stopping.borrow() {
                return Err(Halt::Stopped);
            }
        }
    }

    /// Calls the exporter until it succeeds, waiting longer after each failure.
    async fn call(&mut self, call: Call<'_>) -> Result<Option<i64>, Halt> {
        let mut backoff = self.config.min_backoff;
        let mut failures = 0u64;
        loop {
            let result = match &call {
                Call::Open(controller) => self.exporter.open((*controller).clone()).await,
                Call::Export(record) => self.exporter.export(record).await.map(|()| None),
                Call::Flush => self.exporter.flush().await.map(|()| None),
            };
            let error = match result {
                Ok(value) => {
                    if failures > 0 {
                        self.metrics.retrying.store(false, Ordering::Relaxed);
                        tracing::info!(
                            partition = self.metrics.partition_id,
                            exporter = self.metrics.exporter,
                            call = call.name(),
                            failures,
                            "exporter recovered"
                        );
                    }
                    return Ok(value);
                }
                Err(ExportError::Fatal(reason)) => return Err(Halt::Fatal(reason)),
                Err(ExportError::Retry(reason)) => reason,
            };
            failures += 1;
            self.metrics.failures.fetch_add(1, Ordering::Relaxed);
            self.metrics.retrying.store(true, Ordering::Relaxed);
            // The first failure, then one line per longest back-off: a dead store does not
            // flood the log.
            if failures == 1 || backoff >= self.config.max_backoff {
                tracing::warn!(
                    partition = self.metrics.partition_id,
                    exporter = self.metrics.exporter,
                    call = call.name(),
                    failures,
                    retry_in_ms = backoff.as_millis() as u64,
                    %error,
                    "exporter failed; retrying the same call"
                );
            }
            tokio::select! {
                _ = self.stopping.changed() => return Err(Halt::Stopped),
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(self.config.max_backoff);
        }
    }
}

async fn next_waiting(reader: &mut LogStreamReader) -> Result<Option<Record>, Halt> {
    match reader.next_waiting().await {
        Ok(Some(record)) => Ok(Some(record)),
        // The partition is gone: the node is stopping.
        Ok(None) => Err(Halt::Stopped),
        Err(e) => Err(Halt::Fatal(format!("cannot read the log: {e}"))),
    }
}
