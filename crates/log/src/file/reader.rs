//! Cursors over the entries of a file journal: committed ones (replay, exporters) or every
//! appended one (Raft replication).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Shared;
use super::segment::{FrameReader, Segment};
use crate::journal::{CommitIndex, Entry, JournalReader};
use crate::{Error, Result};

/// Reads are served from a window this large, so sequential replay costs one syscall per window.
const READ_WINDOW: usize = 64 * 1024;

/// How far a reader reads.
#[derive(Debug)]
pub(super) enum Limit {
    /// Up to the commit index.
    Committed(Arc<CommitIndex>),
    /// Up to the last appended entry.
    Appended,
}

#[derive(Debug)]
pub struct FileReader {
    shared: Arc<Shared>,
    limit: Limit,
    /// The segment and offset of entry `next`, when known.
    cursor: Option<(Arc<Segment>, u64)>,
    next: u64,
    frames: FrameReader,
    rewrites_seen: u64,
}

impl FileReader {
    pub(super) fn new(shared: Arc<Shared>, limit: Limit) -> Self {
        let rewrites_seen = shared.rewrites.load(Ordering::Acquire);
        Self {
            shared,
            limit,
            cursor: None,
            next: 1,
            frames: FrameReader::new(READ_WINDOW),
            rewrites_seen,
        }
    }

    /// The last entry this reader may return.
    fn last_readable(&self) -> u64 {
        match &self.limit {
            Limit::Committed(commit) => commit.get(),
            Limit::Appended => self.shared.appended.load(Ordering::Acquire),
        }
    }

    /// Makes sure the entries up to `index` are in the file: an entry can be committed (or read
    /// for replication) while it still waits to be written (see [`super::pending`]).
    fn written_up_to(&self, index: u64) -> Result<()> {
        if index > self.shared.written.load(Ordering::Acquire) {
            self.shared.write_out()?;
        }
        Ok(())
    }

    /// Finds the segment holding `index` (or the first one, when it was compacted away).
    fn segment_for(&self, index: u64) -> Option<Arc<Segment>> {
        let segments = self.shared.segments();
        let at = segments.partition_point(|s| s.first_index <= index);
        segments.get(at.saturating_sub(1)).cloned()
    }

    /// Locates entry `self.next`, walking from the nearest sparse index point.
    fn locate(&mut self) -> Result<Option<(Arc<Segment>, u64)>> {
        let Some(segment) = self.segment_for(self.next) else {
            return Ok(None);
        };
        if self.next < segment.first_index {
            self.next = segment.first_index;
        }
        if self.next > segment.last_index() {
            return Ok(None);
        }
        let point = segment.point_for_index(self.next);
        let offset = walk(
            &mut self.frames,
            &segment,
            point.index,
            point.offset,
            self.next,
        )?;
        Ok(Some((segment, offset)))
    }
}

/// From the frame of entry `from` at `offset`, skips forward to the frame of entry `to`.
fn walk(
    frames: &mut FrameReader,
    segment: &Segment,
    from: u64,
    mut offset: u64,
    to: u64,
) -> Result<u64> {
    let limit = segment.end();
    for expected in from..to {
        let header = frames.header(segment, offset, limit)?;
        if header.index != expected || header.is_end_marker() {
            return Err(segment.corrupt(offset, format!("expected entry {expected} here")));
        }
        offset += header.frame_len();
    }
    Ok(offset)
}

/// The offset just past entry `index` in `segment` (its header's offset if `index` precedes it).
pub(super) fn offset_after(segment: &Segment, index: u64) -> Result<u64> {
    let mut frames = FrameReader::new(READ_WINDOW);
    if index < segment.first_index {
        return Ok(super::format::SEGMENT_HEADER_LEN);
    }
    let point = segment.point_for_index(index);
    walk(&mut frames, segment, point.index, point.offset, index + 1)
}

