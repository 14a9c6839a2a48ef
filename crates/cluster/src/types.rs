//! The Raft type configuration of a partition, and how a Raft entry maps onto a journal entry.
//!
//! Raft index `i` is journal index `i + 1`: openraft's first entry (the initial membership) has
//! index 0, the journal's first has index 1. The term is the frame's term (standard Raft: one
//! leader per term, so the committed leader id is the term alone); the kind is the frame's
//! kind; a normal entry's data is the batch of records with its asqn, as a single node writes
//! it; a membership entry's data is the membership as JSON.

use std::borrow::Cow;
use std::fmt;
use std::io;

use beeline_log::EntryKind;
use bytes::Bytes;
use openraft::EntryPayload;
use openraft::entry::RaftEntry;
use serde::{Deserialize, Serialize};

openraft::declare_raft_types!(
    /// One partition's Raft group.
    pub TypeConfig:
        D = Batch,
        R = (),
        NodeId = NodeId,
        Node = openraft::impls::BasicNode,
        Term = u64,
        LeaderId = openraft::impls::leader_id_std::LeaderId<u64, NodeId>,
        AsyncRuntime = crate::timers::GridRuntime,
);

/// A broker's id in the cluster (Zeebe's `nodeId`).
pub type NodeId = u64;
pub type Entry = <TypeConfig as openraft::RaftTypeConfig>::Entry;
pub type LogId = openraft::LogId<openraft::vote::leader_id_std::CommittedLeaderId<u64>>;
pub type Vote = openraft::impls::Vote<openraft::impls::leader_id_std::LeaderId<u64, NodeId>>;
pub type Membership = openraft::Membership<NodeId, openraft::impls::BasicNode>;
pub type StoredMembership = openraft::StoredMembership<
    openraft::vote::leader_id_std::CommittedLeaderId<u64>,
    NodeId,
    openraft::impls::BasicNode,
>;
pub type SnapshotMeta = openraft::SnapshotMeta<
    openraft::vote::leader_id_std::CommittedLeaderId<u64>,
    NodeId,
    openraft::impls::BasicNode,
>;

/// What a partition leader proposes: one journal entry's batch of records, with the position
/// of its first record (the journal's asqn).
///
/// The bytes are shared: the log's cache of recent entries hands openraft a clone of an entry
/// for each follower it replicates to and for each apply, and the request to a follower
/// carries the same bytes: once in a batch, they are copied only into the journal and into
/// each request's buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    pub asqn: u64,
    pub data: Bytes,
    /// The journal index the leader's processor wrote the batch for, 0 for none: a batch that
    /// lands elsewhere is void (see [`is_void`]). Not stored: a replica stores what the entry
    /// is, a batch or a void.
    #[serde(default)]
    pub expected_index: u64,
}

impl Batch {
    /// A batch written for no index in particular.
    pub fn new(asqn: u64, data: impl Into<Bytes>) -> Self {
        Self {
            asqn,
            data: data.into(),
            expected_index: 0,
        }
    }
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "batch at {} ({} bytes)", self.asqn, self.data.len())
    }
}

/// The log id of Raft index `index` written in `term`.
pub fn log_id(term: u64, index: u64) -> LogId {
    LogId::new_term_index(term, index)
}

/// The term of a log id.
pub fn term_of(log_id: &LogId) -> u64 {
    log_id.committed_leader_id().term
}

/// Whether `entry` is a batch that landed at another index than the one its leader's
/// processor wrote it for, and so holds no records.
///
/// A leader's processor positions its batches one after another and proposes them in order,
/// several before the first is accepted. openraft refuses a proposal while the leader's lease
/// has run out (a quorum silent for the election timeout) and takes the next one once a
/// quorum answers again, in the same term: the batches after a refused one would land one
/// index early, their records' positions leaving a gap, and they would have been processed
/// on state that holds the refused batch's records, which no replica has. Such an entry is
/// stored as a blank entry by every replica (the index is the one the leader assigned, the
/// same everywhere), and the leader's term ends (`RaftJournal`), so its processor starts
/// again from the committed log.
pub(crate) fn is_void(entry: &Entry) -> bool {
    match &entry.payload {
        EntryPayload::Normal(batch) => {
            batch.expected_index != 0 && batch.expected_index != entry.log_id().index + 1
        }
        EntryPayload::Blank | EntryPayload::Membership(_) => false,
    }
}

/// A Raft entry as the journal stores it: term, kind, asqn (normal entries only) and data.
pub(crate) fn to_journal(entry: &Entry) -> io::Result<(u64, EntryKind, u64, Vec<u8>)> {
    let (term, kind, asqn, data) = journal_parts(entry)?;
    Ok((term, kind, asqn, data.into_owned()))
}

/// [`to_journal`] with a normal entry's batch shared, not copied (for sending it).
pub(crate) fn shared_parts(entry: &Entry) -> io::Result<(u64, EntryKind, u64, Bytes)> {
    let (term, kind, asqn, data) = journal_parts(entry)?;
    let data = match (&entry.payload, kind) {
        (EntryPayload::Normal(batch), EntryKind::Normal) => batch.data.clone(),
        _ => Bytes::from(data.into_owned()),
    };
    Ok((term, kind, asqn, data))
}

/// [`to_journal`] with a normal entry's batch borrowed, for writing it.
pub(crate) fn journal_parts(entry: &Entry) -> io::Result<(u64, EntryKind, u64, Cow<'_, [u8]>)> {
    let term = term_of(&entry.log_id());
    Ok(match &entry.payload {
        EntryPayload::Blank => (term, EntryKind::Blank, 0, Cow::Borrowed(&[])),
        EntryPayload::Normal(_) if is_void(entry) => {
            (term, EntryKind::Blank, 0, Cow::Borrowed(&[]))
        }
        EntryPayload::Normal(batch) => (
            term,
            EntryKind::Normal,
            batch.asqn,
            Cow::Borrowed(&batch.data),
        ),
        EntryPayload::Membership(membership) => {
            let data = serde_json::to_vec(membership).map_err(io::Error::other)?;
            (term, EntryKind::Membership, 0, Cow::Owned(data))
        }
    })
}

/// The Raft entry a journal entry holds.
pub(crate) fn from_journal(entry: beeline_log::Entry) -> io::Result<Entry> {
    from_parts(
        entry.index,
        entry.term,
        entry.kind,
        entry.asqn,
        Bytes::from(entry.data),
    )
}

/// The Raft entry at journal index `index` with these parts (see [`journal_parts`]).
pub(crate) fn from_parts(
    index: u64,
    term: u64,
    kind: EntryKind,
    asqn: u64,
    data: Bytes,
) -> io::Result<Entry> {
    let Some(index) = index.checked_sub(1) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "journal entry 0 does not exist",
        ));
    };
    let log_id = log_id(term, index);
    let payload = match kind {
        EntryKind::Blank => EntryPayload::Blank,
        EntryKind::Normal => EntryPayload::Normal(Batch::new(asqn, data)),
        EntryKind::Membership => {
            let membership: Membership = serde_json::from_slice(&data).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("membership entry {index} is undecodable: {e}"),
                )
            })?;
            EntryPayload::Membership(membership)
        }
    };
    Ok(Entry::new(log_id, payload))
}
