//! Opening a journal directory: validate every segment and frame, cut a torn tail, refuse (or
//! repair) real damage.
//!
//! How damage is told apart from a torn tail: a crash can only tear what was being written
//! last, so after a torn frame nothing intact follows. If an intact frame with a later index
//! follows a bad one, or a sealed (non-last) segment is bad, the damage hit data that was once
//! complete, and silently cutting there would lose acknowledged entries.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::format::{FrameHeader, SEGMENT_HEADER_LEN, SegmentHeader, frame_header_len};
use super::segment::{FrameReader, IndexPoint, Segment};
use super::{FileJournalConfig, zero_from};
use crate::{Error, Result};

/// What to do with damage that is not a torn tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recovery {
    /// Refuse to open, naming the file and offset (the default: never serve wrong data).
    #[default]
    Strict,
    /// Keep every entry before the damage and drop the rest (e.g. a replica that will fetch the
    /// rest from its leader, or an operator's explicit repair).
    TruncateCorrupt,
}

/// What recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Entries kept.
    pub entries: u64,
    /// Where a torn or (in repair mode) damaged tail was cut, and why.
    pub truncated: Option<(PathBuf, u64, String)>,
    /// Whether the cut dropped damage that was not a torn tail ([`Recovery::TruncateCorrupt`]):
    /// entries that were once complete, and may have been acknowledged, are gone.
    pub repaired: bool,
}

pub(super) struct Recovered {
    pub segments: Vec<Arc<Segment>>,
    pub last_asqn: Option<u64>,
    pub last_term: u64,
    pub report: RecoveryReport,
}

/// Where a segment scan stopped.
enum Stop {
    /// Zeros from here on: the normal end of the written part.
    End(u64),
    /// A frame that is not intact starts here.
    Damaged(u64, String),
}

pub(super) fn recover(dir: &Path, config: &FileJournalConfig) -> Result<Recovered> {
    let mut paths = list_segments(dir)?;
    paths.sort();
    let mut segments: Vec<Arc<Segment>> = Vec::new();
    let mut last = Last::default();
    let mut report = RecoveryReport::default();
    let count = paths.len();
    let mut frames = FrameReader::dropping_behind(1024 * 1024);

    for (position, (id, path)) in paths.into_iter().enumerate() {
        let is_last = position + 1 == count;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let file_len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let header = match read_header(&file, &path, file_len) {
            Ok(h) if h.id == id => h,
            Ok(h) => Err(corrupt(&path, 0, format!("header names segment {}", h.id)))?,
            // A crash while creating the newest segment leaves it without a valid header; it
            // never held an entry.
            Err(_) if is_last && position > 0 => {
                tracing::warn!(path = %path.display(), "removing a half-created journal segment");
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                break;
            }
            Err(e) => return Err(e),
        };
        let expected_first = segments
            .last()
            .map_or(header.first_index, |s| s.last_index() + 1);
        if header.first_index != expected_first {
            let damage = corrupt(
                &path,
                0,
                format!(
                    "segment starts at entry {} but entry {expected_first} was expected",
                    header.first_index
                ),
            );
            match config.recovery {
                Recovery::Strict => return Err(damage),
                Recovery::TruncateCorrupt => {
                    remove_from(dir, id)?;
                    report.truncated = Some((path.clone(), 0, damage.to_string()));
                    report.repaired = true;
                    break;
                }
            }
        }
        let segment = Segment::new(
            id,
            path.clone(),
            header.first_index,
            header.size,
            header.version,
            file,
        );
        let limit = file_len.min(header.size.max(SEGMENT_HEADER_LEN));
        let stop = scan(&segment, &mut frames, limit, config, &mut last)?;
        let segment = Arc::new(segment);
        segments.push(segment.clone());
        match stop {
            Stop::End(offset) => {
                // Zeros at the end; make sure no intact frame hides after them.
                if let Some(found) =
                    intact_frame_after(&segment, &mut frames, offset, limit, config)
                {
                    let reason = format!(
                        "end of data at offset {offset}, but entry {found} follows it intact"
                    );
                    handle_damage(&segment, offset, reason, config, &mut report, dir)?;
                    break;
                }
            }
            Stop::Damaged(offset, reason) => {
                let torn = is_last
                    && intact_frame_after(&segment, &mut frames, offset, limit, config).is_none();
                if torn {
                    tracing::warn!(path = %path.display(), offset, %reason, "cutting a torn journal tail");
                    zero_from(&segment, offset)?;
                    report.truncated = Some((path.clone(), offset, reason));
                } else {
                    let reason = if is_last {
                        format!("{reason}, and intact entries follow it")
                    } else {
                        format!("{reason} in a sealed segment")
                    };
                    handle_damage(&segment, offset, reason, config, &mut report, dir)?;
                    break;
                }
            }
        }
    }
    report.entries = segments
        .last()
        .map(|s| s.last_index() + 1 - segments[0].first_index)
        .unwrap_or(0);
    if let Some(last) = segments.last() {
        // What was written before the crash may still sit in the page cache: make it durable
        // now, since everything recovered counts as committed.
        last.file
            .sync_data()
            .map_err(|e| Error::io(&last.path, e))?;
    }
    Ok(Recovered {
        segments,
        last_asqn: last.asqn,
        last_term: last.term,
        report,
    })
}

