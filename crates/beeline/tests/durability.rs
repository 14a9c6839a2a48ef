//! Durability of a real partition (file journal, RocksDB state).
//!
//! Acknowledged work survives `kill -9`:
//! A child process (this test binary again) runs a real partition (file journal, RocksDB state)
//! with concurrent clients publishing messages, and prints each message id once its answer
//! arrives. The parent kills it with SIGKILL at a random moment, several times over the same
//! data directory, and after each kill checks that every acknowledged command is in the log
//! exactly once, and that the state the partition recovers equals a fresh replay of the log.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beeline_engine::{Engine, EngineConfig, ReplayProgress};
use beeline_log::{FileJournal, FileJournalConfig, Journal, JournalReader};
use beeline_protocol::codec::decode_batch;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_protocol::{Record, RecordType};
use beeline_rocksdb::{MemoryBudget, PartitionStore, RocksDbStoreConfig, open_partition_store};
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::{Partition, PartitionConfig, PartitionHandle, SystemClock};

#[path = "durability/disk_full.rs"]
mod disk_full;

const CHILD_DIR: &str = "BEELINE_CRASH_CHILD_DIR";
const CHILD_ROUND: &str = "BEELINE_CRASH_CHILD_ROUND";
const ROUNDS: u64 = 5;
const CLIENTS: u64 = 8;

fn open_partition(dir: &Path, opened: Arc<Mutex<Option<Arc<PartitionStore>>>>) -> PartitionHandle {
    let journal = FileJournal::open(
        dir.join("log"),
        FileJournalConfig {
            segment_size: 1 << 20,
            max_entry_size: 512 << 10,
            ..FileJournalConfig::default()
        },
    )
    .expect("journal opens");
    let store_config = RocksDbStoreConfig {
        runtime_dir: dir.join("runtime"),
        budget: MemoryBudget::new(32 << 20, 1),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        let store = Arc::new(open_partition_store(&store_config, checkpoint)?);
        *opened.lock().unwrap() = Some(store.clone());
        Ok(store)
    };
    let mut config = PartitionConfig::new(1);
    config.snapshot_period = None;
    config.max_batch_bytes = 512 << 10;
    Partition::open(
        config,
        journal,
        SnapshotStore::open(dir.join("snapshots"), 2).expect("snapshots"),
        &opener,
        Arc::new(SystemClock),
        None,
    )
    .expect("partition recovers")
}

fn message_id(record: &Record) -> Option<String> {
    record
        .value_as::<MessageRecord>()
        .map(|m| m.message_id.clone())
}

/// Child side: publish until killed, printing `ACK <id>` for every answered command.
#[test]
fn crash_child() {
    let (Ok(dir), Ok(round)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_ROUND)) else {
        return; // only meaningful when started by the parent test
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let handle = {
        let _guard = runtime.enter();
        open_partition(Path::new(&dir), Arc::new(Mutex::new(None)))
    };
    println!("READY");
    runtime.block_on(async move {
        let mut clients = Vec::new();
        for client in 0..CLIENTS {
            let handle = handle.clone();
            let round = round.clone();
            clients.push(tokio::spawn(async move {
                for i in 0u64.. {
                    let id = format!("r{round}-c{client}-{i}");
                    let command = Record::command(
                        -1,
                        MessageIntent::Publish,
                        MessageRecord {
                            name: "crash".into(),
                            correlation_key: format!("key-{}", i % 7),
                            // Some stay in state, some expire at once.
                            time_to_live: if i % 3 == 0 { 0 } else { 3_600_000 },
                            message_id: id.clone(),
                            variables: format!(r#"{{"i":{i}}}"#).into_bytes(),
                            ..Default::default()
                        },
                    );
                    if let Ok(answer) = handle.execute(command).await {
                        assert_eq!(answer.intent, MessageIntent::Published.into());
                        println!("ACK {id}");
                    }
                }
            }));
        }
        for client in clients {
            let _ = client.await;
        }
    });
}

struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

fn run_child_and_kill(dir: &Path, round: u64, run_for: Duration) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir)
        .env(CHILD_ROUND, round.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("child starts");
    let stdout = child.stdout.take().unwrap();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let ready = Arc::new(Mutex::new(false));
    let reader = {
        let (acked, ready) = (acked.clone(), ready.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.contains("READY") {
                    *ready.lock().unwrap() = true;
                }
                if let Some(id) = line.split("ACK ").nth(1) {
                    acked.lock().unwrap().push(id.trim().to_string());
                }
            }
        })
    };
    let started = Instant::now();
    while !*ready.lock().unwrap() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the child never got ready"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(run_for);
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    reader.join().unwrap();
    acked.lock().unwrap().clone()
}

