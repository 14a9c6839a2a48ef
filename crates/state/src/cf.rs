//! The column families of partition state. Ids are part of the on-disk format: never change or
//! reuse one; a retired family stays listed with a comment saying since when.

macro_rules! column_families {
    ($( $(#[$meta:meta])* $variant:ident = $id:literal; )*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum ColumnFamily { $( $(#[$meta])* $variant = $id, )* }

        impl ColumnFamily {
            pub const ALL: &'static [ColumnFamily] = &[$(ColumnFamily::$variant),*];

            pub const fn id(self) -> u16 {
                self as u16
            }

            pub const fn name(self) -> &'static str {
                match self {
                    $( ColumnFamily::$variant => stringify!($variant), )*
                }
            }

            pub fn from_id(id: u16) -> Option<Self> {
                match id {
                    $( $id => Some(ColumnFamily::$variant), )*
                    _ => None,
                }
            }

            /// The two-byte prefix of every key in this family.
            pub const fn prefix(self) -> [u8; 2] {
                (self as u16).to_be_bytes()
            }
        }
    };
}

column_families! {
    /// Partition-wide values: last processed position, key generator, format version.
    Meta = 0;
    /// Process instances banned after an unexpected processing error: instance key -> ().
    BannedInstances = 1;
    /// Messages by key: message key -> MessageRecord.
    Messages = 10;
    /// Messages by name and correlation key: (name, correlation key, message key) -> ().
    MessagesByNameAndCorrelationKey = 11;
    /// Message expiry index: (deadline, message key) -> ().
    MessageDeadlines = 12;
    /// Message ids in use: (name, correlation key, message id) -> message key.
    MessageIds = 13;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &cf in ColumnFamily::ALL {
            assert!(seen.insert(cf.id()), "{cf:?} reuses id {}", cf.id());
            assert_eq!(ColumnFamily::from_id(cf.id()), Some(cf));
        }
    }
}
