//! Protobuf encoding into a `Vec<u8>`, the one way Beeline encodes its values (records in the
//! log, state values).
//!
//! prost writes every varint byte with `BufMut::put_u8`, which `Vec<u8>`'s own `BufMut` turns
//! into a one-byte `extend_from_slice`; in the broker's build that is a call to `memmove` per
//! byte (keys and positions take 7-8 bytes each, a record has several). Writing through
//! [`VecWriter`] pushes each byte instead.

use prost::Message;
use prost::bytes::BufMut;
use prost::bytes::buf::UninitSlice;

/// Appends `message` to `out` (which grows as needed: a caller that knows the size reserves it).
pub fn encode_into<M: Message>(message: &M, out: &mut Vec<u8>) {
    message.encode_raw(&mut VecWriter(out));
}

/// `message` in a vector of its own, of exactly its size.
pub fn encode_to_vec<M: Message>(message: &M) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.encoded_len());
    encode_into(message, &mut out);
    out
}

/// A `Vec<u8>` written a byte at a time where prost writes bytes.
struct VecWriter<'a>(&'a mut Vec<u8>);

// SAFETY: every method hands on to `Vec<u8>`'s own implementation, or does what it does (a
// push, an append) through `Vec`'s safe methods.
unsafe impl BufMut for VecWriter<'_> {
    fn remaining_mut(&self) -> usize {
        self.0.remaining_mut()
    }

    unsafe fn advance_mut(&mut self, cnt: usize) {
        // SAFETY: the caller's promise (`cnt` bytes of `chunk_mut` initialised) is passed on.
        unsafe { self.0.advance_mut(cnt) }
    }

    fn chunk_mut(&mut self) -> &mut UninitSlice {
        self.0.chunk_mut()
    }

    #[inline]
    fn put_u8(&mut self, n: u8) {
        self.0.push(n);
    }

    #[inline]
    fn put_slice(&mut self, src: &[u8]) {
        self.0.extend_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{JobRecord, ProcessInstanceRecord};

    #[test]
    fn encodes_as_prost_does() {
        let record = ProcessInstanceRecord {
            bpmn_process_id: "order".into(),
            process_instance_key: 2_251_799_813_685_250,
            flow_scope_key: -1,
            element_id: "ship".into(),
            ..Default::default()
        };
        assert_eq!(encode_to_vec(&record), record.encode_to_vec());
        let job = JobRecord {
            variables: br#"{"a":1}"#.to_vec(),
            custom_headers: [("k".to_string(), "v".to_string())].into(),
            retries: 3,
            deadline: 1_700_000_000_000,
            ..Default::default()
        };
        let mut out = b"prefix".to_vec();
        encode_into(&job, &mut out);
        assert_eq!(&out[..6], b"prefix");
        assert_eq!(out[6..], job.encode_to_vec());
    }
}
