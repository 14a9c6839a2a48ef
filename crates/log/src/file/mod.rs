//! The durable journal: a directory of preallocated, checksummed segment files.

mod format;
mod pending;
mod reader;
mod recovery;
mod segment;
mod spare;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use format::{
    FORMAT_VERSION, FrameMeta, MAX_FRAME_HEADER_LEN, SEGMENT_HEADER_LEN, SegmentHeader, frame_len,
};
use pending::{Pending, WRITE_OUT_AT, Writing};
pub use reader::FileReader;
use reader::Limit;
pub use recovery::{Recovery, RecoveryReport};
use segment::Segment;
use spare::{Abandoned, Spare};

use crate::journal::{CommitIndex, Compaction, EntryKind, Flusher, Journal};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct FileJournalConfig {
    /// Size of one segment file, preallocated when the segment is created. Default 128 MiB.
    pub segment_size: u64,
    /// Largest entry accepted. Default 4 MiB; must fit in a segment.
    pub max_entry_size: usize,
    /// One sparse index point per this many entries (memory vs. seek cost). Default 64.
    pub index_density: u64,
    /// What to do when recovery finds damage that is not a torn tail. Default [`Recovery::Strict`].
    pub recovery: Recovery,
    /// Whether the entries found on open count as committed. Default true: on a single node
    /// every entry written was flushed before anything depended on it. A Raft replica opens
    /// with false and commits what its Raft group has committed.
    pub commit_recovered: bool,
}

impl Default for FileJournalConfig {
    fn default() -> Self {
        Self {
            segment_size: 128 * 1024 * 1024,
            max_entry_size: 4 * 1024 * 1024,
            index_density: 64,
            recovery: Recovery::Strict,
            commit_recovered: true,
        }
    }
}

