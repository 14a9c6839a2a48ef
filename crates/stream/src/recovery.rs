//! Opening a partition: restore the latest snapshot, replay the log after it, start the loop.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use beeline_engine::state::format::Opened;
use beeline_engine::{Engine, EngineConfig, JobPush, ReplayProgress};
use beeline_log::{Journal, JournalReader};
use beeline_protocol::codec::{DecodeError, batch_records, decode_record};
use beeline_protocol::{Record, RecordType};
use beeline_state::Store;
use beeline_state::snapshot::{Snapshot, SnapshotStore};
use tokio::sync::{broadcast, mpsc, watch};

use crate::clock::Clock;
use crate::config::PartitionConfig;
use crate::error::OpenError;
use crate::exporters::ExporterPositions;
use crate::handle::{PartitionHandle, PartitionStatus};
use crate::metrics::PartitionMetrics;
use crate::processor::{Recovered, StreamProcessor};
use crate::role::RoleState;
use crate::router::CommandRouter;

/// Opens the state store: from a snapshot's checkpoint directory, or empty when there is none.
pub trait StoreOpener {
    fn open(&self, checkpoint: Option<&Path>) -> beeline_state::Result<Arc<dyn Store>>;
}

impl<F> StoreOpener for F
where
    F: Fn(Option<&Path>) -> beeline_state::Result<Arc<dyn Store>>,
{
    fn open(&self, checkpoint: Option<&Path>) -> beeline_state::Result<Arc<dyn Store>> {
        self(checkpoint)
    }
}

pub struct Partition;

/// Records replayed per state write, at most.
const REPLAY_CHUNK: usize = 4096;

/// Bytes of log entries (their records' encoded size, about what the decoded records hold)
/// replayed per state write, at most: a follower that catches up a long stretch at once holds
/// one chunk of records, not the stretch (with 1 KiB variables a full chunk by count alone was
/// 7.5 MiB per replica).
const REPLAY_CHUNK_BYTES: usize = 1 << 20;

/// A partition's state restored from its latest snapshot, before the log after it is replayed.
pub(crate) struct Restored {
    pub store: Arc<dyn Store>,
    pub engine: Engine,
    pub snapshot_position: Option<i64>,
}

/// Opens the latest verified snapshot (or an empty state) and the engine over it.
pub(crate) fn restore(
    config: &PartitionConfig,
    snapshots: &SnapshotStore,
    store_opener: &dyn StoreOpener,
) -> Result<Restored, OpenError> {
    let partition = config.partition_id;
    let snapshot = snapshots
        .latest()
        .map_err(|source| OpenError::State { partition, source })?;
    Ok(Restored {
        store: open_state(config, snapshots, snapshot.as_ref(), store_opener)?,
        engine: engine_for(config),
        snapshot_position: snapshot.map(|s| s.position),
    })
}

/// The state of `snapshot` (one of `snapshots`), verified first, or an empty state without
/// one; in this build's state format.
fn open_state(
    config: &PartitionConfig,
    snapshots: &SnapshotStore,
    snapshot: Option<&Snapshot>,
    store_opener: &dyn StoreOpener,
) -> Result<Arc<dyn Store>, OpenError> {
    let partition = config.partition_id;
    let state_error = |source| OpenError::State { partition, source };
    if let Some(snapshot) = snapshot {
        SnapshotStore::verify(snapshot).map_err(state_error)?;
    }
    let store = store_opener
        .open(snapshot.map(|s| s.data_dir()).as_deref())
        .map_err(state_error)?;
    let (location, declared) = match snapshot {
        Some(snapshot) => (
            snapshot.path.clone(),
            SnapshotStore::state_format(snapshot).map_err(state_error)?,
        ),
        None => (snapshots.dir().to_path_buf(), None),
    };
    match beeline_engine::state::format::open(store.as_ref(), &location, declared)
        .map_err(state_error)?
    {
        Opened::Converted { from, entries } => tracing::info!(
            partition,
            snapshot = %location.display(),
            from,
            to = beeline_state::STATE_FORMAT_VERSION,
            entries,
            "converted the state to this build's format; the next snapshot keeps it"
        ),
        Opened::Marked => tracing::info!(
            partition,
            snapshot = %location.display(),
            "marked the state with its format version"
        ),
        Opened::New | Opened::Current => {}
    }
    Ok(store)
}

/// The partition's engine, as its settings make it.
fn engine_for(config: &PartitionConfig) -> Engine {
    let partition = config.partition_id;
    Engine::new(EngineConfig {
        partition_id: partition,
        partition_count: config.partition_count.max(partition),
        max_batch_records: config.max_batch_records,
        max_batch_bytes: config.max_batch_bytes,
        max_message_size: config.max_message_size,
        job_push: config
            .job_streams
            .clone()
            .map(|streams| streams as Arc<dyn JobPush>),
    })
}

