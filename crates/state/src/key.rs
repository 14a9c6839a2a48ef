//! Typed keys. Every key starts with its column family's prefix; parts follow in an encoding
//! that keeps order for numbers and is unambiguous for strings:
//! - `i64`: big endian with the sign bit flipped, so negative numbers sort first;
//! - `u64`/`u32`: big endian;
//! - strings and bytes: a big-endian `u32` length, then the bytes.

use crate::cf::ColumnFamily;
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBuilder(Vec<u8>);

impl KeyBuilder {
    pub fn new(cf: ColumnFamily) -> Self {
        let mut key = Vec::with_capacity(24);
        key.extend_from_slice(&cf.prefix());
        Self(key)
    }

    pub fn i64(mut self, value: i64) -> Self {
        self.0
            .extend_from_slice(&((value as u64) ^ (1 << 63)).to_be_bytes());
        self
    }

    pub fn u64(mut self, value: u64) -> Self {
        self.0.extend_from_slice(&value.to_be_bytes());
        self
    }

    pub fn u32(mut self, value: u32) -> Self {
        self.0.extend_from_slice(&value.to_be_bytes());
        self
    }

    pub fn str(self, value: &str) -> Self {
        self.bytes(value.as_bytes())
    }

    pub fn bytes(mut self, value: &[u8]) -> Self {
        self.0
            .extend_from_slice(&(value.len() as u32).to_be_bytes());
        self.0.extend_from_slice(value);
        self
    }

    pub fn build(self) -> Vec<u8> {
        self.0
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

/// Reads the parts of a key back, in the order they were built.
#[derive(Debug)]
pub struct KeyReader<'a> {
    cf: ColumnFamily,
    rest: &'a [u8],
}

impl<'a> KeyReader<'a> {
    /// Starts reading `key`, which must belong to `cf`.
    pub fn new(cf: ColumnFamily, key: &'a [u8]) -> Result<Self> {
        match key.strip_prefix(&cf.prefix()) {
            Some(rest) => Ok(Self { cf, rest }),
            None => Err(Error::Decode {
                cf: cf.name(),
                reason: "key belongs to another column family".into(),
            }),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(Error::Decode {
                cf: self.cf.name(),
                reason: format!("key too short: wanted {n} more bytes"),
            });
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn i64(&mut self) -> Result<i64> {
        Ok((u64::from_be_bytes(self.array()?) ^ (1 << 63)) as i64)
    }

    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let len = u32::from_be_bytes(self.array()?) as usize;
        self.take(len)
    }

    pub fn str(&mut self) -> Result<&'a str> {
        let cf = self.cf.name();
        std::str::from_utf8(self.bytes()?).map_err(|_| Error::Decode {
            cf,
            reason: "string part is not UTF-8".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn i64_keys_sort_numerically(a: i64, b: i64) {
            let ka = KeyBuilder::new(ColumnFamily::Meta).i64(a).build();
            let kb = KeyBuilder::new(ColumnFamily::Meta).i64(b).build();
            prop_assert_eq!(a.cmp(&b), ka.cmp(&kb));
        }

        #[test]
        fn parts_round_trip(a: i64, s in ".{0,20}", b: u64) {
            let key = KeyBuilder::new(ColumnFamily::Messages).i64(a).str(&s).u64(b).build();
            let mut r = KeyReader::new(ColumnFamily::Messages, &key).unwrap();
            prop_assert_eq!(r.i64().unwrap(), a);
            prop_assert_eq!(r.str().unwrap(), s.as_str());
            prop_assert_eq!(r.u64().unwrap(), b);
        }
    }

    #[test]
    fn string_parts_do_not_run_into_each_other() {
        let ab_c = KeyBuilder::new(ColumnFamily::Meta)
            .str("ab")
            .str("c")
            .build();
        let a_bc = KeyBuilder::new(ColumnFamily::Meta)
            .str("a")
            .str("bc")
            .build();
        assert_ne!(ab_c, a_bc);
        assert!(KeyReader::new(ColumnFamily::Messages, &ab_c).is_err());
    }
}