impl FileJournalConfig {
    fn validate(&self) -> Result<()> {
        let room = self
            .segment_size
            .saturating_sub(SEGMENT_HEADER_LEN + MAX_FRAME_HEADER_LEN);
        if (self.max_entry_size as u64) > room || self.max_entry_size == 0 {
            return Err(Error::Failed(format!(
                "invalid journal configuration: max entry size {} must be between 1 and the \
                 segment size {} minus {} bytes of headers",
                self.max_entry_size,
                self.segment_size,
                SEGMENT_HEADER_LEN + MAX_FRAME_HEADER_LEN
            )));
        }
        if self.index_density == 0 {
            return Err(Error::Failed(
                "invalid journal configuration: index density must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// State shared by the writer, its flushers and its readers.
#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    segments: RwLock<Vec<Arc<Segment>>>,
    /// Highest index whose frame is completely written to the file (not necessarily synced).
    written: AtomicU64,
    /// Highest index appended (pending, written or synced).
    appended: AtomicU64,
    /// Frames appended but not in the file yet (see [`pending`]).
    pending: Mutex<Pending>,
    /// Held while pending frames are written.
    writing: Mutex<Writing>,
    /// One sparse index point per this many entries.
    index_density: u64,
    /// Highest index known to be on stable storage.
    durable: AtomicU64,
    /// Bumped whenever frames are rewritten in place, so readers drop buffered bytes.
    rewrites: AtomicU64,
    /// Set when a write or sync failed in a way that leaves the files uncertain.
    failure: Mutex<Option<String>>,
}

impl Shared {
    fn segments(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Segment>>> {
        // The list is only ever replaced by whole pushes, truncations and drains.
        self.segments.read().unwrap_or_else(|e| e.into_inner())
    }

    fn segments_mut(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Arc<Segment>>> {
        self.segments.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The oldest entry held (1 while there is no segment).
    fn first_index(&self) -> u64 {
        self.segments().first().map_or(1, |s| s.first_index)
    }

    fn check_failed(&self) -> Result<()> {
        match &*self.failure.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(reason) => Err(Error::Failed(reason.clone())),
            None => Ok(()),
        }
    }

    /// The segment appends go to. `open` makes one and only a reset empties the list, which
    /// fails the journal when it cannot make the next one.
    fn active(&self) -> Result<Arc<Segment>> {
        self.segments().last().cloned().ok_or_else(|| {
            Error::Failed(format!(
                "the journal in {} has no active segment",
                self.dir.display()
            ))
        })
    }

    fn fail(&self, reason: String) {
        tracing::error!(dir = %self.dir.display(), %reason, "journal failed");
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(reason);
    }
}

/// Makes readers of a [`FileJournal`] without holding it.
#[derive(Debug, Clone)]
pub struct FileReaders {
    shared: Arc<Shared>,
    commit: Arc<CommitIndex>,
}

impl FileReaders {
    /// A reader of committed entries, as [`Journal::reader`].
    pub fn reader(&self) -> FileReader {
        FileReader::new(self.shared.clone(), Limit::Committed(self.commit.clone()))
    }

    /// A reader of every appended entry, as [`Journal::log_reader`].
    pub fn log_reader(&self) -> FileReader {
        FileReader::new(self.shared.clone(), Limit::Appended)
    }

    /// The journal's commit index.
    pub fn commit_index(&self) -> Arc<CommitIndex> {
        self.commit.clone()
    }

    /// The newest entry appended (0 when none), committed or not.
    pub fn last_appended(&self) -> u64 {
        self.shared.appended.load(Ordering::Acquire)
    }
}

/// A segmented journal on disk. See the crate documentation for the guarantees.
#[derive(Debug)]
pub struct FileJournal {
    shared: Arc<Shared>,
    commit: Arc<CommitIndex>,
    config: FileJournalConfig,
    last_asqn: Option<u64>,
    last_term: u64,
    /// The newest entry appended, and where the active segment's next frame goes.
    tail: Tail,
    report: RecoveryReport,
    /// The next segment's file, being written with zeros (see [`spare`]).
    spare: Option<Spare>,
    /// Spares made so far (each gets its own file name).
    spares: u64,
    /// Abandoned spares, finished (joined, removed) before the journal goes.
    abandoned: Vec<Abandoned>,
}

/// Removes the compacted segments a crash left half deleted in `dir` (see
/// [`crate::journal::Compaction::finish`]): they were out of the journal already.
fn remove_being_deleted(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(crate::journal::BEING_DELETED))
        {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

impl FileJournal {
    /// Opens (or creates) the journal in `dir`, recovering what is intact. Everything recovered
    /// is synced and committed.
    pub fn open(dir: impl AsRef<Path>, config: FileJournalConfig) -> Result<Self> {
        config.validate()?;
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        spare::remove_stale(&dir).map_err(|e| Error::io(&dir, e))?;
        remove_being_deleted(&dir).map_err(|e| Error::io(&dir, e))?;
        let recovered = recovery::recover(&dir, &config)?;
        let tail = recovered
            .segments
            .last()
            .map(|s| Tail::of(s))
            .unwrap_or_default();
        let last_index = tail.index;
        let shared = Arc::new(Shared {
            dir,
            segments: RwLock::new(recovered.segments),
            written: AtomicU64::new(last_index),
            appended: AtomicU64::new(last_index),
            pending: Mutex::new(Pending::default()),
            writing: Mutex::new(Writing::default()),
            index_density: config.index_density,
            durable: AtomicU64::new(last_index),
            rewrites: AtomicU64::new(0),
            failure: Mutex::new(None),
        });
        shared.pending().restart_at(tail.end);
        let commit = if config.commit_recovered {
            last_index
        } else {
            0
        };
        let mut journal = Self {
            shared,
            commit: CommitIndex::new(commit),
            config,
            last_asqn: recovered.last_asqn,
            last_term: recovered.last_term,
            tail,
            report: recovered.report,
            spare: None,
            spares: 0,
            abandoned: Vec::new(),
        };
        let active = journal.shared.segments().last().cloned();
        match active {
            None => {
                journal.create_segment(1, 1)?;
            }
            // Written by an older build: appends go to a new segment in today's format.
            Some(active) if active.version != FORMAT_VERSION => {
                journal.create_segment(active.id + 1, active.last_index() + 1)?;
            }
            Some(_) => {}
        }
        // Recovery read every segment through the page cache, and nothing reads them again:
        // after a restart they would otherwise sit in a container's memory until the kernel
        // needs it (a 129.5 MiB peak of the broker's cgroup in a soak with restarts).
        if let Some((active, sealed)) = journal.shared.segments().split_last() {
            sealed
                .iter()
                .for_each(|segment| segment.release_all_cache());
            active.release_cache_but_the_tail();
        }
        journal.prepare_spare();
        Ok(journal)
    }

    /// What recovery found when the journal was opened.
    /// Makes readers of this journal from anywhere, also after the journal itself moved into
    /// the Raft layer's log store (a replicated partition's processor and replayer read
    /// through it).
    pub fn readers(&self) -> FileReaders {
        FileReaders {
            shared: self.shared.clone(),
            commit: self.commit.clone(),
        }
    }

    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.report
    }

    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Whether the preparation of the next segment's file is over: written and synced, ready
    /// to take over when the active segment is full, or failed (logged; the next segment is
    /// then made the plain way). See [`spare`].
    pub fn next_segment_prepared(&self) -> bool {
        self.spare.as_ref().is_some_and(Spare::is_ready)
    }

    fn active(&self) -> Result<Arc<Segment>> {
        self.shared.active()
    }

    /// Starts preparing the file of the segment after the active one.
    fn prepare_spare(&mut self) {
        let (done, running): (Vec<_>, Vec<_>) = std::mem::take(&mut self.abandoned)
            .into_iter()
            .partition(Abandoned::is_finished);
        self.abandoned = running;
        done.into_iter().for_each(Abandoned::finish);
        self.spares += 1;
        self.spare = Spare::prepare(
            &self.shared.dir,
            self.spares,
            self.config.segment_size,
            self.tail.end,
        );
    }

    fn create_segment(&mut self, id: u64, first_index: u64) -> Result<Arc<Segment>> {
        let path = segment_path(&self.shared.dir, id);
        let header = SegmentHeader {
            id,
            first_index,
            size: self.config.segment_size,
            version: FORMAT_VERSION,
        };
        let prepared = self
            .spare
            .take()
            .and_then(|spare| spare.take(&mut self.abandoned));
        let file = match prepared {
            Some((file, spare)) => install_spare(file, &spare, &path, &header)?,
            None => create_segment_file(&path, &header)?,
        };
        sync_dir(&self.shared.dir)?;
        let segment = Arc::new(Segment::new(
            id,
            path,
            first_index,
            self.config.segment_size,
            FORMAT_VERSION,
            file,
        ));
        self.shared.segments_mut().push(segment.clone());
        self.tail = Tail::of(&segment);
        self.shared.pending().restart_at(self.tail.end);
        Ok(segment)
    }

    /// Starts the disk writes of the active segment's whole pages that are in the file and not
    /// on their way yet, without waiting for them. Without it, a journal that is not flushed
    /// (`--log-flush none`), or flushed seldom, keeps a whole segment in dirty pages until the
    /// roll's sync, which then writes it all while appends wait: 44-415 ms for 128 MiB on the
    /// reference machine. The last, partial page is left: the next write-out changes it again.
    fn start_writeback(&mut self) {
        let Ok(active) = self.active() else {
            return;
        };
        let whole_pages = active.end() / pending::PAGE * pending::PAGE;
        if whole_pages <= self.tail.written_back {
            return;
        }
        let from = self.tail.written_back;
        if let Err(error) = start_writeback(&active.file, from, whole_pages - from) {
            // Only an early start: the sync still writes whatever is left.
            tracing::debug!(path = %active.path.display(), %error, "cannot start writeback");
        }
        self.tail.written_back = whole_pages;
        // The pages started at the write-out before this one have had a write-out's worth of
        // appends to reach the disk.
        active.release_cache(from);
    }

    /// Where the disk writes started for the active segment end: every whole page before this
    /// offset is on its way to the disk or there (diagnostics and tests).
    pub fn writeback_started_up_to(&self) -> u64 {
        self.tail.written_back
    }

    /// Where the active segment's pages dropped from the page cache end (see
    /// [`Segment::release_cache`]; diagnostics and tests).
    pub fn cache_released_up_to(&self) -> u64 {
        self.active()
            .map_or(0, |active| active.cache_released_up_to())
    }

    /// Seals the active segment (written and synced, so flushers never need to look back) and
    /// starts the next.
    fn roll(&mut self) -> Result<()> {
        let active = self.active()?;
        tracing::debug!(segment = active.id, "rolling the log to a new segment");
        self.shared.write_out()?;
        active.file.sync_data().map_err(|e| {
            self.shared.fail(format!("sync failed: {e}"));
            Error::io(&active.path, e)
        })?;
        self.shared
            .durable
            .fetch_max(active.last_index(), Ordering::AcqRel);
        active.release_all_cache();
        self.create_segment(active.id + 1, active.last_index() + 1)?;
        self.prepare_spare();
        Ok(())
    }
}

/// The writer's view of the active segment, ahead of what readers see by the pending frames.
#[derive(Debug, Clone, Copy)]
struct Tail {
    /// The newest entry appended (0 when none ever was).
    index: u64,
    /// Where the next frame goes.
    end: u64,
    /// The segment's size: frames never extend past it.
    size: u64,
    /// The end of the whole pages whose disk writes the appending thread has started (see
    /// [`FileJournal::start_writeback`]).
    written_back: u64,
}

impl Tail {
    /// A segment whose frames are all in its file.
    fn of(segment: &Segment) -> Self {
        Self {
            index: segment.last_index(),
            end: segment.end(),
            size: segment.size,
            // What a segment holds when it becomes the writer's is synced already.
            written_back: segment.end() / pending::PAGE * pending::PAGE,
        }
    }
}

impl Default for Tail {
    /// Nothing appended and no segment yet (`open` makes the first one at once).
    fn default() -> Self {
        Self {
            index: 0,
            end: SEGMENT_HEADER_LEN,
            size: 0,
            written_back: 0,
        }
    }
}

fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("segment-{id:010}.log"))
}

fn create_segment_file(path: &Path, header: &SegmentHeader) -> Result<File> {
    let io = |e| Error::io(path, e);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    let result = preallocate(&file, header.size)
        .and_then(|()| file.write_all_at(&header.encode(), 0))
        .and_then(|()| file.sync_all());
    if let Err(e) = result {
        // A half-made segment would only confuse recovery: take it away again.
        let _ = std::fs::remove_file(path);
        return Err(io(e));
    }
    Ok(file)
}

/// Makes the prepared spare the segment at `path`: its header, synced, then the name. The
/// header goes out as a whole page of the file (the rest zeros), which the page cache then
/// holds: the first frames need no read of it (see [`spare`]).
fn install_spare(file: File, spare: &Path, path: &Path, header: &SegmentHeader) -> Result<File> {
    let io = |e| Error::io(path, e);
    let mut page = vec![0u8; pending::PAGE.min(header.size) as usize];
    let encoded = header.encode();
    page[..encoded.len()].copy_from_slice(&encoded);
    let installed = file
        .write_all_at(&page, 0)
        .and_then(|()| file.sync_data())
        .and_then(|()| std::fs::rename(spare, path));
    if let Err(e) = installed {
        let _ = std::fs::remove_file(spare);
        return Err(io(e));
    }
    Ok(file)
}

/// Reserves the segment's blocks up front: appends then never allocate, so a full disk shows
/// at segment creation (cleanly) rather than in the middle of a frame, and `fdatasync` has no
/// file size to update.
fn preallocate(file: &File, size: u64) -> std::io::Result<()> {
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, size) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::OPNOTSUPP) => file.set_len(size),
        Err(e) => Err(e.into()),
    }
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

impl Journal for FileJournal {
    type Reader = FileReader;
    type Flusher = FileFlusher;

    fn append_entry(&mut self, term: u64, kind: EntryKind, asqn: u64, data: &[u8]) -> Result<u64> {
        self.shared.check_failed()?;
        let normal = kind.carries_records();
        if normal && data.is_empty() {
            return Err(Error::EmptyEntry);
        }
        if data.len() > self.config.max_entry_size {
            return Err(Error::EntryTooLarge {
                size: data.len(),
                max: self.config.max_entry_size,
            });
        }
        if term < self.last_term {
            return Err(Error::TermDecreasing {
                term,
                last: self.last_term,
            });
        }
        let asqn = if normal {
            if let Some(last) = self.last_asqn
                && asqn <= last
            {
                return Err(Error::AsqnNotIncreasing { asqn, last });
            }
            asqn
        } else {
            self.last_asqn.unwrap_or(0)
        };
        let len = frame_len(FORMAT_VERSION, data.len());
        if self.tail.end + len > self.tail.size {
            self.roll()?;
        }
        let index = self.tail.index + 1;
        let meta = FrameMeta {
            index,
            asqn,
            term,
            kind,
        };
        let pending = self.shared.pending().push(&meta, data);
        self.tail.index = index;
        self.tail.end += len;
        self.last_asqn = Some(asqn);
        self.last_term = term;
        self.shared.appended.store(index, Ordering::Release);
        if let Some(spare) = &self.spare {
            spare.advance(self.tail.end);
        }
        if pending >= WRITE_OUT_AT {
            self.shared.write_out()?;
            self.start_writeback();
        }
        Ok(index)
    }

    fn first_index(&self) -> u64 {
        self.shared.first_index()
    }

    fn last_index(&self) -> u64 {
        self.tail.index
    }

    fn last_asqn(&self) -> Option<u64> {
        self.last_asqn
    }

    fn last_term(&self) -> u64 {
        self.last_term
    }

    fn flusher(&self) -> FileFlusher {
        FileFlusher {
            shared: self.shared.clone(),
        }
    }

    fn commit_index(&self) -> Arc<CommitIndex> {
        self.commit.clone()
    }

    fn reader(&self) -> FileReader {
        FileReader::new(self.shared.clone(), Limit::Committed(self.commit.clone()))
    }

    fn log_reader(&self) -> FileReader {
        FileReader::new(self.shared.clone(), Limit::Appended)
    }

    fn truncate_after(&mut self, index: u64) -> Result<()> {
        self.shared.check_failed()?;
        let commit = self.commit.get();
        if index < commit {
            return Err(Error::TruncateCommitted { index, commit });
        }
        if index >= self.last_index() {
            return Ok(());
        }
        self.shared.write_out()?;
        // Drop whole segments that start after `index`, then cut the one that holds it.
        let dropped: Vec<Arc<Segment>> = {
            let mut segments = self.shared.segments_mut();
            let keep = segments
                .iter()
                .position(|s| s.first_index > index)
                .unwrap_or(segments.len())
                .max(1);
            segments.drain(keep..).collect()
        };
        for segment in dropped {
            std::fs::remove_file(&segment.path).map_err(|e| Error::io(&segment.path, e))?;
        }
        let active = self.active()?;
        let cut = reader::offset_after(&active, index)?;
        zero_from(&active, cut)?;
        active.rewind(index, cut);
        self.tail = Tail::of(&active);
        self.shared.pending().restart_at(cut);
        self.shared.rewrites.fetch_add(1, Ordering::AcqRel);
        self.shared.written.store(index, Ordering::Release);
        self.shared.appended.store(index, Ordering::Release);
        self.shared.durable.fetch_min(index, Ordering::AcqRel);
        self.last_asqn = None;
        self.last_term = 0;
        for segment in self.shared.segments().iter().rev() {
            if let Some((asqn, term)) = reader::last_asqn_and_term(segment)? {
                self.last_asqn = Some(asqn);
                self.last_term = term;
                break;
            }
        }
        sync_dir(&self.shared.dir)
    }

    fn compact(&mut self, index: u64) -> Result<Compaction> {
        let removable: Vec<Arc<Segment>> = {
            let mut segments = self.shared.segments_mut();
            // A segment can go when the next one starts at or below `index`: all of its entries
            // are then below `index`. The active segment always stays.
            let mut count = 0;
            while count + 1 < segments.len() && segments[count + 1].first_index <= index {
                count += 1;
            }
            segments.drain(..count).collect()
        };
        // Readers that still hold a segment keep reading it; unlinking only frees the name.
        let mut compaction = Compaction::default();
        for segment in removable {
            compaction.push(segment.path.clone(), Box::new(segment));
        }
        Ok(compaction)
    }

    fn reset(&mut self, next_index: u64) -> Result<()> {
        self.shared.check_failed()?;
        let commit = self.commit.get();
        if next_index <= commit {
            return Err(Error::ResetCommitted {
                next: next_index,
                commit,
            });
        }
        let next_index = next_index.max(1);
        self.shared.write_out()?;
        let last_id = self.active()?.id;
        // The old segments go first: a crash in between leaves an empty directory (the Raft
        // layer then resets again from its purge mark), never two segments that do not join.
        let old: Vec<Arc<Segment>> = self.shared.segments_mut().drain(..).collect();
        if let Some(spare) = self.spare.take() {
            self.abandoned.push(spare.abandon());
        }
        for segment in &old {
            match std::fs::remove_file(&segment.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    self.shared
                        .fail(format!("cannot remove {}: {e}", segment.path.display()));
                    return Err(Error::io(&segment.path, e));
                }
            }
        }
        // Without its segments the journal cannot go on until it is opened again.
        let next =
            sync_dir(&self.shared.dir).and_then(|()| self.create_segment(last_id + 1, next_index));
        if let Err(e) = next {
            self.shared
                .fail(format!("cannot start a segment after a reset: {e}"));
            return Err(e);
        }
        self.shared.rewrites.fetch_add(1, Ordering::AcqRel);
        self.shared.written.store(next_index - 1, Ordering::Release);
        self.shared
            .appended
            .store(next_index - 1, Ordering::Release);
        self.shared.durable.store(next_index - 1, Ordering::Release);
        self.last_asqn = None;
        self.last_term = 0;
        self.commit.advance(next_index - 1);
        self.prepare_spare();
        Ok(())
    }
}

impl Drop for FileJournal {
    fn drop(&mut self) {
        // What was appended reaches the file (not the disk: that takes a flush), as if every
        // append had written at once.
        let _ = self.shared.write_out();
        // No thread outlives the journal writing into its directory, and no spare is left.
        if let Some(spare) = self.spare.take() {
            self.abandoned.push(spare.abandon());
        }
        self.abandoned.drain(..).for_each(Abandoned::finish);
    }
}

/// Zeros the segment from `offset` to the end of its file, so stale frames after the cut can
/// never be mistaken for new ones.
///
/// The file keeps its length throughout (and never grows: a damaged header's size must not
/// make recovery allocate gigabytes). Readers of the committed entries before the cut read
/// whole windows up to the end they last saw, concurrently with a follower's truncation: a
/// file cut short and then extended again, as this once did, failed those reads with "failed
/// to fill whole buffer" in between.
fn zero_from(segment: &Segment, offset: u64) -> Result<()> {
    let io = |e| Error::io(&segment.path, e);
    let len = segment.file.metadata().map_err(io)?.len();
    if offset < len {
        zero_range(&segment.file, offset, len - offset).map_err(io)?;
    }
    segment.file.sync_all().map_err(io)
}

/// Makes `len` bytes at `offset` read as zeros without changing the file's length, keeping
/// the blocks reserved where the file system allows.
fn zero_range(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use rustix::fs::{FallocateFlags, fallocate};
    let keep = FallocateFlags::KEEP_SIZE;
    match fallocate(file, FallocateFlags::ZERO_RANGE | keep, offset, len) {
        Ok(()) => return Ok(()),
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::INVAL) => {}
        Err(e) => return Err(e.into()),
    }
    match fallocate(file, FallocateFlags::PUNCH_HOLE | keep, offset, len) {
        Ok(()) => {
            // The hole's blocks reserved again, so appends into them need not allocate; only
            // an optimisation, so a failure is no error.
            let _ = fallocate(file, keep, offset, len);
            return Ok(());
        }
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::INVAL) => {}
        Err(e) => return Err(e.into()),
    }
    let zeros = vec![0u8; 1 << 20];
    let mut at = offset;
    while at < offset + len {
        let n = (offset + len - at).min(zeros.len() as u64);
        file.write_all_at(&zeros[..n as usize], at)?;
        at += n;
    }
    Ok(())
}