/// A partition's state rebuilt apart from any running partition: the state of `snapshot`
/// (one of `snapshots`, verified first; an empty state without one) with every entry `reader`
/// yields after it applied, as recovery and a follower apply them. Tools that hold replicas
/// against each other compare what this gives for each.
pub fn rebuild_state<R: JournalReader>(
    config: &PartitionConfig,
    snapshots: &SnapshotStore,
    snapshot: Option<&Snapshot>,
    store_opener: &dyn StoreOpener,
    reader: R,
) -> Result<Arc<dyn Store>, OpenError> {
    let partition = config.partition_id;
    let replay_error = |reason: String| OpenError::Replay { partition, reason };
    let store = open_state(config, snapshots, snapshot, store_opener)?;
    let engine = engine_for(config);
    let mut replayer = Replayer::new(&engine, store.as_ref(), reader).map_err(replay_error)?;
    replayer
        .catch_up(&engine, store.as_ref())
        .map_err(replay_error)?;
    Ok(store)
}

/// The exporters' acknowledged positions as the restored state holds them.
pub(crate) fn exporter_positions(
    config: &PartitionConfig,
    store: &dyn Store,
) -> Result<Arc<ExporterPositions>, OpenError> {
    let partition = config.partition_id;
    let (exporters, removed) = ExporterPositions::load(store, &config.exporters)
        .map_err(|source| OpenError::State { partition, source })?;
    for (exporter, position) in removed {
        tracing::info!(
            partition,
            exporter,
            position,
            "exporter no longer configured; its position no longer holds back log compaction"
        );
    }
    Ok(Arc::new(exporters))
}

impl Partition {
    /// Recovers the partition and starts its processing loop on the current Tokio runtime.
    ///
    /// Recovery refuses to serve wrong data: a snapshot that fails verification, an
    /// undecodable log entry or a log that no longer reaches back to the snapshot stop it with
    /// an error naming the file and offset or position.
    pub fn open<J: Journal>(
        config: PartitionConfig,
        journal: J,
        snapshots: SnapshotStore,
        store_opener: &dyn StoreOpener,
        clock: Arc<dyn Clock>,
        router: Option<Arc<dyn CommandRouter>>,
    ) -> Result<PartitionHandle, OpenError>
    where
        J::Reader: 'static,
    {
        let partition = config.partition_id;
        let disk = config.disk.clone();
        let replay_error = |reason: String| OpenError::Replay { partition, reason };
        let Restored {
            store,
            engine,
            snapshot_position,
        } = restore(&config, &snapshots, store_opener)?;
        let exporters = exporter_positions(&config, store.as_ref())?;
        let mut replayed =
            Replayer::new(&engine, store.as_ref(), journal.reader()).map_err(replay_error)?;
        replayed
            .catch_up(&engine, store.as_ref())
            .map_err(replay_error)?;
        tracing::info!(
            partition,
            snapshot = snapshot_position,
            replayed_records = replayed.records,
            unprocessed_commands = replayed.unprocessed_len(),
            "partition recovered"
        );

        let (commands_tx, commands_rx) = mpsc::channel(config.inbox_capacity.max(1));
        let (control_tx, control_rx) = mpsc::channel(16);
        let (status_tx, status_rx) = watch::channel(PartitionStatus::Healthy);
        let metrics = Arc::new(PartitionMetrics::default());
        PartitionMetrics::add(&metrics.elections, 1);
        let (jobs_available, _) = broadcast::channel(256);
        let processor = StreamProcessor::new(Recovered {
            config,
            journal,
            store,
            engine,
            snapshots,
            clock,
            metrics: metrics.clone(),
            status: status_tx,
            next_position: replayed.next_position,
            unprocessed: replayed.take_unprocessed().map_err(replay_error)?,
            router,
            jobs_available: jobs_available.clone(),
            exporters: exporters.clone(),
            replica: false,
            log_since_snapshot: replayed.bytes,
            undelivered: Vec::new(),
        });
        tokio::spawn(processor.run(commands_rx, control_rx));
        Ok(PartitionHandle {
            partition_id: partition,
            commands: commands_tx,
            control: control_tx,
            status: status_rx,
            metrics,
            jobs_available,
            exporters,
            role: watch::channel(RoleState::single_node()).1,
            replicated: false,
            disk,
        })
    }
}

/// Applies committed events to a restored state and finds the commands that still wait for
/// processing: once at recovery, and on and on on a replicated partition's follower.
///
/// It decodes what it applies, the events and rejections; a command's value is decoded only
/// if a processor takes it over (a replica that starts to lead, a partition that recovers)
/// before its result appears, which for nearly all of them comes a few entries later.
pub(crate) struct Replayer<R> {
    reader: R,
    progress: ReplayProgress,
    /// Position the next record written gets.
    pub next_position: i64,
    /// Commands without results yet, in log order, as the log holds them.
    unprocessed: VecDeque<PendingCommand>,
    /// Records read so far.
    pub records: u64,
    /// Bytes of the log entries read so far: what the log holds past the state's snapshot
    /// (what snapshots by size count, `PartitionConfig::snapshot_log_size`).
    pub bytes: u64,
    first: bool,
    chunk: Vec<Record>,
    /// Encoded bytes of the entries whose records are in `chunk`.
    chunk_bytes: usize,
}