fn read_log(dir: &Path) -> Vec<Record> {
    let journal =
        FileJournal::open(dir.join("log"), FileJournalConfig::default()).expect("journal");
    let mut reader = journal.reader();
    let mut records = Vec::new();
    while let Some(entry) = reader.next_entry() {
        let entry = entry.expect("intact entry");
        records.extend(decode_batch(&entry.data, entry.asqn as i64).expect("decodable"));
    }
    records
}

fn dump(store: &dyn Store) -> Vec<(Vec<u8>, Vec<u8>)> {
    store.scan(b"", b"").map(|r| r.unwrap()).collect()
}

#[test]
fn acknowledged_commands_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}");
    let mut random = Xorshift(seed);
    let mut acked_total: HashSet<String> = HashSet::new();
    for round in 0..ROUNDS {
        let run_for = Duration::from_millis(200 + random.next(1200));
        let acked = run_child_and_kill(dir.path(), round, run_for);
        assert!(
            !acked.is_empty(),
            "round {round}: the child acknowledged nothing in {run_for:?}"
        );
        acked_total.extend(acked);

        let records = read_log(dir.path());
        let mut commands: BTreeMap<String, usize> = BTreeMap::new();
        let mut events: BTreeMap<String, usize> = BTreeMap::new();
        for record in &records {
            let Some(id) = message_id(record) else {
                continue;
            };
            match (record.record_type, record.intent) {
                (RecordType::Command, i) if i == MessageIntent::Publish.into() => {
                    *commands.entry(id).or_default() += 1
                }
                (RecordType::Event, i) if i == MessageIntent::Published.into() => {
                    *events.entry(id).or_default() += 1
                }
                _ => {}
            }
        }
        for id in &acked_total {
            assert_eq!(
                commands.get(id),
                Some(&1),
                "round {round} (seed {seed}): acknowledged command {id} is in the log exactly once"
            );
            assert_eq!(
                events.get(id),
                Some(&1),
                "round {round} (seed {seed}): acknowledged {id} was published exactly once"
            );
        }
        assert!(
            commands.values().all(|&n| n == 1),
            "no command is in the log twice"
        );

        // A fresh replay of the whole log...
        let engine = Engine::new(EngineConfig::new(1));
        let fresh = MemStore::new();
        // Opened as a partition opens a new state: marked with its format version.
        beeline_engine::state::format::open(&fresh, Path::new("replayed"), None).unwrap();
        let mut progress = ReplayProgress {
            snapshot_position: -1,
            last_processed_position: -1,
        };
        let writes = engine
            .replay(&fresh, records.iter(), &mut progress)
            .unwrap();
        fresh.write(writes).unwrap();
        let unprocessed_tail = records
            .iter()
            .filter(|r| {
                r.is_command() && !r.processed && r.position > progress.last_processed_position
            })
            .count();

        // ...equals what the partition recovers, once it has also processed the commands the
        // kill left without results.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let opened = Arc::new(Mutex::new(None));
        let handle = {
            let _guard = runtime.enter();
            open_partition(dir.path(), opened.clone())
        };
        runtime.block_on(async { handle.sync().await.unwrap() });
        let store = opened.lock().unwrap().take().unwrap();
        if unprocessed_tail == 0 {
            assert_eq!(
                dump(store.as_ref()),
                fresh.dump(),
                "round {round} (seed {seed}): recovered state equals a fresh replay"
            );
        }
        runtime.block_on(handle.shutdown());
        drop(store);
        // After recovery processed the tail, the log and the state agree again.
        let records = read_log(dir.path());
        let fresh = MemStore::new();
        // Opened as a partition opens a new state: marked with its format version.
        beeline_engine::state::format::open(&fresh, Path::new("replayed"), None).unwrap();
        let mut progress = ReplayProgress {
            snapshot_position: -1,
            last_processed_position: -1,
        };
        let writes = engine
            .replay(&fresh, records.iter(), &mut progress)
            .unwrap();
        fresh.write(writes).unwrap();
        let reopened = Arc::new(Mutex::new(None));
        let handle = {
            let _guard = runtime.enter();
            open_partition(dir.path(), reopened.clone())
        };
        let store = reopened.lock().unwrap().take().unwrap();
        assert_eq!(
            dump(store.as_ref()),
            fresh.dump(),
            "round {round} (seed {seed}): state after reprocessing equals a fresh replay"
        );
        runtime.block_on(handle.shutdown());
        println!(
            "round {round}: killed after {run_for:?}, {} acknowledged so far, {} records in the log, {unprocessed_tail} commands left unprocessed",
            acked_total.len(),
            records.len()
        );
    }
}

