//! Snapshots: a checkpoint of a store at a log position, with a manifest of per-chunk checksums
//! so a damaged file is found (with its offset) before the partition serves from it.
//!
//! Layout under the snapshot directory:
//! ```text
//! 00000000000000012345/          one snapshot, named by its position
//!   MANIFEST                     position, state format version, files, sizes and chunk
//!                                checksums, own checksum
//!   data/...                     the store's checkpoint
//! .pending-...                   a snapshot being written; removed on open
//! ```
//! A snapshot becomes visible by an atomic rename only after its files and manifest are synced.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::store::Store;
use crate::{Error, Result, STATE_FORMAT_VERSION};

const MANIFEST: &str = "MANIFEST";
const DATA: &str = "data";
const CHUNK: u64 = 1024 * 1024;
const HEADER: &str = "beeline-snapshot 1";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The last log position whose effects the snapshot holds.
    pub position: i64,
    /// The snapshot's directory.
    pub path: PathBuf,
}

impl Snapshot {
    /// The store checkpoint inside the snapshot.
    pub fn data_dir(&self) -> PathBuf {
        self.path.join(DATA)
    }

    /// Every file of the snapshot (its manifest and its checkpoint's files), as paths
    /// relative to its directory, sorted: what a replica receiving it must end up with.
    pub fn files(&self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        collect_files(&self.path, &self.path, &mut names)?;
        names.sort();
        Ok(names)
    }
}

/// A partition's snapshot directory. Clones name the same directory (a replicated
/// partition's follower and leader take turns at it).
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
    retain: usize,
    state_format: Option<u32>,
}

