//! openraft's messages to and from the internal API's protobuf messages.

use beeline_log::EntryKind;
use bytes::Bytes;
use openraft::entry::RaftEntry;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, StreamAppendError, StreamAppendResult,
    VoteRequest, VoteResponse,
};

use super::proto;
use crate::types::{
    Entry, LogId, Membership, SnapshotMeta, StoredMembership, TypeConfig, Vote, from_parts, log_id,
    shared_parts, term_of,
};

/// A message that does not hold what it must.
#[derive(Debug, thiserror::Error)]
#[error("malformed internal message: {0}")]
pub struct Malformed(pub String);

fn missing(what: &str) -> Malformed {
    Malformed(format!("{what} is missing"))
}

pub fn vote_to(vote: &Vote) -> proto::Vote {
    let leader = vote.leader_id();
    proto::Vote {
        term: leader.term,
        node_id: leader.voted_for,
        committed: vote.is_committed(),
    }
}

pub fn vote_from(vote: Option<proto::Vote>) -> Result<Vote, Malformed> {
    let vote = vote.ok_or_else(|| missing("the vote"))?;
    Ok(if vote.committed {
        Vote::new_committed(vote.term, vote.node_id)
    } else {
        Vote::new(vote.term, vote.node_id)
    })
}

pub fn log_id_to(id: Option<&LogId>) -> Option<proto::LogId> {
    id.map(|id| proto::LogId {
        term: term_of(id),
        index: id.index,
    })
}

pub fn log_id_from(id: Option<proto::LogId>) -> Option<LogId> {
    id.map(|id| log_id(id.term, id.index))
}

pub fn entry_to(entry: &Entry) -> Result<proto::Entry, Malformed> {
    let (term, kind, asqn, data) = shared_parts(entry).map_err(|e| Malformed(e.to_string()))?;
    Ok(proto::Entry {
        term,
        index: entry.index(),
        kind: u32::from(kind as u8),
        asqn,
        data,
    })
}

pub fn entry_from(entry: proto::Entry) -> Result<Entry, Malformed> {
    let kind = u8::try_from(entry.kind)
        .ok()
        .and_then(EntryKind::from_u8)
        .ok_or_else(|| Malformed(format!("unknown entry kind {}", entry.kind)))?;
    let index = entry
        .index
        .checked_add(1)
        .ok_or_else(|| Malformed("entry index out of range".into()))?;
    // Copied out of the request's buffer: a slice of it kept in the log's cache would keep the
    // whole buffer alive.
    let data = Bytes::copy_from_slice(&entry.data);
    from_parts(index, entry.term, kind, entry.asqn, data).map_err(|e| Malformed(e.to_string()))
}

pub fn append_to(
    partition_id: u32,
    rpc: &AppendEntriesRequest<TypeConfig>,
) -> Result<proto::AppendEntriesRequest, Malformed> {
    Ok(proto::AppendEntriesRequest {
        partition_id,
        vote: Some(vote_to(&rpc.vote)),
        prev_log_id: log_id_to(rpc.prev_log_id.as_ref()),
        entries: rpc.entries.iter().map(entry_to).collect::<Result<_, _>>()?,
        leader_commit: log_id_to(rpc.leader_commit.as_ref()),
        to_node: 0,
    })
}

pub fn append_from(
    rpc: proto::AppendEntriesRequest,
) -> Result<AppendEntriesRequest<TypeConfig>, Malformed> {
    Ok(AppendEntriesRequest {
        vote: vote_from(rpc.vote)?,
        prev_log_id: log_id_from(rpc.prev_log_id),
        entries: rpc
            .entries
            .into_iter()
            .map(entry_from)
            .collect::<Result<_, _>>()?,
        leader_commit: log_id_from(rpc.leader_commit),
    })
}

pub fn append_response_to(
    response: &AppendEntriesResponse<TypeConfig>,
) -> proto::AppendEntriesResponse {
    use proto::append_entries_response::Result as R;
    let result = match response {
        AppendEntriesResponse::Success => R::Success(proto::Empty {}),
        AppendEntriesResponse::PartialSuccess(matching) => {
            R::PartialSuccess(proto::PartialSuccess {
                matching: log_id_to(matching.as_ref()),
            })
        }
        AppendEntriesResponse::Conflict => R::Conflict(proto::Empty {}),
        AppendEntriesResponse::HigherVote(vote) => R::HigherVote(vote_to(vote)),
    };
    proto::AppendEntriesResponse {
        result: Some(result),
    }
}

pub fn append_response_from(
    response: proto::AppendEntriesResponse,
) -> Result<AppendEntriesResponse<TypeConfig>, Malformed> {
    use proto::append_entries_response::Result as R;
    Ok(
        match response.result.ok_or_else(|| missing("the result"))? {
            R::Success(_) => AppendEntriesResponse::Success,
            R::PartialSuccess(partial) => {
                AppendEntriesResponse::PartialSuccess(log_id_from(partial.matching))
            }
            R::Conflict(_) => AppendEntriesResponse::Conflict,
            R::HigherVote(vote) => AppendEntriesResponse::HigherVote(vote_from(Some(vote))?),
        },
    )
}

