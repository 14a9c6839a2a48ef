//! Variables in transit: arbitrary JSON documents (doubles of any bit pattern, integers of the
//! whole 64-bit range, unicode strings with escapes and control characters, nesting) sent
//! through every path a variable takes, and what comes out compared with what went in.
//!
//! The oracle is `serde_json` (reading with `float_roundtrip`): a value printed by it must come
//! back as exactly its print, byte for byte; a value copied by a FEEL mapping as Zeebe's FEEL
//! writes it back (whole numbers as integers).

use std::collections::BTreeMap;
use std::time::Duration;

use beeline_protocol::RecordType;
use beeline_protocol::value::{ProcessInstanceResultRecord, SignalRecord};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, message_ref, signal_ref};
use beeline_stream::{JobStream, JobStreamProperties, JobStreams};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value as Json};

/// Names the process itself reads; generated documents use others.
const RESERVED: [&str; 6] = ["ck", "v", "copy", "out", "items", "results"];

fn arbitrary_value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("JSON has no infinities or NaN", |f| f.is_finite())
            .prop_map(Json::from),
        (0.0f64..1.0).prop_map(Json::from),
        (-1e6f64..1e6).prop_map(|f| Json::from(f.trunc())),
        any::<String>().prop_map(Json::String),
        "[\\u{0}-\\u{1f}\"\\\\/é😀\u{2028}a-z]{0,8}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..5)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

fn arbitrary_document() -> impl Strategy<Value = BTreeMap<String, Json>> {
    prop::collection::btree_map(
        any::<String>().prop_filter("reserved", |n| !RESERVED.contains(&n.as_str())),
        arbitrary_value(),
        0..5,
    )
}

/// One case: the documents each path carries in, and the value a mapping copies.
#[derive(Debug, Clone)]
struct Case {
    created: BTreeMap<String, Json>,
    copied: Json,
    completed: BTreeMap<String, Json>,
    set: BTreeMap<String, Json>,
    message: BTreeMap<String, Json>,
    signal: BTreeMap<String, Json>,
    child: BTreeMap<String, Json>,
    items: Vec<Json>,
    pretty: bool,
}

fn arbitrary_case() -> impl Strategy<Value = Case> {
    (
        arbitrary_document(),
        arbitrary_value(),
        arbitrary_document(),
        arbitrary_document(),
        arbitrary_document(),
        arbitrary_document(),
        (
            arbitrary_document(),
            prop::collection::vec(arbitrary_value(), 0..4),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(created, copied, completed, set, message, signal, (child, items, pretty))| Case {
                created,
                copied,
                completed,
                set,
                message,
                signal,
                child,
                items,
                pretty,
            },
        )
}

/// The text a client sends: compact or pretty, as `serde_json` prints it.
fn sent(document: &BTreeMap<String, Json>, pretty: bool) -> String {
    let object = Json::Object(document.clone().into_iter().collect());
    if pretty {
        serde_json::to_string_pretty(&object).unwrap()
    } else {
        object.to_string()
    }
}

/// What must come back: the compact print, byte for byte (names in order, as both
/// `serde_json`'s map and Beeline's variable documents keep them).
fn expected(document: &BTreeMap<String, Json>) -> String {
    Json::Object(document.clone().into_iter().collect()).to_string()
}

/// A variable a mapping copies (`source="=v"`): an object as it was (Zeebe writes the
/// MessagePack map it read back unchanged), anything else through FEEL.
fn copied(value: &Json) -> Json {
    if value.is_object() {
        value.clone()
    } else {
        through_feel(value)
    }
}

/// A value read into FEEL and written back (Zeebe's `FeelToMessagePackTransformer`): a whole
/// number is written as an integer (within 64 bits: signed, else unsigned), anything else as
/// it was. Objects inside a list are written from FEEL's context, in name order.
fn through_feel(value: &Json) -> Json {
    match value {
        Json::Number(n) if n.is_f64() => {
            // FEEL reads a double as the decimal of its shortest text (`BigDecimal.valueOf`):
            // 8.931233655122751e17 is 893123365512275100, which a whole one is written as.
            let f = n.as_f64().unwrap_or_default();
            let decimal = format!("{f}");
            match (
                f.fract() == 0.0,
                decimal.parse::<i64>(),
                decimal.parse::<u64>(),
            ) {
                (true, Ok(i), _) => Json::from(i),
                (true, _, Ok(u)) => Json::from(u),
                _ => value.clone(),
            }
        }
        Json::Array(items) => Json::Array(items.iter().map(through_feel).collect()),
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), through_feel(v)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

fn transit_process() -> ProcessBuilder {
    ProcessBuilder::new("transit")
        .message("m", Some("=ck"))
        .signal("sg")
        .start_event("s")
        .service_task("first", "first")
        .catch_event("wait_message", &message_ref("m"))
        .catch_event("wait_signal", &signal_ref("sg"))
        .service_task_with(
            "mapped",
            "mapped",
            r#"<zeebe:ioMapping><zeebe:input source="=v" target="copy"/><zeebe:output source="=copy" target="out"/></zeebe:ioMapping>"#,
        )
        .service_task("last", "last")
        .call_activity("call", r#"processId="transit-child""#, "")
        .service_task("each", "each")
        .multi_instance(
            "each",
            true,
            r#"inputCollection="=items" inputElement="item" outputCollection="results" outputElement="=item""#,
            None,
        )
        .end_event("e")
}

fn transit_child_process() -> ProcessBuilder {
    ProcessBuilder::new("transit-child")
        .start_event("cs")
        .service_task("child", "child")
        .end_event("ce")
}

fn check(what: &str, got: &[u8], want: &str) -> Result<(), TestCaseError> {
    let got = String::from_utf8_lossy(got);
    prop_assert_eq!(got.as_ref(), want, "{}", what);
    Ok(())
}

fn pushed(harness: &Harness, stream: &mut JobStream) -> beeline_stream::PushedJob {
    harness
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), stream.recv()).await })
        .expect("a pushed job within 10 s")
        .expect("the stream is open")
}

