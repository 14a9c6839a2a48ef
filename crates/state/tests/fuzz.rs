//! Snapshot files under the fuzzing harness (`beeline-fuzz`): a snapshot's manifest and its
//! store checkpoint (`fuzz/seeds/snapshot`: snapshots the snapshot store took), mutated, then
//! listed, verified against the manifest and, when verified, opened. Damage must be an error
//! naming the file, never a panic, and a snapshot that verifies against the manifest its
//! store wrote must open.
//!
//! An input is a mode byte, the manifest, [`SEPARATOR`] and the checkpoint. The mode's bit 0
//! makes the manifest's own checksum right again and bit 1 its entry for the checkpoint, so
//! that mutations reach the checks past them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;

use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store, WriteBatch};

const SEPARATOR: &[u8] = b"\0--checkpoint--\0";
const POSITION: i64 = 42;
const CHECKPOINT: &str = "state.mem";

fn split(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&mode, rest) = input.split_first()?;
    let at = rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR)?;
    Some((mode, &rest[..at], &rest[at + SEPARATOR.len()..]))
}

/// The manifest with its entry for the checkpoint describing `checkpoint` (bit 1) and its
/// checksum line recomputed (bit 0).
fn fix(mode: u8, manifest: &[u8], checkpoint: &[u8]) -> Vec<u8> {
    let mut text = String::from_utf8_lossy(manifest).into_owned();
    if mode & 2 != 0 {
        let entry = format!(
            "file {CHECKPOINT} {} {:08x}",
            checkpoint.len(),
            crc32c::crc32c(checkpoint)
        );
        text = text
            .lines()
            .map(|line| {
                if line.starts_with(&format!("file {CHECKPOINT} ")) {
                    entry.clone()
                } else {
                    line.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        text.push('\n');
    }
    if mode & 1 != 0 {
        let body = text.rfind("crc ").map_or(text.as_str(), |at| &text[..at]);
        let body = body.to_owned();
        text = format!("{body}crc {:08x}\n", crc32c::crc32c(body.as_bytes()));
    }
    text.into_bytes()
}

fn clear(dir: &Path) {
    if dir.exists() {
        std::fs::remove_dir_all(dir).expect("removes the snapshot directory");
    }
}

#[test]
fn fuzz_snapshot_files() {
    let root = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory");
    let dir = root.path().join("snapshots");
    beeline_fuzz::fuzz("snapshot", |input| {
        let Some((mode, manifest, checkpoint)) = split(input) else {
            return;
        };
        clear(&dir);
        let snapshot = dir.join(format!("{POSITION:020}"));
        std::fs::create_dir_all(snapshot.join("data")).expect("creates the snapshot");
        std::fs::write(snapshot.join("MANIFEST"), fix(mode, manifest, checkpoint))
            .expect("writes the manifest");
        std::fs::write(snapshot.join("data").join(CHECKPOINT), checkpoint)
            .expect("writes the checkpoint");
        let store = SnapshotStore::open(&dir, 2).expect("opens the snapshot directory");
        let Some(latest) = store.latest().expect("lists the snapshots") else {
            return;
        };
        if let Err(error) = SnapshotStore::verify(&latest) {
            assert!(
                error.to_string().contains(&*latest.path.to_string_lossy()),
                "the error does not name the snapshot's files: {error}"
            );
            return;
        }
        match MemStore::open_checkpoint(&latest.data_dir()) {
            Ok(store) => {
                for entry in store.scan(b"", b"") {
                    entry.expect("a verified snapshot's entries read");
                }
            }
            // The manifest was made to vouch for a damaged checkpoint: opening finds it.
            Err(error) if mode & 2 != 0 => assert!(
                error.to_string().contains(CHECKPOINT),
                "the error does not name the checkpoint: {error}"
            ),
            Err(error) => panic!("a verified snapshot does not open: {error}"),
        }
    });
}

/// Writes `fuzz/seeds/snapshot`: snapshots of small stores as the snapshot store takes them.
#[test]
#[ignore = "writes the seed corpus: cargo test -p beeline-state --test fuzz -- --ignored"]
fn write_the_snapshot_seeds() {
    let out = beeline_fuzz::root().join("seeds/snapshot");
    std::fs::create_dir_all(&out).expect("creates the seed directory");
    for (name, entries) in [("empty", 0u32), ("small", 3), ("larger", 200)] {
        let root = tempfile::tempdir().expect("a temporary directory");
        let store = MemStore::new();
        let mut batch = WriteBatch::default();
        for i in 0..entries {
            batch.put(
                [&[(i % 7) as u8][..], &i.to_be_bytes()].concat(),
                format!("value {i}")
                    .repeat((i % 5) as usize + 1)
                    .into_bytes(),
            );
        }
        store.write(batch).expect("writes");
        let snapshots = SnapshotStore::open(root.path(), 1).expect("opens");
        let snapshot = snapshots.take(POSITION, &store).expect("takes a snapshot");
        let mut seed = vec![3u8];
        seed.extend(std::fs::read(snapshot.path.join("MANIFEST")).expect("reads the manifest"));
        seed.extend_from_slice(SEPARATOR);
        seed.extend(std::fs::read(snapshot.data_dir().join(CHECKPOINT)).expect("reads"));
        std::fs::write(out.join(name), seed).expect("writes a seed");
    }
}
