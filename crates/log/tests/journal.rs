//! The journal contract for both implementations, and the file journal's crash and damage
//! behaviour: torn tails, flipped bits, failing writes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};

use beeline_log::{
    EntryKind, Error, FileJournal, FileJournalConfig, Flusher, Journal, JournalReader, MemJournal,
    Recovery, conformance,
};

fn small_segments() -> FileJournalConfig {
    FileJournalConfig {
        segment_size: 64 * 1024,
        max_entry_size: 32 * 1024,
        index_density: 8,
        recovery: Recovery::Strict,
        commit_recovered: true,
    }
}

#[test]
fn mem_journal_keeps_the_contract() {
    conformance::run(MemJournal::new);
}

#[test]
fn file_journal_keeps_the_contract() {
    let dirs: std::cell::RefCell<Vec<tempfile::TempDir>> = Default::default();
    conformance::run(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = FileJournal::open(dir.path(), small_segments()).expect("open");
        dirs.borrow_mut().push(dir);
        journal
    });
}

#[test]
fn file_journal_with_default_segments_keeps_the_contract() {
    let dirs: std::cell::RefCell<Vec<tempfile::TempDir>> = Default::default();
    conformance::run(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = FileJournalConfig {
            segment_size: 8 * 1024 * 1024,
            ..Default::default()
        };
        let journal = FileJournal::open(dir.path(), config).expect("open");
        dirs.borrow_mut().push(dir);
        journal
    });
}

fn payload(index: u64) -> Vec<u8> {
    let len = 20 + (index as usize * 37) % 300;
    (0..len).map(|i| (index as usize + i) as u8).collect()
}

/// Appends entries `1..=n` (asqn = 10 * index), flushes, and returns where the last frame starts
/// and how long it is.
fn write_entries(dir: &Path, n: u64) -> (PathBuf, u64, u64) {
    let mut journal = FileJournal::open(dir, small_segments()).expect("open");
    for index in 1..=n {
        journal.append(index * 10, &payload(index)).expect("append");
    }
    journal.flusher().flush().expect("flush");
    // Frames are laid out back to back after the 64-byte header, each padded to 8 bytes.
    let mut segment = 1;
    let mut offset = 64u64;
    let mut last = (0, 0);
    for index in 1..=n {
        let len = (40 + payload(index).len() as u64).next_multiple_of(8);
        if offset + len > small_segments().segment_size {
            segment += 1;
            offset = 64;
        }
        last = (offset, len);
        offset += len;
    }
    (
        dir.join(format!("segment-{segment:010}.log")),
        last.0,
        last.1,
    )
}

fn read_back(dir: &Path) -> Result<Vec<(u64, u64, Vec<u8>)>, Error> {
    let journal = FileJournal::open(dir, small_segments())?;
    let mut reader = journal.reader();
    let mut out = Vec::new();
    while let Some(entry) = reader.next_entry() {
        let entry = entry?;
        out.push((entry.index, entry.asqn, entry.data));
    }
    Ok(out)
}

fn expect_entries(entries: &[(u64, u64, Vec<u8>)], n: u64) {
    assert_eq!(entries.len() as u64, n, "entries kept");
    for (index, asqn, data) in entries {
        assert_eq!(*asqn, index * 10);
        assert_eq!(*data, payload(*index), "entry {index} intact");
    }
}

fn patch(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open segment");
    file.write_all_at(bytes, offset).expect("patch");
}

#[test]
fn reopening_keeps_every_flushed_entry_across_segments() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    let entries = read_back(dir.path()).expect("reopen");
    expect_entries(&entries, 600);
    let journal = FileJournal::open(dir.path(), small_segments()).expect("reopen");
    assert_eq!(journal.last_index(), 600);
    assert_eq!(journal.last_asqn(), Some(6000));
    assert!(journal.recovery_report().truncated.is_none());
    assert!(
        std::fs::read_dir(dir.path()).expect("list").count() >= 2,
        "600 entries span several 64 KiB segments"
    );
}

