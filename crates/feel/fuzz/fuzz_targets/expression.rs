//! `cargo +nightly fuzz run expression fuzz/corpus/expression ../../fuzz/seeds/feel-expression` (from `crates/feel`; the
//! first directory collects the corpus and is git-ignored): any text is parsed; whatever
//! parses is evaluated under tight limits. A parse error must point inside the text; nothing
//! may panic, overflow the stack or hang.

#![no_main]

use beeline_feel::{Clock, EvalContext, Expression, Limits, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Expression::parse(text) {
        Ok(expr) => {
            let mut vars = std::collections::HashMap::new();
            vars.insert("x".to_string(), Value::number(7));
            vars.insert("s".to_string(), Value::string("abc"));
            let ctx = EvalContext::new(&vars)
                .with_clock(Clock::from_epoch_millis(1_700_000_000_000))
                .with_seed(1)
                .with_limits(Limits {
                    max_depth: 256,
                    max_list_len: 10_000,
                    max_steps: 100_000,
                });
            if let Ok(v) = expr.evaluate(&ctx) {
                let _ = v.to_json();
                let _ = v.to_string();
            }
            let _ = expr.variables();
        }
        Err(e) => {
            assert!(e.position.offset <= text.len());
            assert!(e.position.line >= 1 && e.position.column >= 1);
        }
    }
});
