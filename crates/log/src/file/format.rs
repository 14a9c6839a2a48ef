//! On-disk layout of a segment. Little endian throughout; every frame starts 8-byte aligned.
//!
//! ```text
//! segment header (64 bytes)
//!   0  magic "BEELJNL\0"   8  format version u32   12 reserved u32
//!   16 segment id u64      24 first index u64      32 segment size u64
//!   40 crc32c of bytes 0..40 (u32)                  44..64 zero
//! frame, version 2 (40-byte header, then data, then zero padding to a multiple of 8)
//!   0  data length u32 (0 for entries without data: blank and some membership entries)
//!   4  crc32c over (length, index, asqn, term, kind, data)
//!   8  index u64           16 asqn u64              24 term u64
//!   32 kind u8 (0 normal, 1 blank, 2 membership)    33..40 zero
//! frame, version 1 (24-byte header): length, crc32c over (length, index, asqn, data), index,
//!   asqn; read as a normal entry of term 0
//! ```
//! Segments are preallocated, so the unwritten rest of a segment reads as zeros. The version is
//! per segment: a journal written by a version-1 build opens as it is and its next appends go
//! to a new version-2 segment, so no data directory needs converting.
//!
//!
//! The end of the written part is a frame header with index 0 and length 0 (version 1: length
//! 0). Indices start at 1, so no frame is ever taken for it.

pub const MAGIC: [u8; 8] = *b"BEELJNL\0";
/// The version new segments are written in. Readers refuse versions they do not know.
pub const FORMAT_VERSION: u32 = 2;
/// The oldest version still read.
pub const OLDEST_READ_VERSION: u32 = 1;
pub const SEGMENT_HEADER_LEN: u64 = 64;
/// The largest frame header of any version read (for size limits).
pub const MAX_FRAME_HEADER_LEN: u64 = 40;

use crate::journal::EntryKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    pub id: u64,
    pub first_index: u64,
    pub size: u64,
    pub version: u32,
}

impl SegmentHeader {
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN as usize] {
        let mut buf = [0u8; SEGMENT_HEADER_LEN as usize];
        buf[0..8].copy_from_slice(&MAGIC);
        buf[8..12].copy_from_slice(&self.version.to_le_bytes());
        buf[16..24].copy_from_slice(&self.id.to_le_bytes());
        buf[24..32].copy_from_slice(&self.first_index.to_le_bytes());
        buf[32..40].copy_from_slice(&self.size.to_le_bytes());
        let crc = crc32c::crc32c(&buf[0..40]);
        buf[40..44].copy_from_slice(&crc.to_le_bytes());
        buf
    }

    pub fn decode(buf: &[u8]) -> Result<Self, String> {
        if buf.len() < SEGMENT_HEADER_LEN as usize {
            return Err("segment header is truncated".into());
        }
        if buf[0..8] != MAGIC {
            return Err("not a Beeline journal segment (bad magic)".into());
        }
        let crc = u32_at(buf, 40);
        if crc != crc32c::crc32c(&buf[0..40]) {
            return Err("segment header checksum mismatch".into());
        }
        let version = u32_at(buf, 8);
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(format!(
                "unknown segment format version {version} (this build reads versions \
                 {OLDEST_READ_VERSION} to {FORMAT_VERSION}): the data directory was written by a \
                 newer Beeline; run that version, or move the directory away to start empty"
            ));
        }
        Ok(Self {
            id: u64_at(buf, 16),
            first_index: u64_at(buf, 24),
            size: u64_at(buf, 32),
            version,
        })
    }
}

/// The length of a frame header in a segment of `version`.
pub fn frame_header_len(version: u32) -> u64 {
    if version == 1 { 24 } else { 40 }
}

/// The length a frame with `data_len` bytes of data occupies in a segment of `version`,
/// padding included.
pub fn frame_len(version: u32, data_len: usize) -> u64 {
    (frame_header_len(version) + data_len as u64).next_multiple_of(8)
}

/// What a frame says about its entry, besides the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameMeta {
    pub index: u64,
    pub asqn: u64,
    pub term: u64,
    pub kind: EntryKind,
}

fn checksum(version: u32, len: u32, meta: &FrameMeta, data: &[u8]) -> u32 {
    let mut head = [0u8; 29];
    head[0..4].copy_from_slice(&len.to_le_bytes());
    head[4..12].copy_from_slice(&meta.index.to_le_bytes());
    head[12..20].copy_from_slice(&meta.asqn.to_le_bytes());
    let covered = if version == 1 {
        20
    } else {
        head[20..28].copy_from_slice(&meta.term.to_le_bytes());
        head[28] = meta.kind as u8;
        29
    };
    crc32c::crc32c_append(crc32c::crc32c(&head[..covered]), data)
}

/// Appends the frame of an entry to `out` in the current format version, padding included.
pub fn encode_frame(out: &mut Vec<u8>, meta: &FrameMeta, data: &[u8]) {
    let len = data.len() as u32;
    let start = out.len();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&checksum(FORMAT_VERSION, len, meta, data).to_le_bytes());
    out.extend_from_slice(&meta.index.to_le_bytes());
    out.extend_from_slice(&meta.asqn.to_le_bytes());
    out.extend_from_slice(&meta.term.to_le_bytes());
    out.push(meta.kind as u8);
    out.resize(start + frame_header_len(FORMAT_VERSION) as usize, 0);
    out.extend_from_slice(data);
    out.resize(start + frame_len(FORMAT_VERSION, data.len()) as usize, 0);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub version: u32,
    pub len: u32,
    pub crc: u32,
    pub index: u64,
    pub asqn: u64,
    pub term: u64,
    /// The kind byte as written; [`FrameHeader::kind`] decodes it.
    pub kind: u8,
}

