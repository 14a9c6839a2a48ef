//! Generates the `gateway_protocol` messages and the tonic server and client from
//! `proto/gateway.proto`, and the standard health service from `proto/health.proto`. `protoc` comes from the `protoc-bin-vendored` crate, so a fresh
//! machine needs no system install.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/gateway.proto";
    println!("cargo:rerun-if-changed={proto}");

    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // The descriptor set backs `proto::FILE_DESCRIPTOR_SET` (reflection, compat test).
        .file_descriptor_set_path(out_dir.join("gateway_protocol.bin"))
        .compile_with_config(config, &[proto], &["proto"])?;

    // A separate run, so that the descriptor set above holds gateway.proto alone.
    let health = "proto/health.proto";
    println!("cargo:rerun-if-changed={health}");
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_with_config(config, &[health], &["proto"])?;
    Ok(())
}
