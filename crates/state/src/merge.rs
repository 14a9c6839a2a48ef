//! Merging a store's entries with writes buffered over them, in key order.

use std::cmp::Ordering;
use std::iter::Peekable;

use crate::Result;
use crate::store::ScanIter;

/// The store's entries with buffered writes over them: a buffered value wins, a buffered
/// delete (`None`) hides the stored entry. Both inputs are in key order.
pub(crate) struct Merge<'a, P: Iterator> {
    stored: Peekable<ScanIter<'a>>,
    pending: Peekable<P>,
}

impl<'a, P: Iterator> Merge<'a, P> {
    pub fn new(stored: ScanIter<'a>, pending: P) -> Self {
        Self {
            stored: stored.peekable(),
            pending: pending.peekable(),
        }
    }
}

impl<P, K, V> Iterator for Merge<'_, P>
where
    P: Iterator<Item = (K, Option<V>)>,
    K: AsRef<[u8]> + Into<Vec<u8>>,
    V: Into<Vec<u8>>,
{
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let order = match (self.stored.peek(), self.pending.peek()) {
                (None, None) => return None,
                (Some(Err(_)), _) => return self.stored.next(),
                (Some(Ok((stored, _))), Some((pending, _))) => {
                    stored.as_slice().cmp(pending.as_ref())
                }
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
            };
            let (key, value) = match order {
                Ordering::Less => return self.stored.next(),
                Ordering::Equal => {
                    self.stored.next();
                    self.pending.next()?
                }
                Ordering::Greater => self.pending.next()?,
            };
            if let Some(value) = value {
                return Some(Ok((key.into(), value.into())));
            }
        }
    }
}
