//! Decision evaluations per second, single-threaded: a 3-input, 10-rule FIRST table and a
//! two-decision requirements graph, with JSON variables as Zeebe passes them.
//!
//! `cargo bench -p beeline-dmn --bench decision`
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use beeline_dmn::DmnModel;
use serde_json::json;

fn rules() -> String {
    let mut out = String::new();
    for i in 0..10 {
        let low = i * 100;
        out.push_str(&format!(
            r#"<rule id="r{i}"><inputEntry><text>[{low}..{high})</text></inputEntry><inputEntry><text>"EU","US"</text></inputEntry><inputEntry><text>-</text></inputEntry><outputEntry><text>{fee}</text></outputEntry></rule>"#,
            high = low + 100,
            fee = i * 2
        ));
    }
    out
}

fn main() {
    let xml = format!(
        r##"<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="bench" name="bench" namespace="b">
          <decision id="fee" name="fee">
            <decisionTable hitPolicy="FIRST">
              <input id="i1"><inputExpression typeRef="number"><text>order.amount</text></inputExpression></input>
              <input id="i2"><inputExpression typeRef="string"><text>order.region</text></inputExpression></input>
              <input id="i3"><inputExpression typeRef="boolean"><text>order.express</text></inputExpression></input>
              <output id="o1" name="fee" typeRef="number"/>
              {rules}
            </decisionTable>
          </decision>
          <decision id="total" name="total">
            <informationRequirement><requiredDecision href="#fee"/></informationRequirement>
            <literalExpression><text>order.amount + fee</text></literalExpression>
          </decision>
        </definitions>"##,
        rules = rules()
    );
    let model = match DmnModel::parse(&xml) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    let vars = json!({"order": {"amount": 750, "region": "EU", "express": true}});
    for (id, expected) in [("fee", json!(14)), ("total", json!(764))] {
        let r = model.evaluate(id, &vars, None);
        assert_eq!(r.output_json(), expected, "{id}");
        let started = Instant::now();
        let mut n = 0u64;
        while started.elapsed() < Duration::from_secs(1) {
            for _ in 0..1_000 {
                black_box(model.evaluate(black_box(id), black_box(&vars), None));
            }
            n += 1_000;
        }
        println!(
            "decision '{id}' {:>12.0} evaluations/s",
            n as f64 / started.elapsed().as_secs_f64()
        );
    }
}