/// Runs one case through: creation, job push, job completion, set variables, a message, a
/// signal, an input and an output mapping, job activation, a call activity (down and back),
/// a multi-instance activity's input and output collections and the instance's result.
fn run(
    harness: &Harness,
    stream: &mut JobStream,
    case: &Case,
    n: usize,
) -> Result<(), TestCaseError> {
    let key = format!("case-{n}");
    let mut variables = case.created.clone();
    variables.insert("ck".into(), Json::String(key.clone()));
    variables.insert("v".into(), case.copied.clone());
    variables.insert("items".into(), Json::Array(case.items.clone()));
    let pending =
        harness.create_instance_with_result("transit", &sent(&variables, case.pretty), &[]);

    // Creation, then the job pushed to the open stream.
    let first = pushed(harness, stream);
    check(
        "the pushed job's variables",
        &first.job.variables,
        &expected(&variables),
    )?;

    // Job completion: the variables propagate to the instance.
    let done = harness.complete_job(first.key, &sent(&case.completed, case.pretty));
    prop_assert_eq!(done.map(|r| r.record_type).ok(), Some(RecordType::Event));
    variables.extend(case.completed.clone());

    // Set variables on the instance.
    let instance = first.job.process_instance_key;
    let set = harness.set_variables(instance, &sent(&case.set, case.pretty), false);
    prop_assert_eq!(set.map(|r| r.record_type).ok(), Some(RecordType::Event));
    variables.extend(case.set.clone());

    // A message and a signal, each with variables, caught by the instance.
    let published = harness.publish_message("m", &key, 0, "", &sent(&case.message, case.pretty));
    prop_assert_eq!(
        published.map(|r| r.record_type).ok(),
        Some(RecordType::Event)
    );
    variables.extend(case.message.clone());
    let broadcast = harness.broadcast_signal("sg", &sent(&case.signal, case.pretty));
    let broadcast = broadcast.expect("the signal is broadcast");
    prop_assert_eq!(broadcast.record_type, RecordType::Event);
    check(
        "the broadcast signal's variables",
        &broadcast.value_as::<SignalRecord>().unwrap().variables,
        &expected(&case.signal),
    )?;
    variables.extend(case.signal.clone());

    // An input mapping copies `v` into the task's scope; job activation shows it.
    let (mapped, job) = harness.activate_job("mapped");
    let mut seen = variables.clone();
    seen.insert("copy".into(), copied(&case.copied));
    check(
        "the activated job's variables",
        &job.variables,
        &expected(&seen),
    )?;
    let done = harness.complete_job(mapped, "{}");
    prop_assert_eq!(done.map(|r| r.record_type).ok(), Some(RecordType::Event));

    // The output mapping copies it out again.
    variables.insert("out".into(), copied(&case.copied));
    let (last, job) = harness.activate_job("last");
    check(
        "the last job's variables",
        &job.variables,
        &expected(&variables),
    )?;
    let done = harness.complete_job(last, "{}");
    prop_assert_eq!(done.map(|r| r.record_type).ok(), Some(RecordType::Event));

    // The call activity hands the called instance every variable, and takes its variables
    // back when it completes.
    let (child, job) = harness.activate_job("child");
    check(
        "the called instance's job",
        &job.variables,
        &expected(&variables),
    )?;
    let done = harness.complete_job(child, &sent(&case.child, case.pretty));
    prop_assert_eq!(done.map(|r| r.record_type).ok(), Some(RecordType::Event));
    variables.extend(case.child.clone());

    // The multi-instance activity: one job per item, each item through FEEL into `item` and
    // back out into `results`.
    for _ in &case.items {
        let (each, _) = harness.activate_job("each");
        let done = harness.complete_job(each, "{}");
        prop_assert_eq!(done.map(|r| r.record_type).ok(), Some(RecordType::Event));
    }
    variables.insert(
        "results".into(),
        Json::Array(case.items.iter().map(through_feel).collect()),
    );

    // The instance's result.
    let answer = pending.wait(harness).expect("the instance's result");
    let result = answer
        .value_as::<ProcessInstanceResultRecord>()
        .expect("a result");
    check(
        "the instance's result",
        &result.variables,
        &expected(&variables),
    )
}

