//! Free-disk watermarks (Zeebe's `data.disk.freeSpace.processing` and `.replication`).
//!
//! - *Processing*: below a minimum of free space on the data directory's file system,
//!   partitions refuse new commands and their schedulers wait, while what is already in the
//!   log is processed, and snapshots and log compaction go on to free space.
//! - *Replication* (a replicated broker): below a lower minimum, the broker takes no more
//!   replicated entries and no snapshots from its partitions' leaders (the internal server
//!   refuses them as unavailable; the leaders retry with their backoff), so the rest of the
//!   disk stays for what the broker already holds; its replicas stay in their groups, and the
//!   others go on without them while a quorum remains.
//!
//! Above a minimum again, service resumes by itself. One [`DiskSpace`] per watermark is
//! shared by the partitions of a node; [`monitor`] measures the file system every interval
//! and updates them all.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

/// How often [`monitor`] measures the free space (Zeebe's `disk.monitoringInterval`).
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// What a watermark keeps free space for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// New commands and timers (`--disk-free-min`).
    Processing,
    /// Entries and snapshots from other brokers (`--disk-free-replication-min`).
    Replication,
}

/// Free space against the minimum one [`Guard`] needs.
#[derive(Debug)]
pub struct DiskSpace {
    guard: Guard,
    min_free: u64,
    free: AtomicU64,
    short: watch::Sender<bool>,
}

impl DiskSpace {
    /// The processing watermark of `min_free` bytes, with the disk taken as free until it
    /// is measured.
    pub fn new(min_free: u64) -> Arc<Self> {
        Self::guarding(Guard::Processing, min_free)
    }

    /// A watermark of `min_free` bytes for `guard`, with the disk taken as free until it is
    /// measured.
    pub fn guarding(guard: Guard, min_free: u64) -> Arc<Self> {
        Arc::new(Self {
            guard,
            min_free,
            free: AtomicU64::new(u64::MAX),
            short: watch::Sender::new(false),
        })
    }

    /// Records a measurement: `free` bytes are available to the node.
    pub fn update(&self, free: u64) {
        self.free.store(free, Ordering::Relaxed);
        let short = free < self.min_free;
        let changed = self.short.send_if_modified(|current| {
            let changed = *current != short;
            *current = short;
            changed
        });
        if !changed {
            return;
        }
        let min_free = self.min_free;
        match (self.guard, short) {
            (Guard::Processing, true) => tracing::warn!(
                free,
                min_free,
                "the disk is full: free space is below the minimum for processing; new commands \
                 are refused until snapshots, compaction or an operator free space"
            ),
            (Guard::Processing, false) => tracing::info!(
                free,
                min_free,
                "free disk space is above the minimum for processing again; accepting commands"
            ),
            (Guard::Replication, true) => tracing::warn!(
                free,
                min_free,
                "the disk is full: free space is below the minimum for replication; this broker \
                 takes no replicated entries or snapshots until snapshots, compaction or an \
                 operator free space"
            ),
            (Guard::Replication, false) => tracing::info!(
                free,
                min_free,
                "free disk space is above the minimum for replication again; taking replicated \
                 entries"
            ),
        }
    }

    /// Whether free space is below the minimum.
    pub fn is_short(&self) -> bool {
        *self.short.borrow()
    }

    /// Bytes free at the last measurement (`u64::MAX` before the first).
    pub fn free(&self) -> u64 {
        self.free.load(Ordering::Relaxed)
    }

    pub fn min_free(&self) -> u64 {
        self.min_free
    }

    pub fn guard(&self) -> Guard {
        self.guard
    }

    /// Changes of [`DiskSpace::is_short`].
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.short.subscribe()
    }
}

/// Bytes available to an unprivileged writer on the file system that holds `path`.
pub fn available_bytes(path: &Path) -> io::Result<u64> {
    let stats = rustix::fs::statvfs(path)?;
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

/// Measures the file system of `dir` every `interval` and updates every watermark of
/// `spaces`, until the task is dropped. A failed measurement is reported and leaves the last
/// one in place.
pub async fn monitor(spaces: Vec<Arc<DiskSpace>>, dir: PathBuf, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        ticks.tick().await;
        let measured = {
            let dir = dir.clone();
            tokio::task::spawn_blocking(move || available_bytes(&dir)).await
        };
        match measured {
            Ok(Ok(free)) => {
                failing = false;
                for space in &spaces {
                    space.update(free);
                }
            }
            Ok(Err(error)) if !failing => {
                failing = true;
                tracing::warn!(dir = %dir.display(), %error, "cannot measure free disk space");
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_below_the_minimum_and_not_again_above_it() {
        let space = DiskSpace::new(1000);
        let mut changes = space.subscribe();
        assert!(!space.is_short(), "free until measured");
        space.update(5000);
        assert!(!space.is_short());
        assert!(!changes.has_changed().unwrap());
        space.update(999);
        assert!(space.is_short());
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        space.update(10);
        assert!(
            !changes.has_changed().unwrap(),
            "no change while it stays short"
        );
        space.update(1000);
        assert!(!space.is_short());
        assert_eq!(space.free(), 1000);
    }

    #[test]
    fn measures_a_real_file_system() {
        let dir = tempfile::tempdir().unwrap();
        assert!(available_bytes(dir.path()).unwrap() > 0);
        assert!(available_bytes(&dir.path().join("missing")).is_err());
    }
}
