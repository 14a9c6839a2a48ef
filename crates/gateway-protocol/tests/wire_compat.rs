//! Wire compatibility of our `proto/gateway.proto` with Zeebe's official gateway protocol.
//!
//! The official `gateway.proto` ships inside the Maven artifact
//! `io.camunda:zeebe-gateway-protocol-impl`, the jar that the Java client
//! (`io.camunda:zeebe-client-java`) depends on. The test downloads that jar from Maven
//! Central once (cached outside the work tree), compiles the proto in it with the vendored
//! `protoc`, and compares the two descriptor sets fact by fact: every message (nested ones
//! too), field, enum value and service method. Nothing of the official file is committed.
//!
//! Environment:
//! - `BEELINE_ZEEBE_PROTOCOL_VERSION` compares against another release (default below).
//! - `BEELINE_PROTOCOL_CACHE` moves the jar cache (default `$HOME/.cache/beeline-protocol`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};

/// The newest Zeebe 8.8 release whose protocol jar resolves from Maven Central.
const ZEEBE_VERSION: &str = "8.8.21";
const VERSION_ENV: &str = "BEELINE_ZEEBE_PROTOCOL_VERSION";
const CACHE_ENV: &str = "BEELINE_PROTOCOL_CACHE";
const MAVEN_CENTRAL: &str = "https://repo1.maven.org/maven2";
const GROUP_PATH: &str = "io/camunda";
const ARTIFACT: &str = "zeebe-gateway-protocol-impl";
const PROTO_IN_JAR: &str = "gateway.proto";
const PACKAGE: &str = "gateway_protocol";

#[test]
fn matches_the_official_zeebe_gateway_protocol() {
    let version = std::env::var(VERSION_ENV).unwrap_or_else(|_| ZEEBE_VERSION.to_owned());
    let official = official_descriptors(&version);
    let ours = FileDescriptorSet::decode(beeline_gateway_protocol::proto::FILE_DESCRIPTOR_SET)
        .expect("our embedded descriptor set decodes");

    let official = facts(&official);
    let ours = facts(&ours);
    // Guard against comparing with an empty or wrong file.
    assert!(
        official.contains_key("service .gateway_protocol.Gateway"),
        "the official proto of Zeebe {version} has no service gateway_protocol.Gateway"
    );

    let differences = diff(&official, &ours);
    assert!(
        differences.is_empty(),
        "proto/gateway.proto differs from Zeebe {version}'s gateway.proto in {} facts \
         (official facts: {}, ours: {}):\n{}",
        differences.len(),
        official.len(),
        ours.len(),
        differences.join("\n")
    );
}

/// The comparison must notice a change, or the test above could pass vacuously.
#[test]
fn a_changed_definition_is_reported() {
    let ours = FileDescriptorSet::decode(beeline_gateway_protocol::proto::FILE_DESCRIPTOR_SET)
        .expect("our embedded descriptor set decodes");
    let mut changed = ours.clone();
    let file = changed
        .file
        .iter_mut()
        .find(|f| f.package() == PACKAGE)
        .expect("our set holds the gateway_protocol file");
    let job = file
        .message_type
        .iter_mut()
        .find(|m| m.name() == "ActivatedJob")
        .expect("ActivatedJob is defined");
    let key = job
        .field
        .iter_mut()
        .find(|f| f.name() == "key")
        .expect("ActivatedJob.key is defined");
    key.set_type(Type::Int32);
    let method = file.service[0]
        .method
        .iter_mut()
        .find(|m| m.name() == "ActivateJobs")
        .expect("ActivateJobs is defined");
    method.server_streaming = Some(false);

    let differences = diff(&facts(&ours), &facts(&changed));
    assert_eq!(differences.len(), 2, "{differences:#?}");
    assert!(differences[0].contains("message .gateway_protocol.ActivatedJob field 1"));
    assert!(differences[0].contains("type=int64") && differences[0].contains("type=int32"));
    assert!(differences[1].contains("method ActivateJobs"));
    assert!(differences[1].contains("server_streaming"));
}

// ---------------------------------------------------------------------------------------
// Fetching and compiling the official definition