fn publish_many(
    runtime: &tokio::runtime::Runtime,
    handle: &PartitionHandle,
    from: u64,
    count: u64,
) {
    runtime.block_on(async {
        let mut clients = tokio::task::JoinSet::new();
        for i in from..from + count {
            let handle = handle.clone();
            let command = Record::command(
                -1,
                MessageIntent::Publish,
                MessageRecord {
                    name: "snap".into(),
                    correlation_key: format!("k{i}"),
                    time_to_live: 3_600_000,
                    message_id: format!("id-{i}"),
                    variables: b"{}".to_vec(),
                    ..Default::default()
                },
            );
            clients.spawn(async move { handle.execute(command).await.expect("answered") });
            if clients.len() >= 64 {
                clients.join_next().await;
            }
        }
        clients.join_all().await;
    });
}

#[test]
fn a_rocksdb_snapshot_restores_the_state_and_compacts_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let opened = Arc::new(Mutex::new(None));
    let handle = {
        let _guard = runtime.enter();
        open_partition(dir.path(), opened.clone())
    };
    publish_many(&runtime, &handle, 0, 20_000);
    let position = runtime
        .block_on(handle.snapshot())
        .unwrap()
        .expect("a snapshot");
    publish_many(&runtime, &handle, 20_000, 500);
    runtime.block_on(handle.sync()).unwrap();
    let before = dump(opened.lock().unwrap().take().unwrap().as_ref());
    runtime.block_on(handle.shutdown());

    let segments = std::fs::read_dir(dir.path().join("log")).unwrap().count();
    let first = read_log(dir.path()).first().map(|r| r.position).unwrap();
    assert!(
        first > 1 && first <= position + 1,
        "the log was compacted up to the snapshot (first position {first}, snapshot {position}, {segments} segments)"
    );

    let reopened = Arc::new(Mutex::new(None));
    let handle = {
        let _guard = runtime.enter();
        open_partition(dir.path(), reopened.clone())
    };
    let after = dump(reopened.lock().unwrap().take().unwrap().as_ref());
    assert_eq!(after, before, "snapshot plus replay restores the state");
    // And the restored state works: the ids before the snapshot are still taken.
    let duplicate = runtime
        .block_on(handle.execute(Record::command(
            -1,
            MessageIntent::Publish,
            MessageRecord {
                name: "snap".into(),
                correlation_key: "k5".into(),
                time_to_live: 1000,
                message_id: "id-5".into(),
                ..Default::default()
            },
        )))
        .unwrap();
    assert_eq!(duplicate.record_type, RecordType::CommandRejection);
    runtime.block_on(handle.shutdown());
}

#[test]
fn a_damaged_snapshot_is_refused_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let handle = {
        let _guard = runtime.enter();
        open_partition(dir.path(), Arc::new(Mutex::new(None)))
    };
    publish_many(&runtime, &handle, 0, 200);
    runtime
        .block_on(handle.snapshot())
        .unwrap()
        .expect("a snapshot");
    runtime.block_on(handle.shutdown());
    let snapshot = SnapshotStore::open(dir.path().join("snapshots"), 2)
        .unwrap()
        .latest()
        .unwrap()
        .unwrap();
    let sst = std::fs::read_dir(snapshot.data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .expect("an SST file in the snapshot");
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[100] ^= 0xFF;
    // Hard links share the bytes: write a new file instead of patching in place.
    std::fs::remove_file(&sst).unwrap();
    std::fs::write(&sst, bytes).unwrap();

    let journal = FileJournal::open(dir.path().join("log"), FileJournalConfig::default()).unwrap();
    let store_config = RocksDbStoreConfig {
        runtime_dir: dir.path().join("runtime"),
        budget: MemoryBudget::new(32 << 20, 1),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let _guard = runtime.enter();
    let error = match Partition::open(
        PartitionConfig::new(1),
        journal,
        SnapshotStore::open(dir.path().join("snapshots"), 2).unwrap(),
        &opener,
        Arc::new(SystemClock),
        None,
    ) {
        Ok(_) => panic!("a damaged snapshot must not be served"),
        Err(e) => e.to_string(),
    };
    assert!(error.contains(&sst.display().to_string()), "{error}");
    assert!(error.contains("offset 0"), "{error}");
}
