//! One segment file: its immutable identity plus the watermarks the writer publishes to readers.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::format::{FrameHeader, SEGMENT_HEADER_LEN, frame_header_len};
use super::pending::PAGE;
use crate::{Error, Result};

/// A point of the sparse index: entry `index` with `asqn` starts at `offset`. Only normal
/// entries are points: the others repeat the asqn before them, and a point at one of them
/// would hide the normal entry that holds the records of that asqn.
#[derive(Debug, Clone, Copy)]
pub struct IndexPoint {
    pub index: u64,
    pub asqn: u64,
    pub offset: u64,
}

#[derive(Debug)]
pub struct Segment {
    pub id: u64,
    pub path: PathBuf,
    pub first_index: u64,
    /// Preallocated size; frames never extend past it.
    pub size: u64,
    /// The frame format version of the segment (see [`super::format`]).
    pub version: u32,
    pub file: File,
    /// Offset just past the last written frame.
    end: AtomicU64,
    /// Index of the last written frame (`first_index - 1` when empty).
    last_index: AtomicU64,
    /// Every `density`-th entry, always including the first; ordered by index and asqn.
    sparse: Mutex<Vec<IndexPoint>>,
    /// The end of the leading whole pages dropped from the page cache (see
    /// [`Segment::release_cache`]).
    released: AtomicU64,
}

/// Clean pages gathered before they are dropped from the page cache in one call.
pub const RELEASE_STEP: u64 = 1024 * 1024;

impl Segment {
    pub fn new(
        id: u64,
        path: PathBuf,
        first_index: u64,
        size: u64,
        version: u32,
        file: File,
    ) -> Self {
        Self {
            id,
            path,
            first_index,
            size,
            version,
            file,
            end: AtomicU64::new(SEGMENT_HEADER_LEN),
            last_index: AtomicU64::new(first_index - 1),
            sparse: Mutex::new(Vec::new()),
            released: AtomicU64::new(0),
        }
    }

    /// Drops the whole pages before `clean` (an offset the caller knows every page before is
    /// written to the disk) from the page cache, once at least [`RELEASE_STEP`] of them have
    /// gathered.
    ///
    /// Nothing writes into those pages again and the processor never reads them back
    /// (recovery and snapshots read the files), so cached they only grow the page cache by
    /// the log's whole write rate: memory counted against a container's limit (whose reclaim
    /// then runs in the appending threads) and, on a virtual machine, fresh pages each first
    /// touched at a price. Freed now, the same few pages serve the next appends. Pages that
    /// are dirty again, still being written, or briefly held elsewhere in the kernel are
    /// skipped; [`Segment::release_all_cache`] takes them when the segment is sealed.
    pub fn release_cache(&self, clean: u64) {
        let from = self.released.load(Ordering::Acquire);
        let to = clean / PAGE * PAGE;
        if to < from + RELEASE_STEP {
            return;
        }
        // The flusher and the appending thread both release: one of them does each step.
        if self
            .released
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        self.drop_from_cache(from, to - from);
    }

    /// Drops every page of a sealed (written and synced) segment from the page cache, those
    /// skipped before included.
    pub fn release_all_cache(&self) {
        self.released.store(self.size, Ordering::Release);
        self.drop_from_cache(0, self.size);
    }

    /// Drops every page but the one holding the end (the next frame goes into it) from the
    /// page cache: what recovery read of the active segment, the zeros after the end included.
    pub fn release_cache_but_the_tail(&self) {
        let tail = self.end() / PAGE * PAGE;
        self.released.store(tail, Ordering::Release);
        self.drop_from_cache(0, tail);
        let after = (tail + PAGE).min(self.size);
        self.drop_from_cache(after, self.size - after);
    }

    fn drop_from_cache(&self, offset: u64, len: u64) {
        if let Err(error) = super::drop_from_cache(&self.file, offset, len) {
            tracing::debug!(path = %self.path.display(), %error, "cannot drop cached log pages");
        }
    }

    /// Where the pages dropped from the page cache end: every whole page before this offset
    /// has been dropped (diagnostics and tests).
    pub fn cache_released_up_to(&self) -> u64 {
        self.released.load(Ordering::Acquire)
    }

    pub fn end(&self) -> u64 {
        self.end.load(Ordering::Acquire)
    }

    pub fn last_index(&self) -> u64 {
        self.last_index.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.last_index() < self.first_index
    }

    /// Publishes a frame the writer has completely written; `normal` says whether its entry
    /// is a normal one (a candidate for the sparse index).
    pub fn record_frame(&self, point: IndexPoint, frame_len: u64, density: u64, normal: bool) {
        if normal {
            let mut sparse = self.sparse_points();
            // The first normal entry always, so `first_asqn` is exact.
            if sparse.is_empty() || (point.index - self.first_index).is_multiple_of(density) {
                sparse.push(point);
            }
        }
        self.end.store(point.offset + frame_len, Ordering::Release);
        self.last_index.store(point.index, Ordering::Release);
    }

