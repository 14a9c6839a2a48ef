//! Every model of the shared corpora (Zeebe's and the SDKs' test models, the BPMN MIWG
//! reference models) deploys, or is rejected with a clear reason — the outcome recorded for it
//! in `corpus-expectations.tsv` (the upstream test named in the corpus MANIFEST decides what is
//! expected; a model using an element Beeline does not run yet is rejected naming the element).
//! Set `BEELINE_UPDATE_CORPUS_EXPECTATIONS=1` to rewrite the file after a deliberate change.

use std::path::{Path, PathBuf};

use beeline_protocol::RecordType;
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
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// One line per model: `path \t deployed` or `path \t rejected \t first line of the reason`.
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
        Ok(record) if record.record_type == RecordType::Event => format!("{relative}\tdeployed"),
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
    let deployed = outcomes
        .iter()
        .filter(|o| o.ends_with("\tdeployed"))
        .count();
    println!(
        "corpus: {} models, {deployed} deployed, {} rejected",
        outcomes.len(),
        outcomes.len() - deployed
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
