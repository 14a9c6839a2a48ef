//! openraft's storage conformance suite on the partition journal: the file journal (what a
//! broker runs) and the in-memory twin, each with the commit notifier as state machine.
//!
//! The suite drives the log store and the state machine as independent parts (it applies
//! entries that are not in the log), so here the notifier publishes to a commit index of its
//! own; in a partition it publishes to the journal's, which `commits_reach_the_journal` shows.

use std::io;

use std::collections::BTreeSet;

use beeline_cluster::types::{Entry, Membership, Vote, log_id};
use beeline_cluster::{Batch, CommitNotifier, CompactionFloor, JournalLogStore, TypeConfig};
use beeline_log::{
    CommitIndex, FileJournal, FileJournalConfig, Journal, JournalReader, MemJournal,
};
use openraft::RaftLogReader;
use openraft::StorageError;
use openraft::entry::RaftEntry;
use openraft::storage::{IOFlushed, RaftLogStorage, RaftStateMachine};
use openraft::testing::log::{StoreBuilder, Suite};
use openraft::type_config::TypeConfigExt;

struct FileJournals;

impl StoreBuilder<TypeConfig, JournalLogStore<FileJournal>, CommitNotifier, tempfile::TempDir>
    for FileJournals
{
    async fn build(
        &self,
    ) -> Result<
        (
            tempfile::TempDir,
            JournalLogStore<FileJournal>,
            CommitNotifier,
        ),
        StorageError<TypeConfig>,
    > {
        let io = |e: io::Error| StorageError::read(TypeConfig::err_from_error(&e));
        let dir = tempfile::tempdir().map_err(io)?;
        let config = FileJournalConfig {
            segment_size: 64 * 1024,
            max_entry_size: 16 * 1024,
            commit_recovered: false,
            ..FileJournalConfig::default()
        };
        let journal = FileJournal::open(dir.path().join("log"), config)
            .map_err(|e| io(io::Error::other(e)))?;
        let notifier = CommitNotifier::new(CommitIndex::new(0));
        let store = JournalLogStore::open(journal, dir.path(), CompactionFloor::new(u64::MAX))
            .map_err(io)?;
        Ok((dir, store, notifier))
    }
}

struct MemJournals;

