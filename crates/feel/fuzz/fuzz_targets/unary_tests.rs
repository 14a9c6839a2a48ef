//! `cargo +nightly fuzz run unary_tests fuzz/corpus/unary_tests ../../fuzz/seeds/feel-unary-tests` (from `crates/feel`; the
//! first directory collects the corpus and is git-ignored): DMN input entries; what
//! parses is matched against a few inputs.

#![no_main]

use beeline_feel::{EvalContext, Limits, UnaryTests, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match UnaryTests::parse(text) {
        Ok(tests) => {
            let ctx = EvalContext::new(&()).with_limits(Limits {
                max_depth: 256,
                max_list_len: 10_000,
                max_steps: 100_000,
            });
            for input in [Value::number(5), Value::string("a"), Value::Null, Value::Bool(true)] {
                let _ = tests.matches(&input, &ctx);
            }
        }
        Err(e) => assert!(e.position.offset <= text.len()),
    }
});
