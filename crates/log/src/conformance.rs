//! The journal contract as executable checks. Every [`Journal`] implementation runs this suite
//! from its tests: `beeline_log::conformance::run(|| MyJournal::new(..))`. Each check gets a
//! fresh, empty journal from the factory and panics with a description on a violation.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a conformance suite: a violation fails the test that runs it, by a panic"
)]

use crate::Error;
use crate::journal::{Entry, EntryKind, Flusher, Journal, JournalReader};

/// Runs every check against journals made by `new_journal`.
pub fn run<J: Journal>(mut new_journal: impl FnMut() -> J) {
    empty_journal(new_journal());
    indices_are_dense_from_one(new_journal());
    readers_see_only_committed_entries(new_journal());
    flush_reports_what_was_appended(new_journal());
    asqn_must_increase(new_journal());
    seek_by_index(new_journal());
    seek_by_asqn(new_journal());
    truncate_after_removes_the_tail(new_journal());
    committed_entries_cannot_be_truncated(new_journal());
    compaction_keeps_the_requested_index(new_journal());
    many_entries_of_many_sizes(new_journal());
    commit_wakes_subscribers(new_journal());
    entries_keep_their_term_and_kind(new_journal());
    terms_never_decrease(new_journal());
    seek_by_asqn_lands_on_records_not_on_blank_entries(new_journal());
    log_reader_sees_uncommitted_entries(new_journal());
    truncation_restores_the_last_term_and_asqn(new_journal());
    reset_continues_at_a_later_index(new_journal());
    readers_left_behind_read_on_from_the_first_entry_held(new_journal());
}

fn data(index: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (index as usize * 31 + i * 7) as u8)
        .collect()
}

fn append_n<J: Journal>(journal: &mut J, from_asqn: u64, n: u64, len: usize) {
    for i in 0..n {
        let expected = journal.last_index() + 1;
        let index = journal
            .append(from_asqn + i * 10, &data(expected, len))
            .expect("append");
        assert_eq!(index, expected, "append returns the next dense index");
    }
}

fn commit_all<J: Journal>(journal: &J) {
    let durable = journal.flusher().flush().expect("flush");
    journal.commit_index().advance(durable);
}

fn read_all<R: JournalReader>(reader: &mut R) -> Vec<Entry> {
    let mut out = Vec::new();
    while let Some(entry) = reader.next_entry() {
        out.push(entry.expect("read a committed entry"));
    }
    out
}

fn empty_journal<J: Journal>(journal: J) {
    assert_eq!(journal.first_index(), 1, "an empty journal starts at 1");
    assert_eq!(
        journal.last_index(),
        0,
        "an empty journal has no last entry"
    );
    assert_eq!(journal.last_asqn(), None);
    assert!(journal.reader().next_entry().is_none());
}

fn indices_are_dense_from_one<J: Journal>(mut journal: J) {
    append_n(&mut journal, 100, 5, 10);
    assert_eq!(journal.last_index(), 5);
    assert_eq!(journal.last_asqn(), Some(140));
    commit_all(&journal);
    let entries = read_all(&mut journal.reader());
    let indices: Vec<u64> = entries.iter().map(|e| e.index).collect();
    assert_eq!(indices, vec![1, 2, 3, 4, 5]);
    for entry in entries {
        assert_eq!(entry.data, data(entry.index, 10), "entry data round-trips");
        assert_eq!(entry.asqn, 100 + (entry.index - 1) * 10);
    }
}

fn readers_see_only_committed_entries<J: Journal>(mut journal: J) {
    let mut reader = journal.reader();
    append_n(&mut journal, 1, 4, 16);
    assert!(
        reader.next_entry().is_none(),
        "appended but uncommitted entries are invisible"
    );
    journal.commit_index().advance(2);
    let seen: Vec<u64> = read_all(&mut reader).iter().map(|e| e.index).collect();
    assert_eq!(seen, vec![1, 2], "a reader stops at the commit index");
    journal.commit_index().advance(1);
    assert_eq!(
        journal.commit_index().get(),
        2,
        "the commit index never goes back"
    );
    journal.commit_index().advance(4);
    let seen: Vec<u64> = read_all(&mut reader).iter().map(|e| e.index).collect();
    assert_eq!(
        seen,
        vec![3, 4],
        "an existing reader continues after a commit"
    );
}

fn flush_reports_what_was_appended<J: Journal>(mut journal: J) {
    let flusher = journal.flusher();
    append_n(&mut journal, 1, 3, 8);
    assert!(flusher.flush().expect("flush") >= 3);
    append_n(&mut journal, 100, 2, 8);
    let other = flusher.clone();
    let durable = std::thread::spawn(move || other.flush())
        .join()
        .expect("flush thread")
        .expect("flush");
    assert!(
        durable >= 5,
        "a flusher on another thread covers every earlier append"
    );
}