#[test]
fn a_torn_last_entry_is_cut_at_every_byte_offset() {
    let template = tempfile::tempdir().expect("tempdir");
    let n = 40;
    let (segment, offset, len) = write_entries(template.path(), n);
    // Bytes past the data are padding: a tear there leaves the entry complete.
    let meaningful = 40 + payload(n).len() as u64;
    for torn_at in 0..len {
        let complete = torn_at >= meaningful;
        for garbage in [false, true] {
            let dir = tempfile::tempdir().expect("tempdir");
            let copy = dir.path().join(segment.file_name().expect("name"));
            for file in std::fs::read_dir(template.path()).expect("list") {
                let file = file.expect("entry").path();
                std::fs::copy(&file, dir.path().join(file.file_name().expect("name")))
                    .expect("copy");
            }
            // Only the first `torn_at` bytes of the last frame reached the disk; the rest is
            // the preallocated zeros, or leftover garbage.
            let rest: Vec<u8> = (torn_at..len)
                .map(|i| if garbage { (i as u8) ^ 0xA5 } else { 0 })
                .collect();
            patch(&copy, offset + torn_at, &rest);
            let entries = read_back(dir.path())
                .unwrap_or_else(|e| panic!("torn at byte {torn_at} (garbage {garbage}): {e}"));
            let kept = if complete { n } else { n - 1 };
            expect_entries(&entries, kept);
            let mut journal = FileJournal::open(dir.path(), small_segments()).expect("reopen");
            assert_eq!(journal.last_index(), kept);
            assert_eq!(
                journal.append((kept + 1) * 10, b"after").expect("append"),
                kept + 1
            );
        }
    }
}

#[test]
fn a_flipped_bit_inside_a_segment_is_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 50;
    write_entries(dir.path(), n);
    let first = dir.path().join("segment-0000000001.log");
    // Entry 10's frame: flip one bit in its data.
    let mut offset = 64u64;
    for index in 1..10 {
        offset += (40 + payload(index).len() as u64).next_multiple_of(8);
    }
    let mut byte = [0u8; 1];
    {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(&first).expect("open");
        file.read_exact_at(&mut byte, offset + 46).expect("read");
    }
    patch(&first, offset + 46, &[byte[0] ^ 0x04]);

    match read_back(dir.path()) {
        Err(Error::Corrupt {
            path, offset: at, ..
        }) => {
            assert_eq!(path, first);
            assert_eq!(at, offset, "the damaged frame's offset is reported");
        }
        other => panic!("expected a corruption error, got {other:?}"),
    }
    // Repair keeps every entry before the damage and nothing after it.
    let config = FileJournalConfig {
        recovery: Recovery::TruncateCorrupt,
        ..small_segments()
    };
    let journal = FileJournal::open(dir.path(), config).expect("repair");
    assert_eq!(journal.last_index(), 9);
    assert!(journal.recovery_report().truncated.is_some());
    drop(journal);
    expect_entries(&read_back(dir.path()).expect("reopen after repair"), 9);
}

#[test]
fn a_damaged_sealed_segment_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    let first = dir.path().join("segment-0000000001.log");
    let len = std::fs::metadata(&first).expect("meta").len();
    // Zero the last few KiB of written data of the first (sealed) segment.
    patch(&first, len / 2, &vec![0u8; 4096]);
    assert!(matches!(
        read_back(dir.path()),
        Err(Error::Corrupt { path, .. }) if path == first
    ));
}

/// How many segment files `dir` holds (the next segment's spare, which comes and goes on a
/// thread of its own, is not one).
fn segment_files(dir: &Path) -> usize {
    files_starting_with(dir, "segment-")
}

/// How many files in `dir` have a name starting with `prefix`.
fn files_starting_with(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .expect("list")
        .filter(|entry| {
            let name = entry.as_ref().expect("entry").file_name();
            name.to_string_lossy().starts_with(prefix)
        })
        .count()
}

/// The spare files in `dir` (the next segment, being prepared).
fn spares(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("list")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.to_string_lossy().ends_with(".tmp"))
        .collect()
}

fn four_mib_segments() -> FileJournalConfig {
    FileJournalConfig {
        segment_size: 4 * 1024 * 1024,
        max_entry_size: 1024 * 1024,
        ..Default::default()
    }
}

#[test]
fn the_next_segment_is_prepared_while_the_active_one_fills_and_takes_over_on_the_roll() {
    // Here the zeros go around the page cache (direct I/O), where the file system allows it.
    let dir = tempfile::tempdir().expect("tempdir");
    spare_takes_over_on_the_roll(dir.path(), four_mib_segments());
}

