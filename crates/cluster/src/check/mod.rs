//! The checker of a replicated run (`beeline chaos`, the in-process fault tests of
//! `tests/sim.rs`), over the stopped replicas' directories and what the cluster acknowledged
//! to its client. Each replica's partition directory is copied aside first and the copies are opened
//! with the crates' own readers (the journal, the Raft records, the snapshots), so the
//! replicas' own files stay as the run left them, for a second look.
//!
//! - **The whole committed log**: compaction removes a replica's entries below its snapshot,
//!   so no replica may hold the log from its start. The checker puts the partition's
//!   committed log together in a journal of its own: from the replicas where one holds the
//!   entry committed, and below that from the journal segments archived during the run
//!   (`archived`: hard links taken of every segment file while the brokers ran, so a segment
//!   a broker freed or lost is still readable). An entry may have several archived copies
//!   (every replica's, and a replica's earlier log before it was wiped or repaired); the
//!   committed one is the copy of the highest term (a leader of a later term holds the
//!   committed entry, so no later term wrote anything else at that index), and copies of the
//!   same term must be identical. Entries must follow each other without a gap in their
//!   record positions. An index that neither a replica nor the archive holds is a check not
//!   made.
//! - **The replicas agree on the committed log**: each replica's committed entries (up to the
//!   commit its Raft records hold) are identical, index by index, to every other replica's
//!   where both have them committed.
//! - **Replaying gives the same state**: the whole committed log is replayed from its start,
//!   and its state compared, key by key (their digests), with each replica's state at the end
//!   of the common committed prefix (rebuilt from the replica's own latest snapshot at or
//!   before that end and its own log after it; a replica whose log was compacted past that
//!   end, which cannot rebuild it, at the end of its own committed log instead, as a lagging
//!   replica leaves it), and with the state of every snapshot each
//!   replica holds, at the snapshot's position: a snapshot a replica took, or installed from
//!   its leader, holds exactly the committed log up to its position. The exporters' positions
//!   are left out of the digests: a snapshot stores them as they were when it was taken, and
//!   they are not made by the log.
//! - **No acknowledged instance is lost**: every acknowledged start's instance key is in the
//!   whole committed log exactly once (one PROCESS_INSTANCE_CREATION CREATED event); every
//!   acknowledged message's key once (MESSAGE PUBLISHED).
//! - **No job's completion is applied twice**: at most one JOB COMPLETED event per job key in
//!   the whole committed log, and exactly one for each completion the cluster acknowledged.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use beeline_log::{FileJournal, FileJournalConfig, Journal, JournalReader, Recovery};
use beeline_protocol::RecordType;
use beeline_protocol::codec::decode_batch;
use beeline_protocol::intent::{Intent, JobIntent, MessageIntent, ProcessInstanceCreationIntent};
use beeline_protocol::key::partition_of;
use beeline_state::snapshot::{Snapshot, SnapshotStore};
use beeline_state::{ColumnFamily, Store};
use beeline_stream::{PartitionConfig, StoreOpener, rebuild_state};

use crate::MetaDir;

mod whole;

use whole::{Gap, Whole};

/// What the cluster acknowledged to its client.
#[derive(Debug, Default, Clone)]
pub struct Acknowledged {
    /// Instance starts: the instance's id variable and key.
    pub created: Vec<(String, i64)>,
    /// Jobs whose completion was acknowledged.
    pub completed: Vec<i64>,
    /// Keys of published messages.
    pub published: Vec<i64>,
}

/// Opens the store a replica's state is rebuilt in, given a scratch directory of the
/// replica's own (a broker's store, or one in memory).
pub type Stores<'a> = &'a dyn Fn(&Path) -> Box<dyn StoreOpener>;

/// How the brokers' journals were made (the reader needs the same limits).
#[derive(Debug, Clone, Copy)]
pub struct JournalShape {
    pub segment_size: u64,
    pub max_entry_size: usize,
}

