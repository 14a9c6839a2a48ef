//! Every model and form of the shared corpora (Zeebe's and the SDKs' test models, the BPMN MIWG
//! reference models) deploys, or is rejected with a clear reason — the outcome recorded for it
//! in `corpus-expectations.tsv` (the upstream test named in the corpus MANIFEST decides what is
//! expected; a model using an element Beeline does not run yet is rejected naming the element).
//! Each process deployed is then started without variables and runs as far as its model
//! allows: it completes, or waits (for a job, a timer, a message, a signal), or stops at an
//! incident (a variable the model expects is missing); the line records where, and no
//! instance may hit an engine error.
//! Set `BEELINE_UPDATE_CORPUS_EXPECTATIONS=1` to rewrite the file after a deliberate change.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use beeline_protocol::intent::{
    ErrorIntent, IncidentIntent, JobIntent, ProcessInstanceCreationIntent, ProcessInstanceIntent,
    ProcessMessageSubscriptionIntent, SignalSubscriptionIntent, TimerIntent,
};
use beeline_protocol::value::{
    DeploymentRecord, IncidentRecord, JobRecord, ProcessInstanceCreationRecord,
    ProcessInstanceRecord, ProcessMessageSubscriptionRecord, SignalSubscriptionRecord,
};
use beeline_protocol::{Record, RecordType, RejectionType};
use beeline_stream::testkit::Harness;

fn corpora() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora");
    dir.is_dir().then_some(dir)
}

fn models(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.join("zeebe-models"), root.join("bpmn-miwg/Reference")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            if path.is_dir() {
                stack.push(path);
            } else if (name.ends_with(".bpmn") && !name.ends_with(".part.bpmn"))
                || name.ends_with(".dmn")
                || name.ends_with(".form")
            {
                found.push(path);
            }
        }
    }
    // Forms first: the user tasks of the models that come later link them.
    found.sort_by_key(|path| (!path.to_string_lossy().ends_with(".form"), path.clone()));
    found
}

/// One line per model: `path \t deployed \t where each process's instance got to`, or
/// `path \t rejected \t first line of the reason`.
fn outcome(harness: &Harness, root: &Path, path: &Path) -> String {
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    let content = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("model.bpmn");
    match harness.deploy(name, &content) {
        Ok(record) if record.record_type == RecordType::Event => {
            let runs: Vec<String> = record
                .value_as::<DeploymentRecord>()
                .map(|d| d.processes_metadata.clone())
                .unwrap_or_default()
                .iter()
                .map(|process| {
                    format!(
                        "{}: {}",
                        process.bpmn_process_id,
                        run(harness, process.process_definition_key)
                    )
                })
                .collect();
            if runs.is_empty() {
                format!("{relative}\tdeployed")
            } else {
                format!("{relative}\tdeployed\t{}", runs.join("; "))
            }
        }
        Ok(record) => {
            // The first problem: the element it names and the error.
            let lines: Vec<&str> = record
                .rejection_reason
                .lines()
                .skip(1)
                .map(str::trim)
                .collect();
            let detail = match lines.iter().position(|l| l.starts_with("- ERROR:")) {
                Some(at) if at > 0 => format!("{} {}", lines[at - 1], lines[at]),
                Some(at) => lines[at].to_string(),
                None => lines
                    .first()
                    .copied()
                    .unwrap_or(record.rejection_reason.as_str())
                    .to_string(),
            };
            format!("{relative}\trejected\t{detail}")
        }
        Err(error) => format!("{relative}\tfailed\t{error}"),
    }
}