/// The asqn and term of the last entry of `segment`, if it has any.
pub(super) fn last_asqn_and_term(segment: &Segment) -> Result<Option<(u64, u64)>> {
    if segment.is_empty() {
        return Ok(None);
    }
    let last = segment.last_index();
    let mut frames = FrameReader::new(READ_WINDOW);
    let offset = offset_after(segment, last - 1)?;
    let header = frames.header(segment, offset, segment.end())?;
    Ok(Some((header.asqn, header.term)))
}

impl JournalReader for FileReader {
    fn seek(&mut self, index: u64) -> Result<()> {
        self.next = index.max(1);
        self.cursor = None;
        Ok(())
    }

    fn seek_to_asqn(&mut self, asqn: u64) -> Result<()> {
        let commit = self.last_readable();
        self.written_up_to(commit)?;
        let segment = {
            let segments = self.shared.segments();
            // The last segment whose first entry is at or below `asqn`.
            let at = segments.partition_point(|s| s.first_asqn().is_some_and(|a| a <= asqn));
            segments.get(at.saturating_sub(1)).cloned()
        };
        let Some(segment) = segment else {
            return self.seek(1);
        };
        let point = segment.point_for_asqn(asqn);
        let (mut index, mut offset) = (point.index, point.offset);
        let limit = segment.end();
        // The answer: the first entry of the last run of equal asqns at or below `asqn` (entries
        // without records repeat the asqn of the normal entry before them).
        let mut found: Option<(u64, u64, u64)> = None;
        // Walk forward while the next committed entry still starts at or below `asqn`.
        while index <= segment.last_index().min(commit) {
            let header = self.frames.header(&segment, offset, limit)?;
            if header.is_end_marker() || header.asqn > asqn {
                break;
            }
            if found.is_none_or(|(_, _, run)| header.asqn > run) {
                found = Some((index, offset, header.asqn));
            }
            index += 1;
            offset += header.frame_len();
        }
        let (index, offset) = found.map_or((point.index, point.offset), |(i, o, _)| (i, o));
        self.next = index;
        self.cursor = Some((segment, offset));
        Ok(())
    }

    fn next_entry(&mut self) -> Option<Result<Entry>> {
        let rewrites = self.shared.rewrites.load(Ordering::Acquire);
        if rewrites != self.rewrites_seen {
            self.rewrites_seen = rewrites;
            self.frames.invalidate();
            // The segment may be gone (truncated away, or reset): find the entry again.
            self.cursor = None;
        }
        let first = self.shared.first_index();
        if self.next < first {
            // Compacted away or dropped by a reset: the reader goes on at the first entry
            // held. Before the checks below, which must be about the entry read next: with
            // the one left behind they would find that entry pending, not in the file yet,
            // and stop short of the commit index.
            self.next = first;
            self.cursor = None;
        }
        if self.next > self.last_readable() {
            return None;
        }
        if let Err(e) = self.written_up_to(self.next) {
            return Some(Err(e));
        }
        let (segment, offset) = match self.cursor.take() {
            Some((segment, offset)) if self.next <= segment.last_index() => (segment, offset),
            _ => match self.locate() {
                Ok(Some(found)) => found,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            },
        };
        let (header, data) = match self.frames.frame(&segment, offset, segment.end()) {
            Ok(frame) => frame,
            Err(e) => return Some(Err(e)),
        };
        if header.index != self.next {
            return Some(Err(Error::Corrupt {
                path: segment.path.clone(),
                offset,
                reason: format!("expected entry {}, found {}", self.next, header.index),
            }));
        }
        let Some(kind) = header.kind() else {
            return Some(Err(segment.corrupt(offset, "unknown entry kind")));
        };
        self.next += 1;
        self.cursor = Some((segment, offset + header.frame_len()));
        Some(Ok(Entry {
            index: header.index,
            term: header.term,
            kind,
            asqn: header.asqn,
            data,
        }))
    }
}
