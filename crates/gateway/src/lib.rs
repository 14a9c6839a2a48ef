//! Beeline's gRPC gateway, speaking Zeebe's `gateway_protocol.Gateway` service.
//!
//! For now this crate only carries the protocol: `proto/gateway.proto` is our own
//! definition of Zeebe 8.8's gateway protocol, and [`proto`] is the Rust code tonic
//! generates from it (messages, a `gateway_server` and a `gateway_client`).
//! `tests/wire_compat.rs` checks it field by field against the official definition.

/// Messages and the `Gateway` service of package `gateway_protocol`, generated at build time.
pub mod proto {
    tonic::include_proto!("gateway_protocol");

    /// The encoded `FileDescriptorSet` of `gateway.proto`, for gRPC server reflection and
    /// for comparing our definition with the official one.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/gateway_protocol.bin"));
}