fn asqn_must_increase<J: Journal>(mut journal: J) {
    journal.append(10, b"a").expect("append");
    assert!(
        journal.append(10, b"b").is_err(),
        "an equal asqn is refused"
    );
    assert!(journal.append(5, b"c").is_err(), "a lower asqn is refused");
    assert_eq!(journal.last_index(), 1, "a refused append leaves no entry");
    journal.append(11, b"d").expect("append after refusal");
    assert_eq!(journal.last_index(), 2);
}

fn seek_by_index<J: Journal>(mut journal: J) {
    append_n(&mut journal, 1, 300, 40);
    commit_all(&journal);
    let mut reader = journal.reader();
    for target in [1u64, 2, 63, 64, 65, 150, 299, 300] {
        reader.seek(target).expect("seek");
        let entry = reader.next_entry().expect("an entry").expect("read");
        assert_eq!(entry.index, target, "seek({target})");
        assert_eq!(entry.data, data(target, 40));
    }
    reader.seek(301).expect("seek past the end");
    assert!(reader.next_entry().is_none());
    reader.seek(0).expect("seek to 0");
    assert_eq!(reader.next_entry().expect("entry").expect("read").index, 1);
}

fn seek_by_asqn<J: Journal>(mut journal: J) {
    // Entry i (1-based) has asqn 1000 + (i - 1) * 10.
    append_n(&mut journal, 1000, 200, 24);
    commit_all(&journal);
    let mut reader = journal.reader();
    let cases = [
        (0u64, 1u64),
        (1000, 1),
        (1005, 1),
        (1010, 2),
        (1019, 2),
        (1640, 65),
        (2990, 200),
        (99_999, 200),
    ];
    for (asqn, expected) in cases {
        reader.seek_to_asqn(asqn).expect("seek_to_asqn");
        let entry = reader.next_entry().expect("an entry").expect("read");
        assert_eq!(entry.index, expected, "seek_to_asqn({asqn})");
    }
}

fn truncate_after_removes_the_tail<J: Journal>(mut journal: J) {
    append_n(&mut journal, 1, 10, 32);
    journal.commit_index().advance(4);
    journal.truncate_after(6).expect("truncate");
    assert_eq!(journal.last_index(), 6);
    assert_eq!(journal.last_asqn(), Some(51));
    let index = journal.append(52, b"replacement").expect("append");
    assert_eq!(index, 7, "indices continue after the truncation point");
    commit_all(&journal);
    let entries = read_all(&mut journal.reader());
    assert_eq!(entries.len(), 7);
    assert_eq!(
        entries[6].data,
        b"replacement".to_vec(),
        "the new entry replaces the old"
    );
}

fn committed_entries_cannot_be_truncated<J: Journal>(mut journal: J) {
    append_n(&mut journal, 1, 5, 8);
    journal.commit_index().advance(3);
    assert!(journal.truncate_after(2).is_err());
    assert_eq!(
        journal.last_index(),
        5,
        "a refused truncation changes nothing"
    );
}

fn compaction_keeps_the_requested_index<J: Journal>(mut journal: J) {
    append_n(&mut journal, 1, 500, 100);
    commit_all(&journal);
    journal
        .compact(400)
        .expect("compact")
        .finish()
        .expect("delete");
    assert!(
        journal.first_index() <= 400,
        "compaction never drops the given index"
    );
    let mut reader = journal.reader();
    reader.seek(400).expect("seek");
    assert_eq!(
        reader.next_entry().expect("entry").expect("read").index,
        400
    );
    reader.seek(1).expect("seek below the first entry");
    let first = reader.next_entry().expect("entry").expect("read");
    assert_eq!(
        first.index,
        journal.first_index(),
        "a seek below the first entry lands on it"
    );
    append_n(&mut journal, 10_000, 5, 100);
    assert_eq!(journal.last_index(), 505);
}

fn many_entries_of_many_sizes<J: Journal>(mut journal: J) {
    let sizes = [1usize, 7, 8, 9, 100, 1000, 4096, 20_000];
    for i in 0..400u64 {
        let len = sizes[(i as usize) % sizes.len()];
        journal.append(i + 1, &data(i + 1, len)).expect("append");
    }
    commit_all(&journal);
    let entries = read_all(&mut journal.reader());
    assert_eq!(entries.len(), 400);
    for entry in entries {
        let len = sizes[((entry.index - 1) as usize) % sizes.len()];
        assert_eq!(entry.data, data(entry.index, len), "entry {}", entry.index);
    }
}

