//! On-disk layout of a segment. Little endian throughout; every frame starts 8-byte aligned.
//!
//! ```text
//! segment header (64 bytes)
//!   0  magic "BEELJNL\0"   8  format version u32   12 reserved u32
//!   16 segment id u64      24 first index u64      32 segment size u64
//!   40 crc32c of bytes 0..40 (u32)                  44..64 zero
//! frame (24-byte header, then data, then zero padding to a multiple of 8)
//!   0  data length u32 (never 0: a zero length marks the end of the written part)
//!   4  crc32c over (length, index, asqn, data)
//!   8  index u64           16 asqn u64              24 data
//! ```
//! Segments are preallocated, so the unwritten rest of a segment reads as zeros.

pub const MAGIC: [u8; 8] = *b"BEELJNL\0";
/// Bump when the layout changes; readers refuse versions they do not know.
pub const FORMAT_VERSION: u32 = 1;
pub const SEGMENT_HEADER_LEN: u64 = 64;
pub const FRAME_HEADER_LEN: u64 = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    pub id: u64,
    pub first_index: u64,
    pub size: u64,
}

impl SegmentHeader {
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN as usize] {
        let mut buf = [0u8; SEGMENT_HEADER_LEN as usize];
        buf[0..8].copy_from_slice(&MAGIC);
        buf[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
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
        if version != FORMAT_VERSION {
            return Err(format!(
                "unknown segment format version {version} (this build reads {FORMAT_VERSION})"
            ));
        }
        Ok(Self {
            id: u64_at(buf, 16),
            first_index: u64_at(buf, 24),
            size: u64_at(buf, 32),
        })
    }
}

/// The length a frame with `data_len` bytes of data occupies, padding included.
pub fn frame_len(data_len: usize) -> u64 {
    (FRAME_HEADER_LEN + data_len as u64).next_multiple_of(8)
}

fn checksum(len: u32, index: u64, asqn: u64, data: &[u8]) -> u32 {
    let mut head = [0u8; 20];
    head[0..4].copy_from_slice(&len.to_le_bytes());
    head[4..12].copy_from_slice(&index.to_le_bytes());
    head[12..20].copy_from_slice(&asqn.to_le_bytes());
    crc32c::crc32c_append(crc32c::crc32c(&head), data)
}

/// Appends the frame of an entry to `out`, padding included.
pub fn encode_frame(out: &mut Vec<u8>, index: u64, asqn: u64, data: &[u8]) {
    let len = data.len() as u32;
    let start = out.len();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&checksum(len, index, asqn, data).to_le_bytes());
    out.extend_from_slice(&index.to_le_bytes());
    out.extend_from_slice(&asqn.to_le_bytes());
    out.extend_from_slice(data);
    out.resize(start + frame_len(data.len()) as usize, 0);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub len: u32,
    pub crc: u32,
    pub index: u64,
    pub asqn: u64,
}

impl FrameHeader {
    pub fn decode(buf: &[u8]) -> Self {
        Self {
            len: u32_at(buf, 0),
            crc: u32_at(buf, 4),
            index: u64_at(buf, 8),
            asqn: u64_at(buf, 16),
        }
    }

    pub fn is_end_marker(&self) -> bool {
        self.len == 0
    }

    pub fn frame_len(&self) -> u64 {
        frame_len(self.len as usize)
    }

    pub fn verify(&self, data: &[u8]) -> bool {
        data.len() == self.len as usize
            && self.crc == checksum(self.len, self.index, self.asqn, data)
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

    #[test]
    fn frame_round_trips_and_detects_any_flipped_bit() {
        let mut buf = Vec::new();
        encode_frame(&mut buf, 7, 42, b"hello journal");
        assert_eq!(buf.len() as u64, frame_len(13));
        assert_eq!(buf.len() % 8, 0);
        let header = FrameHeader::decode(&buf);
        let data = &buf[24..24 + header.len as usize];
        assert!(header.verify(data));
        assert_eq!((header.index, header.asqn), (7, 42));
        for bit in 0..(24 + 13) * 8 {
            let mut damaged = buf.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            let h = FrameHeader::decode(&damaged);
            let end = (24 + h.len as usize).min(damaged.len());
            let ok = h.len as usize <= damaged.len() - 24 && h.verify(&damaged[24..end]);
            assert!(!ok, "flipping bit {bit} went unnoticed");
        }
    }

    #[test]
    fn segment_header_round_trips_and_rejects_damage() {
        let header = SegmentHeader {
            id: 3,
            first_index: 1001,
            size: 1 << 20,
        };
        let buf = header.encode();
        assert_eq!(SegmentHeader::decode(&buf), Ok(header));
        let mut damaged = buf;
        damaged[25] ^= 0x10;
        assert!(SegmentHeader::decode(&damaged).is_err());
    }
}