impl SnapshotStore {
    /// Opens the snapshot directory, keeping the newest `retain` snapshots (at least one).
    pub fn open(dir: impl AsRef<Path>, retain: usize) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            if entry.file_name().to_string_lossy().starts_with(".pending-") {
                // An interrupted snapshot: never became visible, so nothing depends on it.
                let path = entry.path();
                std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
            }
        }
        Ok(Self {
            dir,
            retain: retain.max(1),
            state_format: Some(STATE_FORMAT_VERSION),
        })
    }

    /// The directory as it is, to look at while its owner may be writing a snapshot into it
    /// (tests, tools): unlike [`open`](Self::open), which its owner calls, it removes nothing.
    pub fn look(dir: impl AsRef<Path>) -> Self {
        Self {
            dir: dir.as_ref().to_path_buf(),
            retain: 1,
            state_format: Some(STATE_FORMAT_VERSION),
        }
    }

    /// The state format version new manifests name: this build's, or none (as manifests
    /// written before the version was recorded), for tests that build an older snapshot.
    pub fn naming_state_format(mut self, version: Option<u32>) -> Self {
        self.state_format = version;
        self
    }

    /// The state format version `snapshot`'s manifest names, if it names one (manifests
    /// written before the version was recorded do not).
    pub fn state_format(snapshot: &Snapshot) -> Result<Option<u32>> {
        Ok(read_manifest(snapshot)?.state_format)
    }

    /// The snapshot directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every complete snapshot, oldest first.
    pub fn list(&self) -> Result<Vec<Snapshot>> {
        let mut snapshots = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(|e| Error::io(&self.dir, e))? {
            let entry = entry.map_err(|e| Error::io(&self.dir, e))?;
            let name = entry.file_name();
            let Some(position) = name.to_str().and_then(|n| n.parse::<i64>().ok()) else {
                continue;
            };
            if entry.path().join(MANIFEST).exists() {
                snapshots.push(Snapshot {
                    position,
                    path: entry.path(),
                });
            }
        }
        snapshots.sort_by_key(|s| s.position);
        Ok(snapshots)
    }

    pub fn latest(&self) -> Result<Option<Snapshot>> {
        Ok(self.list()?.pop())
    }

    /// Checkpoints `store` as the snapshot at `position`; old snapshots beyond the retention
    /// are removed afterwards.
    pub fn take(&self, position: i64, store: &dyn Store) -> Result<Snapshot> {
        let final_path = self.dir.join(format!("{position:020}"));
        if final_path.join(MANIFEST).exists() {
            return Ok(Snapshot {
                position,
                path: final_path,
            });
        }
        let pending = self.dir.join(format!(".pending-{position:020}"));
        if pending.exists() {
            std::fs::remove_dir_all(&pending).map_err(|e| Error::io(&pending, e))?;
        }
        std::fs::create_dir(&pending).map_err(|e| Error::io(&pending, e))?;
        let data = pending.join(DATA);
        store.checkpoint(&data)?;
        let manifest = build_manifest(position, self.state_format, &data)?;
        let manifest_path = pending.join(MANIFEST);
        std::fs::write(&manifest_path, manifest).map_err(|e| Error::io(&manifest_path, e))?;
        sync_tree(&pending)?;
        std::fs::rename(&pending, &final_path).map_err(|e| Error::io(&final_path, e))?;
        sync_dir(&self.dir)?;
        self.prune()?;
        Ok(Snapshot {
            position,
            path: final_path,
        })
    }

    /// A new, empty directory to receive another replica's snapshot into (laid out as
    /// [`take`](Self::take) leaves one), then [`install`](Self::install)ed. It is invisible
    /// until installed and removed at the next open if it never is.
    pub fn receiving(&self, position: i64) -> Result<PathBuf> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static RECEIVED: AtomicU64 = AtomicU64::new(0);
        let serial = RECEIVED.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!(
            ".pending-received-{position:020}-{}-{serial}",
            std::process::id()
        ));
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        }
        std::fs::create_dir(&path).map_err(|e| Error::io(&path, e))?;
        Ok(path)
    }

    /// Makes a received directory (see [`receiving`](Self::receiving)) the snapshot at
    /// `position`: every file is checked against its manifest, synced, and the directory
    /// renamed into place at once; snapshots beyond the retention go. A damaged one is
    /// refused (and removed) with the file and offset of the damage.
    pub fn install(&self, position: i64, received: &Path) -> Result<Snapshot> {
        let final_path = self.dir.join(format!("{position:020}"));
        let checked = Self::verify(&Snapshot {
            position,
            path: received.to_path_buf(),
        })
        .and_then(|()| sync_tree(received));
        if let Err(error) = checked {
            let _ = std::fs::remove_dir_all(received);
            return Err(error);
        }
        if final_path.join(MANIFEST).exists() {
            // The same snapshot is here already (snapshots are named by their position).
            std::fs::remove_dir_all(received).map_err(|e| Error::io(received, e))?;
        } else {
            if final_path.exists() {
                std::fs::remove_dir_all(&final_path).map_err(|e| Error::io(&final_path, e))?;
            }
            std::fs::rename(received, &final_path).map_err(|e| Error::io(&final_path, e))?;
            sync_dir(&self.dir)?;
        }
        self.prune()?;
        Ok(Snapshot {
            position,
            path: final_path,
        })
    }

    fn prune(&self) -> Result<()> {
        let snapshots = self.list()?;
        let excess = snapshots.len().saturating_sub(self.retain);
        for old in &snapshots[..excess] {
            std::fs::remove_dir_all(&old.path).map_err(|e| Error::io(&old.path, e))?;
            tracing::debug!(position = old.position, "removed old snapshot");
        }
        Ok(())
    }

    /// Checks every file of `snapshot` against its manifest.
    /// A snapshot of a state format newer than this build's is refused: its files may be
    /// readable, its meaning is not.
    pub fn verify(snapshot: &Snapshot) -> Result<()> {
        let manifest_path = snapshot.path.join(MANIFEST);
        let manifest = read_manifest(snapshot)?;
        if let Some(found) = manifest.state_format
            && found > STATE_FORMAT_VERSION
        {
            return Err(Error::Format {
                path: snapshot.path.clone(),
                found,
                expected: STATE_FORMAT_VERSION,
                action: "it was written by a newer Beeline; run that version (or newer) on \
                         this data directory"
                    .into(),
            });
        }
        if manifest.position != snapshot.position {
            return Err(Error::CorruptSnapshot {
                path: manifest_path,
                offset: 0,
                reason: format!(
                    "manifest is for position {}, directory for {}",
                    manifest.position, snapshot.position
                ),
            });
        }
        let data = snapshot.data_dir();
        // The store opens every file there: one the manifest does not vouch for is damage too.
        let mut present = Vec::new();
        collect_files(&data, &data, &mut present)?;
        if let Some(stray) = present
            .iter()
            .find(|name| !manifest.files.iter().any(|file| &file.name == *name))
        {
            return Err(Error::CorruptSnapshot {
                path: data.join(stray),
                offset: 0,
                reason: "a file the manifest does not list".into(),
            });
        }
        for file in manifest.files {
            let path = data.join(&file.name);
            let actual = checksum_chunks(&path)?;
            if actual.size != file.size {
                return Err(Error::CorruptSnapshot {
                    path,
                    offset: actual.size.min(file.size),
                    reason: format!("size is {} bytes, manifest says {}", actual.size, file.size),
                });
            }
            if let Some(chunk) =
                (0..file.chunks.len()).find(|&i| actual.chunks.get(i) != file.chunks.get(i))
            {
                return Err(Error::CorruptSnapshot {
                    path,
                    offset: chunk as u64 * CHUNK,
                    reason: "checksum mismatch in the chunk starting here".into(),
                });
            }
        }
        Ok(())
    }
}