fn official_descriptors(version: &str) -> FileDescriptorSet {
    let proto = official_proto(version);

    // A directory of our own per process, so parallel runs don't trip over each other.
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("zeebe-protocol-{version}-{}", std::process::id()));
    fs::create_dir_all(&work).expect("create a scratch directory in the target dir");
    fs::write(work.join(PROTO_IN_JAR), proto).expect("write the official proto to scratch");
    let out = work.join("official.bin");

    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc");
    let include = protoc_bin_vendored::include_path().expect("vendored protoc includes");
    let output = Command::new(&protoc)
        .arg(format!("--proto_path={}", work.display()))
        .arg(format!("--proto_path={}", include.display()))
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg(PROTO_IN_JAR)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", protoc.display()));
    assert!(
        output.status.success(),
        "protoc failed on the official gateway.proto of Zeebe {version}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = fs::read(&out).expect("read the official descriptor set");
    let _ = fs::remove_dir_all(&work);
    FileDescriptorSet::decode(bytes.as_slice()).expect("protoc wrote a valid descriptor set")
}

/// The text of `gateway.proto` from the protocol jar, downloading the jar if not cached.
fn official_proto(version: &str) -> String {
    let url = format!("{MAVEN_CENTRAL}/{GROUP_PATH}/{ARTIFACT}/{version}/{ARTIFACT}-{version}.jar");
    let jar = cache_dir().join(format!("{ARTIFACT}-{version}.jar"));

    if jar.is_file() {
        match read_proto_from_jar(&jar) {
            Ok(text) => return text,
            // A damaged cache entry is fetched again rather than failing forever.
            Err(e) => {
                eprintln!(
                    "cached {} is unusable ({e}); fetching it again",
                    jar.display()
                );
                let _ = fs::remove_file(&jar);
            }
        }
    }
    if let Err(e) = download(&url, &jar) {
        panic!(
            "could not fetch the official Zeebe {version} gateway protocol from {url}: {e}\n\
             (the wire-compatibility test needs HTTPS access to Maven Central, or a cached jar \
             at {})",
            jar.display()
        );
    }
    read_proto_from_jar(&jar)
        .unwrap_or_else(|e| panic!("{url} (saved as {}) is not usable: {e}", jar.display()))
}

fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_ENV) {
        return PathBuf::from(dir);
    }
    match std::env::var_os("HOME") {
        Some(home) if !home.is_empty() => {
            PathBuf::from(home).join(".cache").join("beeline-protocol")
        }
        _ => Path::new(env!("CARGO_TARGET_TMPDIR")).join("beeline-protocol"),
    }
}

