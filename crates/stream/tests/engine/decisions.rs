use beeline_protocol::intent::{
    DecisionEvaluationIntent, DecisionIntent, DecisionRequirementsIntent, IncidentIntent,
};
use beeline_protocol::value::{DecisionEvaluationRecord, DeploymentRecord, IncidentRecord};
use beeline_protocol::{Record, RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

use crate::json;

pub const DISCOUNTS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="discounts" name="Discounts" namespace="http://beeline.test/dmn">
  <decision id="discount" name="Discount">
    <decisionTable id="table" hitPolicy="FIRST">
      <input id="in_tier" label="Customer tier"><inputExpression id="ie1" typeRef="string"><text>tier</text></inputExpression></input>
      <output id="out_pct" label="Percent" name="percent" typeRef="number"/>
      <rule id="gold"><inputEntry id="r1i"><text>"gold"</text></inputEntry><outputEntry id="r1o"><text>20</text></outputEntry></rule>
      <rule id="silver"><inputEntry id="r2i"><text>"silver"</text></inputEntry><outputEntry id="r2o"><text>10</text></outputEntry></rule>
      <rule id="other"><inputEntry id="r3i"><text>-</text></inputEntry><outputEntry id="r3o"><text>0</text></outputEntry></rule>
    </decisionTable>
  </decision>
  <decision id="strict" name="Strict">
    <decisionTable id="strict_table" hitPolicy="UNIQUE">
      <input id="s_in"><inputExpression id="s_ie" typeRef="string"><text>tier</text></inputExpression></input>
      <output id="s_out" name="flag" typeRef="boolean"/>
      <rule id="s1"><inputEntry id="s1i"><text>"gold"</text></inputEntry><outputEntry id="s1o"><text>true</text></outputEntry></rule>
      <rule id="s2"><inputEntry id="s2i"><text>-</text></inputEntry><outputEntry id="s2o"><text>false</text></outputEntry></rule>
    </decisionTable>
  </decision>
</definitions>"#;

pub fn evaluate(harness: &Harness, decision_id: &str, variables: &str) -> Record {
    harness
        .execute(Record::command(
            -1,
            DecisionEvaluationIntent::Evaluate,
            DecisionEvaluationRecord {
                decision_id: decision_id.to_string(),
                variables: variables.as_bytes().to_vec(),
                ..Default::default()
            },
        ))
        .unwrap()
}

#[test]
fn a_dmn_resource_deploys_its_graph_and_decisions_with_versions() {
    let harness = Harness::new(1);
    let deployed = harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    assert_eq!(
        deployed.record_type,
        RecordType::Event,
        "{}",
        deployed.rejection_reason
    );
    let deployment = deployed.value_as::<DeploymentRecord>().unwrap().clone();
    assert_eq!(deployment.decision_requirements_metadata.len(), 1);
    assert_eq!(
        deployment.decision_requirements_metadata[0].decision_requirements_id,
        "discounts"
    );
    let ids: Vec<(String, i32)> = deployment
        .decisions_metadata
        .iter()
        .map(|d| (d.decision_id.clone(), d.version))
        .collect();
    assert_eq!(ids, vec![("discount".into(), 1), ("strict".into(), 1)]);
    harness
        .records()
        .with_intent(DecisionRequirementsIntent::Created)
        .expect_one();
    harness
        .records()
        .with_intent(DecisionIntent::Created)
        .expect_count(2);
    let again = harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    let again = again.value_as::<DeploymentRecord>().unwrap();
    assert!(again.decision_requirements_metadata[0].is_duplicate);
    assert!(
        again
            .decisions_metadata
            .iter()
            .all(|d| d.is_duplicate && d.version == 1)
    );
    harness
        .records()
        .with_intent(DecisionIntent::Created)
        .expect_count(2);
    let changed = harness
        .deploy("discounts.dmn", &DISCOUNTS.replace(">20<", ">25<"))
        .unwrap();
    let changed = changed.value_as::<DeploymentRecord>().unwrap();
    assert_eq!(
        changed.decision_requirements_metadata[0].decision_requirements_version,
        2
    );
    assert!(changed.decisions_metadata.iter().all(|d| d.version == 2));
}

#[test]
fn a_broken_dmn_is_rejected_naming_what_and_where() {
    let harness = Harness::new(1);
    let rejection = harness
        .deploy(
            "broken.dmn",
            &DISCOUNTS.replace(r#""silver""#, r#""silver" +"#),
        )
        .unwrap();
    assert_eq!(rejection.rejection_type, RejectionType::InvalidArgument);
    assert!(
        rejection.rejection_reason.contains("'broken.dmn'"),
        "{}",
        rejection.rejection_reason
    );
    let not_xml = harness.deploy("junk.dmn", "<definitions").unwrap();
    assert_eq!(not_xml.rejection_type, RejectionType::InvalidArgument);
}

#[test]
fn evaluate_decision_answers_with_the_output_and_the_matched_rules() {
    let harness = Harness::new(1);
    harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    let evaluated = evaluate(&harness, "discount", r#"{"tier": "silver"}"#);
    assert_eq!(evaluated.intent, DecisionEvaluationIntent::Evaluated.into());
    let value = evaluated.value_as::<DecisionEvaluationRecord>().unwrap();
    assert_eq!(value.decision_output, "10");
    assert_eq!(value.decision_version, 1);
    let step = &value.evaluated_decisions[0];
    assert_eq!(step.decision_type, "DECISION_TABLE");
    assert_eq!(step.evaluated_inputs[0].input_value, "\"silver\"");
    assert_eq!(step.matched_rules[0].rule_id, "silver");
    assert_eq!(step.matched_rules[0].rule_index, 2);
    assert_eq!(
        step.matched_rules[0].evaluated_outputs[0].output_value,
        "10"
    );

    let failed = evaluate(&harness, "strict", r#"{"tier": "gold"}"#);
    assert_eq!(failed.intent, DecisionEvaluationIntent::Failed.into());
    let failure = failed.value_as::<DecisionEvaluationRecord>().unwrap();
    assert_eq!(failure.failed_decision_id, "strict");
    assert!(!failure.evaluation_failure_message.is_empty());

    let missing = evaluate(&harness, "nope", "{}");
    assert_eq!(missing.rejection_type, RejectionType::NotFound);
}

#[test]
fn a_business_rule_task_sets_the_decision_result_variable() {
    let harness = Harness::new(1);
    harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    harness.deploy_process(
        &ProcessBuilder::new("order")
            .start_event("s")
            .business_rule_task("rate", "discount", "discountPercent")
            .service_task("bill", "bill")
            .end_event("e"),
    );
    let instance = harness.create_instance("order", r#"{"tier": "gold"}"#);
    let (_, job) = harness.activate_job("bill");
    assert_eq!(
        json(&job.variables)["discountPercent"],
        serde_json::json!(20)
    );
    let evaluation = harness
        .records()
        .with_intent(DecisionEvaluationIntent::Evaluated)
        .expect_one();
    let value = evaluation.value_as::<DecisionEvaluationRecord>().unwrap();
    assert_eq!(
        (value.process_instance_key, value.element_id.as_str()),
        (instance, "rate")
    );
}

#[test]
fn a_failing_or_missing_decision_is_an_incident() {
    let harness = Harness::new(1);
    harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    harness.deploy_process(
        &ProcessBuilder::new("strict_order")
            .start_event("s")
            .business_rule_task("check", "strict", "flag")
            .end_event("e"),
    );
    harness.create_instance("strict_order", r#"{"tier": "gold"}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    assert_eq!(
        incident.value_as::<IncidentRecord>().unwrap().error_type,
        "DECISION_EVALUATION_ERROR"
    );
    harness
        .records()
        .with_intent(DecisionEvaluationIntent::Failed)
        .expect_one();

    harness.deploy_process(
        &ProcessBuilder::new("lost")
            .start_event("s")
            .business_rule_task("check", "no_such_decision", "x")
            .end_event("e"),
    );
    harness.create_instance("lost", "{}");
    let incidents = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .values::<IncidentRecord>();
    let missing = incidents
        .iter()
        .find(|i| i.error_type == "CALLED_DECISION_ERROR")
        .expect("a called decision incident");
    assert!(
        missing.error_message.contains("no_such_decision"),
        "{}",
        missing.error_message
    );
}

/// An output typed `string` whose rule yields a number: Zeebe's DMN engine does not convert
/// it to its typeRef (the DMN specification would give null).
const UNCONVERTED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="labels" name="Labels" namespace="http://beeline.test/dmn">
  <decision id="label" name="Label">
    <decisionTable id="label_table" hitPolicy="FIRST">
      <input id="l_in"><inputExpression id="l_ie" typeRef="string"><text>kind</text></inputExpression></input>
      <output id="l_out" name="label" typeRef="string"/>
      <rule id="number"><inputEntry id="n_i"><text>"number"</text></inputEntry><outputEntry id="n_o"><text>5</text></outputEntry></rule>
      <rule id="context"><inputEntry id="c_i"><text>"context"</text></inputEntry><outputEntry id="c_o"><text>{code: 7}</text></outputEntry></rule>
    </decisionTable>
  </decision>
</definitions>"#;

#[test]
fn outputs_are_not_converted_to_their_type_ref_as_zeebe_evaluates_them() {
    let harness = Harness::new(1);
    harness.deploy("labels.dmn", UNCONVERTED).unwrap();
    for (kind, expected) in [("number", "5"), ("context", r#"{"code":7}"#)] {
        let evaluated = evaluate(&harness, "label", &format!(r#"{{"kind": "{kind}"}}"#));
        assert_eq!(evaluated.intent, DecisionEvaluationIntent::Evaluated.into());
        let value = evaluated.value_as::<DecisionEvaluationRecord>().unwrap();
        assert_eq!(value.decision_output, expected, "{kind}");
        let step = &value.evaluated_decisions[0];
        assert_eq!(step.decision_output, expected, "{kind}");
        assert_eq!(
            step.matched_rules[0].evaluated_outputs[0].output_value, expected,
            "{kind}"
        );
    }
}
