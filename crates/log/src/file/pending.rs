//! Appended frames not yet written to the file.
//!
//! An append only encodes its frame into memory; the frames reach the active segment's file in
//! one write when they are needed there: by a flush (which then syncs them), by a reader of
//! committed entries, at a roll, or when [`WRITE_OUT_AT`] bytes have gathered. The writing
//! thread thus makes no system call per entry, and the file system handles each page once per
//! flush instead of once per entry (measured: the partition's processing thread spent 10% of
//! its time in `pwrite`, one call per entry).
//!
//! Readers only ever see frames that are in the file: a segment's published end and last
//! index move when its frames are written, not when they are appended.

use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};

use super::Shared;
use super::format::{FORMAT_VERSION, FrameMeta, encode_frame, frame_len};
use super::segment::IndexPoint;
use crate::{Error, Result};

/// Appended bytes that the appending thread writes at once, whoever else may write them
/// sooner. It bounds the memory held (twice this, the buffers being reused) and the size of
/// one write; a flush usually comes first (at 5,000 instances/s a partition appends ~70 MB/s,
/// ~140 KiB per 2 ms flush).
pub(super) const WRITE_OUT_AT: usize = 256 * 1024;

/// Writes end at a multiple of this (the page size), zeros filling the rest of the last page:
/// the page is then whole in the page cache, and the next write into it needs no read first
/// (see [`super::spare`]: its zeros go around the cache).
pub(super) const PAGE: u64 = 4096;

/// Frames for the active segment, in order, from `offset` on.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Where `bytes` go in the active segment's file.
    offset: u64,
    bytes: Vec<u8>,
    /// Each frame's place, length and whether it is a normal entry, published to readers
    /// once written.
    frames: Vec<(IndexPoint, u64, bool)>,
}

impl Pending {
    /// Encodes the frame of an entry at the end (in the current format: the active segment is
    /// always of it); the bytes pending afterwards.
    pub fn push(&mut self, meta: &FrameMeta, data: &[u8]) -> usize {
        let offset = self.offset + self.bytes.len() as u64;
        encode_frame(&mut self.bytes, meta, data);
        self.frames.push((
            IndexPoint {
                index: meta.index,
                asqn: meta.asqn,
                offset,
            },
            frame_len(FORMAT_VERSION, data.len()),
            meta.kind.carries_records(),
        ));
        self.bytes.len()
    }

    /// Frames pending now go to a new segment, from `offset` on (nothing may be pending).
    pub fn restart_at(&mut self, offset: u64) {
        debug_assert!(
            self.frames.is_empty(),
            "frames pending across a segment change"
        );
        self.offset = offset;
    }
}

/// The frames being written and the buffers the next ones gather in, owned by whoever writes.
#[derive(Debug, Default)]
pub(super) struct Writing {
    /// Empty buffers, swapped in for the pending ones: each write reuses the last one's memory.
    free: Pending,
}

impl Shared {
    pub(super) fn pending(&self) -> MutexGuard<'_, Pending> {
        lock(&self.pending)
    }

    /// Writes every pending frame to the active segment and publishes them to readers; the
    /// index of the last frame in the file afterwards. Writes happen one at a time and in
    /// order, so published ends only grow.
    pub(super) fn write_out(&self) -> Result<u64> {
        let mut writing = lock(&self.writing);
        let (mut batch, segment) = {
            let mut pending = self.pending();
            if pending.frames.is_empty() {
                return Ok(self.written.load(Ordering::Acquire));
            }
            // Frames pending belong to the active segment: a roll writes them out before the
            // next segment becomes active, and appends only ever go to the newest segment.
            let segment = self.active()?;
            let mut next = std::mem::take(&mut writing.free);
            next.offset = pending.offset + pending.bytes.len() as u64;
            (std::mem::replace(&mut *pending, next), segment)
        };
        let end = batch.offset + batch.bytes.len() as u64;
        let padding = end
            .next_multiple_of(PAGE)
            .min(segment.size)
            .saturating_sub(end);
        batch.bytes.resize(batch.bytes.len() + padding as usize, 0);
        if let Err(e) = segment.file.write_all_at(&batch.bytes, batch.offset) {
            // Part of the frames may be in the file; nothing after them can be trusted to be.
            // Recovery cuts such a torn tail when the journal is opened again.
            self.fail(format!(
                "write at offset {} of {} failed: {e}",
                batch.offset,
                segment.path.display()
            ));
            return Err(Error::io(&segment.path, e));
        }
        let mut last = 0;
        for (point, len, normal) in batch.frames.drain(..) {
            segment.record_frame(point, len, self.index_density, normal);
            last = point.index;
        }
        self.written.store(last, Ordering::Release);
        batch.bytes.clear();
        writing.free = batch;
        Ok(last)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Both are only changed by complete assignments and pushes: a poisoned lock still holds
    // consistent buffers.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