/// Downloads `url` to `dest` with curl, through a temporary file so that an interrupted
/// download never looks like a cached jar.
fn download(url: &str, dest: &Path) -> Result<(), String> {
    let dir = dest
        .parent()
        .ok_or("the cache path has no parent directory")?;
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let part = dest.with_extension(format!("jar.{}.part", std::process::id()));
    let output = Command::new("curl")
        .args(["--fail", "--silent", "--show-error", "--location"])
        .args([
            "--proto",
            "=https",
            "--retry",
            "2",
            "--connect-timeout",
            "30",
        ])
        .args(["--max-time", "600", "--output"])
        .arg(&part)
        .arg(url)
        .output()
        .map_err(|e| format!("could not run curl: {e}"))?;
    if !output.status.success() {
        let _ = fs::remove_file(&part);
        return Err(format!(
            "curl failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    fs::rename(&part, dest).map_err(|e| format!("cannot move the download into place: {e}"))
}

fn read_proto_from_jar(jar: &Path) -> Result<String, String> {
    let file = fs::File::open(jar).map_err(|e| e.to_string())?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| format!("not a jar: {e}"))?;
    let mut entry = archive
        .by_name(PROTO_IN_JAR)
        .map_err(|e| format!("no {PROTO_IN_JAR} inside: {e}"))?;
    let mut text = String::new();
    entry
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {PROTO_IN_JAR}: {e}"))?;
    Ok(text)
}

// ---------------------------------------------------------------------------------------
// Flattening descriptors into comparable facts

/// One line per thing a peer could observe, keyed by where it lives. Keys use numbers for
/// fields (what the wire carries) and names for enum values and methods (what callers use).
type Facts = BTreeMap<String, String>;

fn facts(set: &FileDescriptorSet) -> Facts {
    let mut facts = Facts::new();
    for file in set.file.iter().filter(|f| f.package() == PACKAGE) {
        facts.insert(
            format!("file {}", file.name()),
            format!("syntax={}", file.syntax()),
        );
        let scope = format!(".{PACKAGE}");
        for message in &file.message_type {
            message_facts(&scope, message, &mut facts);
        }
        for e in &file.enum_type {
            enum_facts(&scope, e, &mut facts);
        }
        for service in &file.service {
            let name = format!("{scope}.{}", service.name());
            let deprecated = service.options.as_ref().and_then(|o| o.deprecated);
            facts.insert(format!("service {name}"), flag("deprecated", deprecated));
            for method in &service.method {
                let options = method.options.as_ref();
                facts.insert(
                    format!("service {name} method {}", method.name()),
                    format!(
                        "input={} output={} client_streaming={} server_streaming={}{}",
                        method.input_type(),
                        method.output_type(),
                        method.client_streaming(),
                        method.server_streaming(),
                        flag("deprecated", options.and_then(|o| o.deprecated)),
                    ),
                );
            }
        }
    }
    facts
}

fn message_facts(scope: &str, message: &DescriptorProto, facts: &mut Facts) {
    let name = format!("{scope}.{}", message.name());
    let options = message.options.as_ref();
    let mut summary = String::from("message");
    summary += &flag("map_entry", options.and_then(|o| o.map_entry));
    summary += &flag("deprecated", options.and_then(|o| o.deprecated));
    for range in &message.reserved_range {
        // Descriptor ranges are end-exclusive.
        let _ = write!(summary, " reserved={}..{}", range.start(), range.end() - 1);
    }
    for reserved in &message.reserved_name {
        let _ = write!(summary, " reserved={reserved:?}");
    }
    for range in &message.extension_range {
        let _ = write!(
            summary,
            " extensions={}..{}",
            range.start(),
            range.end() - 1
        );
    }
    facts.insert(format!("message {name}"), summary);

    for field in &message.field {
        let mut line = format!(
            "name={} label={} type={}",
            field.name(),
            label_name(field.label()),
            type_name(field.r#type())
        );
        if field.type_name.is_some() {
            let _ = write!(line, " type_name={}", field.type_name());
        }
        if field.proto3_optional() {
            line += " proto3_optional";
        } else if let Some(index) = field.oneof_index {
            let oneof = usize::try_from(index)
                .ok()
                .and_then(|i| message.oneof_decl.get(i))
                .map_or("?", |o| o.name());
            let _ = write!(line, " oneof={oneof}");
        }
        if let Some(json) = &field.json_name {
            let _ = write!(line, " json_name={json}");
        }
        if let Some(default) = &field.default_value {
            let _ = write!(line, " default={default:?}");
        }
        let options = field.options.as_ref();
        line += &flag("packed", options.and_then(|o| o.packed));
        line += &flag("deprecated", options.and_then(|o| o.deprecated));
        facts.insert(format!("message {name} field {}", field.number()), line);
    }
    for nested in &message.nested_type {
        message_facts(&name, nested, facts);
    }
    for e in &message.enum_type {
        enum_facts(&name, e, facts);
    }
}

fn enum_facts(scope: &str, e: &EnumDescriptorProto, facts: &mut Facts) {
    let name = format!("{scope}.{}", e.name());
    let options = e.options.as_ref();
    let mut summary = String::from("enum");
    summary += &flag("allow_alias", options.and_then(|o| o.allow_alias));
    summary += &flag("deprecated", options.and_then(|o| o.deprecated));
    for range in &e.reserved_range {
        // Unlike message ranges, enum ranges are end-inclusive.
        let _ = write!(summary, " reserved={}..{}", range.start(), range.end());
    }
    for reserved in &e.reserved_name {
        let _ = write!(summary, " reserved={reserved:?}");
    }
    facts.insert(format!("enum {name}"), summary);
    for value in &e.value {
        let deprecated = value.options.as_ref().and_then(|o| o.deprecated);
        facts.insert(
            format!("enum {name} value {}", value.name()),
            format!(
                "number={}{}",
                value.number(),
                flag("deprecated", deprecated)
            ),
        );
    }
}

/// An option that was set explicitly, or nothing when left at its default.
fn flag(name: &str, value: Option<bool>) -> String {
    value.map(|v| format!(" {name}={v}")).unwrap_or_default()
}

fn label_name(label: Label) -> &'static str {
    match label {
        Label::Optional => "singular",
        Label::Required => "required",
        Label::Repeated => "repeated",
    }
}

fn type_name(t: Type) -> String {
    t.as_str_name()
        .trim_start_matches("TYPE_")
        .to_ascii_lowercase()
}

/// Every fact missing from ours, extra in ours, or different, one line each.
fn diff(official: &Facts, ours: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    for (key, theirs) in official {
        match ours.get(key) {
            None => out.push(format!("  missing  {key}: {theirs}")),
            Some(mine) if mine != theirs => out.push(format!(
                "  differs  {key}:\n             official: {theirs}\n             ours:     {mine}"
            )),
            Some(_) => {}
        }
    }
    for (key, mine) in ours {
        if !official.contains_key(key) {
            out.push(format!("  extra    {key}: {mine}"));
        }
    }
    out
}
