//! The shape of what evaluation reports: hit policies with their matched rules, failures
//! with the failed decision, deployment errors with element, expression and position.

use beeline_dmn::{DmnError, DmnModel};
use serde_json::json;

fn table(hit_policy: &str, rules: &[(&str, &str)]) -> String {
    let rules: String = rules
        .iter()
        .enumerate()
        .map(|(i, (input, output))| {
            format!(
                r#"<rule id="r{}"><inputEntry><text>{input}</text></inputEntry><outputEntry><text>{output}</text></outputEntry></rule>"#,
                i + 1
            )
        })
        .collect();
    format!(
        r#"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="drg1" name="DRG One" namespace="t">
          <decision id="d" name="Decision D">
            <decisionTable {hit_policy}>
              <input id="i1" label="Amount"><inputExpression><text>amount</text></inputExpression></input>
              <output id="o1" name="result"><outputValues><text>"high", "medium", "low"</text></outputValues></output>
              {rules}
            </decisionTable>
          </decision>
        </definitions>"#
    )
}

fn eval(xml: &str, amount: i64) -> beeline_dmn::DecisionEvaluation {
    let m = DmnModel::parse(xml).unwrap_or_else(|e| panic!("{e}"));
    m.evaluate("d", &json!({ "amount": amount }), None)
}