#[test]
fn a_spare_that_direct_io_cannot_write_is_written_through_the_page_cache() {
    // Direct writes take whole 4 KiB blocks: a segment size that is not a multiple of them
    // takes the other way, as a file system without direct I/O does.
    let dir = tempfile::tempdir().expect("tempdir");
    let config = FileJournalConfig {
        segment_size: four_mib_segments().segment_size + 8,
        ..four_mib_segments()
    };
    spare_takes_over_on_the_roll(dir.path(), config);
}

/// Fills a journal in `dir` until its spare is ready, checks that the spare holds only zeros,
/// then rolls into it and reads everything back.
fn spare_takes_over_on_the_roll(dir: &Path, config: FileJournalConfig) {
    use std::os::unix::fs::MetadataExt;
    let segment_size = config.segment_size;
    let mut journal = FileJournal::open(dir, config).expect("open");
    let entry = vec![7u8; 32 * 1024];
    let mut index = 0;
    // Past three quarters of the first segment the spare is due to be complete.
    while index < 100 {
        index += 1;
        journal.append(index, &entry).expect("append");
    }
    let started = std::time::Instant::now();
    while !journal.next_segment_prepared() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the spare was never ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let spare = spares(dir);
    assert_eq!(spare.len(), 1, "one spare: {spare:?}");
    let spare_inode = std::fs::metadata(&spare[0]).expect("spare").ino();
    let zeros = std::fs::read(&spare[0]).expect("read the spare");
    assert_eq!(zeros.len() as u64, segment_size);
    assert!(zeros.iter().all(|b| *b == 0), "the spare holds only zeros");
    while index < 200 {
        index += 1;
        journal.append(index, &entry).expect("append");
    }
    let second = dir.join("segment-0000000002.log");
    assert_eq!(
        std::fs::metadata(&second).expect("second segment").ino(),
        spare_inode,
        "the prepared file became the second segment"
    );
    closed_and_read_back(journal, dir, 200, &entry);
}

/// Syncs and drops `journal`, checks that no spare is left, and reads entries `1..=n` (each
/// `entry`, asqn = index) back from a reopened journal.
fn closed_and_read_back(journal: FileJournal, dir: &Path, n: u64, entry: &[u8]) {
    journal.flusher().flush().expect("flush");
    drop(journal);
    assert!(spares(dir).is_empty(), "no spare outlives the journal");
    let journal = FileJournal::open(dir, four_mib_segments()).expect("reopen");
    let mut reader = journal.reader();
    for expected in 1..=n {
        let read = reader.next_entry().expect("an entry").expect("readable");
        assert_eq!((read.index, read.asqn), (expected, expected));
        assert_eq!(read.data, entry);
    }
    assert!(reader.next_entry().is_none());
}

/// A journal of four-MiB segments in `dir` with entries `1..=n` appended (each `entry`, asqn
/// = index), none flushed.
fn appended(dir: &Path, n: u64, entry: &[u8]) -> FileJournal {
    let mut journal = FileJournal::open(dir, four_mib_segments()).expect("open");
    for index in 1..=n {
        journal.append(index, entry).expect("append");
    }
    journal
}

#[test]
fn a_roll_before_the_spare_is_ready_makes_the_segment_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A burst: several segments' worth as fast as it goes, so rolls find spares unfinished.
    let entry = vec![3u8; 512 * 1024];
    let journal = appended(dir.path(), 40, &entry);
    closed_and_read_back(journal, dir.path(), 40, &entry);
}

#[test]
fn a_spare_left_by_a_crash_is_not_part_of_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 50);
    let stale = dir.path().join("spare-3.tmp");
    std::fs::write(&stale, vec![0xABu8; 100_000]).expect("a stale spare");
    expect_entries(&read_back(dir.path()).expect("reopen"), 50);
    assert!(!stale.exists(), "the stale spare was removed");
}

/// The bytes of the first segment's first frame (its length field), read from the file.
fn first_frame_length_in_file(dir: &Path) -> u32 {
    let bytes = std::fs::read(dir.join("segment-0000000001.log")).expect("read segment");
    u32::from_le_bytes(bytes[64..68].try_into().unwrap())
}

