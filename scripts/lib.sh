# Shared by the README's two commands (scripts/beeline builds and runs the binary,
# scripts/test runs the test suite) and by compat/: one place for the build's tools, target dir
# and flags, so that every command builds the same release binary and the project is compiled
# once. Source it; it defines the functions below and exports CARGO_TARGET_DIR.

beeline_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Cargo's target dir lives outside the work tree, so that both commands (and every checkout)
# share it and repeated runs are incremental: RocksDB's C++ build alone takes ~20 minutes on 2
# cores. CARGO_TARGET_DIR chooses another.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/beeline-target}"

# The binary that build_beeline makes.
beeline_bin="$CARGO_TARGET_DIR/release/beeline"

need_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "error: '$*' needs root; install it by hand" >&2; return 1; fi
}

# install_build_tools: what building needs and a fresh machine may lack. RocksDB's bindings are
# generated with bindgen, which needs libclang; its sources need a C++ compiler. Both come
# through apt-get when missing; without apt-get the build is tried as the machine is. Rust
# itself is the user's to install (rustup picks the pinned toolchain from rust-toolchain.toml).
install_build_tools() {
  if ! ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 \
     || ! command -v c++ >/dev/null; then
    if command -v apt-get >/dev/null; then
      echo "==> installing libclang and a C++ compiler" >&2
      need_root apt-get update -qq
      need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclang-dev g++ >/dev/null
    else
      echo "note: libclang or a C++ compiler is not where Debian puts them; if the build fails," \
        "install clang and a C++ compiler" >&2
    fi
  fi
  if ! command -v cargo >/dev/null; then
    echo "error: Rust is not installed; see https://rustup.rs" >&2
    return 1
  fi
}

# cargo_in_root ARGS...: cargo run from the repository's root, where rustup finds the pinned
# toolchain whatever the caller's directory (another toolchain would build everything again).
cargo_in_root() {
  (cd "$beeline_root" && cargo "$@")
}

# build_beeline: the release binary. The test build (`cargo test --workspace --release
# --locked`) compiles it with the same profile, flags and features, so after the tests this
# finds nothing to compile (scripts/test checks it).
build_beeline() {
  cargo_in_root build --release --locked -p beeline
}