pub fn stream_result_to(result: &StreamAppendResult<TypeConfig>) -> proto::StreamAppendResponse {
    use proto::stream_append_response::Result as R;
    let result = match result {
        Ok(Some(matching)) => R::Matching(proto::LogId {
            term: term_of(matching),
            index: matching.index,
        }),
        Ok(None) => R::MatchingNone(proto::Empty {}),
        Err(StreamAppendError::Conflict(at)) => R::Conflict(proto::LogId {
            term: term_of(at),
            index: at.index,
        }),
        Err(StreamAppendError::HigherVote(vote)) => R::HigherVote(vote_to(vote)),
    };
    proto::StreamAppendResponse {
        result: Some(result),
    }
}

pub fn stream_result_from(
    response: proto::StreamAppendResponse,
) -> Result<StreamAppendResult<TypeConfig>, Malformed> {
    use proto::stream_append_response::Result as R;
    Ok(
        match response.result.ok_or_else(|| missing("the result"))? {
            R::Matching(id) => Ok(Some(log_id(id.term, id.index))),
            R::MatchingNone(_) => Ok(None),
            R::Conflict(id) => Err(StreamAppendError::Conflict(log_id(id.term, id.index))),
            R::HigherVote(vote) => Err(StreamAppendError::HigherVote(vote_from(Some(vote))?)),
        },
    )
}

pub fn vote_request_to(partition_id: u32, rpc: &VoteRequest<TypeConfig>) -> proto::VoteRequest {
    proto::VoteRequest {
        partition_id,
        vote: Some(vote_to(&rpc.vote)),
        last_log_id: log_id_to(rpc.last_log_id.as_ref()),
        leadership_transfer: rpc.leadership_transfer,
        to_node: 0,
    }
}

pub fn vote_request_from(rpc: proto::VoteRequest) -> Result<VoteRequest<TypeConfig>, Malformed> {
    let mut request = VoteRequest::new(vote_from(rpc.vote)?, log_id_from(rpc.last_log_id));
    request.leadership_transfer = rpc.leadership_transfer;
    Ok(request)
}

pub fn vote_response_to(response: &VoteResponse<TypeConfig>) -> proto::VoteResponse {
    proto::VoteResponse {
        vote: Some(vote_to(&response.vote)),
        vote_granted: response.vote_granted,
        last_log_id: log_id_to(response.last_log_id.as_ref()),
    }
}

pub fn vote_response_from(
    response: proto::VoteResponse,
) -> Result<VoteResponse<TypeConfig>, Malformed> {
    Ok(VoteResponse::new(
        vote_from(response.vote)?,
        log_id_from(response.last_log_id),
        response.vote_granted,
    ))
}

pub fn snapshot_meta_to(meta: &SnapshotMeta) -> Result<proto::SnapshotMeta, Malformed> {
    Ok(proto::SnapshotMeta {
        last_log_id: log_id_to(meta.last_log_id.as_ref()),
        last_membership_log_id: log_id_to(meta.last_membership.log_id().as_ref()),
        membership: serde_json::to_vec(meta.last_membership.membership())
            .map_err(|e| Malformed(e.to_string()))?,
    })
}

pub fn snapshot_meta_from(meta: Option<proto::SnapshotMeta>) -> Result<SnapshotMeta, Malformed> {
    let meta = meta.ok_or_else(|| missing("the snapshot meta"))?;
    let membership: Membership = serde_json::from_slice(&meta.membership)
        .map_err(|e| Malformed(format!("the snapshot's membership: {e}")))?;
    Ok(SnapshotMeta {
        last_log_id: log_id_from(meta.last_log_id),
        last_membership: StoredMembership::new(
            log_id_from(meta.last_membership_log_id),
            membership,
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::types::Batch;

    #[test]
    fn append_requests_and_responses_round_trip() {
        let members = Membership::new_with_defaults(vec![BTreeSet::from([0, 1, 2])], []);
        let rpc = AppendEntriesRequest::<TypeConfig> {
            vote: Vote::new_committed(3, 1),
            prev_log_id: Some(log_id(2, 9)),
            entries: vec![
                Entry::new_blank(log_id(3, 10)),
                Entry::new_membership(log_id(3, 11), members),
                Entry::new_normal(log_id(3, 12), Batch::new(77, b"records".to_vec())),
            ],
            leader_commit: Some(log_id(2, 9)),
        };
        let back = append_from(append_to(1, &rpc).expect("encode")).expect("decode");
        assert_eq!(
            (back.vote, back.prev_log_id, back.leader_commit),
            (rpc.vote, rpc.prev_log_id, rpc.leader_commit)
        );
        assert_eq!(back.entries, rpc.entries);
        for response in [
            AppendEntriesResponse::Success,
            AppendEntriesResponse::PartialSuccess(Some(log_id(3, 10))),
            AppendEntriesResponse::Conflict,
            AppendEntriesResponse::HigherVote(Vote::new(4, 2)),
        ] {
            let back = append_response_from(append_response_to(&response)).expect("decode");
            assert_eq!(back, response);
        }
        let malformed = append_response_from(proto::AppendEntriesResponse { result: None });
        assert!(malformed.is_err());
        for result in [
            Ok(Some(log_id(3, 12))),
            Ok(None),
            Err(StreamAppendError::Conflict(log_id(2, 9))),
            Err(StreamAppendError::HigherVote(Vote::new_committed(4, 2))),
        ] {
            let back = stream_result_from(stream_result_to(&result)).expect("decode");
            assert_eq!(back, result);
        }
        assert!(stream_result_from(proto::StreamAppendResponse { result: None }).is_err());
    }
}