impl FrameHeader {
    /// Decodes a header of a segment of `version` from the first
    /// [`frame_header_len`]`(version)` bytes of `buf`.
    pub fn decode(buf: &[u8], version: u32) -> Self {
        let (term, kind) = if version == 1 {
            (0, EntryKind::Normal as u8)
        } else {
            // Reserved bytes that are not zero make the kind unknown, so the frame fails its
            // check like any other damage to its header.
            let reserved_zero = buf[33..40].iter().all(|b| *b == 0);
            (
                u64_at(buf, 24),
                if reserved_zero { buf[32] } else { u8::MAX },
            )
        };
        Self {
            version,
            len: u32_at(buf, 0),
            crc: u32_at(buf, 4),
            index: u64_at(buf, 8),
            asqn: u64_at(buf, 16),
            term,
            kind,
        }
    }

    pub fn is_end_marker(&self) -> bool {
        self.len == 0 && (self.version == 1 || self.index == 0)
    }

    pub fn frame_len(&self) -> u64 {
        frame_len(self.version, self.len as usize)
    }

    /// The entry kind, `None` for a byte no version defines.
    pub fn kind(&self) -> Option<EntryKind> {
        EntryKind::from_u8(self.kind)
    }

    pub fn meta(&self) -> Option<FrameMeta> {
        Some(FrameMeta {
            index: self.index,
            asqn: self.asqn,
            term: self.term,
            kind: self.kind()?,
        })
    }

    pub fn verify(&self, data: &[u8]) -> bool {
        let Some(meta) = self.meta() else {
            return false;
        };
        data.len() == self.len as usize && self.crc == checksum(self.version, self.len, &meta, data)
    }
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(index: u64, asqn: u64, term: u64, kind: EntryKind) -> FrameMeta {
        FrameMeta {
            index,
            asqn,
            term,
            kind,
        }
    }

    #[test]
    fn frame_round_trips_and_detects_any_flipped_bit() {
        for (kind, data) in [
            (EntryKind::Normal, &b"hello journal"[..]),
            (EntryKind::Blank, &b""[..]),
            (EntryKind::Membership, &b"{\"voters\":[1]}"[..]),
        ] {
            let mut buf = Vec::new();
            encode_frame(&mut buf, &meta(7, 42, 3, kind), data);
            assert_eq!(buf.len() as u64, frame_len(FORMAT_VERSION, data.len()));
            assert_eq!(buf.len() % 8, 0);
            let header = FrameHeader::decode(&buf, FORMAT_VERSION);
            assert!(!header.is_end_marker());
            let data_at = frame_header_len(FORMAT_VERSION) as usize;
            assert!(header.verify(&buf[data_at..data_at + header.len as usize]));
            assert_eq!(header.meta(), Some(meta(7, 42, 3, kind)));
            for bit in 0..(data_at + data.len()) * 8 {
                let mut damaged = buf.clone();
                damaged[bit / 8] ^= 1 << (bit % 8);
                let h = FrameHeader::decode(&damaged, FORMAT_VERSION);
                let end = (data_at + h.len as usize).min(damaged.len());
                let ok =
                    h.len as usize <= damaged.len() - data_at && h.verify(&damaged[data_at..end]);
                assert!(!ok, "flipping bit {bit} of a {kind:?} frame went unnoticed");
            }
        }
    }

    #[test]
    fn version_1_frames_read_as_normal_entries_of_term_0() {
        // Written the way a version-1 build wrote them.
        let data = b"old entry";
        let len = data.len() as u32;
        let mut head = Vec::new();
        head.extend_from_slice(&len.to_le_bytes());
        head.extend_from_slice(&9u64.to_le_bytes());
        head.extend_from_slice(&100u64.to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), data);
        let mut buf = Vec::new();
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(&crc.to_le_bytes());
        buf.extend_from_slice(&9u64.to_le_bytes());
        buf.extend_from_slice(&100u64.to_le_bytes());
        buf.extend_from_slice(data);
        let header = FrameHeader::decode(&buf, 1);
        assert!(header.verify(&buf[24..24 + data.len()]));
        assert_eq!(header.meta(), Some(meta(9, 100, 0, EntryKind::Normal)));
        assert_eq!(header.frame_len(), 40);
        assert!(FrameHeader::decode(&[0; 24], 1).is_end_marker());
        assert!(FrameHeader::decode(&[0; 40], 2).is_end_marker());
    }

    #[test]
    fn segment_header_round_trips_and_rejects_damage() {
        let header = SegmentHeader {
            id: 3,
            first_index: 1001,
            size: 1 << 20,
            version: FORMAT_VERSION,
        };
        let buf = header.encode();
        assert_eq!(SegmentHeader::decode(&buf), Ok(header));
        let mut damaged = buf;
        damaged[25] ^= 0x10;
        assert!(SegmentHeader::decode(&damaged).is_err());
        let newer = SegmentHeader {
            version: FORMAT_VERSION + 1,
            ..header
        };
        let refused = SegmentHeader::decode(&newer.encode()).unwrap_err();
        assert!(refused.contains("newer Beeline"), "{refused}");
    }
}
