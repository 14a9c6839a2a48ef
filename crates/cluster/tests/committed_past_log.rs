//! A follower records the commit its leader sends before the entries are flushed: killed
//! then, it comes back with a log that ends before its recorded commit. Found by
//! `beeline chaos` (a follower's partition refused to open after a SIGKILL: openraft asked for
//! the entries up to the recorded commit, and the log did not have them).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use beeline_cluster::types::log_id;
use beeline_cluster::{CompactionFloor, JournalLogStore, MetaDir, NodeFlusher};
use beeline_log::{EntryKind, Journal, MemJournal};
use openraft::storage::RaftLogStorage;

#[tokio::test]
async fn a_commit_recorded_past_the_log_s_end_reads_as_the_log_s_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let meta = dir.path().join("raft");
    let mut journal = MemJournal::new();
    for asqn in 1..=3 {
        journal
            .append_entry(2, EntryKind::Normal, asqn, b"batch")
            .expect("append");
    }
    // Raft indices 0..=2 are held; the commit recorded is 5.
    MetaDir::new(&meta)
        .expect("meta")
        .save_committed(Some(&log_id(2, 5)))
        .expect("save");
    let mut store = JournalLogStore::open(
        journal,
        &meta,
        CompactionFloor::new(1),
        &NodeFlusher::start().expect("flusher"),
    )
    .expect("open");
    assert_eq!(
        store.read_committed().await.expect("read"),
        Some(log_id(2, 2))
    );

    // A commit within the log reads as recorded.
    store
        .save_committed(Some(log_id(2, 1)))
        .await
        .expect("save");
    assert_eq!(
        store.read_committed().await.expect("read"),
        Some(log_id(2, 1))
    );
}