#[test]
fn appends_reach_the_file_in_one_write_when_flushed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut journal = FileJournal::open(dir.path(), four_mib_segments()).expect("open");
    for index in 1..=20 {
        journal.append(index, &payload(index)).expect("append");
    }
    assert_eq!(journal.last_index(), 20);
    // Appended, not written: the file still reads as zeros where the first frame goes.
    assert_eq!(first_frame_length_in_file(dir.path()), 0);
    assert_eq!(journal.flusher().flush().expect("flush"), 20);
    assert_eq!(
        first_frame_length_in_file(dir.path()) as usize,
        payload(1).len()
    );
    drop(journal);
    let entries = read_back(dir.path()).expect("reopen");
    assert_eq!(entries.len(), 20);
    for (index, asqn, data) in entries {
        assert_eq!((asqn, data), (index, payload(index)));
    }
}

#[test]
fn committed_entries_are_readable_before_any_flush() {
    // A partition that does not sync (`--log-flush none`) commits what it appended at once.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("open");
    for index in 1..=5 {
        journal.append(index, &payload(index)).expect("append");
    }
    journal.commit_index().advance(5);
    let mut reader = journal.reader();
    reader.seek_to_asqn(3).expect("seek");
    let entry = reader.next_entry().expect("entry 3").expect("readable");
    assert_eq!((entry.index, entry.data), (3, payload(3)));
    assert_eq!(reader.next_entry().expect("entry 4").unwrap().index, 4);
}

#[test]
fn a_quarter_mebibyte_of_appends_is_written_without_a_flush_and_a_drop_writes_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 16 frames of 16 KiB and 40 header bytes each pass 256 KiB; 15 do not.
    let entry = vec![7u8; 16 * 1024];
    let mut journal = appended(dir.path(), 15, &entry);
    assert_eq!(first_frame_length_in_file(dir.path()), 0, "under 256 KiB");
    journal.append(16, &entry).expect("append");
    assert_eq!(first_frame_length_in_file(dir.path()) as usize, entry.len());
    journal.append(17, &entry).expect("append");
    // Dropped unflushed: everything appended is in the file (as with a crash of the process,
    // not of the machine, after a flush).
    drop(journal);
    let journal = FileJournal::open(dir.path(), four_mib_segments()).expect("reopen");
    assert_eq!(journal.last_index(), 17);
}

#[test]
fn appends_written_out_without_a_flush_start_their_way_to_the_disk() {
    // A journal nobody flushes (`--log-flush none`) must not keep a whole segment in dirty
    // pages for the roll's sync to write while appends wait.
    let dir = tempfile::tempdir().expect("tempdir");
    let entry = vec![7u8; 16 * 1024];
    let mut journal = appended(dir.path(), 15, &entry);
    assert_eq!(
        journal.writeback_started_up_to(),
        0,
        "nothing written out yet"
    );
    journal.append(16, &entry).expect("append");
    // The 64-byte segment header, then 16 frames of 40 header bytes and 16 KiB: the whole
    // pages of that, not the partial last one.
    let written = 64 + 16 * (40 + 16 * 1024);
    assert_eq!(journal.writeback_started_up_to(), written / 4096 * 4096);
    // Past the roll (255 such frames fill 4 MiB) the new segment starts from its beginning.
    for index in 17..=300 {
        journal.append(index, &entry).expect("append");
    }
    let started = journal.writeback_started_up_to();
    assert!(
        started > 0 && started < 1024 * 1024 && started.is_multiple_of(4096),
        "the new segment's whole pages so far: {started}"
    );
    closed_and_read_back(journal, dir.path(), 300, &entry);
}

/// Pages of the first `len` bytes of the file at `path` held in the page cache.
fn cached_pages(path: &Path, len: u64) -> usize {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).expect("open");
    let pages = len.div_ceil(4096) as usize;
    let mut resident = vec![0u8; pages];
    // SAFETY: a read-only shared mapping of `len` bytes of an open file, asked which of its
    // pages are resident into a vector of one byte per page, and unmapped again; no byte of
    // the mapping is read.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(map, libc::MAP_FAILED, "mmap");
        assert_eq!(libc::mincore(map, len as usize, resident.as_mut_ptr()), 0);
        libc::munmap(map, len as usize);
    }
    resident.iter().filter(|page| *page & 1 == 1).count()
}

