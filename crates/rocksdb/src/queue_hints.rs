//! Where the live entries of a queue-like prefix begin.
//!
//! Queues and due-date indexes (activatable jobs of a type, job deadlines, timer due dates)
//! are consumed from the front: every activation or trigger deletes the entry with the lowest
//! key. RocksDB keeps those deletes as tombstones until compaction, and an iterator seeking to
//! the front of the prefix steps over every one of them. Under load that made the scan for
//! activatable jobs the largest single cost of processing (a fifth of the partition's CPU at
//! 1,000 instances per second).
//!
//! So the store remembers, per queue prefix, a key below which it holds no live entry, and
//! seeks there. The hint only ever describes committed state: it is learned from a scan of
//! the store (the first live key found) and lowered by every committed put below it. A hint
//! is an optimisation: without one (after a restart, or once forgotten), a scan starts at the
//! front as before.

use std::collections::{BTreeSet, HashMap};

/// Hints kept at most; beyond, all are forgotten (they are relearned by the next scans).
const MAX_HINTS: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct QueueHints {
    /// Queue prefix → a key such that no live entry of the prefix lies below it.
    hints: HashMap<Vec<u8>, Vec<u8>>,
    /// The lengths of the prefixes in `hints`, to find the hints a written key falls under.
    prefix_lengths: BTreeSet<usize>,
    /// Counts committed writes, so a scan learns nothing if a write came between the moment
    /// its iterator was created and the moment it reports what it found.
    generation: u64,
}

/// Where a queue scan seeks, and whether what it finds may become the prefix's hint.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct QueueSeek {
    pub from: Vec<u8>,
    /// The generation to hand back to [`QueueHints::learned`]; `None` when the scan started
    /// above the known front (a `start` past the hint), so it learns nothing of the front.
    pub learns: Option<u64>,
}

impl QueueHints {
    /// Where a scan of `prefix` from `start` should seek.
    pub fn seek(&self, prefix: &[u8], start: &[u8]) -> QueueSeek {
        let front = self.hints.get(prefix).map_or(prefix, Vec::as_slice);
        if start <= front {
            QueueSeek {
                from: front.to_vec(),
                learns: Some(self.generation),
            }
        } else {
            QueueSeek {
                from: start.to_vec(),
                learns: None,
            }
        }
    }

    /// A scan that began at the front found `first` as its first live entry (`None`: the
    /// prefix holds no live entry, and `end` is the end of the prefix).
    pub fn learned(&mut self, prefix: &[u8], generation: u64, first: Option<&[u8]>, end: &[u8]) {
        if generation != self.generation {
            return;
        }
        if self.hints.len() >= MAX_HINTS && !self.hints.contains_key(prefix) {
            self.hints.clear();
            self.prefix_lengths.clear();
        }
        self.prefix_lengths.insert(prefix.len());
        self.hints
            .insert(prefix.to_vec(), first.unwrap_or(end).to_vec());
    }

    /// A batch was committed: a put below a hint lowers it.
    pub fn wrote<'a>(&mut self, puts: impl Iterator<Item = &'a [u8]>) {
        self.generation += 1;
        if self.hints.is_empty() {
            return;
        }
        for key in puts {
            for &len in &self.prefix_lengths {
                let Some(prefix) = key.get(..len) else { break };
                if let Some(hint) = self.hints.get_mut(prefix)
                    && key < hint.as_slice()
                {
                    *hint = key.to_vec();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_hint_a_scan_starts_where_it_was_asked() {
        let hints = QueueHints::default();
        assert_eq!(
            hints.seek(b"q", b"q"),
            QueueSeek {
                from: b"q".to_vec(),
                learns: Some(0)
            }
        );
        assert_eq!(hints.seek(b"q", b"q5").learns, None);
    }

    #[test]
    fn a_learned_front_is_where_the_next_scan_seeks() {
        let mut hints = QueueHints::default();
        hints.learned(b"q", 0, Some(b"q7"), b"r");
        assert_eq!(hints.seek(b"q", b"q").from, b"q7");
        // A start inside the dead front seeks at the front too; one past it, at itself.
        assert_eq!(hints.seek(b"q", b"q3").from, b"q7");
        assert_eq!(hints.seek(b"q", b"q9").from, b"q9");
        assert_eq!(hints.seek(b"q", b"q9").learns, None);
        // An empty queue: the next scan seeks at its end.
        hints.learned(b"p", 0, None, b"q");
        assert_eq!(hints.seek(b"p", b"p").from, b"q");
    }

    #[test]
    fn a_put_below_the_front_lowers_it_and_others_leave_it() {
        let mut hints = QueueHints::default();
        hints.learned(b"q", 0, Some(b"q7"), b"r");
        hints.learned(b"qq", 0, Some(b"qq9"), b"qr");
        hints.wrote([b"q8".as_slice(), b"p1", b"r0"].into_iter());
        assert_eq!(hints.seek(b"q", b"q").from, b"q7");
        hints.wrote([b"q3".as_slice()].into_iter());
        assert_eq!(hints.seek(b"q", b"q").from, b"q3");
        // A key under two hinted prefixes lowers both.
        hints.wrote([b"qq1".as_slice()].into_iter());
        assert_eq!(hints.seek(b"q", b"q").from, b"q3");
        assert_eq!(hints.seek(b"qq", b"qq").from, b"qq1");
    }

    #[test]
    fn a_scan_overtaken_by_a_write_learns_nothing() {
        let mut hints = QueueHints::default();
        let seek = hints.seek(b"q", b"q");
        hints.wrote([b"q1".as_slice()].into_iter());
        hints.learned(b"q", seek.learns.unwrap(), Some(b"q7"), b"r");
        assert_eq!(hints.seek(b"q", b"q").from, b"q");
    }

    #[test]
    fn hints_stay_bounded() {
        let mut hints = QueueHints::default();
        for i in 0..MAX_HINTS + 10 {
            let prefix = format!("p{i}").into_bytes();
            hints.learned(&prefix, 0, None, b"z");
        }
        assert!(hints.hints.len() <= MAX_HINTS);
    }
}
