//! Zeebe's gateway protocol (`gateway_protocol.Gateway`, Zeebe 8.8) from our own
//! `proto/gateway.proto`, and the standard `grpc.health.v1.Health` service: the prost messages
//! and the tonic client and server generated at build time. `tests/wire_compat.rs` checks our
//! definition field by field against the official one.
//!
//! A crate of its own so that clients of the protocol (`beeline bench`, the CLI) link neither
//! the engine nor the gateway's server.

/// Messages and the `Gateway` service of package `gateway_protocol`, generated at build time.
pub mod proto {
    tonic::include_proto!("gateway_protocol");

    /// The encoded `FileDescriptorSet` of `gateway.proto`, for gRPC server reflection and
    /// for comparing our definition with the official one.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/gateway_protocol.bin"));

    /// The standard gRPC health service, `grpc.health.v1.Health` (`proto/health.proto`).
    pub mod health {
        tonic::include_proto!("grpc.health.v1");
    }
}

/// gRPC's names of status codes, as the gRPC spec spells them (and Zeebe's metrics label them).
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}
