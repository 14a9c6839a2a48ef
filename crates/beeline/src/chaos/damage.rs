//! What `beeline chaos` does to a stopped broker's files: the damage a disk does (bit rot in
//! the entry written last, in a snapshot's file) and the loss of a data directory. The broker
//! must find the damage at its next start and repair its replica from its peers, never serve
//! it ([`beeline_cluster::rejoin`]).

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The journal segment layout this reads (`beeline_log`'s `file/format.rs`): a 64-byte
/// segment header whose bytes 8..12 hold the format version, then 8-byte aligned frames,
/// each a header (40 bytes in version 2, 24 in version 1) starting with the data length
/// (u32) and holding the entry's index at bytes 8..16; a header of zero length and index 0
/// ends the written part.
const SEGMENT_HEADER: u64 = 64;

/// Flips one byte of `path` at `offset`.
pub fn flip(path: &Path, offset: u64) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(failed)?;
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, offset).map_err(failed)?;
    file.write_all_at(&[byte[0] ^ 0x5a], offset)
        .map_err(failed)?;
    file.sync_data().map_err(failed)
}

/// The journal's segments in a partition directory, oldest first.
fn segments(partition_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let log = partition_dir.join("log");
    let mut segments: Vec<PathBuf> = std::fs::read_dir(&log)
        .map_err(|e| format!("{}: {e}", log.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("segment-") && n.ends_with(".log"))
        })
        .collect();
    segments.sort();
    Ok(segments)
}

/// Flips a byte inside the last entry written to the partition's journal (in its data, or
/// in its header's checksum when it has none); the entry's index and the segment.
pub fn corrupt_tail_entry(partition_dir: &Path) -> Result<(u64, PathBuf), String> {
    // The newest segment may hold no entry yet (just started): then the one before.
    for segment in segments(partition_dir)?.into_iter().rev() {
        if let Some((offset, index)) = last_entry(&segment)? {
            flip(&segment, offset)?;
            return Ok((index, segment));
        }
    }
    Err(format!(
        "{}: the journal holds no entry",
        partition_dir.display()
    ))
}

/// Where to damage the last entry of a segment (the middle of its data, or its checksum when
/// it has no data), and its index; `None` if the segment holds no entry.
fn last_entry(segment: &Path) -> Result<Option<(u64, u64)>, String> {
    let failed = |e: std::io::Error| format!("{}: {e}", segment.display());
    let file = std::fs::File::open(segment).map_err(failed)?;
    let len = file.metadata().map_err(failed)?.len();
    let mut word = [0u8; 4];
    file.read_exact_at(&mut word, 8).map_err(failed)?;
    let header_len: u64 = if u32::from_le_bytes(word) == 1 {
        24
    } else {
        40
    };
    let mut offset = SEGMENT_HEADER;
    let mut last = None;
    let mut head = [0u8; 16];
    while offset + header_len <= len {
        file.read_exact_at(&mut head, offset).map_err(failed)?;
        let data = u64::from(u32::from_le_bytes([head[0], head[1], head[2], head[3]]));
        let index = u64::from_le_bytes([
            head[8], head[9], head[10], head[11], head[12], head[13], head[14], head[15],
        ]);
        if index == 0 {
            break;
        }
        last = Some((offset, data, index));
        offset += (header_len + data).next_multiple_of(8);
    }
    Ok(last.map(|(at, data, index)| {
        let target = if data > 0 {
            at + header_len + data / 2
        } else {
            at + 4
        };
        (target, index)
    }))
}

/// Flips a byte in one of the files of the partition's newest snapshot's checkpoint (`pick`
/// chooses which); the snapshot's position and the file, or `None` without a snapshot.
pub fn corrupt_snapshot(
    partition_dir: &Path,
    pick: impl FnOnce(u64) -> u64,
) -> Result<Option<(i64, PathBuf)>, String> {
    let store =
        beeline_state::snapshot::SnapshotStore::open(partition_dir.join("snapshots"), usize::MAX)
            .map_err(|e| e.to_string())?;
    let Some(newest) = store.latest().map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let data = newest.data_dir();
    let mut files: Vec<(PathBuf, u64)> = std::fs::read_dir(&data)
        .map_err(|e| format!("{}: {e}", data.display()))?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let len = entry.metadata().ok().filter(|m| m.is_file())?.len();
            (len > 0).then(|| (entry.path(), len))
        })
        .collect();
    if files.is_empty() {
        return Ok(None);
    }
    files.sort();
    let (file, len) = files.swap_remove(pick(files.len() as u64) as usize);
    flip(&file, len / 2)?;
    Ok(Some((newest.position, file)))
}

/// Whether every partition replica under the broker's data directory says it is a member
/// of its group again (`raft/member`): its log and vote are its own and complete.
pub fn members_again(broker_dir: &Path) -> bool {
    let partitions = broker_dir.join("partitions");
    let Ok(entries) = std::fs::read_dir(&partitions) else {
        return false;
    };
    let mut any = false;
    for entry in entries.filter_map(|e| e.ok()) {
        any = true;
        let marker = entry.path().join("raft").join("member");
        if std::fs::read_to_string(marker).ok().as_deref() != Some("member\n") {
            return false;
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_log::{EntryKind, FileJournal, FileJournalConfig, Flusher, Journal, JournalReader};

    #[test]
    fn the_tail_entry_is_the_one_damaged() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = FileJournalConfig {
            segment_size: 1 << 20,
            max_entry_size: 512 << 10,
            ..FileJournalConfig::default()
        };
        {
            let mut journal =
                FileJournal::open(dir.path().join("log"), config.clone()).expect("journal");
            for i in 1..=5u64 {
                journal
                    .append_entry(1, EntryKind::Normal, i, &vec![i as u8; 100 + i as usize])
                    .expect("append");
            }
            journal.flusher().flush().expect("flush");
        }
        let (index, _) = corrupt_tail_entry(dir.path()).expect("corrupted");
        assert_eq!(index, 5);
        let journal = FileJournal::open(dir.path().join("log"), config).expect("reopened");
        assert_eq!(journal.last_index(), 4, "the damaged tail entry is cut");
        let mut reader = journal.reader();
        reader.seek(1).expect("seek");
        journal.commit_index().advance(4);
        let mut read = 0;
        while let Some(entry) = reader.next_entry() {
            entry.expect("intact");
            read += 1;
        }
        assert_eq!(read, 4);
    }
}