    /// Forgets every frame after `index`, whose frame ends at `end`.
    pub fn rewind(&self, index: u64, end: u64) {
        self.sparse_points().retain(|p| p.index <= index);
        // The page holding the new end is written into again.
        self.released.fetch_min(end / PAGE * PAGE, Ordering::AcqRel);
        self.last_index.store(index, Ordering::Release);
        self.end.store(end, Ordering::Release);
    }

    pub fn first_asqn(&self) -> Option<u64> {
        self.sparse_points().first().map(|p| p.asqn)
    }

    /// The last sparse point at or before the entry `index`.
    pub fn point_for_index(&self, index: u64) -> IndexPoint {
        let sparse = self.sparse_points();
        let at = sparse.partition_point(|p| p.index <= index);
        at.checked_sub(1)
            .and_then(|i| sparse.get(i).copied())
            .unwrap_or(IndexPoint {
                index: self.first_index,
                asqn: 0,
                offset: SEGMENT_HEADER_LEN,
            })
    }

    /// The last sparse point whose asqn is `<= asqn`.
    pub fn point_for_asqn(&self, asqn: u64) -> IndexPoint {
        let sparse = self.sparse_points();
        let at = sparse.partition_point(|p| p.asqn <= asqn);
        at.checked_sub(1)
            .and_then(|i| sparse.get(i).copied())
            .unwrap_or(IndexPoint {
                index: self.first_index,
                asqn: 0,
                offset: SEGMENT_HEADER_LEN,
            })
    }

    fn sparse_points(&self) -> std::sync::MutexGuard<'_, Vec<IndexPoint>> {
        // Every mutation is a single push or retain: a poisoned lock still holds a valid list.
        self.sparse.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn corrupt(&self, offset: u64, reason: impl Into<String>) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            offset,
            reason: reason.into(),
        }
    }
}

/// Reads frames of one segment through a window buffer, never past a given end offset.
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    start: u64,
    /// The segment the buffer holds bytes of.
    segment: u64,
    window: usize,
    /// Whether the pages of a window read are dropped from the page cache when the next one
    /// of the same segment is read (see [`FrameReader::dropping_behind`]).
    drop_behind: bool,
}

impl FrameReader {
    pub fn new(window: usize) -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            segment: 0,
            window,
            drop_behind: false,
        }
    }

    /// A reader for one pass over the files while nothing writes (recovery): what it has read
    /// leaves the page cache as it goes on, so reading a whole log back at a restart does not
    /// fill a container's memory with it, even for a moment.
    pub fn dropping_behind(window: usize) -> Self {
        Self {
            drop_behind: true,
            ..Self::new(window)
        }
    }

    pub fn invalidate(&mut self) {
        self.buf.clear();
    }

    /// Returns `len` bytes at `offset`, reading at most up to `limit` (exclusive).
    fn bytes(&mut self, segment: &Segment, offset: u64, len: usize, limit: u64) -> Result<&[u8]> {
        let (file, path) = (&segment.file, &segment.path);
        let wanted_end = offset + len as u64;
        let buffered_end = self.start + self.buf.len() as u64;
        if segment.id != self.segment || offset < self.start || wanted_end > buffered_end {
            if self.drop_behind && segment.id == self.segment && offset > self.start {
                // The whole pages read before the new window; those it reads again stay.
                let behind = buffered_end.min(offset) - self.start;
                segment.drop_from_cache(self.start, behind);
            }
            self.segment = segment.id;
            let read_len = (self.window.max(len) as u64).min(limit.saturating_sub(offset));
            if read_len < len as u64 {
                return Err(Error::Corrupt {
                    path: path.to_path_buf(),
                    offset,
                    reason: format!("a frame of {len} bytes runs past the written end {limit}"),
                });
            }
            self.buf.resize(read_len as usize, 0);
            file.read_exact_at(&mut self.buf, offset)
                .map_err(|e| Error::io(path, e))?;
            self.start = offset;
        }
        let from = (offset - self.start) as usize;
        Ok(&self.buf[from..from + len])
    }

    /// Reads and verifies the frame at `offset`; returns its header and data.
    pub fn frame(
        &mut self,
        segment: &Segment,
        offset: u64,
        limit: u64,
    ) -> Result<(FrameHeader, Vec<u8>)> {
        let header_len = frame_header_len(segment.version);
        let head = self.bytes(segment, offset, header_len as usize, limit)?;
        let header = FrameHeader::decode(head, segment.version);
        if header.is_end_marker() {
            return Err(segment.corrupt(offset, "expected a frame, found the end marker"));
        }
        let data = self
            .bytes(segment, offset + header_len, header.len as usize, limit)?
            .to_vec();
        if !header.verify(&data) {
            return Err(segment.corrupt(offset, "frame checksum mismatch"));
        }
        Ok((header, data))
    }

    /// Reads only the frame header at `offset` (used to skip forward while seeking).
    pub fn header(&mut self, segment: &Segment, offset: u64, limit: u64) -> Result<FrameHeader> {
        let head = self.bytes(
            segment,
            offset,
            frame_header_len(segment.version) as usize,
            limit,
        )?;
        Ok(FrameHeader::decode(head, segment.version))
    }
}