/// A command read from the log without a result yet: its position and its encoded bytes.
struct PendingCommand {
    position: i64,
    bytes: Vec<u8>,
}

impl<R: JournalReader> Replayer<R> {
    /// Positions `reader` at the record after the store's last processed position.
    pub fn new(engine: &Engine, store: &dyn Store, mut reader: R) -> Result<Self, String> {
        let snapshot_position = engine
            .last_processed_position(store)
            .map_err(|e| e.to_string())?;
        reader
            .seek_to_asqn((snapshot_position + 1).max(0) as u64)
            .map_err(|e| e.to_string())?;
        Ok(Self {
            reader,
            progress: ReplayProgress {
                snapshot_position,
                last_processed_position: snapshot_position,
            },
            // An empty log behind a snapshot: positions continue after it.
            next_position: (snapshot_position + 1).max(1),
            unprocessed: VecDeque::new(),
            records: 0,
            bytes: 0,
            first: true,
            chunk: Vec::new(),
            chunk_bytes: 0,
        })
    }

    /// How many commands wait for a result.
    pub fn unprocessed_len(&self) -> usize {
        self.unprocessed.len()
    }

    /// The commands that wait for a result, decoded, in log order: what a processor taking
    /// over runs first.
    pub fn take_unprocessed(&mut self) -> Result<VecDeque<Record>, String> {
        std::mem::take(&mut self.unprocessed)
            .into_iter()
            .map(|command| {
                decode_record(&command.bytes, command.position).map_err(|e| {
                    format!(
                        "the command at position {} is undecodable: {e}",
                        command.position
                    )
                })
            })
            .collect()
    }

    /// Applies every committed entry not read yet; returns how many records it read.
    pub fn catch_up(&mut self, engine: &Engine, store: &dyn Store) -> Result<u64, String> {
        let before = self.records;
        while let Some(entry) = self.reader.next_entry() {
            let entry = entry.map_err(|e| e.to_string())?;
            self.bytes += entry.data.len() as u64;
            // Raft's own entries (a leader's blank entry, membership changes) hold no records.
            if !entry.kind.carries_records() {
                continue;
            }
            let undecodable = |e: DecodeError| {
                format!(
                    "log entry {} (position {}) is undecodable: {e}",
                    entry.index, entry.asqn
                )
            };
            let records = batch_records(&entry.data, entry.asqn as i64).map_err(undecodable)?;
            let snapshot_position = self.progress.snapshot_position;
            if self.first {
                self.first = false;
                let reaches_back = if snapshot_position < 0 {
                    entry.index == 1 || entry.asqn == 1
                } else {
                    entry.asqn as i64 <= snapshot_position + 1
                };
                if !reaches_back {
                    return Err(format!(
                        "the log starts at position {} but the state needs it from position {}: \
                         the log was compacted past the snapshot",
                        entry.asqn,
                        snapshot_position + 1
                    ));
                }
            }
            for record in records {
                let record = record.map_err(undecodable)?;
                self.next_position = self.next_position.max(record.position + 1);
                if record.position <= snapshot_position {
                    continue;
                }
                self.records += 1;
                if record.record_type == RecordType::Command {
                    // Replay applies no command; one processed in its own batch is done.
                    if !record.processed {
                        self.unprocessed.push_back(PendingCommand {
                            position: record.position,
                            bytes: record.bytes().to_vec(),
                        });
                    }
                    continue;
                }
                // A result of a command: that command and everything before it is processed.
                while self
                    .unprocessed
                    .front()
                    .is_some_and(|c| c.position <= record.source_record_position)
                {
                    self.unprocessed.pop_front();
                }
                self.chunk.push(record.decode().map_err(undecodable)?);
            }
            self.chunk_bytes += entry.data.len();
            if self.chunk.len() >= REPLAY_CHUNK || self.chunk_bytes >= REPLAY_CHUNK_BYTES {
                self.apply_chunk(engine, store)?;
            }
        }
        self.apply_chunk(engine, store)?;
        Ok(self.records - before)
    }

    fn apply_chunk(&mut self, engine: &Engine, store: &dyn Store) -> Result<(), String> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let writes = engine
            .replay(store, self.chunk.iter(), &mut self.progress)
            .map_err(|e| e.to_string())?;
        store.write(writes).map_err(|e| e.to_string())?;
        self.chunk.clear();
        self.chunk_bytes = 0;
        Ok(())
    }
}