fn handle_damage(
    segment: &Segment,
    offset: u64,
    reason: String,
    config: &FileJournalConfig,
    report: &mut RecoveryReport,
    dir: &Path,
) -> Result<()> {
    match config.recovery {
        Recovery::Strict => Err(corrupt(&segment.path, offset, reason)),
        Recovery::TruncateCorrupt => {
            tracing::warn!(path = %segment.path.display(), offset, %reason, "repairing: dropping the journal from a damaged entry on");
            zero_from(segment, offset)?;
            remove_from(dir, segment.id + 1)?;
            report.truncated = Some((segment.path.clone(), offset, reason));
            report.repaired = true;
            Ok(())
        }
    }
}

/// The asqn and term of the last intact entry seen.
#[derive(Debug, Default)]
struct Last {
    asqn: Option<u64>,
    term: u64,
}

/// Validates frames from the start of the segment; records them in its index.
fn scan(
    segment: &Segment,
    frames: &mut FrameReader,
    limit: u64,
    config: &FileJournalConfig,
    last: &mut Last,
) -> Result<Stop> {
    let mut offset = SEGMENT_HEADER_LEN;
    let mut index = segment.first_index;
    let header_len = frame_header_len(segment.version);
    loop {
        if offset + header_len > limit {
            return Ok(Stop::End(offset));
        }
        let header = frames.header(segment, offset, limit)?;
        if header.is_end_marker() {
            return Ok(Stop::End(offset));
        }
        if let Err(reason) = plausible(&header, index, offset, limit, config, last) {
            return Ok(Stop::Damaged(offset, reason));
        }
        match frames.frame(segment, offset, limit) {
            Ok(_) => {}
            Err(Error::Corrupt { reason, .. }) => return Ok(Stop::Damaged(offset, reason)),
            Err(e) => return Err(e),
        }
        segment.record_frame(
            IndexPoint {
                index,
                asqn: header.asqn,
                offset,
            },
            header.frame_len(),
            config.index_density,
            header.kind().is_some_and(|k| k.carries_records()),
        );
        last.asqn = Some(header.asqn);
        last.term = header.term;
        offset += header.frame_len();
        index += 1;
    }
}

fn plausible(
    header: &FrameHeader,
    index: u64,
    offset: u64,
    limit: u64,
    config: &FileJournalConfig,
    last: &Last,
) -> Result<(), String> {
    if header.len as usize > config.max_entry_size {
        return Err(format!("frame length {} exceeds the maximum", header.len));
    }
    if offset + header.frame_len() > limit {
        return Err("frame runs past the end of the segment".into());
    }
    if header.index != index {
        return Err(format!("expected entry {index}, found {}", header.index));
    }
    let Some(kind) = header.kind() else {
        return Err(format!("unknown entry kind {}", header.kind));
    };
    if kind.carries_records() {
        if last.asqn.is_some_and(|last| header.asqn <= last) {
            return Err(format!("asqn {} does not increase", header.asqn));
        }
    } else if last.asqn.is_some_and(|last| header.asqn != last) {
        return Err(format!(
            "asqn {} of a {kind:?} entry differs from the one before it",
            header.asqn
        ));
    }
    if header.term < last.term {
        return Err(format!(
            "term {} is below the term {} before it",
            header.term, last.term
        ));
    }
    Ok(())
}

/// Looks for any intact frame with an index above the segment's last good one, at 8-byte steps
/// after `from`. Returns its index.
fn intact_frame_after(
    segment: &Segment,
    frames: &mut FrameReader,
    from: u64,
    limit: u64,
    config: &FileJournalConfig,
) -> Option<u64> {
    let last_good = segment.last_index();
    let mut offset = from + 8;
    while offset + frame_header_len(segment.version) <= limit {
        let header = match frames.header(segment, offset, limit) {
            Ok(h) => h,
            Err(_) => return None,
        };
        let candidate = !header.is_end_marker()
            && header.index > last_good
            && (header.len as usize) <= config.max_entry_size
            && offset + header.frame_len() <= limit;
        if candidate && frames.frame(segment, offset, limit).is_ok() {
            return Some(header.index);
        }
        offset += 8;
    }
    None
}

fn read_header(file: &File, path: &Path, file_len: u64) -> Result<SegmentHeader> {
    if file_len < SEGMENT_HEADER_LEN {
        return Err(corrupt(path, 0, "file is shorter than a segment header"));
    }
    let mut buf = [0u8; SEGMENT_HEADER_LEN as usize];
    file.read_exact_at(&mut buf, 0)
        .map_err(|e| Error::io(path, e))?;
    SegmentHeader::decode(&buf).map_err(|reason| corrupt(path, 0, reason))
}

fn list_segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(id) = name
            .strip_prefix("segment-")
            .and_then(|rest| rest.strip_suffix(".log"))
            .and_then(|id| id.parse::<u64>().ok())
        {
            found.push((id, entry.path()));
        }
    }
    // Ids must be consecutive: a gap means a lost segment, which no repair can paper over.
    found.sort();
    for pair in found.windows(2) {
        if pair[1].0 != pair[0].0 + 1 {
            return Err(corrupt(
                &pair[1].1,
                0,
                format!("segment {} is missing", pair[0].0 + 1),
            ));
        }
    }
    Ok(found)
}

/// Removes the segments with ids from `first_id` on.
fn remove_from(dir: &Path, first_id: u64) -> Result<()> {
    for (id, path) in list_segments(dir)? {
        if id >= first_id {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(())
}

fn corrupt(path: &Path, offset: u64, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        offset,
        reason: reason.into(),
    }
}