impl StoreBuilder<TypeConfig, JournalLogStore<MemJournal>, CommitNotifier, tempfile::TempDir>
    for MemJournals
{
    async fn build(
        &self,
    ) -> Result<
        (
            tempfile::TempDir,
            JournalLogStore<MemJournal>,
            CommitNotifier,
        ),
        StorageError<TypeConfig>,
    > {
        let io = |e: io::Error| StorageError::read(TypeConfig::err_from_error(&e));
        let dir = tempfile::tempdir().map_err(io)?;
        let journal = MemJournal::new();
        let notifier = CommitNotifier::new(CommitIndex::new(0));
        let store = JournalLogStore::open(journal, dir.path(), CompactionFloor::new(u64::MAX))
            .map_err(io)?;
        Ok((dir, store, notifier))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_suite_passes_on_the_file_journal() {
    Suite::test_all(FileJournals)
        .await
        .expect("openraft storage suite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_suite_passes_on_the_memory_journal() {
    Suite::test_all(MemJournals)
        .await
        .expect("openraft storage suite");
}

fn file_config() -> FileJournalConfig {
    FileJournalConfig {
        segment_size: 64 * 1024,
        max_entry_size: 16 * 1024,
        commit_recovered: false,
        ..FileJournalConfig::default()
    }
}

async fn append(store: &mut JournalLogStore<FileJournal>, entries: Vec<Entry>) {
    let (done, flushed) = TypeConfig::oneshot();
    store
        .append(entries, IOFlushed::signal(done))
        .await
        .expect("append");
    flushed.await.expect("callback").expect("durable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_reach_the_journal_and_raft_state_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = || async {
        let journal = FileJournal::open(dir.path().join("log"), file_config()).expect("journal");
        let notifier = CommitNotifier::new(journal.commit_index());
        let store = JournalLogStore::open(journal, dir.path(), CompactionFloor::new(u64::MAX))
            .expect("store");
        (store, notifier)
    };
    let (mut store, mut notifier) = open().await;
    let members = Membership::new_with_defaults(vec![BTreeSet::from([0, 1, 2])], []);
    let batch = |asqn: u64, text: &str| Batch {
        asqn,
        data: text.as_bytes().to_vec(),
    };
    let entries = vec![
        Entry::new_membership(log_id(1, 0), members.clone()),
        Entry::new_blank(log_id(1, 1)),
        Entry::new_normal(log_id(1, 2), batch(1, "records 1-4")),
        Entry::new_normal(log_id(1, 3), batch(5, "records 5-6")),
    ];
    append(&mut store, entries.clone()).await;

    // Appended entries are readable for replication before anything is committed.
    let mut reader = store.get_log_reader().await;
    assert_eq!(
        reader.try_get_log_entries(0..10).await.expect("read"),
        entries
    );
    assert!(
        store.journal().reader().next_entry().is_none(),
        "nothing committed"
    );

    // Applying is committing: the partition's readers see the committed records.
    let applied = entries[..3].to_vec();
    notifier
        .apply(futures_util::stream::iter(
            applied.into_iter().map(|e| Ok((e, None))),
        ))
        .await
        .expect("apply");
    assert_eq!(
        store.journal().commit_index().get(),
        3,
        "Raft index 2 is journal entry 3"
    );
    let mut committed = store.journal().reader();
    committed.seek_to_asqn(1).expect("seek");
    let first = committed.next_entry().expect("an entry").expect("read");
    assert_eq!(
        (first.index, first.asqn, first.data),
        (3, 1, b"records 1-4".to_vec())
    );

    // A new leader of term 2 replaces the uncommitted tail.
    store
        .save_vote(&Vote::new_committed(2, 1))
        .await
        .expect("vote");
    store
        .truncate_after(Some(log_id(1, 2)))
        .await
        .expect("truncate");
    append(&mut store, vec![Entry::new_blank(log_id(2, 3))]).await;
    store
        .save_committed(Some(log_id(1, 2)))
        .await
        .expect("committed");
    store.purge(log_id(1, 0)).await.expect("purge");
    drop((store, notifier));

    let (mut store, _notifier) = open().await;
    let state = store.get_log_state().await.expect("state");
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 0)));
    assert_eq!(state.last_log_id, Some(log_id(2, 3)));
    let mut reader = store.get_log_reader().await;
    assert_eq!(
        reader.read_vote().await.expect("vote"),
        Some(Vote::new_committed(2, 1))
    );
    assert_eq!(
        store.read_committed().await.expect("committed"),
        Some(log_id(1, 2))
    );
    let read = reader.try_get_log_entries(0..10).await.expect("read");
    assert_eq!(
        read,
        vec![
            Entry::new_blank(log_id(1, 1)),
            Entry::new_normal(log_id(1, 2), batch(1, "records 1-4")),
            Entry::new_blank(log_id(2, 3)),
        ],
        "the purged entry is not served, the truncated one is replaced, terms survive"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_frees_segments_only_below_the_compaction_floor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = FileJournal::open(dir.path().join("log"), file_config()).expect("journal");
    let floor = CompactionFloor::new(1);
    let mut store = JournalLogStore::open(journal, dir.path(), floor.clone()).expect("store");
    let data = vec![7u8; 8 * 1024];
    let entries: Vec<Entry> = (0..40)
        .map(|i| {
            Entry::new_normal(
                log_id(1, i),
                Batch {
                    asqn: i + 1,
                    data: data.clone(),
                },
            )
        })
        .collect();
    append(&mut store, entries).await;
    let segments = || {
        std::fs::read_dir(dir.path().join("log"))
            .expect("list")
            .filter(|f| {
                f.as_ref()
                    .is_ok_and(|f| f.file_name().to_string_lossy().starts_with("segment-"))
            })
            .count()
    };
    let before = segments();
    assert!(
        before >= 4,
        "40 entries of 8 KiB span several 64 KiB segments"
    );
    store.purge(log_id(1, 30)).await.expect("purge");
    assert_eq!(
        segments(),
        before,
        "an exporter still needs entry 1: nothing is freed"
    );
    let mut reader = store.get_log_reader().await;
    let served = reader.try_get_log_entries(0..100).await.expect("read");
    assert_eq!(
        served.first().map(|e| e.log_id().index),
        Some(31),
        "but Raft is served no purged entry"
    );

    floor.set(25);
    store.purge(log_id(1, 35)).await.expect("purge");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let after = segments();
    assert!(
        after < before,
        "segments below the floor are freed: {after} of {before}"
    );
    let mut all = store.journal().log_reader();
    all.seek(1).expect("seek");
    let first_kept = all.next_entry().expect("entry").expect("read").index;
    assert!(
        first_kept <= 25,
        "entry 25 and later stay on disk for the exporter: {first_kept}"
    );
}