/// Syncs written entries from any thread; one call covers every append before it.
#[derive(Debug, Clone)]
pub struct FileFlusher {
    shared: Arc<Shared>,
}

impl Flusher for FileFlusher {
    fn flush(&self) -> Result<u64> {
        self.shared.check_failed()?;
        // Write out before choosing the file: entries up to `written` are then either in the
        // active segment (synced below) or in a sealed one (synced when it was sealed).
        let written = self.shared.write_out()?;
        let active = self.shared.segments().last().cloned();
        if let Some(active) = active {
            let in_file = active.end();
            if let Err(e) = active.file.sync_data() {
                // After a failed fsync the kernel may have dropped the dirty pages: nothing
                // written since the last good sync can be trusted, so stop accepting work.
                self.shared
                    .fail(format!("fsync of {} failed: {e}", active.path.display()));
                return Err(Error::io(&active.path, e));
            }
            active.release_cache(in_file);
        }
        Ok(self
            .shared
            .durable
            .fetch_max(written, Ordering::AcqRel)
            .max(written))
    }
}

/// Starts writing `len` bytes at `offset` to the disk, without waiting and without a device
/// flush, so that a later sync of the file has little left to write.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain system call on an open descriptor; it reads no memory of ours.
    let done = unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Elsewhere the pages go out with the next sync.
#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) -> std::io::Result<()> {
    Ok(())
}

/// Asks the kernel to drop `len` bytes at `offset` from the page cache. Clean pages go at
/// once; dirty ones, and ones being written, stay.
#[cfg(target_os = "linux")]
fn drop_from_cache(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let Some(len) = std::num::NonZeroU64::new(len) else {
        return Ok(());
    };
    rustix::fs::fadvise(file, offset, Some(len), rustix::fs::Advice::DontNeed).map_err(Into::into)
}

/// Elsewhere the kernel reclaims the pages in its own time.
#[cfg(not(target_os = "linux"))]
fn drop_from_cache(_file: &File, _offset: u64, _len: u64) -> std::io::Result<()> {
    Ok(())
}