/// Whether the file system under `dir` drops a file's clean pages when asked (a tmpfs has
/// nowhere else to keep them, so it does not).
fn drops_clean_pages(dir: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let path = dir.join("probe");
    std::fs::write(&path, vec![1u8; 64 * 1024]).expect("probe");
    let file = std::fs::File::open(&path).expect("open probe");
    file.sync_all().expect("sync probe");
    // SAFETY: a plain system call on an open descriptor.
    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    let dropped = cached_pages(&path, 64 * 1024) < 16;
    std::fs::remove_file(&path).expect("remove probe");
    dropped
}

#[test]
fn log_pages_on_the_disk_leave_the_page_cache() {
    // The processor never reads its log back: pages the disk holds are dropped from the page
    // cache as the log grows, rather than growing it by the log's whole write rate.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut journal = FileJournal::open(dir.path(), four_mib_segments()).expect("open");
    let flusher = journal.flusher();
    let entry = vec![7u8; 16 * 1024];
    // Group commit: a flush every 4 entries (64 KiB), under the append side's write-out.
    for index in 1..=80 {
        journal.append(index, &entry).expect("append");
        if index % 4 == 0 {
            flusher.flush().expect("flush");
        }
    }
    // 80 frames of 16 KiB and 40 header bytes, after the 64-byte segment header.
    let synced = 64 + 80 * (40 + 16 * 1024);
    let released = journal.cache_released_up_to();
    assert!(
        released >= 1024 * 1024 && released <= synced && released.is_multiple_of(4096),
        "the synced whole pages are released a mebibyte at a time: {released} of {synced}"
    );
    let first = dir.path().join("segment-0000000001.log");
    // Past the roll (255 frames fill 4 MiB): the sealed segment is released whole.
    for index in 81..=300 {
        journal.append(index, &entry).expect("append");
        if index % 4 == 0 {
            flusher.flush().expect("flush");
        }
    }
    if drops_clean_pages(dir.path()) {
        let cached = cached_pages(&first, 4 * 1024 * 1024);
        // A page the kernel still holds a reference to at that moment may stay.
        assert!(
            cached < 16,
            "{cached} pages of the sealed segment are still cached"
        );
    } else {
        eprintln!("skipping the page cache check: this file system keeps clean pages");
    }
    closed_and_read_back(journal, dir.path(), 300, &entry);
}

#[test]
fn recovery_leaves_no_segment_in_the_page_cache() {
    // Opening reads every segment back to verify it: that read must not stay cached.
    let dir = tempfile::tempdir().expect("tempdir");
    let entry = vec![5u8; 16 * 1024];
    // 300 frames of 16 KiB: a sealed segment (255 fill 4 MiB) and part of the next.
    closed_and_read_back(appended(dir.path(), 300, &entry), dir.path(), 300, &entry);
    let journal = FileJournal::open(dir.path(), four_mib_segments()).expect("reopen");
    if drops_clean_pages(dir.path()) {
        for segment in ["segment-0000000001.log", "segment-0000000002.log"] {
            let cached = cached_pages(&dir.path().join(segment), 4 * 1024 * 1024);
            assert!(cached < 16, "{cached} pages of {segment} stayed cached");
        }
    } else {
        eprintln!("skipping the page cache check: this file system keeps clean pages");
    }
    drop(journal);
}

#[test]
fn an_unflushed_log_releases_its_pages_behind_the_writeback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let entry = vec![7u8; 16 * 1024];
    // Five write-outs of 16 frames each: the pages started at each but the last may go, a
    // mebibyte at a time.
    let journal = appended(dir.path(), 80, &entry);
    let started_before_last = (64 + 64 * (24 + 16 * 1024)) / 4096 * 4096;
    assert_eq!(
        journal.cache_released_up_to(),
        started_before_last,
        "released up to where the last write-out's writeback began"
    );
    closed_and_read_back(journal, dir.path(), 80, &entry);
}

#[test]
fn compaction_removes_whole_segments_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("open");
    let files = || segment_files(dir.path());
    let before = files();
    let compaction = journal.compact(400).expect("compact");
    assert!(journal.first_index() > 1 && journal.first_index() <= 400);
    assert_eq!(files(), before, "the files go when the compaction finishes");
    compaction.finish().expect("delete");
    assert!(files() < before, "segments below 400 were removed");
    drop(journal);
    let journal = FileJournal::open(dir.path(), small_segments()).expect("reopen");
    let mut reader = journal.reader();
    reader.seek(400).expect("seek");
    let entry = reader.next_entry().expect("entry").expect("read");
    assert_eq!((entry.index, entry.data), (400, payload(400)));
}

