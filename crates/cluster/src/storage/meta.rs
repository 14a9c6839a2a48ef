//! Small files beside a partition's journal that Raft needs durable: the vote, the last purged
//! log id, the last committed log id, and the group's current snapshot (which stream snapshot
//! stands for which log id, with the membership it holds).
//!
//! The vote, the purge mark and the snapshot record are each one checksummed record written
//! whole to a temporary file, synced, and renamed over the old one (then the directory is
//! synced), so a crash leaves the old record or the new one, never a mix; each is synced before
//! the call returns (Raft's safety rests on the vote; the purge mark says where a journal
//! emptied by a snapshot continues).
//!
//! The committed id changes with every commit (hundreds of times a second per group under
//! load) and is written without a sync: losing it only delays re-applying committed entries
//! after a restart until the leader says again what is committed. It is overwritten in place,
//! through a file kept open: a new file and a rename per commit cost an inode's creation and
//! deletion each, which took an eighth of three loaded brokers' CPU, on the Raft core's task.
//! One 40-byte write at offset 0 lies within one disk sector; a record that reads back damaged
//! all the same is taken as no record (with a warning), as a lost one is.
//!
//! ```text
//! 0 magic "BEELRAFT"  8 kind u32 (1 vote, 2 purged, 3 committed)  12 format version u32 (1)
//! 16 term u64  24 node id or index u64  32 flags u8 (bit 0: committed vote)  33..36 zero
//! 36 crc32c of bytes 0..36 (u32)
//! ```
//!
//! The snapshot record (`raft-snapshot`) is a line with the crc32c (hex) of the rest, then the
//! snapshot's meta and stream position as JSON; written the same way, synced.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::types::{LogId, SnapshotMeta, Vote, log_id, term_of};

const SNAPSHOT: &str = "raft-snapshot";

/// The group's current snapshot: its meta, and the position of the partition's stream
/// snapshot it stands for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotRecord {
    pub meta: SnapshotMeta,
    pub position: i64,
}

const MAGIC: [u8; 8] = *b"BEELRAFT";
const VERSION: u32 = 1;
const LEN: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Kind {
    Vote = 1,
    Purged = 2,
    Committed = 3,
}

impl Kind {
    fn file_name(self) -> &'static str {
        match self {
            Kind::Vote => "raft-vote",
            Kind::Purged => "raft-purged",
            Kind::Committed => "raft-committed",
        }
    }
}

/// The directory holding a partition's Raft records.
#[derive(Debug, Clone)]
pub struct MetaDir {
    dir: PathBuf,
    /// The committed record's file, open once it was written (clones share it).
    committed: Arc<Mutex<Option<File>>>,
}

