//! Nothing to build: this script exists so that `[build-dependencies]` (a feature pin, see
//! Cargo.toml) takes part in every build's feature resolution.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