/// What the checker found.
#[derive(Default)]
pub struct Verdict {
    /// Per partition: (replica node, first index, committed index) and the state digest.
    pub partitions: BTreeMap<u16, PartitionSummary>,
    /// Acknowledged work missing from the committed log.
    pub lost: Vec<String>,
    /// Work applied more than once.
    pub duplicated: Vec<String>,
    /// Replicas that disagree on the committed log or the state it gives.
    pub disagreements: Vec<String>,
    /// Checks that could not be made (a log compacted past what the check needs, a replica
    /// whose files cannot be read): not passes.
    pub not_checked: Vec<String>,
    /// Records read from the committed logs.
    pub records: u64,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.lost.is_empty()
            && self.duplicated.is_empty()
            && self.disagreements.is_empty()
            && self.not_checked.is_empty()
    }
}

#[derive(Default)]
pub struct PartitionSummary {
    /// Each replica's (node, first index, committed index).
    pub replicas: Vec<(u64, u64, u64)>,
    /// End of the prefix every replica has committed.
    pub common: u64,
    /// Each replica's state digest at `common` (keys, hash), and the snapshot it started from.
    pub digests: Vec<(u64, Option<i64>, u64, u64)>,
    /// The replicas whose log starts after `common`: (node, their committed end, the snapshot
    /// they started from, keys, hash), each held against the whole log's replay there.
    pub own: Vec<(u64, u64, Option<i64>, u64, u64)>,
    /// The whole committed log's last entry, and how many of its entries only the archive
    /// held (none when it could not be put together).
    pub whole: Option<(u64, u64)>,
    /// The state of replaying the whole committed log to `common` (keys, hash).
    pub replayed: Option<(u64, u64)>,
    /// The snapshots held against the whole log's replay: (node, position).
    pub snapshots: Vec<(u64, i64)>,
}

/// One replica's copy, opened.
struct Replica {
    node: u64,
    dir: PathBuf,
    first: u64,
    committed: u64,
}

/// What the committed logs hold, counted by key.
#[derive(Default)]
struct Counts {
    created: HashMap<i64, u32>,
    completed: HashMap<i64, u32>,
    published: HashMap<i64, u32>,
}