impl MetaDir {
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            dir,
            committed: Arc::default(),
        })
    }

    pub fn read_vote(&self) -> io::Result<Option<Vote>> {
        Ok(self.read(Kind::Vote)?.map(|(term, node, flags)| {
            if flags & 1 == 1 {
                Vote::new_committed(term, node)
            } else {
                Vote::new(term, node)
            }
        }))
    }

    pub fn save_vote(&self, vote: &Vote) -> io::Result<()> {
        let leader = vote.leader_id();
        let flags = u8::from(vote.is_committed());
        self.write(Kind::Vote, leader.term, leader.voted_for, flags)
    }

    pub fn read_purged(&self) -> io::Result<Option<LogId>> {
        Ok(self
            .read(Kind::Purged)?
            .map(|(term, index, _)| log_id(term, index)))
    }

    pub fn save_purged(&self, purged: &LogId) -> io::Result<()> {
        self.write(Kind::Purged, term_of(purged), purged.index, 0)
    }

    /// The committed id recorded; a damaged record counts as none (see the module
    /// documentation).
    pub fn read_committed(&self) -> io::Result<Option<LogId>> {
        match self.read(Kind::Committed) {
            Ok(record) => Ok(record.map(|(term, index, _)| log_id(term, index))),
            Err(damage) if damage.kind() == io::ErrorKind::InvalidData => {
                tracing::warn!(%damage, "ignoring the damaged commit record; the leader sends the commit again");
                Ok(None)
            }
            Err(other) => Err(other),
        }
    }

    /// Overwrites the committed record in place, unsynced (see the module documentation).
    pub fn save_committed(&self, committed: Option<&LogId>) -> io::Result<()> {
        let mut file = self.committed.lock().unwrap_or_else(|e| e.into_inner());
        let Some(id) = committed else {
            *file = None;
            return match std::fs::remove_file(self.path(Kind::Committed)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        };
        let record = encode(Kind::Committed, term_of(id), id.index, 0);
        if file.is_none() {
            *file = Some(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(self.path(Kind::Committed))?,
            );
        }
        let written = match file.as_ref() {
            Some(open) => open.write_all_at(&record, 0),
            None => Ok(()),
        };
        if written.is_err() {
            *file = None;
        }
        written
    }

    pub fn read_snapshot(&self) -> io::Result<Option<SnapshotRecord>> {
        let path = self.dir.join(SNAPSHOT);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let damaged = |reason: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is damaged ({reason}); wipe the partition's directory so that it rejoins \
                     from its peers",
                    path.display()
                ),
            )
        };
        let (crc, body) = text
            .split_once('\n')
            .ok_or_else(|| damaged("no checksum line".into()))?;
        if u32::from_str_radix(crc, 16).ok() != Some(crc32c::crc32c(body.as_bytes())) {
            return Err(damaged("checksum mismatch".into()));
        }
        serde_json::from_str(body)
            .map(Some)
            .map_err(|e| damaged(e.to_string()))
    }

    pub fn save_snapshot(&self, record: &SnapshotRecord) -> io::Result<()> {
        let body = serde_json::to_string(record).map_err(io::Error::other)?;
        let text = format!("{:08x}\n{body}", crc32c::crc32c(body.as_bytes()));
        let path = self.dir.join(SNAPSHOT);
        let tmp = path.with_extension("tmp");
        let mut file = File::create(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()?;
        drop(file);
        std::fs::rename(&tmp, &path)?;
        sync_dir(&self.dir)
    }

    fn path(&self, kind: Kind) -> PathBuf {
        self.dir.join(kind.file_name())
    }

    fn read(&self, kind: Kind) -> io::Result<Option<(u64, u64, u8)>> {
        let path = self.path(kind);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        decode(kind, &bytes).map(Some).map_err(|reason| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is damaged ({reason}); this replica cannot vouch for its Raft state: \
                     wipe the partition's directory so that it rejoins from its peers",
                    path.display()
                ),
            )
        })
    }

    /// Forgets everything the records say about the log (purge mark, commit, snapshot),
    /// keeping the vote: for a replica whose log is discarded and fetched again from its
    /// peers (its snapshot is lost or damaged, so the purged prefix cannot be served).
    pub fn forget_log(&self) -> io::Result<()> {
        *self.committed.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let paths = [
            self.path(Kind::Purged),
            self.path(Kind::Committed),
            self.dir.join(SNAPSHOT),
        ];
        for path in paths {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        sync_dir(&self.dir)
    }

    /// Replaces a record whole and durably: a synced temporary file renamed over it.
    fn write(&self, kind: Kind, term: u64, value: u64, flags: u8) -> io::Result<()> {
        let record = encode(kind, term, value, flags);
        let path = self.path(kind);
        let tmp = path.with_extension("tmp");
        let mut file = File::create(&tmp)?;
        file.write_all(&record)?;
        file.sync_data()?;
        drop(file);
        std::fs::rename(&tmp, &path)?;
        sync_dir(&self.dir)
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn encode(kind: Kind, term: u64, value: u64, flags: u8) -> [u8; LEN] {
    let mut buf = [0u8; LEN];
    buf[0..8].copy_from_slice(&MAGIC);
    buf[8..12].copy_from_slice(&(kind as u32).to_le_bytes());
    buf[12..16].copy_from_slice(&VERSION.to_le_bytes());
    buf[16..24].copy_from_slice(&term.to_le_bytes());
    buf[24..32].copy_from_slice(&value.to_le_bytes());
    buf[32] = flags;
    let crc = crc32c::crc32c(&buf[0..36]);
    buf[36..40].copy_from_slice(&crc.to_le_bytes());
    buf
}

fn decode(kind: Kind, buf: &[u8]) -> Result<(u64, u64, u8), String> {
    if buf.len() != LEN {
        return Err(format!("{} bytes instead of {LEN}", buf.len()));
    }
    if buf[0..8] != MAGIC {
        return Err("bad magic".into());
    }
    if u32_at(buf, 36) != crc32c::crc32c(&buf[0..36]) {
        return Err("checksum mismatch".into());
    }
    if u32_at(buf, 8) != kind as u32 {
        return Err(format!("holds record kind {}", u32_at(buf, 8)));
    }
    if u32_at(buf, 12) != VERSION {
        return Err(format!("unknown format version {}", u32_at(buf, 12)));
    }
    Ok((u64_at(buf, 16), u64_at(buf, 24), buf[32]))
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let meta = MetaDir::new(dir.path()).expect("dir");
        assert_eq!(meta.read_vote().expect("read"), None);
        let vote = Vote::new(7, 3);
        meta.save_vote(&vote).expect("save");
        assert_eq!(meta.read_vote().expect("read"), Some(vote));
        let vote = Vote::new_committed(7, 3);
        meta.save_vote(&vote).expect("save");
        assert_eq!(meta.read_vote().expect("read"), Some(vote));
        meta.save_purged(&log_id(4, 99)).expect("save");
        assert_eq!(meta.read_purged().expect("read"), Some(log_id(4, 99)));
        meta.save_committed(Some(&log_id(5, 120))).expect("save");
        assert_eq!(meta.read_committed().expect("read"), Some(log_id(5, 120)));
        meta.save_committed(None).expect("clear");
        assert_eq!(meta.read_committed().expect("read"), None);
        assert_eq!(meta.read_snapshot().expect("read"), None);
        let snapshot = SnapshotRecord {
            meta: SnapshotMeta {
                last_log_id: Some(log_id(5, 118)),
                ..Default::default()
            },
            position: 4242,
        };
        meta.save_snapshot(&snapshot).expect("save");
        assert_eq!(meta.read_snapshot().expect("read"), Some(snapshot));

        let path = dir.path().join("raft-vote");
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[17] ^= 1;
        std::fs::write(&path, bytes).expect("damage");
        let refused = meta.read_vote().expect_err("damage is refused");
        assert!(refused.to_string().contains("checksum"), "{refused}");
        assert!(
            refused.to_string().contains("wipe the partition"),
            "{refused}"
        );
    }

    #[test]
    fn the_commit_record_is_overwritten_in_place_and_a_damaged_one_counts_as_none() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let meta = MetaDir::new(dir.path()).expect("dir");
        let path = dir.path().join("raft-committed");
        meta.save_committed(Some(&log_id(1, 1))).expect("save");
        let inode = std::fs::metadata(&path).expect("written").ino();
        for index in 2..100 {
            meta.save_committed(Some(&log_id(2, index))).expect("save");
        }
        assert_eq!(std::fs::metadata(&path).expect("there").ino(), inode);
        assert_eq!(meta.read_committed().expect("read"), Some(log_id(2, 99)));
        // A second handle on the directory (a restarted replica) reads what the first wrote.
        let again = MetaDir::new(dir.path()).expect("dir");
        assert_eq!(again.read_committed().expect("read"), Some(log_id(2, 99)));

        let mut bytes = std::fs::read(&path).expect("read");
        bytes[25] ^= 1;
        std::fs::write(&path, bytes).expect("damage");
        assert_eq!(
            meta.read_committed()
                .expect("a damaged record is no record"),
            None
        );
        meta.save_committed(Some(&log_id(2, 100))).expect("save");
        assert_eq!(meta.read_committed().expect("read"), Some(log_id(2, 100)));

        meta.forget_log().expect("forget");
        assert_eq!(meta.read_committed().expect("read"), None);
        meta.save_committed(Some(&log_id(3, 5)))
            .expect("save after forgetting");
        assert_eq!(again.read_committed().expect("read"), Some(log_id(3, 5)));
    }
}
