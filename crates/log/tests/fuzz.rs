//! Journal segments under the fuzzing harness (`beeline-fuzz`): a segment file as a crash, a
//! full disk or a bad disk may leave it (`fuzz/seeds/log-segments`: segments the file journal
//! wrote), mutated, then opened with strict recovery and with truncation; whatever opens is read
//! to its end. Damage must be an error naming the file and offset, or a cut tail, never a panic
//! or a wrong entry.
//!
//! An input's first byte chooses whether the mutated segment's checksums are made right again
//! (odd: yes), so that mutations reach the checks past them (lengths, indexes, asqns, the order
//! of entries) instead of stopping at the first checksum.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;

use beeline_log::{EntryKind, FileJournal, FileJournalConfig, Journal, JournalReader, Recovery};

const SEGMENT_SIZE: u64 = 16 * 1024;
const HEADER: usize = 64;

fn config(recovery: Recovery) -> FileJournalConfig {
    FileJournalConfig {
        segment_size: SEGMENT_SIZE,
        max_entry_size: 8 * 1024,
        index_density: 4,
        recovery,
        commit_recovered: true,
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// Recomputes the header's checksum and each frame's, as far as frames can be followed, in the
/// frame format of the segment's version (1: 24-byte frame headers; 2: 40 bytes with term and
/// kind, see `crates/log/src/file/format.rs`).
fn fix_checksums(segment: &mut [u8]) {
    if segment.len() < HEADER {
        return;
    }
    let crc = crc32c::crc32c(&segment[0..40]);
    segment[40..44].copy_from_slice(&crc.to_le_bytes());
    // The bytes after the length and checksum that the frame's checksum covers.
    let (frame_header, covered) = if u32_at(segment, 8) == 1 {
        (24, 8..24)
    } else {
        (40, 8..33)
    };
    let mut at = HEADER;
    while at + frame_header <= segment.len() {
        let len = u32_at(segment, at) as usize;
        if len == 0 || at + frame_header + len > segment.len() {
            return;
        }
        let mut head = Vec::with_capacity(32);
        head.extend_from_slice(&segment[at..at + 4]);
        head.extend_from_slice(&segment[at + covered.start..at + covered.end]);
        let data = &segment[at + frame_header..at + frame_header + len];
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), data);
        segment[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
        at += (frame_header + len).next_multiple_of(8);
    }
}

/// Opens the journal in `dir` and reads every entry; an error is fine, a panic is not.
fn open_and_read(dir: &Path, recovery: Recovery) {
    let journal = match FileJournal::open(dir, config(recovery)) {
        Ok(journal) => journal,
        Err(error) => {
            assert!(!error.to_string().is_empty(), "an error without a message");
            return;
        }
    };
    let (first, last) = (journal.first_index(), journal.last_index());
    let mut reader = journal.reader();
    if reader.seek(first).is_err() {
        return;
    }
    let mut expected = first;
    while let Some(entry) = reader.next_entry() {
        let Ok(entry) = entry else { break };
        assert_eq!(entry.index, expected, "entries out of order");
        expected += 1;
    }
    assert!(expected <= last + 1, "read past the last entry {last}");
}

#[test]
fn fuzz_log_segments() {
    // In memory where the machine has a tmpfs: the journal syncs what it opens.
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory");
    beeline_fuzz::fuzz("log-segments", |data| {
        let Some((&mode, segment)) = data.split_first() else {
            return;
        };
        let mut segment = segment.to_vec();
        if mode & 1 == 1 {
            fix_checksums(&mut segment);
        }
        // Named as its header says, as the journal names them (a header of another segment is
        // damage the journal must find too).
        let id = if mode & 2 == 0 && segment.len() >= 24 {
            u64::from_le_bytes(segment[16..24].try_into().expect("eight bytes")) % 10_000_000_000
        } else {
            1
        };
        for recovery in [Recovery::Strict, Recovery::TruncateCorrupt] {
            for entry in std::fs::read_dir(dir.path()).expect("reads the directory") {
                let path = entry.expect("an entry").path();
                std::fs::remove_file(&path).expect("removes a file");
            }
            std::fs::write(dir.path().join(format!("segment-{id:010}.log")), &segment)
                .expect("writes the segment");
            open_and_read(dir.path(), recovery);
        }
    });
}

// Found by fuzzing (fuzz/regressions/log-segments/9b9e5e31cf3a0ce7, which every fuzz run
// replays too): a segment whose header claims 4 GiB, cut at a torn tail by recovery, was
// preallocated to 4 GiB again, taking seconds and gigabytes.
#[test]
fn a_header_claiming_a_huge_segment_makes_recovery_allocate_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = beeline_fuzz::root().join("regressions/log-segments/9b9e5e31cf3a0ce7");
    let input = std::fs::read(input).expect("the regression input");
    let mut segment = input[1..].to_vec();
    fix_checksums(&mut segment);
    let claimed = u64::from_le_bytes(segment[32..40].try_into().expect("eight bytes"));
    assert_eq!(claimed, 4 << 30, "the header claims 4 GiB");
    for recovery in [Recovery::Strict, Recovery::TruncateCorrupt] {
        let path = dir.path().join("segment-0000000001.log");
        std::fs::write(&path, &segment).expect("writes the segment");
        let opened = FileJournal::open(dir.path(), config(recovery)).map(|j| j.last_index());
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        assert!(
            len <= segment.len() as u64,
            "{recovery:?}: recovery grew the segment from {} to {len} bytes ({opened:?})",
            segment.len()
        );
        std::fs::remove_dir_all(dir.path()).expect("clears");
        std::fs::create_dir(dir.path()).expect("makes the directory again");
    }
}