struct FileSum {
    name: String,
    size: u64,
    chunks: Vec<u32>,
}

struct Manifest {
    position: i64,
    state_format: Option<u32>,
    files: Vec<FileSum>,
}

fn read_manifest(snapshot: &Snapshot) -> Result<Manifest> {
    let manifest_path = snapshot.path.join(MANIFEST);
    let text = std::fs::read_to_string(&manifest_path).map_err(|e| Error::io(&manifest_path, e))?;
    parse_manifest(&text).map_err(|(line, reason)| Error::CorruptSnapshot {
        path: manifest_path,
        offset: line,
        reason,
    })
}

struct Checksums {
    size: u64,
    chunks: Vec<u32>,
}

fn checksum_chunks(path: &Path) -> Result<Checksums> {
    let mut file = File::open(path).map_err(|e| Error::CorruptSnapshot {
        path: path.to_path_buf(),
        offset: 0,
        reason: format!("cannot open: {e}"),
    })?;
    let mut buf = vec![0u8; CHUNK as usize];
    let mut sums = Checksums {
        size: 0,
        chunks: Vec::new(),
    };
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            let n = file
                .read(&mut buf[filled..])
                .map_err(|e| Error::io(path, e))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        sums.size += filled as u64;
        sums.chunks.push(crc32c::crc32c(&buf[..filled]));
        if filled < buf.len() {
            break;
        }
    }
    Ok(sums)
}

fn build_manifest(position: i64, state_format: Option<u32>, data: &Path) -> Result<String> {
    let mut names = Vec::new();
    collect_files(data, data, &mut names)?;
    names.sort();
    let mut text = format!("{HEADER}\nposition {position}\n");
    if let Some(version) = state_format {
        text.push_str(&format!("state-format {version}\n"));
    }
    for name in names {
        let sums = checksum_chunks(&data.join(&name))?;
        let chunks: Vec<String> = sums.chunks.iter().map(|c| format!("{c:08x}")).collect();
        text.push_str(&format!("file {name} {} {}\n", sums.size, chunks.join(",")));
    }
    let crc = crc32c::crc32c(text.as_bytes());
    text.push_str(&format!("crc {crc:08x}\n"));
    Ok(text)
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, out)?;
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

/// Parses a manifest; an error carries the line number (as the offset) and the reason.
fn parse_manifest(text: &str) -> Result<Manifest, (u64, String)> {
    let body_end = text
        .rfind("crc ")
        .ok_or((0, "manifest has no checksum line".to_string()))?;
    let (body, crc_line) = text.split_at(body_end);
    let expected = crc_line
        .trim()
        .strip_prefix("crc ")
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or((0, "unreadable manifest checksum".to_string()))?;
    if crc32c::crc32c(body.as_bytes()) != expected {
        return Err((0, "manifest checksum mismatch".into()));
    }
    let mut lines = body.lines().enumerate();
    match lines.next() {
        Some((_, HEADER)) => {}
        _ => return Err((1, "not a Beeline snapshot manifest (version 1)".into())),
    }
    let mut manifest = Manifest {
        position: -1,
        state_format: None,
        files: Vec::new(),
    };
    for (number, line) in lines {
        let bad = |reason: &str| {
            (
                (number + 1) as u64,
                format!("line {}: {reason}", number + 1),
            )
        };
        let mut parts = line.split(' ');
        match parts.next() {
            Some("position") => {
                manifest.position = parts
                    .next()
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| bad("bad position"))?;
            }
            Some("state-format") => {
                manifest.state_format = Some(
                    parts
                        .next()
                        .and_then(|p| p.parse().ok())
                        .ok_or_else(|| bad("bad state format version"))?,
                );
            }
            Some("file") => {
                let name = parts.next().ok_or_else(|| bad("file without name"))?;
                // Names are relative to the snapshot's data: a manifest cannot point outside.
                let inside = Path::new(name)
                    .components()
                    .all(|part| matches!(part, std::path::Component::Normal(_)));
                if name.is_empty() || !inside {
                    return Err(bad("file name outside the snapshot's data"));
                }
                let size = parts
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| bad("bad size"))?;
                let chunks = match parts.next() {
                    None | Some("") => Vec::new(),
                    Some(list) => list
                        .split(',')
                        .map(|c| u32::from_str_radix(c, 16))
                        .collect::<std::result::Result<_, _>>()
                        .map_err(|_| bad("bad checksum"))?,
                };
                manifest.files.push(FileSum {
                    name: name.to_string(),
                    size,
                    chunks,
                });
            }
            _ => return Err(bad("unknown line")),
        }
    }
    Ok(manifest)
}

