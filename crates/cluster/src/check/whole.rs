//! A partition's whole committed log, put together in a journal of the checker's own from the
//! replicas and the archived segments (see the parent module).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use beeline_log::{Entry, FileJournal, Flusher, Journal, JournalReader, Recovery};

use super::{Counts, JournalShape, Replica, count_entry, hash_entry, open_journal_with};

/// The committed log from its first entry to the highest commit of any replica.
pub(super) struct Whole {
    pub journal: FileJournal,
    /// Each entry holding results (events, rejections): (index, lowest source position,
    /// highest source position), in index order. Commands are processed in log order, so
    /// the source positions do not decrease from one entry to the next.
    pub results: Vec<(u64, i64, i64)>,
    /// The last entry.
    pub last: u64,
    /// Records read.
    pub records: u64,
    /// Entries taken from the archive (below every replica's log).
    pub archived: u64,
}

impl Whole {
    /// The last entry of the log a state at `position` holds. A state's position is the last
    /// command it processed (`LAST_PROCESSED_POSITION`): it holds every result of the commands
    /// to there, and none of later ones (replay after a restore skips results of commands at
    /// or before the position, wherever they are in the log). So it is the entry before the
    /// first one holding a result of a later command.
    pub fn end_of(&self, position: i64) -> u64 {
        let next = self
            .results
            .partition_point(|&(_, _, highest)| highest <= position);
        match self.results.get(next) {
            Some(&(index, _, _)) => index - 1,
            None => self.last,
        }
    }

    /// Whether a state at `position` falls between two entries: no entry holds results of
    /// commands both at or before it and after it.
    pub fn between_entries(&self, position: i64) -> bool {
        let next = self
            .results
            .partition_point(|&(_, _, highest)| highest <= position);
        self.results
            .get(next)
            .is_none_or(|&(_, lowest, _)| lowest > position)
    }

    /// The position of a state holding the log to entry `end`: the highest source position of
    /// its results (-1 before any).
    pub fn position_at(&self, end: u64) -> i64 {
        let after = self.results.partition_point(|&(index, _, _)| index <= end);
        after.checked_sub(1).map_or(-1, |at| self.results[at].2)
    }
}

/// What went wrong while putting the log together: the copies disagree (a finding), or a
/// part of the log is nowhere (a check that cannot be made).
pub(super) enum Gap {
    Disagreement(String),
    Missing(String),
}

/// One archived copy of an entry: its term, its hash and which archived file holds it.
#[derive(Clone, Copy)]
struct Copy {
    term: u64,
    hash: u64,
    file: usize,
}

/// The first index from which the replicas' committed entries reach `top` without a hole.
fn replicas_from(replicas: &[Replica], top: u64) -> u64 {
    let mut from = top + 1;
    loop {
        let reach = replicas
            .iter()
            .filter(|r| r.first <= r.committed && r.first < from && r.committed + 1 >= from)
            .map(|r| r.first)
            .min();
        match reach {
            Some(first) => from = first,
            None => return from,
        }
    }
}

/// The first entry a segment file's header names (bytes 24..32, `beeline_log`'s
/// `file/format.rs`), without reading the rest; `None` if the header cannot be read (the
/// journal's recovery then says why).
fn first_index(file: &Path) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mut bytes = [0u8; 8];
    std::fs::File::open(file)
        .and_then(|f| f.read_exact_at(&mut bytes, 24))
        .ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// Reads the entries `from..=to` of an archived segment file, through a copy of it in
/// `scratch` (opening a journal may cut a torn or damaged tail in place).
fn read_archived(
    file: &Path,
    scratch: &Path,
    shape: JournalShape,
    from: u64,
    to: u64,
    mut each: impl FnMut(Entry) -> Result<(), Gap>,
) -> Result<(), Gap> {
    let unreadable = |e: &dyn std::fmt::Display| {
        Gap::Missing(format!("archived segment {}: {e}", file.display()))
    };
    // Archived as `<inode>-<segment name>`: the journal wants the segment's own name.
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split_once('-'))
        .map(|(_, name)| name.to_string())
        .ok_or_else(|| unreadable(&"not named <inode>-<segment>"))?;
    if first_index(file).is_some_and(|first| first > to) {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(scratch);
    let log = scratch.join("log");
    std::fs::create_dir_all(&log).map_err(|e| unreadable(&e))?;
    std::fs::copy(file, log.join(name)).map_err(|e| unreadable(&e))?;
    let journal =
        open_journal_with(scratch, shape, Recovery::TruncateCorrupt).map_err(|e| unreadable(&e))?;
    journal.commit_index().advance(journal.last_index());
    let mut reader = journal.reader();
    if from.max(journal.first_index()) <= journal.last_index() {
        reader
            .seek(from.max(journal.first_index()))
            .map_err(|e| unreadable(&e))?;
        while let Some(entry) = reader.next_entry() {
            let entry = entry.map_err(|e| unreadable(&e))?;
            if entry.index > to {
                break;
            }
            each(entry)?;
        }
    }
    drop(reader);
    drop(journal);
    let _ = std::fs::remove_dir_all(scratch);
    Ok(())
}

