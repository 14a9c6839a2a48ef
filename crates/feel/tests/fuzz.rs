//! FEEL under the fuzzing harness (`beeline-fuzz`): expressions (`fuzz/seeds/feel-expression`)
//! parsed and, where they parse, evaluated under tight limits; unary tests
//! (`fuzz/seeds/feel-unary-tests`) parsed and matched against a few inputs. A parse error must
//! point inside the text.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use beeline_feel::{Clock, EvalContext, Expression, Limits, UnaryTests, Value};

fn limits() -> Limits {
    Limits {
        max_depth: 256,
        max_list_len: 10_000,
        max_steps: 100_000,
    }
}

#[test]
fn fuzz_feel_expressions() {
    let mut vars = std::collections::HashMap::new();
    vars.insert("x".to_string(), Value::number(7));
    vars.insert("s".to_string(), Value::string("abc"));
    vars.insert(
        "list".to_string(),
        Value::from_json(&serde_json::json!([1, 2.5, "a", null])),
    );
    beeline_fuzz::fuzz("feel-expression", |data| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        match Expression::parse(text) {
            Ok(expr) => {
                let ctx = EvalContext::new(&vars)
                    .with_clock(Clock::from_epoch_millis(1_700_000_000_000))
                    .with_seed(1)
                    .with_limits(limits());
                if let Ok(value) = expr.evaluate(&ctx) {
                    let _ = value.to_json();
                    let _ = value.to_string();
                }
                let _ = expr.variables();
            }
            Err(e) => {
                assert!(e.position.offset <= text.len(), "{e:?} outside the text");
                assert!(e.position.line >= 1 && e.position.column >= 1, "{e:?}");
            }
        }
    });
}

#[test]
fn fuzz_feel_unary_tests() {
    beeline_fuzz::fuzz("feel-unary-tests", |data| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        match UnaryTests::parse(text) {
            Ok(tests) => {
                let ctx = EvalContext::new(&()).with_limits(limits());
                for input in [
                    Value::number(5),
                    Value::string("a"),
                    Value::Null,
                    Value::Bool(true),
                ] {
                    let _ = tests.matches(&input, &ctx);
                }
            }
            Err(e) => assert!(e.position.offset <= text.len(), "{e:?} outside the text"),
        }
    });
}
