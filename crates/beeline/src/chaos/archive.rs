//! The archive of a chaos run: a hard link to every journal segment file the brokers write,
//! taken while they run (every [`SWEEP_EVERY`]). A broker's compaction, a wipe or a repair
//! removes segment files from its replica; the links keep their contents (a hard link shares
//! the file, so what the broker writes to a segment afterwards is in the archive too, until
//! the broker removes it), and the checker reads from them the committed entries that no
//! replica holds any more (`beeline_cluster::check`). Linking costs no space while the broker
//! still has the file; afterwards the archive holds what compaction freed.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::{BROKERS, PARTITIONS, broker_dir};

/// How often the brokers' journals are swept for new segment files. A segment lives from its
/// creation until a snapshot covers it and its log is purged, seconds at the least.
const SWEEP_EVERY: Duration = Duration::from_millis(100);

#[derive(Clone)]
pub struct Archive {
    root: Arc<PathBuf>,
}

/// Stops the sweeping task when dropped.
pub struct Sweeping(tokio::task::JoinHandle<()>);

impl Drop for Sweeping {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Archive {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root: Arc::new(root),
        }
    }

    /// Links every segment file of the brokers under `run` not archived yet, as
    /// `partition-<p>/broker-<n>/<inode>-<segment file name>`: a segment's name comes back
    /// after a wipe or a repair, its inode not while the link holds it.
    pub fn sweep(&self, run: &Path) {
        for node in 0..BROKERS {
            for partition in 1..=PARTITIONS {
                let log = broker_dir(run, node)
                    .join("partitions")
                    .join(partition.to_string())
                    .join("log");
                let Ok(entries) = std::fs::read_dir(&log) else {
                    continue;
                };
                let into = self
                    .root
                    .join(format!("partition-{partition}"))
                    .join(format!("broker-{node}"));
                for entry in entries.filter_map(|e| e.ok()) {
                    let name = entry.file_name();
                    let Some(name) = name.to_str() else { continue };
                    if !(name.starts_with("segment-") && name.ends_with(".log")) {
                        continue;
                    }
                    let Ok(meta) = entry.metadata() else { continue };
                    let target = into.join(format!("{}-{name}", meta.ino()));
                    if target.exists() {
                        continue;
                    }
                    // A file removed meanwhile is simply not linked.
                    let _ = std::fs::create_dir_all(&into)
                        .and_then(|()| std::fs::hard_link(entry.path(), &target));
                }
            }
        }
    }

    /// Sweeps every [`SWEEP_EVERY`] until the returned guard is dropped.
    pub fn keep_sweeping(&self, run: &Path) -> Sweeping {
        let archive = self.clone();
        let run = run.to_path_buf();
        Sweeping(tokio::spawn(async move {
            loop {
                archive.sweep(&run);
                tokio::time::sleep(SWEEP_EVERY).await;
            }
        }))
    }

    /// The archived segment files of each partition.
    pub fn segments(&self, partitions: u16) -> BTreeMap<u16, Vec<PathBuf>> {
        (1..=partitions)
            .map(|partition| {
                let dir = self.root.join(format!("partition-{partition}"));
                let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok())
                    .flat_map(|broker| std::fs::read_dir(broker.path()).into_iter().flatten())
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .collect();
                files.sort();
                (partition, files)
            })
            .collect()
    }
}