/// Writes `fuzz/seeds/log-segments`: the segments of a journal filled with the log-entries
/// seeds, in today's frame format (`format-2-*`: Raft terms, and blank and membership entries
/// among the normal ones; `segment-0000000001.log` is a segment of format 1, kept so that its
/// reading stays fuzzed). Each seed's first byte is 1: checksums made right after mutation.
#[test]
#[ignore = "writes the seed corpus: cargo test -p beeline-log --test fuzz -- --ignored"]
fn write_the_segment_seeds() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut journal = FileJournal::open(dir.path(), config(Recovery::Strict)).expect("opens");
    let entries = beeline_fuzz::inputs(&beeline_fuzz::root().join("seeds/log-entries"));
    let mut asqn = 1;
    journal
        .append_entry(1, EntryKind::Membership, 0, b"{\"voters\":[0,1,2]}")
        .expect("appends");
    journal
        .append_entry(1, EntryKind::Blank, 0, b"")
        .expect("appends");
    for (i, (_, data)) in entries
        .iter()
        .filter(|(_, data)| data.len() < 4096)
        .enumerate()
    {
        let term = 1 + i as u64 / 8;
        if i > 0 && i % 8 == 0 {
            journal
                .append_entry(term, EntryKind::Blank, 0, b"")
                .expect("appends");
        }
        journal
            .append_entry(term, EntryKind::Normal, asqn, data)
            .expect("appends");
        asqn += 10;
    }
    drop(journal);
    let out = beeline_fuzz::root().join("seeds/log-segments");
    std::fs::create_dir_all(&out).expect("creates the seed directory");
    for (path, bytes) in beeline_fuzz::inputs(dir.path()) {
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        if !name.starts_with("segment-") {
            continue;
        }
        // The unwritten rest of a segment is zeros: keep the written part and a little more.
        let end = bytes
            .iter()
            .rposition(|&b| b != 0)
            .map_or(HEADER, |at| at + 64);
        let mut seed = vec![1u8];
        seed.extend_from_slice(&bytes[..end.min(bytes.len())]);
        std::fs::write(out.join(format!("format-2-{name}")), seed).expect("writes a seed");
    }
}
