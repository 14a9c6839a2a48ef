//! A full disk, on a small file system of the test's own (tmpfs in a mount namespace):
//! below the free-space watermark new commands are refused with a clear error while a
//! snapshot and compaction free space, and service resumes by itself; without the watermark,
//! running out of space while appending stops the partition without corrupting its log, and
//! after space is freed it recovers every acknowledged command exactly once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use beeline_log::{FileJournal, FileJournalConfig};
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_protocol::{Record, RecordType};
use beeline_rocksdb::{MemoryBudget, RocksDbStoreConfig, open_partition_store};
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use beeline_stream::disk::{self, DiskSpace};
use beeline_stream::{
    Partition, PartitionConfig, PartitionError, PartitionHandle, PartitionStatus, SystemClock,
};

use super::{message_id, read_log};

const CHILD_DIR: &str = "BEELINE_DISK_CHILD_DIR";
/// The file system's size, and the free space processing needs on it.
const FS_SIZE_MIB: u64 = 48;
const MIN_FREE: u64 = 16 << 20;
const PAYLOAD: usize = 4 << 10;

fn open(dir: &Path, disk: Option<Arc<DiskSpace>>) -> PartitionHandle {
    let journal = FileJournal::open(
        dir.join("log"),
        FileJournalConfig {
            segment_size: 1 << 20,
            max_entry_size: 256 << 10,
            ..FileJournalConfig::default()
        },
    )
    .expect("the journal opens");
    let store_config = RocksDbStoreConfig {
        runtime_dir: dir.join("runtime"),
        budget: MemoryBudget::new(16 << 20, 1),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let mut config = PartitionConfig::new(1);
    config.snapshot_period = None;
    config.max_batch_bytes = 256 << 10;
    config.disk = disk;
    Partition::open(
        config,
        journal,
        SnapshotStore::open(dir.join("snapshots"), 2).expect("snapshots"),
        &opener,
        Arc::new(SystemClock),
        None,
    )
    .expect("the partition recovers")
}

fn publish(id: &str) -> Record {
    Record::command(
        -1,
        MessageIntent::Publish,
        MessageRecord {
            name: "disk".into(),
            correlation_key: id.into(),
            // Nothing stays in state: the log is what fills the disk.
            time_to_live: 0,
            message_id: id.into(),
            variables: format!(r#"{{"pad":"{}"}}"#, "x".repeat(PAYLOAD)).into_bytes(),
            ..Default::default()
        },
    )
}

/// Fills `dir`'s file system with a file of its own until `leave` bytes are free.
fn fill(dir: &Path, leave: u64) {
    let free = disk::available_bytes(dir).expect("free space");
    let filler = dir.join("filler");
    let mut len = std::fs::metadata(&filler).map_or(0, |m| m.len());
    len += free.saturating_sub(leave);
    std::fs::write(&filler, vec![0u8; len as usize]).expect("the filler is written");
}

/// Child side, inside its mount namespace on a tmpfs of its own.
#[test]
fn disk_full_child() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return; // only meaningful when started by the parent test
    };
    let dir = PathBuf::from(dir);
    let stats = file_system_size(&dir);
    assert!(
        stats <= (FS_SIZE_MIB + 1) << 20,
        "{} is not the small file system the test mounted ({stats} bytes)",
        dir.display()
    );
    println!("MOUNTED {stats}");
    let data = dir.join("partition");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut acked: Vec<String> = Vec::new();

    // 1. The watermark.
    let space = DiskSpace::new(MIN_FREE);
    let handle = {
        let _guard = runtime.enter();
        tokio::spawn(disk::monitor(
            vec![space.clone()],
            dir.clone(),
            Duration::from_millis(20),
        ));
        open(&data, Some(space.clone()))
    };
    fill(&dir, MIN_FREE + (3 << 20));
    let refused = runtime.block_on(async {
        for i in 0.. {
            let id = format!("w{i}");
            match handle.execute(publish(&id)).await {
                Ok(answer) => {
                    assert_eq!(answer.intent, MessageIntent::Published.into());
                    acked.push(id);
                }
                Err(error @ PartitionError::DiskFull { .. }) => return error,
                Err(other) => panic!("expected the disk-full refusal, got {other:?}"),
            }
            assert!(i < 100_000, "never refused");
        }
        unreachable!()
    });
    println!("REFUSED after {} commands: {refused}", acked.len());
    assert!(space.is_short());
    // A snapshot and compaction free the log below it; the partition takes commands again
    // without anyone's help.
    let short_at = Instant::now();
    let resumed = runtime.block_on(async {
        loop {
            let id = format!("r{}", acked.len());
            match handle.execute(publish(&id)).await {
                Ok(_) => {
                    acked.push(id);
                    return short_at.elapsed();
                }
                Err(PartitionError::DiskFull { .. }) => {}
                Err(other) => panic!("expected the disk-full refusal, got {other:?}"),
            }
            assert!(
                short_at.elapsed() < Duration::from_secs(30),
                "service did not resume; {} bytes free",
                space.free()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let snapshots = std::fs::read_dir(data.join("snapshots")).unwrap().count();
    assert!(snapshots >= 1, "a snapshot was taken");
    println!(
        "RESUMED after {} ms, {} bytes free, {snapshots} snapshot(s)",
        resumed.as_millis(),
        space.free()
    );
    runtime.block_on(handle.shutdown());

    // 2. No watermark: appending runs out of space.
    let handle = {
        let _guard = runtime.enter();
        open(&data, None)
    };
    fill(&dir, 256 << 10);
    let failure = runtime.block_on(async {
        for i in 0.. {
            let id = format!("f{i}");
            match handle.execute(publish(&id)).await {
                Ok(_) => acked.push(id),
                Err(error) => return error,
            }
            assert!(i < 100_000, "never ran out of space");
        }
        unreachable!()
    });
    let status = handle.status();
    println!(
        "OUT OF SPACE after {} commands: {failure}; {status:?}",
        acked.len()
    );
    runtime.block_on(handle.shutdown());
    drop(handle);

    // Space freed, the partition recovers every acknowledged command exactly once.
    std::fs::remove_file(dir.join("filler")).unwrap();
    let handle = {
        let _guard = runtime.enter();
        open(&data, None)
    };
    let after = runtime
        .block_on(handle.execute(publish("after")))
        .expect("commands are taken after recovery");
    assert_eq!(after.intent, MessageIntent::Published.into());
    runtime.block_on(handle.shutdown());
    let mut published: BTreeMap<String, usize> = BTreeMap::new();
    for record in read_log(&data) {
        if record.record_type == RecordType::Event
            && record.intent == MessageIntent::Published.into()
            && let Some(id) = message_id(&record)
        {
            *published.entry(id).or_default() += 1;
        }
    }
    // The log was compacted: what the snapshot covers is no longer in it.
    let first_kept = acked
        .iter()
        .position(|id| published.contains_key(id))
        .expect("acknowledged commands in the log");
    for id in &acked[first_kept..] {
        assert_eq!(
            published.get(id),
            Some(&1),
            "acknowledged {id} is in the log exactly once"
        );
    }
    assert!(published.values().all(|&n| n == 1), "nothing twice");
    assert!(
        matches!(status, PartitionStatus::Failed(_))
            || matches!(failure, PartitionError::Unavailable { .. }),
        "out of space is reported"
    );
    println!(
        "RECOVERED {} acknowledged, the last {} checked in the log",
        acked.len(),
        acked.len() - first_kept
    );
}

fn file_system_size(dir: &Path) -> u64 {
    let output = Command::new("df")
        .args(["--block-size=1", "--output=size"])
        .arg(dir)
        .output()
        .expect("df runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df prints a size")
}

#[test]
fn a_full_disk_refuses_commands_resumes_by_itself_and_never_corrupts_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("fs");
    std::fs::create_dir(&mount).unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "mount -t tmpfs -o size={FS_SIZE_MIB}m beeline-disk-test \"$0\" && exec \"$1\" --exact \
         disk_full::disk_full_child --nocapture --test-threads=1"
    );
    let mut command = Command::new("unshare");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        command.args(["--user", "--map-root-user"]);
    }
    let output = command
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .arg(&mount)
        .arg(&exe)
        .env(CHILD_DIR, &mount)
        .output()
        .expect("unshare runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stdout.contains("MOUNTED") {
        let denied = ["unshare", "mount", "permission", "not permitted"]
            .iter()
            .any(|word| stderr.to_lowercase().contains(word));
        assert!(
            denied,
            "the child failed before mounting:\n{stdout}\n{stderr}"
        );
        eprintln!(
            "SKIPPED: this machine lets the test mount no file system of its own (needs root \
             or user namespaces):\n{stderr}"
        );
        return;
    }
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for line in stdout.lines().filter(|l| {
        ["REFUSED", "RESUMED", "OUT OF SPACE", "RECOVERED"]
            .iter()
            .any(|p| l.starts_with(p))
    }) {
        println!("{line}");
    }
    for phase in ["REFUSED", "RESUMED", "OUT OF SPACE", "RECOVERED"] {
        assert!(stdout.contains(phase), "no {phase} in:\n{stdout}\n{stderr}");
    }
}