#[test]
fn a_compacted_segment_a_reader_holds_is_unlinked_whole_and_the_reader_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("open");
    let mut reader = journal.reader();
    reader.seek(1).expect("seek");
    assert_eq!(reader.next_entry().expect("entry").expect("read").index, 1);
    // The reader holds the first segment: its name goes at once, its blocks with the reader.
    compact_to_400_leaving_nothing_behind(&mut journal, dir.path());
    let first_kept = journal.first_index();
    let entry = reader.next_entry().expect("entry").expect("read");
    assert_eq!((entry.index, entry.data), (first_kept, payload(first_kept)));
}

/// Compacts `journal` (in `dir`) below entry 400 and finishes: fewer segment files, and no
/// file left half deleted.
fn compact_to_400_leaving_nothing_behind(journal: &mut FileJournal, dir: &Path) {
    let before = segment_files(dir);
    journal
        .compact(400)
        .expect("compact")
        .finish()
        .expect("delete");
    assert!(segment_files(dir) < before);
    assert_eq!(files_starting_with(dir, "deleting-"), 0);
}

#[test]
fn a_compacted_segment_with_another_name_keeps_its_contents_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    let first = dir.path().join("segment-0000000001.log");
    let size = std::fs::metadata(&first).expect("first segment").len();
    // A backup's hard link to the first segment, as a chaos run's archive takes.
    let backup = tempfile::tempdir_in(dir.path().parent().expect("parent")).expect("tempdir");
    let linked = backup.path().join("segment-0000000001.log");
    std::fs::hard_link(&first, &linked).expect("link");
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("open");
    journal
        .compact(400)
        .expect("compact")
        .finish()
        .expect("delete");
    assert!(!first.exists(), "the journal's name is gone");
    assert_eq!(
        std::fs::metadata(&linked).expect("the link").len(),
        size,
        "the other name keeps the whole file"
    );
}

#[test]
fn a_deletion_cut_short_by_a_crash_is_finished_when_the_journal_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    // A compacted segment renamed out of the journal and partly freed when the process died.
    let left = dir.path().join("deleting-segment-0000000000.log");
    std::fs::write(&left, vec![0xAB; 10_000]).expect("write");
    let journal = FileJournal::open(dir.path(), small_segments()).expect("open");
    assert!(!left.exists(), "the half-deleted segment is removed");
    let mut reader = journal.reader();
    reader.seek(1).expect("seek");
    assert_eq!(reader.next_entry().expect("entry").expect("read").index, 1);
    // Finishing, with no reader in the old segments, leaves no such file behind.
    drop(reader);
    let mut journal = journal;
    compact_to_400_leaving_nothing_behind(&mut journal, dir.path());
}

#[test]
fn a_compaction_cut_short_by_a_crash_leaves_a_readable_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_entries(dir.path(), 600);
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("open");
    let files = || segment_files(dir.path());
    let before = files();
    // The journal let go of the old segments, and the process died before deleting them.
    std::mem::forget(journal.compact(400).expect("compact"));
    drop(journal);
    assert_eq!(files(), before);
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("reopen");
    assert_eq!(journal.first_index(), 1, "the old segments are read again");
    let mut reader = journal.reader();
    reader.seek(1).expect("seek");
    assert_eq!(reader.next_entry().expect("entry").expect("read").index, 1);
    // Dropped unfinished, a compaction deletes its files all the same.
    drop(journal.compact(400).expect("compact"));
    assert!(files() < before);
}

// ---- failing writes -------------------------------------------------------------------------
//
// A child process (this test binary again) appends under a file size limit (RLIMIT_FSIZE), so
// the kernel fails its writes the way a full disk does. The parent then checks that every entry
// the child had flushed survives and nothing else does.

const CHILD_DIR: &str = "BEELINE_JOURNAL_CHILD_DIR";
const CHILD_MODE: &str = "BEELINE_JOURNAL_CHILD_MODE";