/// Starts an instance of the process without variables and tells where it got to.
fn run(harness: &Harness, definition_key: i64) -> String {
    let created = harness.execute(Record::command(
        -1,
        ProcessInstanceCreationIntent::Create,
        ProcessInstanceCreationRecord {
            process_definition_key: definition_key,
            ..Default::default()
        },
    ));
    let instance = match created {
        Ok(record) if record.record_type == RecordType::Event => record
            .value_as::<ProcessInstanceCreationRecord>()
            .map_or(-1, |c| c.process_instance_key),
        Ok(record) => return format!("not started ({})", record.rejection_reason),
        Err(error) => return format!("FAILED to start ({error})"),
    };
    let records = harness.records().of_instance(instance);
    let broken = records.list().iter().any(|r| {
        r.intent == ErrorIntent::Created.into()
            || r.rejection_type == RejectionType::ProcessingError
    });
    if broken {
        return format!("ENGINE ERROR\n{}", records.log());
    }
    let completed = records
        .list()
        .iter()
        .any(|r| r.intent == ProcessInstanceIntent::ElementCompleted.into() && r.key == instance);
    if completed {
        return "completed".to_string();
    }
    let mut waits = BTreeSet::new();
    for record in records.list() {
        if record.intent == IncidentIntent::Created.into()
            && let Some(incident) = record.value_as::<IncidentRecord>()
        {
            waits.insert(format!(
                "incident {} at '{}'",
                incident.error_type, incident.element_id
            ));
        } else if record.intent == JobIntent::Created.into()
            && let Some(job) = record.value_as::<JobRecord>()
        {
            waits.insert(format!("job '{}'", job.r#type));
        } else if record.intent == TimerIntent::Created.into() {
            waits.insert("timer".to_string());
        } else if record.intent == ProcessMessageSubscriptionIntent::Creating.into()
            && let Some(subscription) = record.value_as::<ProcessMessageSubscriptionRecord>()
        {
            waits.insert(format!("message '{}'", subscription.message_name));
        } else if record.intent == SignalSubscriptionIntent::Created.into()
            && let Some(subscription) = record.value_as::<SignalSubscriptionRecord>()
        {
            waits.insert(format!("signal '{}'", subscription.signal_name));
        } else if record.intent == ProcessInstanceIntent::ElementActivated.into()
            && let Some(element) = record.value_as::<ProcessInstanceRecord>()
            && element.bpmn_element_type == "USER_TASK"
        {
            waits.insert(format!("user task '{}'", element.element_id));
        }
    }
    format!(
        "waits ({})",
        waits.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// How many corpus models deploy, and run an instance, at least (raise them as they grow).
const DEPLOYED_AT_LEAST: usize = 57;
const RAN_AT_LEAST: usize = 45;

#[test]
fn every_corpus_model_deploys_or_is_rejected_as_recorded() {
    let Some(root) = corpora() else {
        println!("SKIPPED: ../shared/corpora is not there (a fresh clone has none)");
        return;
    };
    let harness = Harness::new(1);
    let outcomes: Vec<String> = models(&root)
        .iter()
        .map(|path| outcome(&harness, &root, path))
        .collect();
    assert!(
        !outcomes.iter().any(|o| o.contains("\tfailed\t")),
        "a deployment failed:\n{}",
        outcomes.join("\n")
    );
    let expectations =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/engine/corpus-expectations.tsv");
    let actual = outcomes.join("\n") + "\n";
    if std::env::var_os("BEELINE_UPDATE_CORPUS_EXPECTATIONS").is_some() {
        std::fs::write(&expectations, &actual).expect("write expectations");
    }
    let expected = std::fs::read_to_string(&expectations).unwrap_or_default();
    assert!(
        !outcomes
            .iter()
            .any(|o| o.contains("ENGINE ERROR") || o.contains("FAILED")),
        "an instance hit an engine error:\n{}",
        outcomes.join("\n")
    );
    let deployed = outcomes.iter().filter(|o| o.contains("\tdeployed")).count();
    let ran = outcomes
        .iter()
        .filter(|o| o.contains(": completed") || o.contains(": waits"))
        .count();
    println!(
        "corpus: {} models, {deployed} deployed, {} rejected; {ran} ran an instance",
        outcomes.len(),
        outcomes.len() - deployed
    );
    // The figures only grow: a change that makes fewer models deploy or run fails here even
    // with the expectations rewritten.
    assert!(
        deployed >= DEPLOYED_AT_LEAST && ran >= RAN_AT_LEAST,
        "fewer corpus models deploy ({deployed}, at least {DEPLOYED_AT_LEAST}) or run ({ran}, at least {RAN_AT_LEAST}) than before"
    );
    let mismatches: Vec<String> = expected
        .lines()
        .zip(actual.lines())
        .filter(|(e, a)| e != a)
        .map(|(e, a)| format!("expected {e}\n     got {a}"))
        .collect();
    assert!(
        mismatches.is_empty() && expected.lines().count() == actual.lines().count(),
        "outcomes differ from corpus-expectations.tsv:\n{}",
        mismatches.join("\n")
    );
}