fn commit_wakes_subscribers<J: Journal>(mut journal: J) {
    let mut changes = journal.commit_index().subscribe();
    append_n(&mut journal, 1, 1, 8);
    journal.commit_index().advance(1);
    assert!(changes.has_changed().unwrap_or(false));
    assert_eq!(*changes.borrow_and_update(), 1);
}

fn entries_keep_their_term_and_kind<J: Journal>(mut journal: J) {
    journal
        .append_entry(1, EntryKind::Membership, 0, b"members")
        .expect("membership");
    journal
        .append_entry(1, EntryKind::Blank, 99, b"")
        .expect("blank");
    journal
        .append_entry(2, EntryKind::Normal, 10, b"records")
        .expect("normal");
    journal
        .append_entry(3, EntryKind::Blank, 0, b"")
        .expect("blank");
    assert_eq!(journal.last_term(), 3);
    assert_eq!(
        journal.last_asqn(),
        Some(10),
        "a blank entry repeats the last asqn"
    );
    commit_all(&journal);
    let read: Vec<_> = read_all(&mut journal.reader())
        .into_iter()
        .map(|e| (e.index, e.term, e.kind, e.asqn, e.data))
        .collect();
    assert_eq!(
        read,
        vec![
            (1, 1, EntryKind::Membership, 0, b"members".to_vec()),
            (2, 1, EntryKind::Blank, 0, Vec::new()),
            (3, 2, EntryKind::Normal, 10, b"records".to_vec()),
            (4, 3, EntryKind::Blank, 10, Vec::new()),
        ],
        "term, kind and asqn come back as written (the asqn of a blank entry is the last one)"
    );
    assert!(
        journal.append_entry(3, EntryKind::Normal, 11, b"").is_err(),
        "a normal entry needs data"
    );
}

fn terms_never_decrease<J: Journal>(mut journal: J) {
    journal
        .append_entry(5, EntryKind::Normal, 1, b"a")
        .expect("append");
    match journal.append_entry(4, EntryKind::Normal, 2, b"b") {
        Err(Error::TermDecreasing { term: 4, last: 5 }) => {}
        other => panic!("a lower term must be refused, got {other:?}"),
    }
    assert_eq!(journal.last_index(), 1);
    // A single node's appends are term 0: they follow term-0 entries only.
    let mut fresh = journal;
    assert!(fresh.append(3, b"c").is_err(), "term 0 after term 5");
}

fn seek_by_asqn_lands_on_records_not_on_blank_entries<J: Journal>(mut journal: J) {
    // asqn:   10      (10)    (10)   30      (30)
    // index:  1       2       3      4       5
    journal
        .append_entry(1, EntryKind::Normal, 10, b"a")
        .expect("append");
    journal
        .append_entry(2, EntryKind::Blank, 0, b"")
        .expect("blank");
    journal
        .append_entry(2, EntryKind::Membership, 0, b"m")
        .expect("membership");
    journal
        .append_entry(2, EntryKind::Normal, 30, b"b")
        .expect("append");
    journal
        .append_entry(3, EntryKind::Blank, 0, b"")
        .expect("blank");
    commit_all(&journal);
    for (asqn, expected) in [(5, 1), (10, 1), (25, 1), (30, 4), (31, 4), (1000, 4)] {
        let mut reader = journal.reader();
        reader.seek_to_asqn(asqn).expect("seek");
        let entry = reader.next_entry().expect("an entry").expect("read");
        assert_eq!(
            entry.index, expected,
            "seeking asqn {asqn} lands on the entry holding it, not on a blank after it"
        );
    }
}

fn log_reader_sees_uncommitted_entries<J: Journal>(mut journal: J) {
    append_n(&mut journal, 1, 3, 50);
    let mut committed = journal.reader();
    let mut all = journal.log_reader();
    assert!(committed.next_entry().is_none(), "nothing committed yet");
    let read = read_all(&mut all);
    assert_eq!(
        read.iter().map(|e| e.index).collect::<Vec<_>>(),
        vec![1, 2, 3],
        "a log reader sees entries neither flushed nor committed"
    );
    append_n(&mut journal, 100, 2, 50);
    assert_eq!(
        read_all(&mut all)
            .iter()
            .map(|e| e.index)
            .collect::<Vec<_>>(),
        vec![4, 5],
        "and entries appended after it was made"
    );
    journal.truncate_after(3).expect("truncate");
    journal
        .append_entry(1, EntryKind::Normal, 500, b"new 4")
        .expect("append");
    all.seek(4).expect("seek");
    let again = read_all(&mut all);
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].index, again[0].term, again[0].data.as_slice()),
        (4, 1, &b"new 4"[..]),
        "after a truncation the reader sees the new entry, not the old one"
    );
}

