//! The record: one command, event or rejection in a partition's log.

use crate::intent::{Intent, ValueType};
use crate::key::NO_KEY;
use crate::value::{RecordValue, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RecordType {
    Event = 0,
    Command = 1,
    CommandRejection = 2,
}

impl RecordType {
    pub const fn from_value(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::Event),
            1 => Some(Self::Command),
            2 => Some(Self::CommandRejection),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Self::Event => "EVENT",
            Self::Command => "COMMAND",
            Self::CommandRejection => "COMMAND_REJECTION",
        }
    }
}

/// Why a command was rejected; numbers as in Zeebe's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RejectionType {
    InvalidArgument = 0,
    NotFound = 1,
    AlreadyExists = 2,
    InvalidState = 3,
    ProcessingError = 4,
    ExceededBatchRecordSize = 5,
    Unauthorized = 6,
    Forbidden = 7,
    /// No rejection (Zeebe's SBE null value).
    NullVal = 255,
}

impl RejectionType {
    pub const fn from_value(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::InvalidArgument),
            1 => Some(Self::NotFound),
            2 => Some(Self::AlreadyExists),
            3 => Some(Self::InvalidState),
            4 => Some(Self::ProcessingError),
            5 => Some(Self::ExceededBatchRecordSize),
            6 => Some(Self::Unauthorized),
            7 => Some(Self::Forbidden),
            255 => Some(Self::NullVal),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::NotFound => "NOT_FOUND",
            Self::AlreadyExists => "ALREADY_EXISTS",
            Self::InvalidState => "INVALID_STATE",
            Self::ProcessingError => "PROCESSING_ERROR",
            Self::ExceededBatchRecordSize => "EXCEEDED_BATCH_RECORD_SIZE",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::Forbidden => "FORBIDDEN",
            Self::NullVal => "NULL_VAL",
        }
    }
}

/// One record of a partition's log, as Zeebe models it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Position in the partition's log; dense and increasing.
    pub position: i64,
    /// Position of the command that caused this record (-1 for a command from outside).
    pub source_record_position: i64,
    pub key: i64,
    /// Milliseconds since the epoch, taken when the record was written.
    pub timestamp: i64,
    pub partition_id: u16,
    pub record_type: RecordType,
    /// The intent, which also names the value type.
    pub intent: Intent,
    /// Version of the value's semantics; appliers are chosen by (intent, version).
    pub record_version: u16,
    pub rejection_type: RejectionType,
    pub rejection_reason: String,
    /// A client's correlation id for the operation (-1 when none).
    pub operation_reference: i64,
    /// A command that was already processed within the batch that wrote it (follow-up
    /// commands), so neither replay nor processing runs it again. Not part of Zeebe's exports.
    pub processed: bool,
    /// The tenants the command's caller may act for, when the gateway restricts it to some
    /// (multi-tenancy on); `None` for every other record. The engine treats what belongs to
    /// another tenant as not there for such a command, as Zeebe does with its authorization
    /// claims.
    pub authorized_tenants: Option<std::sync::Arc<[String]>>,
    pub value: RecordValue,
}

impl Record {
    /// A new command from outside the partition (no source, not yet positioned).
    pub fn command<V: Value>(key: i64, intent: V::Intent, value: V) -> Self {
        Self::new(RecordType::Command, key, intent.into(), value.into())
    }

    pub fn event<V: Value>(key: i64, intent: V::Intent, value: V) -> Self {
        Self::new(RecordType::Event, key, intent.into(), value.into())
    }

    /// A record whose intent and value are only known at run time. The value must belong to
    /// the intent's value type; [`Record::is_consistent`] checks it.
    pub fn new(record_type: RecordType, key: i64, intent: Intent, value: RecordValue) -> Self {
        Self {
            position: -1,
            source_record_position: -1,
            key,
            timestamp: -1,
            partition_id: 0,
            record_type,
            intent,
            record_version: 1,
            rejection_type: RejectionType::NullVal,
            rejection_reason: String::new(),
            operation_reference: -1,
            processed: false,
            authorized_tenants: None,
            value,
        }
    }

    /// The rejection of `command`, carrying its value back.
    pub fn rejection(command: &Record, rejection_type: RejectionType, reason: String) -> Self {
        Self {
            record_type: RecordType::CommandRejection,
            rejection_type,
            rejection_reason: reason,
            processed: false,
            ..command.clone()
        }
    }

    /// Whether the command's caller may act for `tenant` (see `authorized_tenants`).
    pub fn is_authorized_for(&self, tenant: &str) -> bool {
        self.authorized_tenants
            .as_ref()
            .is_none_or(|tenants| tenants.iter().any(|t| t == tenant))
    }

    pub fn value_type(&self) -> ValueType {
        self.intent.value_type()
    }

    pub fn is_command(&self) -> bool {
        self.record_type == RecordType::Command
    }

    pub fn is_event(&self) -> bool {
        self.record_type == RecordType::Event
    }

    /// Whether the intent, the record type and the value agree.
    pub fn is_consistent(&self) -> bool {
        let kind_matches = match self.record_type {
            RecordType::Event => self.intent.is_event(),
            RecordType::Command | RecordType::CommandRejection => !self.intent.is_event(),
        };
        kind_matches && self.value.value_type() == self.intent.value_type()
    }

    /// The typed value, when it is of type `V`.
    pub fn value_as<V: Value>(&self) -> Option<&V> {
        V::from_record_value(&self.value)
    }

    /// The typed value taken out of the record, when it is of type `V`.
    pub fn into_value<V: Value>(self) -> Option<V> {
        V::from_record_value_owned(self.value)
    }

    /// The key with `NO_KEY` spelled as `None`.
    pub fn key(&self) -> Option<i64> {
        (self.key != NO_KEY).then_some(self.key)
    }
}