const RULES: &[(&str, &str)] = &[
    ("&gt; 10", r#""low""#),
    ("&gt; 100", r#""high""#),
    ("&gt; 50", r#""medium""#),
];

#[test]
fn models_are_shareable_across_threads() {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<DmnModel>();
}

#[test]
fn model_metadata() {
    let m = DmnModel::parse(&table("", RULES)).unwrap();
    assert_eq!((m.id(), m.name()), ("drg1", "DRG One"));
    let d = &m.decisions()[0];
    assert_eq!(
        (d.id.as_str(), d.name.as_str(), d.decision_type),
        ("d", "Decision D", "DECISION_TABLE")
    );
}

#[test]
fn unique_fails_on_overlap_and_names_the_decision() {
    let r = eval(&table(r#"hitPolicy="UNIQUE""#, RULES), 200);
    let f = r.failure.expect("multiple matches must fail");
    assert_eq!(f.decision_id, "d");
    assert!(f.message.contains("multiple rules match"), "{}", f.message);
    assert!(r.output.is_null());
    let r = eval(&table(r#"hitPolicy="UNIQUE""#, RULES), 20);
    assert_eq!(r.output_json(), json!("low"));
    assert_eq!(r.evaluated_decisions[0].matched_rules[0].rule_id, "r1");
}

#[test]
fn single_hit_policies() {
    assert_eq!(
        eval(&table(r#"hitPolicy="FIRST""#, RULES), 200).output_json(),
        json!("low")
    );
    assert_eq!(
        eval(&table(r#"hitPolicy="PRIORITY""#, RULES), 200).output_json(),
        json!("high")
    );
    assert_eq!(
        eval(&table(r#"hitPolicy="PRIORITY""#, RULES), 60).output_json(),
        json!("medium")
    );
    let any = eval(&table(r#"hitPolicy="ANY""#, RULES), 200);
    assert!(any.failure.is_some(), "ANY with different outputs fails");
    assert_eq!(
        eval(&table(r#"hitPolicy="FIRST""#, RULES), 5).output_json(),
        json!(null)
    );
}

#[test]
fn multi_hit_policies_and_aggregations() {
    assert_eq!(
        eval(&table(r#"hitPolicy="RULE ORDER""#, RULES), 200).output_json(),
        json!(["low", "high", "medium"])
    );
    assert_eq!(
        eval(&table(r#"hitPolicy="OUTPUT ORDER""#, RULES), 200).output_json(),
        json!(["high", "medium", "low"])
    );
    let collect = eval(&table(r#"hitPolicy="COLLECT""#, RULES), 200);
    assert_eq!(collect.output_json(), json!(["low", "high", "medium"]));
    let rules: Vec<usize> = collect.evaluated_decisions[0]
        .matched_rules
        .iter()
        .map(|m| m.rule_index)
        .collect();
    assert_eq!(rules, [1, 2, 3]);
    let numbers: &[(&str, &str)] = &[("&gt; 10", "1"), ("&gt; 100", "5"), ("&gt; 50", "3")];
    let agg = |a: &str, amount| {
        eval(
            &table(
                &format!(r#"hitPolicy="COLLECT" aggregation="{a}""#),
                numbers,
            )
            .replace(
                r#"<outputValues><text>"high", "medium", "low"</text></outputValues>"#,
                "",
            ),
            amount,
        )
        .output_json()
    };
    assert_eq!(agg("SUM", 200), json!(9));
    assert_eq!(agg("MIN", 200), json!(1));
    assert_eq!(agg("MAX", 200), json!(5));
    assert_eq!(agg("COUNT", 200), json!(3));
    assert_eq!(agg("COUNT", 1), json!(0));
    assert_eq!(agg("SUM", 1), json!(null));
}

#[test]
fn broken_expression_rejects_deployment_with_element_and_position() {
    let xml = table("", &[("&gt; 10", r#""low" +"#)]);
    match DmnModel::parse(&xml) {
        Err(DmnError::Expression {
            element_id,
            expression,
            line,
            column,
            ..
        }) => {
            assert_eq!(element_id, "r1");
            assert_eq!(expression, r#""low" +"#);
            assert_eq!((line, column), (1, 8));
        }
        other => panic!("{other:?}"),
    }
    // Lenient parsing keeps the model; the broken entry evaluates to null.
    let m = DmnModel::parse_lenient(&xml, &[]).unwrap();
    assert_eq!(m.problems().len(), 1);
    let err = DmnModel::parse("<definitions><decision").unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
}

#[test]
fn multiple_outputs_make_a_context_and_missing_inputs_are_null() {
    let xml = r#"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="x" name="x" namespace="t">
      <decision id="d" name="d">
        <decisionTable hitPolicy="FIRST">
          <input id="i1"><inputExpression><text>customer.tier</text></inputExpression></input>
          <output id="o1" name="discount"/><output id="o2" name="label"/>
          <rule id="a"><inputEntry><text>"gold"</text></inputEntry><outputEntry><text>0.1</text></outputEntry><outputEntry><text>"Gold"</text></outputEntry></rule>
          <rule id="b"><inputEntry><text>-</text></inputEntry><outputEntry><text>0</text></outputEntry><outputEntry><text>"Other"</text></outputEntry></rule>
        </decisionTable>
      </decision>
    </definitions>"#;
    let m = DmnModel::parse(xml).unwrap();
    let r = m.evaluate("d", &json!({"customer": {"tier": "gold"}}), None);
    assert_eq!(r.output_json(), json!({"discount": 0.1, "label": "Gold"}));
    let r = m.evaluate("d", &json!({}), None);
    assert_eq!(r.output_json(), json!({"discount": 0, "label": "Other"}));
    assert_eq!(
        r.evaluated_decisions[0].evaluated_inputs[0].input_name,
        "customer.tier"
    );
    assert!(r.evaluated_decisions[0].evaluated_inputs[0].value.is_null());
    let missing = m.evaluate("nope", &json!({}), None);
    assert_eq!(
        missing.failure.map(|f| f.decision_id),
        Some("nope".to_string())
    );
}

#[test]
fn literal_expressions_bkms_and_now_from_the_clock() {
    let xml = r##"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="x" name="x" namespace="t">
      <businessKnowledgeModel id="bkm" name="fee">
        <encapsulatedLogic><formalParameter name="amount" typeRef="number"/>
          <literalExpression><text>amount * 0.02</text></literalExpression></encapsulatedLogic>
      </businessKnowledgeModel>
      <decision id="d" name="d">
        <knowledgeRequirement><requiredKnowledge href="#bkm"/></knowledgeRequirement>
        <literalExpression><text>{fee: fee(total), year: today().year}</text></literalExpression>
      </decision>
    </definitions>"##;
    let m = DmnModel::parse(xml).unwrap();
    let clock = beeline_feel::Clock::from_epoch_millis(1_700_000_000_000);
    let r = m.evaluate("d", &json!({"total": 250}), Some(clock));
    assert_eq!(r.output_json(), json!({"fee": 5, "year": 2023}));
    assert_eq!(r.evaluated_decisions[0].decision_type, "LITERAL_EXPRESSION");
}

/// An output typed `string` whose rules yield a number and a context; a literal expression
/// typed `number` that yields a string.
const UNTYPED_RESULTS: &str = r#"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="drg" name="Typed" namespace="t">
  <decision id="table" name="Table">
    <variable name="table" typeRef="string"/>
    <decisionTable hitPolicy="FIRST">
      <input id="i1"><inputExpression><text>kind</text></inputExpression></input>
      <output id="o1" name="label" typeRef="string"/>
      <rule id="number"><inputEntry><text>"number"</text></inputEntry><outputEntry><text>5</text></outputEntry></rule>
      <rule id="context"><inputEntry><text>"context"</text></inputEntry><outputEntry><text>{a: 1}</text></outputEntry></rule>
    </decisionTable>
  </decision>
  <decision id="literal" name="Literal">
    <variable name="literal" typeRef="number"/>
    <literalExpression typeRef="number"><text>"five"</text></literalExpression>
  </decision>
</definitions>"#;

#[test]
fn zeebe_semantics_keep_results_that_do_not_fit_their_type_ref() {
    let spec = DmnModel::parse(UNTYPED_RESULTS).unwrap();
    let zeebe = spec.clone().with_semantics(beeline_dmn::Semantics::Zeebe);
    for (kind, expected) in [("number", json!(5)), ("context", json!({"a": 1}))] {
        let variables = json!({ "kind": kind });
        // The specification converts to the typeRef: not a string, so null.
        let r = spec.evaluate("table", &variables, None);
        assert_eq!(r.output_json(), json!(null), "{kind}");
        // Zeebe keeps the value: in the output, the evaluated decision, the matched rule.
        let r = zeebe.evaluate("table", &variables, None);
        assert_eq!(r.output_json(), expected, "{kind}");
        let step = &r.evaluated_decisions[0];
        assert_eq!(step.output.to_json(), expected, "{kind}");
        assert_eq!(
            step.matched_rules[0].evaluated_outputs[0].value.to_json(),
            expected,
            "{kind}"
        );
    }
    assert_eq!(
        spec.evaluate("literal", &json!({}), None).output_json(),
        json!(null)
    );
    assert_eq!(
        zeebe.evaluate("literal", &json!({}), None).output_json(),
        json!("five")
    );
}
