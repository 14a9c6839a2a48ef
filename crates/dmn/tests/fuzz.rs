//! The DMN parser and evaluator under the fuzzing harness (`beeline-fuzz`): the seeds in
//! `fuzz/seeds/dmn`, the DMN TCK's models where present, then mutations of them. Every decision
//! of what parses is evaluated under tight limits.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use beeline_dmn::DmnModel;
use beeline_feel::{Clock, Context, EvalContext, Limits, Value};

fn target(data: &[u8]) {
    let Ok(xml) = std::str::from_utf8(data) else {
        return;
    };
    let model = match DmnModel::parse(xml) {
        Ok(model) => model,
        Err(error) => {
            assert!(!error.to_string().is_empty(), "an error without a message");
            return;
        }
    };
    let variables = Value::from_json(&serde_json::json!({
        "weight": 3, "customer": "gold", "amount": 120.5, "age": 40, "items": [1, 2, 3],
        "date": "2024-01-01", "flag": true, "name": "x"
    }));
    let Value::Context(variables) = variables else {
        return;
    };
    let variables: &Context = &variables;
    let ctx = EvalContext::new(variables)
        .with_clock(Clock::from_epoch_millis(1_700_000_000_000))
        .with_limits(Limits {
            max_depth: 256,
            max_list_len: 10_000,
            max_steps: 100_000,
        });
    for decision in model.decisions() {
        let result = model.evaluate_with(&decision.id, &ctx);
        let _ = result.output_json();
    }
}

#[test]
fn fuzz_dmn() {
    beeline_fuzz::fuzz_with("dmn", beeline_fuzz::shared_corpus("dmn-tck", "dmn"), target);
}