fn sync_tree(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(&path, e))?;
        }
    }
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemStore, WriteBatch};

    fn store_with(n: u32) -> MemStore {
        let store = MemStore::new();
        let mut batch = WriteBatch::default();
        for i in 0..n {
            batch.put(i.to_be_bytes().to_vec(), vec![i as u8; 100]);
        }
        store.write(batch).unwrap();
        store
    }

    #[test]
    fn snapshots_restore_and_are_retained() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = SnapshotStore::open(dir.path(), 2).unwrap();
        for position in [10, 20, 30] {
            snapshots
                .take(position, &store_with(position as u32))
                .unwrap();
        }
        let positions: Vec<i64> = snapshots
            .list()
            .unwrap()
            .iter()
            .map(|s| s.position)
            .collect();
        assert_eq!(positions, vec![20, 30], "only the newest two are kept");
        let latest = snapshots.latest().unwrap().unwrap();
        SnapshotStore::verify(&latest).unwrap();
        let restored = MemStore::open_checkpoint(&latest.data_dir()).unwrap();
        assert_eq!(restored.dump(), store_with(30).dump());
    }

    #[test]
    fn a_damaged_snapshot_file_is_reported_with_path_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = SnapshotStore::open(dir.path(), 2).unwrap();
        let snapshot = snapshots.take(5, &store_with(50_000)).unwrap();
        let file = snapshot.data_dir().join("state.mem");
        let mut bytes = std::fs::read(&file).unwrap();
        let at = (CHUNK + 12345) as usize;
        bytes[at] ^= 0x20;
        std::fs::write(&file, bytes).unwrap();
        match SnapshotStore::verify(&snapshot) {
            Err(Error::CorruptSnapshot { path, offset, .. }) => {
                assert_eq!(path, file);
                assert_eq!(offset, CHUNK, "the damaged chunk's start");
            }
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    /// Rewrites the snapshot's manifest with `edit` applied to its body, checksum made right.
    fn rewrite_manifest(snapshot: &Snapshot, edit: impl Fn(&str) -> String) {
        let path = snapshot.path.join(MANIFEST);
        let text = std::fs::read_to_string(&path).unwrap();
        let body = edit(&text[..text.rfind("crc ").unwrap()]);
        let crc = crc32c::crc32c(body.as_bytes());
        std::fs::write(&path, format!("{body}crc {crc:08x}\n")).unwrap();
    }

    // Found while writing the snapshot fuzz target: a manifest could name files outside the
    // snapshot, which verification then read.
    #[test]
    fn a_manifest_naming_a_file_outside_the_snapshot_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = SnapshotStore::open(dir.path(), 2).unwrap();
        let snapshot = snapshots.take(5, &store_with(10)).unwrap();
        for name in ["../MANIFEST", "/etc/hostname", "data/../../x"] {
            rewrite_manifest(&snapshot, |body| {
                body.replace("file state.mem", &format!("file {name}"))
            });
            match SnapshotStore::verify(&snapshot) {
                Err(Error::CorruptSnapshot { reason, .. }) => {
                    assert!(reason.contains("outside the snapshot"), "{name}: {reason}")
                }
                other => panic!("{name}: expected corruption, got {other:?}"),
            }
            rewrite_manifest(&snapshot, |body| {
                body.replace(&format!("file {name}"), "file state.mem")
            });
        }
        SnapshotStore::verify(&snapshot).unwrap();
    }

    // Found while writing the snapshot fuzz target: a file in the data that the manifest does
    // not list passed verification, and the store would have opened it.
    #[test]
    fn a_file_the_manifest_does_not_list_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = SnapshotStore::open(dir.path(), 2).unwrap();
        let snapshot = snapshots.take(5, &store_with(10)).unwrap();
        let stray = snapshot.data_dir().join("000009.sst");
        std::fs::write(&stray, b"not vouched for").unwrap();
        match SnapshotStore::verify(&snapshot) {
            Err(Error::CorruptSnapshot { path, reason, .. }) => {
                assert_eq!(path, stray);
                assert!(reason.contains("does not list"), "{reason}");
            }
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    #[test]
    fn a_received_snapshot_is_checked_then_installed_atomically() {
        let source_dir = tempfile::tempdir().unwrap();
        let target_dir = tempfile::tempdir().unwrap();
        let source = SnapshotStore::open(source_dir.path(), 2).unwrap();
        let target = SnapshotStore::open(target_dir.path(), 2).unwrap();
        let taken = source.take(42, &store_with(50)).unwrap();
        let copy = |into: &Path| {
            for name in taken.files().unwrap() {
                let to = into.join(&name);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(taken.path.join(&name), to).unwrap();
            }
        };
        // A damaged copy is refused and leaves nothing behind.
        let received = target.receiving(42).unwrap();
        copy(&received);
        let data = taken
            .files()
            .unwrap()
            .into_iter()
            .find(|f| f != MANIFEST)
            .unwrap();
        std::fs::write(received.join(&data), b"damaged").unwrap();
        assert!(matches!(
            target.install(42, &received),
            Err(Error::CorruptSnapshot { .. })
        ));
        assert!(!received.exists());
        assert_eq!(target.latest().unwrap(), None);
        // A whole copy becomes the latest snapshot, with the same files.
        let received = target.receiving(42).unwrap();
        copy(&received);
        let installed = target.install(42, &received).unwrap();
        assert_eq!(target.latest().unwrap(), Some(installed.clone()));
        assert_eq!(installed.files().unwrap(), taken.files().unwrap());
        SnapshotStore::verify(&installed).unwrap();
        // Receiving dirs never installed are gone at the next open.
        let abandoned = target.receiving(43).unwrap();
        SnapshotStore::open(target_dir.path(), 2).unwrap();
        assert!(!abandoned.exists());
    }

    #[test]
    fn the_manifest_names_the_state_format_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let snapshots = SnapshotStore::open(dir.path(), 2).unwrap();
        let snapshot = snapshots.take(5, &store_with(10)).unwrap();
        assert_eq!(
            SnapshotStore::state_format(&snapshot).unwrap(),
            Some(STATE_FORMAT_VERSION)
        );
        let newer = STATE_FORMAT_VERSION + 1;
        rewrite_manifest(&snapshot, |body| {
            body.replace(
                &format!("state-format {STATE_FORMAT_VERSION}"),
                &format!("state-format {newer}"),
            )
        });
        let error = SnapshotStore::verify(&snapshot).unwrap_err();
        assert!(
            matches!(&error, Error::Format { path, found, expected, .. }
                if *path == snapshot.path && *found == newer && *expected == STATE_FORMAT_VERSION),
            "{error:?}"
        );
        assert!(error.to_string().contains("newer Beeline"), "{error}");

        // A manifest written before the version was recorded names none, and verifies.
        let older = SnapshotStore::open(dir.path(), 2)
            .unwrap()
            .naming_state_format(None)
            .take(6, &store_with(10))
            .unwrap();
        SnapshotStore::verify(&older).unwrap();
        assert_eq!(SnapshotStore::state_format(&older).unwrap(), None);
    }

    #[test]
    fn interrupted_snapshots_are_cleaned_up_and_invisible() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".pending-00000000000000000007")).unwrap();
        let snapshots = SnapshotStore::open(dir.path(), 2).unwrap();
        assert!(snapshots.latest().unwrap().is_none());
        assert!(!dir.path().join(".pending-00000000000000000007").exists());
    }
}
