//! Generates the internal API's messages and tonic server and client from
//! `proto/internal.proto`, with the vendored `protoc` (no system install).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/internal.proto";
    println!("cargo:rerun-if-changed={proto}");
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    // An entry's data goes out as the batch's shared bytes, not a copy of them.
    config.bytes([".beeline.internal.v1.Entry.data"]);
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_with_config(config, &[proto], &["proto"])?;
    Ok(())
}