/// Puts partition's committed log together in `scratch/whole`, counting the work it holds.
pub(super) fn assemble(
    replicas: &[Replica],
    archived: &[PathBuf],
    scratch: &Path,
    shape: JournalShape,
    counts: &mut Counts,
) -> Result<Whole, Gap> {
    let top = replicas.iter().map(|r| r.committed).max().unwrap_or(0);
    let from = replicas_from(replicas, top);
    let copy_dir = scratch.join("archived-copy");

    // Below `from`: the archived copies, the committed one the highest term's.
    let mut copies: BTreeMap<u64, Copy> = BTreeMap::new();
    let mut unreadable = Vec::new();
    if from > 1 {
        for (file, path) in archived.iter().enumerate() {
            let read = read_archived(path, &copy_dir, shape, 1, from - 1, |entry| {
                let copy = Copy {
                    term: entry.term,
                    hash: hash_entry(&entry),
                    file,
                };
                match copies.get(&entry.index) {
                    Some(held) if held.term > copy.term => {}
                    Some(held) if held.term == copy.term && held.hash != copy.hash => {
                        return Err(Gap::Disagreement(format!(
                            "two archived copies of entry {} of term {} differ ({} and {})",
                            entry.index,
                            copy.term,
                            archived[held.file].display(),
                            path.display()
                        )));
                    }
                    Some(held) if held.term == copy.term => {}
                    _ => {
                        copies.insert(entry.index, copy);
                    }
                }
                Ok(())
            });
            match read {
                Ok(()) => {}
                Err(Gap::Missing(e)) => unreadable.push(e),
                Err(disagreement) => return Err(disagreement),
            }
        }
        let held = copies.len() as u64;
        if held != from - 1 {
            let missing = (1..from).find(|i| !copies.contains_key(i)).unwrap_or(0);
            return Err(Gap::Missing(format!(
                "committed entries below {from} are held by no replica, and the archive ({} \
                 segment files{}) lacks {} of them, the first {missing}",
                archived.len(),
                if unreadable.is_empty() {
                    String::new()
                } else {
                    format!(", unreadable: {}", unreadable.join("; "))
                },
                from - 1 - held
            )));
        }
    }

    let dir = scratch.join("whole");
    let _ = std::fs::remove_dir_all(&dir);
    let mut whole = Whole {
        journal: open_journal_with(&dir, shape, Recovery::Strict).map_err(Gap::Missing)?,
        results: Vec::new(),
        last: 0,
        records: 0,
        archived: 0,
    };
    let mut last_position = 0i64;
    let mut append = |whole: &mut Whole, entry: Entry| -> Result<(), Gap> {
        let breaks = |e: &dyn std::fmt::Display| {
            Gap::Disagreement(format!(
                "the committed log breaks at entry {}: {e}",
                entry.index
            ))
        };
        let index = whole
            .journal
            .append_entry(entry.term, entry.kind, entry.asqn, &entry.data)
            .map_err(|e| breaks(&e))?;
        if index != entry.index {
            return Err(breaks(&format!("it would be entry {index}")));
        }
        if let Some(held) = count_entry(&entry, counts).map_err(|e| breaks(&e))? {
            if held.first != last_position + 1 {
                return Err(breaks(&format!(
                    "its records start at position {}, after position {last_position}",
                    held.first
                )));
            }
            last_position = held.last;
            whole.records += (held.last - held.first + 1) as u64;
            if let Some((lowest, highest)) = held.sources {
                let before = whole.results.last().map_or(-1, |&(_, _, highest)| highest);
                if lowest < before {
                    return Err(breaks(&format!(
                        "it holds a result of the command at position {lowest}, after results \
                         of the command at {before}: commands are processed in log order"
                    )));
                }
                whole.results.push((index, lowest, highest));
            }
        }
        whole.last = index;
        Ok(())
    };

    // The archived part, a run of entries from the same file at a time.
    let mut index = 1;
    while index < from {
        let file = copies[&index].file;
        let mut to = index;
        while to + 1 < from && copies[&(to + 1)].file == file {
            to += 1;
        }
        read_archived(&archived[file], &copy_dir, shape, index, to, |entry| {
            if entry.index != index || hash_entry(&entry) != copies[&index].hash {
                return Err(Gap::Missing(format!(
                    "{} changed while the checker read it",
                    archived[file].display()
                )));
            }
            append(&mut whole, entry)?;
            whole.archived += 1;
            index += 1;
            Ok(())
        })?;
        if index <= to {
            return Err(Gap::Missing(format!(
                "{} no longer holds entries {index} to {to}",
                archived[file].display()
            )));
        }
    }

    // The replicas' part: from each the committed entries the ones before do not reach.
    while index <= top {
        let Some(replica) = replicas
            .iter()
            .filter(|r| r.first <= index && index <= r.committed)
            .max_by_key(|r| r.committed)
        else {
            return Err(Gap::Missing(format!(
                "no replica holds committed entry {index}"
            )));
        };
        let journal = super::open_journal(&replica.dir, shape).map_err(Gap::Missing)?;
        journal.commit_index().advance(replica.committed);
        let mut reader = journal.reader();
        let unreadable =
            |e: &dyn std::fmt::Display| Gap::Missing(format!("{}: {e}", replica.dir.display()));
        reader.seek(index).map_err(|e| unreadable(&e))?;
        while let Some(entry) = reader.next_entry() {
            let entry = entry.map_err(|e| unreadable(&e))?;
            append(&mut whole, entry)?;
            index += 1;
        }
    }
    whole
        .journal
        .flusher()
        .flush()
        .map_err(|e| Gap::Missing(format!("{}: {e}", dir.display())))?;
    Ok(whole)
}