fn limit_file_size(bytes: u64) {
    // SAFETY: plain libc calls with valid arguments; ignoring SIGXFSZ turns the signal the
    // kernel sends on an over-limit write into an EFBIG error, which is what we want to see.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let limit = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: libc::RLIM_INFINITY,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
}

/// Child side: append and flush until a write fails; print how many entries were flushed.
/// The failure shows at the append (a segment that cannot be made) or at the flush, which
/// writes the appended frames to the file.
#[test]
fn failing_write_child() {
    let (Ok(dir), Ok(mode)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_MODE)) else {
        return; // only meaningful when started by `a_failing_write_loses_nothing`
    };
    let mut config = small_segments();
    if mode == "segment" {
        // Start the journal with 64 KiB segments, then reopen it asking for 256 KiB ones under a
        // 100 KiB file size limit: the 64 KiB segment fills up normally, and preallocating the
        // next one fails like a full disk.
        let mut journal = FileJournal::open(&dir, config.clone()).expect("open");
        journal.append(10, &payload(1)).expect("append");
        journal.flusher().flush().expect("flush");
        drop(journal);
        limit_file_size(100 * 1024);
        config.segment_size = 256 * 1024;
    }
    let mut journal = FileJournal::open(&dir, config.clone()).expect("open");
    let start = journal.last_index() + 1;
    if mode == "frame" {
        // Writes past the middle of the first segment fail, part-way through a frame.
        limit_file_size(config.segment_size / 2 + 13);
    }
    let flusher = journal.flusher();
    let mut flushed = 0;
    for index in start..10_000u64 {
        match journal
            .append(index * 10, &payload(index))
            .and_then(|_| flusher.flush())
        {
            Ok(durable) => flushed = durable,
            Err(e) => {
                eprintln!("append {index} failed as intended: {e}");
                // A failed write leaves the journal consistent: it keeps refusing or fails
                // cleanly, and never corrupts what was flushed.
                let again = journal
                    .append(index * 10, &payload(index))
                    .and_then(|_| flusher.flush());
                assert!(again.is_err());
                break;
            }
        }
    }
    println!("FLUSHED={flushed}");
}

fn run_failing_child(mode: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--exact",
            "failing_write_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir.path())
        .env(CHILD_MODE, mode)
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let flushed: u64 = stdout
        .lines()
        .find_map(|l| l.split("FLUSHED=").nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("child did not report: {stdout}"));
    assert!(flushed > 10, "the child wrote a fair amount before failing");
    let entries = read_back(dir.path()).expect("recover after the failed write");
    expect_entries(&entries, flushed);
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("reopen");
    assert_eq!(
        journal.append((flushed + 1) * 10, b"more").expect("append"),
        flushed + 1
    );
}

#[test]
fn a_failing_segment_allocation_loses_nothing() {
    run_failing_child("segment");
}

#[test]
fn a_write_failing_mid_frame_loses_nothing() {
    run_failing_child("frame");
}

/// A segment exactly as a build with frame format version 1 wrote it: 24-byte frame headers
/// without term and kind.
fn write_version_1_segment(dir: &Path, entries: &[(u64, &[u8])]) {
    let size = 64 * 1024u64;
    let mut file = vec![0u8; size as usize];
    file[0..8].copy_from_slice(b"BEELJNL\0");
    file[8..12].copy_from_slice(&1u32.to_le_bytes());
    file[16..24].copy_from_slice(&1u64.to_le_bytes());
    file[24..32].copy_from_slice(&1u64.to_le_bytes());
    file[32..40].copy_from_slice(&size.to_le_bytes());
    let crc = crc32c::crc32c(&file[0..40]);
    file[40..44].copy_from_slice(&crc.to_le_bytes());
    let mut offset = 64;
    for (i, (asqn, data)) in entries.iter().enumerate() {
        let index = i as u64 + 1;
        let len = data.len() as u32;
        let mut covered = Vec::new();
        covered.extend_from_slice(&len.to_le_bytes());
        covered.extend_from_slice(&index.to_le_bytes());
        covered.extend_from_slice(&asqn.to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&covered), data);
        file[offset..offset + 4].copy_from_slice(&len.to_le_bytes());
        file[offset + 4..offset + 8].copy_from_slice(&crc.to_le_bytes());
        file[offset + 8..offset + 16].copy_from_slice(&index.to_le_bytes());
        file[offset + 16..offset + 24].copy_from_slice(&asqn.to_le_bytes());
        file[offset + 24..offset + 24 + data.len()].copy_from_slice(data);
        offset += (24 + data.len()).next_multiple_of(8);
    }
    std::fs::write(dir.join("segment-0000000001.log"), file).expect("write");
}

