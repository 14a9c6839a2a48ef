//! Evaluations per second of compiled expressions, single-threaded.
//!
//! `cargo bench -p beeline-feel --bench eval`
//!
//! Variables come from a `HashMap<String, Value>` (SipHash) holding a few unrelated entries
//! too, as a process instance's scope would, and once from a FEEL context; the engine's
//! own provider reads state instead.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use beeline_feel::{Context, EvalContext, Expression, Value, Variables};

fn measure(name: &str, expr: &Expression, vars: &dyn Variables, check: &str) {
    let ctx = EvalContext::new(vars);
    let result = expr.evaluate(&ctx).map(|v| v.to_string());
    assert_eq!(result.as_deref(), Ok(check), "{name}");
    // Warm up, then run batches until a second has passed.
    for _ in 0..10_000 {
        black_box(expr.evaluate(black_box(&ctx)).ok());
    }
    let started = Instant::now();
    let mut n: u64 = 0;
    while started.elapsed() < Duration::from_secs(1) {
        for _ in 0..10_000 {
            black_box(expr.evaluate(black_box(&ctx)).ok());
        }
        n += 10_000;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{name:<28} {:>12.0} evaluations/s  ({:.0} ns each)",
        n as f64 / secs,
        secs * 1e9 / n as f64
    );
}

fn main() {
    let vars: HashMap<String, Value> = serde_json::from_str::<serde_json::Value>(
        r#"{
            "amount": 1500.75,
            "region": "EU",
            "orderId": "A-1001",
            "order": {
                "id": "A-1001",
                "customer": {"name": "Ada", "tier": "gold"},
                "items": [{"sku": "x", "price": 12.5}, {"sku": "y", "price": 7}, {"sku": "z", "price": 30}]
            },
            "retries": 3,
            "approved": true,
            "tags": ["a", "b", "c"]
        }"#,
    )
    .ok()
    .and_then(|j| j.as_object().cloned())
    .map(|m| m.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect())
    .unwrap_or_default();

    let parse = |src: &str| match Expression::parse(src) {
        Ok(e) => e,
        Err(e) => panic!("{src}: {e}"),
    };

    let condition = parse(r#"amount > 1000 and region = "EU""#);
    measure("condition", &condition, &vars, "true");
    // The same with a FEEL context as the provider (no hashing; the engine brings its own).
    let as_context: Context = vars
        .iter()
        .map(|(k, v)| (beeline_feel::Name::from(k.as_str()), v.clone()))
        .collect();
    measure("condition (context vars)", &condition, &as_context, "true");

    let mapping = parse(
        r#"{id: order.id, customer: order.customer.name, gold: order.customer.tier = "gold", total: sum(order.items.price), retries: retries - 1}"#,
    );
    measure(
        "context mapping",
        &mapping,
        &vars,
        r#"{id:"A-1001", customer:"Ada", gold:true, total:49.5, retries:2}"#,
    );

    let filter = parse("order.items[price > 10].sku");
    measure("filter + projection", &filter, &vars, r#"["x", "z"]"#);

    let job_type = parse(r#""payment-" + region"#);
    measure("string concatenation", &job_type, &vars, "payment-EU");

    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < Duration::from_secs(1) {
        for _ in 0..1_000 {
            black_box(Expression::parse(black_box(r#"amount > 1000 and region = "EU""#)).ok());
        }
        n += 1_000;
    }
    println!(
        "{:<28} {:>12.0} parses/s",
        "parse condition",
        n as f64 / started.elapsed().as_secs_f64()
    );
}