fn hash_entry(entry: &beeline_log::Entry) -> u64 {
    let mut hasher = DefaultHasher::new();
    (
        entry.index,
        entry.term,
        entry.kind as u8,
        entry.asqn,
        &entry.data,
    )
        .hash(&mut hasher);
    hasher.finish()
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn open_journal(dir: &Path, shape: JournalShape) -> Result<FileJournal, String> {
    open_journal_with(dir, shape, Recovery::Strict)
}

fn open_journal_with(
    dir: &Path,
    shape: JournalShape,
    recovery: Recovery,
) -> Result<FileJournal, String> {
    FileJournal::open(
        dir.join("log"),
        FileJournalConfig {
            segment_size: shape.segment_size,
            max_entry_size: shape.max_entry_size,
            recovery,
            commit_recovered: false,
            ..FileJournalConfig::default()
        },
    )
    .map_err(|e| format!("{}: cannot open the log: {e}", dir.display()))
}

/// Copies a replica aside and reads where its log starts and what it has committed.
fn open_replica(
    node: u64,
    source: &Path,
    scratch: &Path,
    shape: JournalShape,
) -> Result<Replica, String> {
    let dir = scratch.join(format!("broker-{node}"));
    // The live state is stale by design (no WAL) and rebuilt on every start: not copied.
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for part in ["log", "raft", "snapshots"] {
        let from = source.join(part);
        if from.exists() {
            copy_tree(&from, &dir.join(part))
                .map_err(|e| format!("copying {}: {e}", from.display()))?;
        }
    }
    let journal = open_journal(&dir, shape)?;
    let meta = MetaDir::new(dir.join("raft")).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Raft index i is journal index i + 1.
    let committed = meta
        .read_committed()
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map_or(0, |id| id.index + 1)
        .min(journal.last_index());
    Ok(Replica {
        node,
        first: journal.first_index(),
        committed,
        dir,
    })
}

/// Each committed entry's hash, by index, and the last record position at or before `end`.
fn hashes(replica: &Replica, shape: JournalShape, end: u64) -> Result<(Vec<u64>, i64), String> {
    let journal = open_journal(&replica.dir, shape)?;
    journal.commit_index().advance(replica.committed);
    let mut reader = journal.reader();
    reader
        .seek(replica.first)
        .map_err(|e| format!("{}: {e}", replica.dir.display()))?;
    let mut hashes = Vec::new();
    let mut last_position = -1;
    while let Some(entry) = reader.next_entry() {
        let entry = entry.map_err(|e| format!("{}: {e}", replica.dir.display()))?;
        if entry.index <= end && entry.kind.carries_records() {
            let records = decode_batch(&entry.data, entry.asqn as i64).map_err(|e| {
                format!(
                    "{}: entry {} undecodable: {e}",
                    replica.dir.display(),
                    entry.index
                )
            })?;
            if let Some(last) = records.last() {
                last_position = last.position;
            }
        }
        hashes.push(hash_entry(&entry));
    }
    Ok((hashes, last_position))
}

/// The state of `replica` at journal index `end`, rebuilt from its latest snapshot at or
/// before `position`: its digest (keys, hash) and the snapshot's position.
fn digest(
    stores: Stores<'_>,
    replica: &Replica,
    partition: u16,
    partitions: u16,
    shape: JournalShape,
    end: u64,
    position: i64,
) -> Result<(Option<i64>, u64, u64), String> {
    let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", replica.dir.display());
    let journal = open_journal(&replica.dir, shape)?;
    journal.commit_index().advance(end);
    let snapshots =
        SnapshotStore::open(replica.dir.join("snapshots"), usize::MAX).map_err(|e| failed(&e))?;
    let snapshot = snapshots
        .list()
        .map_err(|e| failed(&e))?
        .into_iter()
        .rfind(|s| s.position <= position);
    let opener = stores(&replica.dir.join("check-runtime"));
    let mut config = PartitionConfig::new(partition);
    config.partition_count = partitions;
    config.max_batch_bytes = shape.max_entry_size;
    let store = rebuild_state(
        &config,
        &snapshots,
        snapshot.as_ref(),
        opener.as_ref(),
        journal.reader(),
    )
    .map_err(|e| failed(&e))?;
    let (keys, hash) = state_digest(store.as_ref()).map_err(|e| failed(&e))?;
    Ok((snapshot.map(|s| s.position), keys, hash))
}

/// A state's digest: how many keys, and a hash of every key and value but the exporters'
/// positions (a snapshot stores them as they were when it was taken; the log does not make
/// them).
fn state_digest(store: &dyn Store) -> Result<(u64, u64), String> {
    let exporters = ColumnFamily::Exporters.prefix();
    let mut hasher = DefaultHasher::new();
    let mut keys = 0u64;
    for item in store.scan(&[], &[]) {
        let (key, value) = item.map_err(|e| e.to_string())?;
        if key.starts_with(&exporters) {
            continue;
        }
        (key, value).hash(&mut hasher);
        keys += 1;
    }
    Ok((keys, hasher.finish()))
}

/// Where the whole log's replay is held against a replica's state.
enum Point<'a> {
    /// The end of the common committed prefix: every replica's rebuilt state.
    Common,
    /// The end of a replica's own committed log, for a replica compacted past the common
    /// prefix: its rebuilt state there (node, snapshot, keys, hash).
    Own(u64, Option<i64>, u64, u64),
    /// A snapshot a replica holds.
    Snapshot(&'a Replica, Snapshot, SnapshotStore),
}

/// Replays the whole committed log from its start, stopping at each point (in log order) to
/// hold its state against the replicas'; what it finds goes into `verdict`.
#[allow(
    clippy::too_many_arguments,
    reason = "one partition's share of `check`'s inputs"
)]
fn replay_whole(
    stores: Stores<'_>,
    config: &PartitionConfig,
    whole: &Whole,
    points: BTreeMap<u64, Vec<Point<'_>>>,
    scratch: &Path,
    summary: &mut PartitionSummary,
    verdict: &mut Verdict,
) -> Result<(), String> {
    let partition = config.partition_id;
    let replays = SnapshotStore::open(scratch.join("whole-snapshots"), 1)
        .map_err(|e| format!("the whole log's replay: {e}"))?;
    let opener = stores(&scratch.join("whole-runtime"));
    let mut from: Option<Snapshot> = None;
    for (end, points) in points {
        whole.journal.commit_index().advance(end);
        let store = rebuild_state(
            config,
            &replays,
            from.as_ref(),
            opener.as_ref(),
            whole.journal.reader(),
        )
        .map_err(|e| format!("replaying the whole log to entry {end}: {e}"))?;
        let replayed = state_digest(store.as_ref())?;
        let position = whole.position_at(end);
        if position >= 0 {
            from = Some(
                replays
                    .take(position, store.as_ref())
                    .map_err(|e| format!("the whole log's replay at {position}: {e}"))?,
            );
        }
        drop(store);
        for point in points {
            match point {
                Point::Common => {
                    summary.replayed = Some(replayed);
                    for &(node, snapshot, keys, hash) in &summary.digests {
                        if (keys, hash) != replayed {
                            verdict.disagreements.push(format!(
                                "partition {partition}: broker {node}'s state at entry {end} \
                                 (from snapshot {snapshot:?}): {keys} keys, digest {hash:016x}; \
                                 the whole committed log replayed: {} keys, digest {:016x}",
                                replayed.0, replayed.1
                            ));
                        }
                    }
                }
                Point::Own(node, snapshot, keys, hash) => {
                    summary.own.push((node, end, snapshot, keys, hash));
                    if (keys, hash) != replayed {
                        verdict.disagreements.push(format!(
                            "partition {partition}: broker {node}'s state at entry {end}, the \
                             end of its committed log (from snapshot {snapshot:?}): {keys} keys, \
                             digest {hash:016x}; the whole committed log replayed to there: {} \
                             keys, digest {:016x}",
                            replayed.0, replayed.1
                        ));
                    }
                }
                Point::Snapshot(replica, snapshot, snapshots) => {
                    let held = rebuild_state(
                        config,
                        &snapshots,
                        Some(&snapshot),
                        stores(&replica.dir.join("check-snapshot")).as_ref(),
                        whole.journal.reader(),
                    )
                    .map_err(|e| e.to_string())
                    .and_then(|store| state_digest(store.as_ref()));
                    let held = match held {
                        Ok(held) => held,
                        Err(e) => {
                            verdict.not_checked.push(format!(
                                "partition {partition}: broker {}'s snapshot at position {}: {e}",
                                replica.node, snapshot.position
                            ));
                            continue;
                        }
                    };
                    summary.snapshots.push((replica.node, snapshot.position));
                    if !whole.between_entries(snapshot.position) || held != replayed {
                        verdict.disagreements.push(format!(
                            "partition {partition}: broker {}'s snapshot at position {} ({} \
                             keys, digest {:016x}) is not the state of the committed log to \
                             there ({} keys, digest {:016x}{})",
                            replica.node,
                            snapshot.position,
                            held.0,
                            held.1,
                            replayed.0,
                            replayed.1,
                            if whole.between_entries(snapshot.position) {
                                ""
                            } else {
                                "; the results of the commands to its position end inside an \
                                 entry"
                            }
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The records of one entry: their first and last positions, and the lowest and highest
/// source position of its events and rejections (the commands they are the result of), if
/// it holds any.
struct EntryRecords {
    first: i64,
    last: i64,
    sources: Option<(i64, i64)>,
}

/// Counts the work one committed entry holds.
fn count_entry(
    entry: &beeline_log::Entry,
    counts: &mut Counts,
) -> Result<Option<EntryRecords>, String> {
    if !entry.kind.carries_records() {
        return Ok(None);
    }
    let batch = decode_batch(&entry.data, entry.asqn as i64)
        .map_err(|e| format!("entry {} undecodable: {e}", entry.index))?;
    for record in &batch {
        let counter = if record.intent == Intent::from(ProcessInstanceCreationIntent::Created) {
            &mut counts.created
        } else if record.intent == Intent::from(JobIntent::Completed) {
            &mut counts.completed
        } else if record.intent == Intent::from(MessageIntent::Published) {
            &mut counts.published
        } else {
            continue;
        };
        *counter.entry(record.key).or_default() += 1;
    }
    let results = batch
        .iter()
        .filter(|r| r.record_type != RecordType::Command && r.source_record_position >= 0)
        .map(|r| r.source_record_position);
    let sources = results.clone().min().zip(results.max());
    Ok(batch
        .first()
        .zip(batch.last())
        .map(|(first, last)| EntryRecords {
            first: first.position,
            last: last.position,
            sources,
        }))
}

/// Counts the work the committed entries of `replica` from `from` on hold.
fn count(
    replica: &Replica,
    shape: JournalShape,
    from: u64,
    counts: &mut Counts,
) -> Result<u64, String> {
    let journal = open_journal(&replica.dir, shape)?;
    journal.commit_index().advance(replica.committed);
    let mut reader = journal.reader();
    reader
        .seek(from)
        .map_err(|e| format!("{}: {e}", replica.dir.display()))?;
    let mut records = 0;
    while let Some(entry) = reader.next_entry() {
        let entry = entry.map_err(|e| format!("{}: {e}", replica.dir.display()))?;
        if let Some(held) =
            count_entry(&entry, counts).map_err(|e| format!("{}: {e}", replica.dir.display()))?
        {
            records += (held.last - held.first + 1) as u64;
        }
    }
    Ok(records)
}

/// Checks partition `partition`, whose replicas' directories are `sources` (by node).
#[allow(
    clippy::too_many_arguments,
    reason = "one partition's share of `check`'s inputs"
)]
fn check_partition(
    stores: Stores<'_>,
    partition: u16,
    partitions: u16,
    sources: &[(u64, PathBuf)],
    archived: &[PathBuf],
    scratch: &Path,
    shape: JournalShape,
    counts: &mut Counts,
    verdict: &mut Verdict,
) -> Result<(), String> {
    let scratch = scratch.join(format!("partition-{partition}"));
    let replicas = sources
        .iter()
        .map(|(node, dir)| open_replica(*node, dir, &scratch, shape))
        .collect::<Result<Vec<_>, _>>()?;
    let mut summary = PartitionSummary {
        replicas: replicas
            .iter()
            .map(|r| (r.node, r.first, r.committed))
            .collect(),
        ..Default::default()
    };
    let common = replicas.iter().map(|r| r.committed).min().unwrap_or(0);
    summary.common = common;

    // Agreement: every pair, wherever both have the entry committed.
    let mut logs = Vec::new();
    for replica in &replicas {
        logs.push(hashes(replica, shape, common)?);
    }
    for (a, (log_a, _)) in replicas.iter().zip(&logs) {
        for (b, (log_b, _)) in replicas.iter().zip(&logs) {
            if a.node >= b.node {
                continue;
            }
            let from = a.first.max(b.first);
            let to = a.committed.min(b.committed);
            let differs = (from..=to).find(|&index| {
                log_a.get((index - a.first) as usize) != log_b.get((index - b.first) as usize)
            });
            if let Some(index) = differs {
                verdict.disagreements.push(format!(
                    "partition {partition}: brokers {} and {} differ at committed entry {index}",
                    a.node, b.node
                ));
            }
        }
    }

    // The same state from every replica at the end of the common prefix; a replica that
    // compacted past it, at the end of its own committed log (held below against the whole
    // log's replay there).
    let mut own = Vec::new();
    for (replica, (_, position)) in replicas.iter().zip(&logs) {
        let (end, position) = if replica.first <= common {
            (common, *position)
        } else {
            let (_, position) = hashes(replica, shape, replica.committed)?;
            (replica.committed, position)
        };
        match digest(stores, replica, partition, partitions, shape, end, position) {
            Ok((snapshot, keys, hash)) if end == common => {
                summary.digests.push((replica.node, snapshot, keys, hash))
            }
            Ok((snapshot, keys, hash)) => {
                own.push((end, Point::Own(replica.node, snapshot, keys, hash)))
            }
            Err(e) => verdict.not_checked.push(format!(
                "partition {partition}: state of broker {}: {e}",
                replica.node
            )),
        }
    }
    let distinct: std::collections::BTreeSet<u64> = summary
        .digests
        .iter()
        .map(|&(_, _, _, hash)| hash)
        .collect();
    if distinct.len() > 1 {
        verdict.disagreements.push(format!(
            "partition {partition}: replaying to entry {common} gives different states: {}",
            summary
                .digests
                .iter()
                .map(|(node, snapshot, keys, hash)| format!(
                    "broker {node} (from snapshot {snapshot:?}): {keys} keys, digest {hash:016x}"
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }

    // The whole committed log: the work in it, and its replay against the replicas' states
    // and snapshots.
    match whole::assemble(&replicas, archived, &scratch, shape, counts) {
        Ok(whole) => {
            verdict.records += whole.records;
            summary.whole = Some((whole.last, whole.archived));
            let mut points: BTreeMap<u64, Vec<Point<'_>>> = BTreeMap::new();
            points.entry(common).or_default().push(Point::Common);
            for (end, point) in own.drain(..) {
                points.entry(end).or_default().push(point);
            }
            for replica in &replicas {
                let snapshots = SnapshotStore::open(replica.dir.join("snapshots"), usize::MAX)
                    .and_then(|store| Ok((store.list()?, store)));
                match snapshots {
                    Ok((list, store)) => {
                        for snapshot in list {
                            points
                                .entry(whole.end_of(snapshot.position))
                                .or_default()
                                .push(Point::Snapshot(replica, snapshot, store.clone()));
                        }
                    }
                    Err(e) => verdict.not_checked.push(format!(
                        "partition {partition}: broker {}'s snapshots: {e}",
                        replica.node
                    )),
                }
            }
            let mut config = PartitionConfig::new(partition);
            config.partition_count = partitions;
            config.max_batch_bytes = shape.max_entry_size;
            if let Err(e) = replay_whole(
                stores,
                &config,
                &whole,
                points,
                &scratch,
                &mut summary,
                verdict,
            ) {
                verdict
                    .not_checked
                    .push(format!("partition {partition}: {e}"));
            }
        }
        Err(Gap::Disagreement(e)) => verdict
            .disagreements
            .push(format!("partition {partition}: {e}")),
        Err(Gap::Missing(e)) => {
            verdict.not_checked.push(format!(
                "partition {partition}: {e}: work acknowledged there cannot be found"
            ));
            for (end, point) in &own {
                if let Point::Own(node, ..) = point {
                    verdict.not_checked.push(format!(
                        "partition {partition}: broker {node}'s state at entry {end}: no whole \
                         log to replay to there"
                    ));
                }
            }
            // What the replicas hold is still counted.
            let mut by_first: Vec<&Replica> = replicas.iter().collect();
            by_first.sort_by_key(|r| r.first);
            let mut covered = 0u64;
            for replica in by_first {
                if replica.committed > covered {
                    verdict.records +=
                        count(replica, shape, covered.max(replica.first - 1) + 1, counts)?;
                    covered = replica.committed;
                }
            }
        }
    }
    verdict.partitions.insert(partition, summary);
    Ok(())
}

/// Checks a run: `replicas[p]` lists partition `p`'s replica directories by node, and
/// `archived[p]` the journal segment files archived from them during the run (any order); each
/// replica's state is rebuilt in a store from `stores`.
#[allow(
    clippy::too_many_arguments,
    reason = "a run's evidence and where to check it"
)]
pub fn check(
    stores: Stores<'_>,
    replicas: &BTreeMap<u16, Vec<(u64, PathBuf)>>,
    archived: &BTreeMap<u16, Vec<PathBuf>>,
    partitions: u16,
    history: &Acknowledged,
    scratch: &Path,
    shape: JournalShape,
) -> Verdict {
    let mut verdict = Verdict::default();
    let mut counts = Counts::default();
    for (&partition, sources) in replicas {
        if let Err(e) = check_partition(
            stores,
            partition,
            partitions,
            sources,
            archived.get(&partition).map_or(&[][..], Vec::as_slice),
            scratch,
            shape,
            &mut counts,
            &mut verdict,
        ) {
            verdict
                .not_checked
                .push(format!("partition {partition}: {e}"));
        }
    }
    judge(&counts, history, &mut verdict);
    verdict
}

/// Holds the history against what the committed logs hold.
fn judge(counts: &Counts, history: &Acknowledged, verdict: &mut Verdict) {
    for (id, key) in &history.created {
        match counts.created.get(key).copied().unwrap_or(0) {
            1 => {}
            0 => verdict.lost.push(format!(
                "instance {key} (id {id}, partition {:?}): its start was acknowledged, but it \
                 is not in the committed log",
                partition_of(*key)
            )),
            n => verdict
                .duplicated
                .push(format!("instance {key} (id {id}) created {n} times")),
        }
    }
    for key in &history.completed {
        if counts.completed.get(key).copied().unwrap_or(0) == 0 {
            verdict.lost.push(format!(
                "job {key}: its completion was acknowledged, but no JOB COMPLETED is committed"
            ));
        }
    }
    for (key, n) in &counts.completed {
        if *n > 1 {
            verdict
                .duplicated
                .push(format!("job {key}: completed {n} times"));
        }
    }
    for key in &history.published {
        match counts.published.get(key).copied().unwrap_or(0) {
            1 => {}
            0 => verdict.lost.push(format!(
                "message {key}: its publication was acknowledged, but it is not committed"
            )),
            n => verdict
                .duplicated
                .push(format!("message {key} published {n} times")),
        }
    }
    verdict.lost.sort();
    verdict.duplicated.sort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judge_finds_lost_and_duplicated_work() {
        let mut counts = Counts::default();
        counts.created.insert(1, 1);
        counts.created.insert(2, 2);
        counts.completed.insert(10, 1);
        counts.completed.insert(11, 2);
        counts.published.insert(20, 1);
        let history = Acknowledged {
            created: vec![("a".into(), 1), ("b".into(), 2), ("c".into(), 3)],
            completed: vec![10, 12],
            published: vec![20, 21],
        };
        let mut verdict = Verdict::default();
        judge(&counts, &history, &mut verdict);
        let lost = verdict.lost.join("\n");
        assert!(lost.contains("instance 3 (id c"), "{lost}");
        assert!(lost.contains("job 12"), "{lost}");
        assert!(lost.contains("message 21"), "{lost}");
        assert_eq!(verdict.lost.len(), 3, "{lost}");
        let duplicated = verdict.duplicated.join("\n");
        assert!(
            duplicated.contains("instance 2 (id b) created 2 times"),
            "{duplicated}"
        );
        assert!(
            duplicated.contains("job 11: completed 2 times"),
            "{duplicated}"
        );
        assert_eq!(verdict.duplicated.len(), 2, "{duplicated}");
        assert!(!verdict.passed());
    }
}
