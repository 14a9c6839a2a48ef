//! The DMN models of `../shared/corpora/zeebe-models` (Camunda Modeler output used by
//! Zeebe's and the SDKs' tests): all deploy (strict parse), and evaluate as Zeebe would.

use std::path::{Path, PathBuf};

use beeline_dmn::DmnModel;
use serde_json::json;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/zeebe-models")
}

fn dmn_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dmn_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "dmn") {
                out.push(p);
            }
        }
    }
}

fn load(rel: &str) -> Option<DmnModel> {
    let path = corpus().join(rel);
    let xml = std::fs::read_to_string(&path).ok()?;
    match DmnModel::parse(&xml) {
        Ok(m) => Some(m),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

#[test]
fn every_model_deploys() {
    let root = corpus();
    if !root.is_dir() {
        println!("zeebe-models skipped: {} not found", root.display());
        return;
    }
    let mut files = Vec::new();
    dmn_files(&root, &mut files);
    assert!(files.len() >= 5, "expected the corpus' DMN models");
    for f in files {
        let xml = std::fs::read_to_string(&f).unwrap_or_default();
        let model = DmnModel::parse(&xml).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!model.decisions().is_empty(), "{}", f.display());
    }
}

#[test]
fn force_user_requirement_graph() {
    let Some(m) = load("camunda-zeebe/clients/java/src/test/resources/dmn/drg-force-user.dmn")
    else {
        return;
    };
    let ids: Vec<String> = m.decisions().into_iter().map(|d| d.id).collect();
    assert_eq!(ids, ["jedi_or_sith", "force_user"]);
    let r = m.evaluate(
        "force_user",
        &json!({"lightsaberColor": "blue", "height": 185}),
        None,
    );
    assert_eq!(r.failure, None);
    assert_eq!(r.output_json(), json!("Obi-Wan Kenobi"));
    // Required decisions first, as Zeebe lists them.
    let evaluated: Vec<&str> = r
        .evaluated_decisions
        .iter()
        .map(|d| d.decision_id.as_str())
        .collect();
    assert_eq!(evaluated, ["jedi_or_sith", "force_user"]);
    let last = &r.evaluated_decisions[1];
    assert_eq!(last.decision_type, "DECISION_TABLE");
    assert_eq!(last.evaluated_inputs.len(), 2);
    assert_eq!(last.evaluated_inputs[0].input_id, "InputClause_0qnqj25");
    assert_eq!(last.evaluated_inputs[0].input_name, "Jedi or Sith");
    assert_eq!(last.evaluated_inputs[1].value.to_json(), json!(185));
    assert_eq!(last.matched_rules.len(), 1);
    assert_eq!(last.matched_rules[0].rule_id, "DecisionRule_0uin2hk");
    assert_eq!(last.matched_rules[0].rule_index, 2);
    let out = &last.matched_rules[0].evaluated_outputs[0];
    assert_eq!(
        (out.output_id.as_str(), out.output_name.as_str()),
        ("OutputClause_0hhe1yo", "force_user")
    );

    let r = m.evaluate(
        "force_user",
        &json!({"lightsaberColor": "red", "height": 150}),
        None,
    );
    assert_eq!(r.output_json(), json!("unknown"));
    assert_eq!(r.evaluated_decisions[1].matched_rules[0].rule_index, 6);
}

#[test]
fn sdk_models() {
    if let Some(m) = load("camunda-8-js-sdk/src/__tests__/8.8/resources/dish-decision.dmn") {
        let r = m.evaluate(
            "dish-decision",
            &json!({"season": "Fall", "guestCount": 4}),
            None,
        );
        assert_eq!(r.output_json(), json!("Spareribs"));
    }
    if let Some(m) = load("camunda-8-js-sdk/src/__tests__/testdata/test-drd.dmn") {
        let r = m.evaluate("test-decision", &json!({"name": "camunda"}), None);
        assert_eq!(r.output_json(), json!("valid"));
    }
    if let Some(m) = load("camunda-8-js-sdk/src/__tests__/testdata/quarantine-duration.dmn") {
        let r = m.evaluate(
            "Decision_Quarantine",
            &json!({"employment_category": "critical infrastructure", "age": 25}),
            None,
        );
        assert_eq!(r.output_json(), json!("P5D"));
    }
}