fn truncation_restores_the_last_term_and_asqn<J: Journal>(mut journal: J) {
    journal
        .append_entry(1, EntryKind::Normal, 10, b"a")
        .expect("append");
    journal
        .append_entry(2, EntryKind::Normal, 20, b"b")
        .expect("append");
    journal
        .append_entry(3, EntryKind::Normal, 30, b"c")
        .expect("append");
    journal.truncate_after(1).expect("truncate");
    assert_eq!((journal.last_term(), journal.last_asqn()), (1, Some(10)));
    journal
        .append_entry(2, EntryKind::Normal, 15, b"b'")
        .expect("a conflicting tail is replaced by a lower term's successor");
    journal.truncate_after(0).expect("truncate everything");
    assert_eq!(
        (
            journal.last_index(),
            journal.last_term(),
            journal.last_asqn()
        ),
        (0, 0, None)
    );
}

fn reset_continues_at_a_later_index<J: Journal>(mut journal: J) {
    append_n(&mut journal, 1, 5, 20);
    journal.commit_index().advance(2);
    assert!(
        matches!(journal.reset(2), Err(Error::ResetCommitted { .. })),
        "a reset may not drop committed entries that nothing covers"
    );
    journal.reset(101).expect("reset");
    assert_eq!(journal.first_index(), 101);
    assert_eq!(journal.last_index(), 100);
    assert_eq!(
        journal.commit_index().get(),
        100,
        "a snapshot covers what came before"
    );
    assert!(journal.reader().next_entry().is_none());
    let index = journal
        .append_entry(7, EntryKind::Blank, 0, b"")
        .expect("append");
    assert_eq!(index, 101);
    journal
        .append_entry(7, EntryKind::Normal, 1000, b"x")
        .expect("append");
    commit_all(&journal);
    let read = read_all(&mut journal.reader());
    assert_eq!(
        read.iter().map(|e| e.index).collect::<Vec<_>>(),
        vec![101, 102]
    );
    let mut from_start = journal.log_reader();
    from_start.seek(1).expect("seek");
    assert_eq!(
        from_start.next_entry().expect("entry").expect("read").index,
        101
    );
}

/// A reader whose next entry was compacted away or dropped by a reset goes on at the first
/// entry held, and sees it as soon as it is committed (or, a log reader, appended): a
/// follower's commit comes from its leader, with no flush of its own before it, and its
/// replay must not stop short of what is committed.
fn readers_left_behind_read_on_from_the_first_entry_held<J: Journal>(mut journal: J) {
    let mut committed = journal.reader();
    let mut all = journal.log_reader();
    // Compacted up to the newest entry after every append: whichever segments a journal
    // has, the reader's next entry goes away.
    for i in 0..200 {
        append_n(&mut journal, 1 + i * 10, 1, 1000);
        if i == 0 {
            // Both readers inside the first segment when it goes.
            journal.commit_index().advance(1);
            assert_eq!(
                committed.next_entry().expect("entry").expect("read").index,
                1
            );
            assert_eq!(all.next_entry().expect("entry").expect("read").index, 1);
        }
        journal
            .compact(journal.last_index())
            .expect("compact")
            .finish()
            .expect("delete");
    }
    let indexes = |entries: Vec<Entry>| entries.iter().map(|e| e.index).collect::<Vec<_>>();
    let held: Vec<u64> = (journal.first_index().max(2)..=journal.last_index()).collect();
    assert_eq!(
        indexes(read_all(&mut all)),
        held,
        "a log reader behind the first entry held reads on from it"
    );
    journal.commit_index().advance(journal.last_index());
    assert_eq!(
        indexes(read_all(&mut committed)),
        held,
        "a reader behind the first entry held reads on from it once it is committed"
    );
    let mut committed = journal.reader();
    let mut all = journal.log_reader();
    let next = journal.last_index() + 50;
    journal.reset(next).expect("reset");
    journal
        .append_entry(3, EntryKind::Blank, 0, b"")
        .expect("append");
    for i in 0..2 {
        journal
            .append_entry(3, EntryKind::Normal, 100_000 + i, &data(next + 1 + i, 100))
            .expect("append");
    }
    assert_eq!(
        indexes(read_all(&mut all)),
        vec![next, next + 1, next + 2],
        "a log reader from before a reset reads what follows it"
    );
    journal.commit_index().advance(next + 2);
    assert_eq!(
        indexes(read_all(&mut committed)),
        vec![next, next + 1, next + 2],
        "a reader from before a reset reads what follows it once it is committed"
    );
}