#[test]
fn arbitrary_documents_come_back_as_they_were_sent_on_every_path() {
    let streams = JobStreams::new();
    let stream = streams.open(
        JobStreamProperties {
            job_type: "first".into(),
            worker: "transit".into(),
            timeout: 60_000,
            fetch_variables: Vec::new(),
            tenant_ids: vec!["<default>".into()],
        },
        4,
    );
    let harness = Harness::with_config(1, |config| config.job_streams = Some(streams.clone()));
    harness.deploy_process(&transit_child_process());
    harness.deploy_process(&transit_process());
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let n = std::cell::Cell::new(0);
    let stream = std::cell::RefCell::new(stream);
    let outcome = runner.run(&arbitrary_case(), |case| {
        n.set(n.get() + 1);
        run(&harness, &mut stream.borrow_mut(), &case, n.get())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

#[test]
fn a_mapping_copies_an_object_as_it_is_and_anything_else_through_feel() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task_with(
                "t",
                "w",
                r#"<zeebe:ioMapping><zeebe:input source="=o" target="object"/><zeebe:input source="=object" target="again"/><zeebe:input source="=d" target="double"/><zeebe:input source="=l" target="list"/><zeebe:input source="=o" target="nested.object"/><zeebe:input source="=context put(o, &quot;c&quot;, 2.50)" target="changed"/></zeebe:ioMapping>"#,
            )
            .end_event("e"),
    );
    harness.create_instance(
        "p",
        r#"{"o": {"z": 1.0, "a": [-0.0, 0.12496785020850265]}, "d": 1.0, "l": [1.0, {"y": 2.0, "b": 1}]}"#,
    );
    let (_, job) = harness.activate_job("w");
    let text = String::from_utf8(job.variables).unwrap();
    for (what, part) in [
        (
            "an object copied as it is",
            r#""object":{"z":1.0,"a":[-0.0,0.12496785020850265]}"#,
        ),
        (
            "a copy of the copy",
            r#""again":{"z":1.0,"a":[-0.0,0.12496785020850265]}"#,
        ),
        (
            "a whole double through FEEL, as Zeebe writes it",
            r#""double":1"#,
        ),
        ("a list through FEEL", r#""list":[1,{"b":1,"y":2}]"#),
        (
            "an object under a path, through FEEL",
            r#""nested":{"object":{"a":[0,0.12496785020850265],"z":1}}"#,
        ),
        (
            "an object FEEL changed",
            r#""changed":{"a":[0,0.12496785020850265],"c":2.5,"z":1}"#,
        ),
    ] {
        assert!(text.contains(part), "{what}: {part} in {text}");
    }
}

#[test]
fn documents_zeebe_cannot_keep_are_rejected_on_every_path_with_where() {
    let harness = Harness::new(1);
    harness.deploy_process(&transit_process());
    let rejection = |answer: Result<beeline_protocol::Record, _>| {
        let record = answer.expect("an answer");
        assert_eq!(
            record.record_type,
            RecordType::CommandRejection,
            "{record:?}"
        );
        record.rejection_reason
    };
    let reason = rejection(harness.try_create_instance("transit", r#"{"a": 1, "a": 2}"#));
    assert!(
        reason.contains(r#"an object has the key "a" twice"#),
        "{reason}"
    );
    let reason = rejection(harness.try_create_instance(
        "transit",
        r#"{"n": {"big": 123456789012345678901234567890}}"#,
    ));
    assert!(
        reason.contains("the integer 123456789012345678901234567890 is outside the 64-bit range")
            && reason.contains("at 'n.big'"),
        "{reason}"
    );
    let instance = harness.create_instance("transit", r#"{"ck": "k"}"#);
    let (job, _) = harness.activate_job("first");
    let reason = rejection(harness.complete_job(job, r#"{"s": "\ud800"}"#));
    assert!(
        reason.contains("\\ud800, half of a UTF-16 surrogate pair"),
        "{reason}"
    );
    let reason = rejection(harness.set_variables(instance, r#"{"x": 1e400}"#, false));
    assert!(
        reason.contains("the number 1e400 is beyond the range"),
        "{reason}"
    );
    let reason = rejection(harness.publish_message("m", "k", 0, "", r#"{"x": [1,]}"#));
    assert!(
        reason.starts_with("Expected to publish a message with variables, but the document is not valid JSON: expected a value at 'x[1]'"),
        "{reason}"
    );
    let reason = rejection(harness.broadcast_signal("sg", "[1]"));
    assert!(
        reason.ends_with("expected a JSON object, but the text is an array"),
        "{reason}"
    );
}