#[test]
fn a_data_directory_of_frame_format_1_opens_and_continues_in_format_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_version_1_segment(
        dir.path(),
        &[(10, b"first"), (20, b"second"), (30, b"third")],
    );
    let mut journal = FileJournal::open(dir.path(), small_segments()).expect("open a v1 dir");
    assert_eq!((journal.last_index(), journal.last_asqn()), (3, Some(30)));
    assert_eq!(journal.last_term(), 0, "version-1 entries are of term 0");
    journal
        .append(40, b"fourth")
        .expect("append after v1 entries");
    journal
        .append_entry(2, EntryKind::Blank, 0, b"")
        .expect("a term and kind in the new segment");
    journal.flusher().flush().expect("flush");
    drop(journal);
    let journal = FileJournal::open(dir.path(), small_segments()).expect("reopen");
    journal.commit_index().advance(5);
    let mut reader = journal.reader();
    let mut read = Vec::new();
    while let Some(entry) = reader.next_entry() {
        let entry = entry.expect("read");
        read.push((entry.index, entry.term, entry.kind, entry.asqn, entry.data));
    }
    assert_eq!(
        read,
        vec![
            (1, 0, EntryKind::Normal, 10, b"first".to_vec()),
            (2, 0, EntryKind::Normal, 20, b"second".to_vec()),
            (3, 0, EntryKind::Normal, 30, b"third".to_vec()),
            (4, 0, EntryKind::Normal, 40, b"fourth".to_vec()),
            (5, 2, EntryKind::Blank, 40, Vec::new()),
        ]
    );
    let mut seek = journal.reader();
    seek.seek_to_asqn(25).expect("seek across formats");
    assert_eq!(seek.next_entry().expect("entry").expect("read").index, 2);
    assert!(
        dir.path().join("segment-0000000002.log").exists(),
        "a new segment in format 2"
    );
}

/// A Raft follower cuts its uncommitted tail (`truncate_after`) while its replayer reads the
/// committed entries before it from the same segment. The reader reads a window up to the
/// segment's end as it last saw it: the file must never be shorter than that end, or the read
/// fails with "failed to fill whole buffer" (seen at a replica's open after a restart in
/// `beeline chaos`, where the first append of the new leader truncates the tail while the
/// replica replays).
#[test]
fn a_truncation_racing_a_reader_of_committed_entries_never_fails_the_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = FileJournalConfig {
        segment_size: 4 * 1024 * 1024,
        commit_recovered: false,
        ..small_segments()
    };
    let mut journal = FileJournal::open(dir.path(), config).expect("open");
    let entry = vec![5u8; 1024];
    const COMMITTED: u64 = 40;
    for asqn in 1..=COMMITTED {
        journal.append(asqn, &entry).expect("append");
    }
    journal.commit_index().advance(COMMITTED);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers = journal.readers();
    let reading = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut rounds = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Acquire) || rounds == 0 {
                let mut reader = readers.reader();
                reader.seek(COMMITTED - 2).expect("seek");
                while let Some(entry) = reader.next_entry() {
                    let entry = entry.unwrap_or_else(|e| panic!("round {rounds}: {e}"));
                    assert_eq!(entry.data.len(), 1024);
                }
                rounds += 1;
            }
            rounds
        })
    };
    let started = std::time::Instant::now();
    let mut asqn = COMMITTED;
    while started.elapsed() < std::time::Duration::from_secs(3) && !reading.is_finished() {
        // An uncommitted tail of 200 entries, written to the file, then cut again.
        for _ in 0..200 {
            asqn += 1;
            journal.append(asqn, &entry).expect("append a tail");
        }
        journal.flusher().flush().expect("flush");
        journal.truncate_after(COMMITTED).expect("truncate");
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    let rounds = reading.join().expect("no read failed");
    assert!(rounds > 0, "the reader read");
    assert_eq!(journal.last_index(), COMMITTED);
}
