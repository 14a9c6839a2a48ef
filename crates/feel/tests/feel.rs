//! Behaviour tests of the FEEL crate through its public API: the language, Camunda's
//! extension functions, null handling, JSON conversion as Zeebe does it, determinism, and
//! robustness against hostile input. One test binary on purpose (links are expensive).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashMap;

use beeline_feel::temporal::Zone;
use beeline_feel::{
    Clock, EvalContext, EvalError, Expression, Limits, UnaryTests, Value, WarningKind,
};
use serde_json::json;

fn vars(json: serde_json::Value) -> HashMap<String, Value> {
    json.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), Value::from_json(v)))
                .collect()
        })
        .unwrap_or_default()
}

/// Evaluates with JSON variables and a fixed clock, returning the result as JSON.
fn eval_with(src: &str, variables: serde_json::Value) -> serde_json::Value {
    let vars = vars(variables);
    let clock = Clock::from_epoch_millis(1_700_000_000_000); // 2023-11-14T22:13:20Z
    let ctx = EvalContext::new(&vars).with_clock(clock).with_seed(42);
    match Expression::parse(src) {
        Ok(e) => match e.evaluate(&ctx) {
            Ok(v) => v.to_json(),
            Err(err) => panic!("{src}: {err}"),
        },
        Err(err) => panic!("{src}: {err}"),
    }
}

fn eval(src: &str) -> serde_json::Value {
    eval_with(src, json!({}))
}

fn feel(src: &str) -> String {
    let e = Expression::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    let clock = Clock::from_epoch_millis(1_700_000_000_000);
    let ctx = EvalContext::new(&()).with_clock(clock);
    e.evaluate(&ctx)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .to_string()
}

mod language {
    use super::*;

    #[test]
    fn arithmetic_is_decimal() {
        assert_eq!(eval("0.1 + 0.2 = 0.3"), json!(true));
        assert_eq!(feel("1 / 3"), "0.3333333333333333333333333333333333");
        assert_eq!(eval("2 ** 10"), json!(1024));
        assert_eq!(eval("-3 ** 2"), json!(9));
        assert_eq!(eval("10 / 0"), json!(null));
        assert_eq!(eval("1.23e4"), json!(12300));
    }

    #[test]
    fn three_valued_logic() {
        assert_eq!(eval("true and null"), json!(null));
        assert_eq!(eval("false and null"), json!(false));
        assert_eq!(eval("true or null"), json!(true));
        assert_eq!(eval("false or null"), json!(null));
        assert_eq!(eval("null and false"), json!(false));
    }

    #[test]
    fn comparisons_and_null() {
        assert_eq!(eval("null = null"), json!(true));
        assert_eq!(eval("1 = null"), json!(false));
        assert_eq!(eval(r#"1 = "1""#), json!(null));
        assert_eq!(eval("5 between 1 and 10"), json!(true));
        assert_eq!(eval("5 in [1..10)"), json!(true));
        assert_eq!(eval("5 in (1, 2, 3)"), json!(false));
        assert_eq!(eval("5 in < 10"), json!(true));
        assert_eq!(eval(r#""b" in ["a", "b"]"#), json!(true));
    }

    #[test]
    fn missing_variables_are_null_as_in_zeebe() {
        assert_eq!(eval("x"), json!(null));
        assert_eq!(eval("x.y.z"), json!(null));
        assert_eq!(eval("x > 5"), json!(null));
        assert_eq!(eval("x = null"), json!(true));
        let e = Expression::parse("a.b + 1").unwrap();
        let r = e.evaluate_with_warnings(&EvalContext::new(&())).unwrap();
        assert!(r.value.is_null());
        assert_eq!(r.warnings[0].kind, WarningKind::NoVariableFound);
        assert_eq!(
            r.warnings[0].to_string(),
            "[NO_VARIABLE_FOUND] No variable found with name 'a'"
        );
    }

    #[test]
    fn lists_filters_paths_and_projection() {
        let order = json!({"order": {"customer": {"tier": "gold"},
            "items": [{"name": "a", "price": 5}, {"name": "b", "price": 15}, {"name": "c", "price": 25}]}});
        assert_eq!(
            eval_with("order.customer.tier", order.clone()),
            json!("gold")
        );
        assert_eq!(
            eval_with("order.items[price > 10].name", order.clone()),
            json!(["b", "c"])
        );
        assert_eq!(
            eval_with("order.items.price", order.clone()),
            json!([5, 15, 25])
        );
        assert_eq!(
            eval_with("sum(order.items.price)", order.clone()),
            json!(45)
        );
        assert_eq!(eval_with("order.items[1].name", order.clone()), json!("a"));
        assert_eq!(eval_with("order.items[-1].name", order), json!("c"));
        assert_eq!(eval("[1, 2, 3][item > 1]"), json!([2, 3]));
    }

    #[test]
    fn if_for_quantifiers_and_functions() {
        assert_eq!(eval("if 1 > 2 then \"a\" else \"b\""), json!("b"));
        assert_eq!(eval("for x in [1, 2, 3] return x * 2"), json!([2, 4, 6]));
        assert_eq!(
            eval("for i in 1..3, j in [10, 20] return i + j"),
            json!([11, 21, 12, 22, 13, 23])
        );
        assert_eq!(
            eval("for i in 1..5 return if i = 1 then 1 else i * partial[-1]"),
            json!([1, 2, 6, 24, 120])
        );
        assert_eq!(eval("some x in [1, 5] satisfies x > 3"), json!(true));
        assert_eq!(eval("every x in [1, 5] satisfies x > 3"), json!(false));
        assert_eq!(
            eval("{f: function(a, b) a - b, r: f(b: 1, a: 10)}.r"),
            json!(9)
        );
        assert_eq!(eval("(function(x) x * x)(4)"), json!(16));
        assert_eq!(
            eval(r#"{a: 1, b: a + 1, "c d": b * 2}"#),
            json!({"a": 1, "b": 2, "c d": 4})
        );
        assert_eq!(eval("3 instance of number"), json!(true));
        assert_eq!(eval("[1] instance of list<number>"), json!(true));
    }

    #[test]
    fn temporal_values_and_arithmetic() {
        assert_eq!(
            eval(r#"date("2024-01-31") + duration("P1M")"#),
            json!("2024-02-29")
        );
        assert_eq!(
            eval(r#"date("2024-03-01") - date("2024-02-01")"#),
            json!("P29D")
        );
        // A days-and-time duration is exact: across the DST switch the clock moves on.
        assert_eq!(
            eval(r#"@"2021-03-27T12:00:00@Europe/Paris" + @"P1D""#),
            json!("2021-03-28T13:00:00+02:00")
        );
        assert_eq!(
            eval(r#"@"2021-03-27T12:00:00@Europe/Paris" + @"P1M""#),
            json!("2021-04-27T12:00:00+02:00")
        );
        assert_eq!(
            feel(r#"@"2021-03-27T12:00:00@Europe/Paris" + @"PT24H""#),
            "2021-03-28T13:00:00@Europe/Paris"
        );
        assert_eq!(
            eval(r#"years and months duration(date("2011-12-22"), date("2013-08-24"))"#),
            json!("P1Y8M")
        );
        assert_eq!(
            eval(r#"date and time("2018-12-10T10:30:00@Etc/UTC").hour"#),
            json!(10)
        );
        assert_eq!(eval(r#"time("10:30:00") < time("11:00:00")"#), json!(true));
        assert_eq!(eval(r#"duration("P1D") > duration("PT23H")"#), json!(true));
        assert_eq!(eval(r#"duration("PT90M").hours"#), json!(1));
    }

    #[test]
    fn unary_tests_for_dmn_inputs() {
        let ctx = EvalContext::new(&());
        let t = UnaryTests::parse(r#"< 10, [20..30], "x""#).unwrap();
        assert!(t.matches(&Value::number(5), &ctx).unwrap());
        assert!(t.matches(&Value::number(25), &ctx).unwrap());
        assert!(!t.matches(&Value::number(15), &ctx).unwrap());
        assert!(t.matches(&Value::string("x"), &ctx).unwrap());
        let not = UnaryTests::parse("not(1, 2)").unwrap();
        assert!(!not.matches(&Value::number(1), &ctx).unwrap());
        assert!(not.matches(&Value::number(3), &ctx).unwrap());
        let q = UnaryTests::parse("? > 3 and ? < 5").unwrap();
        assert!(q.matches(&Value::number(4), &ctx).unwrap());
        assert!(UnaryTests::parse("-").unwrap().is_any());
    }

    #[test]
    fn compiled_forms_are_shareable_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Expression>();
        send_sync::<UnaryTests>();
        send_sync::<Value>();
        let e = Expression::parse("assert(1, false, \"no\")").unwrap();
        let err = e.evaluate(&EvalContext::new(&())).unwrap_err();
        assert_eq!(
            e.failure_message(&err),
            "failed to evaluate expression 'assert(1, false, \"no\")': Assertion failure on evaluate the expression: no"
        );
    }

    #[test]
    fn referenced_variables() {
        let e = Expression::parse("for x in items return x.price * rate + count(tax)").unwrap();
        let names: Vec<&str> = e.variables().iter().map(|n| &**n).collect();
        assert_eq!(names, ["items", "rate", "tax"]);
        let e = Expression::parse("{a: 1, b: a + c}").unwrap();
        assert_eq!(e.variables().len(), 1);
        assert_eq!(&*e.variables()[0], "c");
    }
}

/// Camunda's extensions to the DMN built-ins (feel-scala).
mod camunda_extensions {
    use super::*;

    #[test]
    fn string_join_with_delimiter_prefix_and_suffix() {
        assert_eq!(
            eval(r#"string join(["a", "b"], ", ", "[", "]")"#),
            json!("[a, b]")
        );
        assert_eq!(eval(r#"string join(["a", null, "c"], "-")"#), json!("a-c"));
        assert_eq!(eval(r#"string join([1, 2], "-")"#), json!(null));
    }

    #[test]
    fn extract_split_trim_blank_base64() {
        assert_eq!(
            eval(r#"extract("abc 123 def 456", "[0-9]+")"#),
            json!(["123", "456"])
        );
        assert_eq!(
            eval(r#"extract(input: "a1", pattern: "[a-z]")"#),
            json!(["a"])
        );
        assert_eq!(eval(r#"split("a,b,,c", ",")"#), json!(["a", "b", "", "c"]));
        assert_eq!(eval(r#"trim("  x  ")"#), json!("x"));
        assert_eq!(eval(r#"is blank("  ")"#), json!(true));
        assert_eq!(eval(r#"to base64("FEEL")"#), json!("RkVFTA=="));
    }

    #[test]
    fn context_put_merge_and_get_value() {
        assert_eq!(
            eval(r#"context put({a: 1}, "b", 2)"#),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(
            eval(r#"context put({x: {y: 1}}, ["x", "z"], 2)"#),
            json!({"x": {"y": 1, "z": 2}})
        );
        assert_eq!(
            eval(r#"context merge([{a: 1}, {b: 2}, {a: 3}])"#),
            json!({"a": 3, "b": 2})
        );
        assert_eq!(eval(r#"get value({a: {b: 7}}, ["a", "b"])"#), json!(7));
        assert_eq!(eval(r#"get value({a: 1}, "a")"#), json!(1));
        assert_eq!(
            eval(r#"get entries({a: 1})"#),
            json!([{"key": "a", "value": 1}])
        );
    }

    #[test]
    fn is_defined_and_get_or_else() {
        assert_eq!(eval_with("is defined(x)", json!({"x": null})), json!(true));
        assert_eq!(eval("is defined(x)"), json!(false));
        assert_eq!(eval_with("is defined(x.y)", json!({"x": {}})), json!(false));
        assert_eq!(eval(r#"get or else(x, "default")"#), json!("default"));
        assert_eq!(eval(r#"get or else(1, "default")"#), json!(1));
    }

    #[test]
    fn assert_fails_the_evaluation() {
        let e = Expression::parse(r#"assert(x, x > 0, "x must be positive")"#).unwrap();
        let vars = super::vars(json!({"x": -1}));
        let err = e.evaluate(&EvalContext::new(&vars)).unwrap_err();
        assert_eq!(err, EvalError::Assertion("x must be positive".to_string()));
        assert_eq!(eval_with("assert(x, x > 0)", json!({"x": 3})), json!(3));
    }

    #[test]
    fn temporal_helpers_use_the_given_clock() {
        assert_eq!(eval("now()"), json!("2023-11-14T22:13:20Z"));
        assert_eq!(eval("today()"), json!("2023-11-14"));
        assert_eq!(eval(r#"day of week(date("2019-09-17"))"#), json!("Tuesday"));
        assert_eq!(
            eval(r#"month of year(date("2019-09-17"))"#),
            json!("September")
        );
        assert_eq!(eval(r#"last day of month(date("2024-02-10"))"#), json!(29));
        assert_eq!(eval(r#"week of year(date("2019-09-17"))"#), json!(38));
        assert_eq!(
            eval(r#"date and time(date and time("2021-01-01T12:00:00Z"), "Europe/Berlin")"#),
            json!("2021-01-01T13:00:00+01:00")
        );
        // Without a clock, now() is null with a warning, never the wall clock.
        let e = Expression::parse("now()").unwrap();
        let r = e.evaluate_with_warnings(&EvalContext::new(&())).unwrap();
        assert!(r.value.is_null());
        assert_eq!(r.warnings.len(), 1);
        let berlin = Clock {
            instant_nanos: 1_700_000_000_000_000_000,
            zone: Zone {
                offset: 0,
                id: beeline_feel::temporal::zone::parse_zone_id("Europe/Berlin"),
            },
        };
        let ctx = EvalContext::new(&()).with_clock(berlin);
        assert_eq!(
            e.evaluate(&ctx).unwrap().to_string(),
            "2023-11-14T23:13:20@Europe/Berlin"
        );
    }

    #[test]
    fn list_extensions() {
        assert_eq!(eval("duplicate values([1, 2, 1, 3, 2])"), json!([1, 2]));
        assert_eq!(
            eval("partition([1, 2, 3, 4, 5], 2)"),
            json!([[1, 2], [3, 4], [5]])
        );
        assert_eq!(eval("is empty([])"), json!(true));
        assert_eq!(eval("and([true, true])"), json!(true));
        assert_eq!(eval("or([false, null])"), json!(null));
        assert_eq!(
            eval("sort([3, 1, 2], function(x, y) x > y)"),
            json!([3, 2, 1])
        );
    }

    #[test]
    fn uuid_and_random_number_are_seeded_and_replayable() {
        let a = eval("uuid()");
        let b = eval("uuid()");
        assert_eq!(a, b, "same seed, same value: replay gives the same result");
        let s = a.as_str().unwrap_or_default().to_string();
        assert_eq!(s.len(), 36);
        assert_eq!(&s[14..15], "4");
        assert_eq!(eval("uuid() = uuid()"), json!(false));
        let r = eval("random number()").as_f64().unwrap_or(-1.0);
        assert!((0.0..1.0).contains(&r));
        // No seed: null, not system randomness.
        let e = Expression::parse("uuid()").unwrap();
        assert!(e.evaluate(&EvalContext::new(&())).unwrap().is_null());
    }
}

/// Values meeting JSON the way Zeebe converts them.
mod json_conversion {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(eval("1 + 1"), json!(2));
        assert_eq!(eval("1.5 * 2"), json!(3));
        assert_eq!(eval("7 / 2"), json!(3.5));
        assert_eq!(eval_with("x * 1", json!({"x": 0.1})), json!(0.1));
        assert_eq!(
            eval_with("x + 1", json!({"x": 9007199254740993_u64})),
            json!(9007199254740994_u64)
        );
        assert_eq!(eval("100000000000000000000"), json!(1e20));
    }

    #[test]
    fn temporal_values_become_strings() {
        assert_eq!(eval(r#"@"2021-01-01""#), json!("2021-01-01"));
        assert_eq!(eval(r#"@"10:15""#), json!("10:15"));
        assert_eq!(eval(r#"@"10:15:30.25""#), json!("10:15:30.250"));
        assert_eq!(
            eval(r#"@"2021-01-01T10:15:00@Europe/Paris""#),
            json!("2021-01-01T10:15:00+01:00")
        );
        assert_eq!(eval(r#"@"P2DT3H""#), json!("P2DT3H"));
        assert_eq!(eval(r#"@"-P13M""#), json!("-P1Y1M"));
    }

    #[test]
    fn structures_round_trip_and_opaque_values_are_null() {
        let v = json!({"a": [1, "two", null, {"b": false}], "c": 1.25});
        assert_eq!(eval_with("x", json!({"x": v.clone()})), v);
        assert_eq!(eval("[1..2]"), json!(null));
        assert_eq!(eval("{f: function() 1}"), json!({"f": null}));
    }

    #[test]
    fn strings_stay_strings() {
        // A string that looks like a date is not a date unless converted.
        assert_eq!(eval_with("x + 1", json!({"x": "2021-01-01"})), json!(null));
        assert_eq!(
            eval_with(r#"date(x) + duration("P1D")"#, json!({"x": "2021-01-01"})),
            json!("2021-01-02")
        );
    }
}

/// Decimal arithmetic against vectors computed with Python's `decimal` module under the
/// decimal128 context (34 digits, half-even): every result must be the correctly rounded one.
mod decimal_vectors {
    use beeline_feel::Number;
    use beeline_feel::number::RoundMode;

    fn num(s: &str) -> Option<Number> {
        if s == "null" {
            None
        } else {
            Some(Number::parse(s).unwrap_or_else(|| panic!("unparseable {s}")))
        }
    }

    #[test]
    fn arithmetic_matches_the_reference() {
        let data = include_str!("data/decimal-vectors.txt");
        let mut checked = 0;
        for line in data
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let f: Vec<&str> = line.split(' ').collect();
            let (op, a, b, want) = (f[0], num(f[1]), f[2], num(f[3]));
            let a = a.unwrap_or(Number::ZERO);
            let got = if let Some(mode) = op.strip_prefix("round-") {
                let mode = match mode {
                    "up" => RoundMode::Up,
                    "down" => RoundMode::Down,
                    "half-up" => RoundMode::HalfUp,
                    "half-down" => RoundMode::HalfDown,
                    "half-even" => RoundMode::HalfEven,
                    "floor" => RoundMode::Floor,
                    _ => RoundMode::Ceiling,
                };
                a.round(b.parse().unwrap_or(0), mode)
            } else {
                let b = num(b).unwrap_or(Number::ZERO);
                match op {
                    "add" => a.checked_add(b),
                    "sub" => a.checked_sub(b),
                    "mul" => a.checked_mul(b),
                    "div" => a.checked_div(b),
                    "mod" => a.modulo(b),
                    _ => Some(Number::from_i64(a.cmp(&b) as i64)),
                }
            };
            assert_eq!(got, want, "{line}");
            checked += 1;
        }
        assert!(checked > 1800);
    }

    #[test]
    fn formatting_and_scale() {
        let n = |s: &str| Number::parse(s).unwrap();
        assert_eq!(n("10").checked_div(n("4")).unwrap().to_string(), "2.5");
        assert_eq!(n("1.00").checked_div(n("2")).unwrap().to_string(), "0.50");
        assert_eq!(n("1").checked_add(n("0.00")).unwrap().to_string(), "1.00");
        assert_eq!(n("2.50").checked_mul(n("2")).unwrap().to_string(), "5.00");
        assert_eq!(n("1E+3").to_string(), "1000");
        assert_eq!(n("-0.0").to_string(), "0.0");
        assert_eq!(n("0.000123").to_string(), "0.000123");
        assert_eq!(
            n("123456789012345678901234567890123456789").to_string(),
            "123456789012345678901234567890123500000"
        );
        assert_eq!(
            n("2").pow(n("100")).unwrap().to_string(),
            "1267650600228229401496703205376"
        );
        assert_eq!(n("1.1").pow(n("2")).unwrap().to_string(), "1.21");
        assert_eq!(
            n("2").sqrt().unwrap().to_string(),
            "1.414213562373095048801688724209698"
        );
        assert_eq!(n("16").sqrt().unwrap().to_string(), "4");
        assert!(n("9E+6144").checked_mul(n("10")).is_none());
    }
}

/// Bad input never panics or hangs; deep nesting and huge lists are bounded.
mod robustness {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn deep_nesting_is_a_parse_error_not_a_stack_overflow() {
        for src in [
            "(".repeat(100_000),
            "[".repeat(100_000),
            "{a:".repeat(100_000),
            "-".repeat(100_000) + "1",
            "not(".repeat(50_000),
            "if true then ".repeat(50_000),
            vec!["1"; 100_000].join("+"),
            vec!["x"; 100_000].join("."),
        ] {
            let e = Expression::parse(&src).unwrap_err();
            assert!(e.position.offset <= src.len());
        }
        assert!(UnaryTests::parse(&"(".repeat(100_000)).is_err());
    }

    #[test]
    fn huge_lists_and_loops_hit_limits() {
        let e = Expression::parse("for i in 1..100000000 return i").unwrap();
        assert!(matches!(
            e.evaluate(&EvalContext::new(&())),
            Err(EvalError::LimitExceeded(_))
        ));
        let e =
            Expression::parse("count(for i in 1..2000 return for j in 1..2000 return j)").unwrap();
        let ctx = EvalContext::new(&()).with_limits(Limits {
            max_steps: 100_000,
            ..Limits::default()
        });
        assert!(matches!(e.evaluate(&ctx), Err(EvalError::LimitExceeded(_))));
        // Unbounded recursion through a context function.
        let e = Expression::parse("{f: function(n) f(n + 1), r: f(0)}.r").unwrap();
        assert!(matches!(
            e.evaluate(&EvalContext::new(&())),
            Err(EvalError::LimitExceeded(_))
        ));
        // Catastrophic backtracking is cut off (or optimized away), never run for ever.
        let started = std::time::Instant::now();
        let e =
            Expression::parse(r#"matches("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "(a+)+(b)\1")"#)
                .unwrap();
        assert!(e.evaluate(&EvalContext::new(&())).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        for src in [
            r#"time("10:00:00") + duration("P99999999999999999D") * 1000000"#,
            r#"date("2020-01-01") + duration("P999999999999999999M")"#,
            r#"date("2020-01-01") - duration("P999999999999999999D")"#,
            r#"@"2020-01-01T00:00:00Z" + duration("P99999999999999999D") * 1000"#,
            r#"duration("P1D") * 10 ** 30"#,
            r#"duration("P1Y") * -1e30"#,
            "substring(\"abc\", -9223372036854775808)",
            "sublist([1, 2], -9223372036854775808, 1)",
            "[1, 2, 3][-9223372036854775807]",
            "10 ** 10000",
            "decimal(1, 999999999)",
            "date(999999999, 12, 31) + duration(\"P1D\")",
            "append(list: [1], item: 2)",
            // Found by fuzzing: a zero with a long fraction used as an integer.
            ".0000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
            "[1][.00000000000000000000000000000000000000000000000000000000000000000000000000001]",
            "substring(\"abc\", .000000000000000000000000000000000000000000000000000000000000000000)",
        ] {
            let e = Expression::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            let _ = e.evaluate(&EvalContext::new(&()));
        }
        assert_eq!(eval("append(list: [1], item: 2)"), json!([1, 2]));
    }

    /// A context whose entries double the previous one: 2^n leaves from n entries.
    fn doubling(n: usize, leaf: &str, wrap: &str) -> String {
        let mut s = format!("{{e0: {leaf}");
        for i in 1..=n {
            s.push_str(&format!(
                ", e{i}: {}",
                wrap.replace("X", &format!("e{}", i - 1))
            ));
        }
        s.push('}');
        s
    }

    #[test]
    fn shared_structure_cannot_explode() {
        let started = std::time::Instant::now();
        let lists = doubling(60, "[1, 1]", "[X, X]");
        // Equality, JSON, text, flattening and string building of a 2^60-leaf value all
        // stay bounded.
        for src in [
            format!("{lists}.e60 = {lists}.e60"),
            format!("{lists}.e60 = ({lists}).e60"),
            format!("string({lists}.e60)"),
            format!("count(flatten({lists}.e60))"),
            doubling(40, "\"ab\"", "X + X"),
            "distinct values(for i in 1..100000 return i)".to_string(),
            "context put({}, for i in 1..100000 return \"k\", 1)".to_string(),
            "for i in 1..100000 return count(partial)".to_string(),
        ] {
            let e = Expression::parse(&src).unwrap_or_else(|e| panic!("{e}"));
            if let Ok(v) = e.evaluate(&EvalContext::new(&())) {
                let json = v.to_json();
                assert!(json.to_string().len() < 200_000_000);
            }
        }
        let e = Expression::parse(&format!("{lists}.e60")).unwrap();
        let v = e.evaluate(&EvalContext::new(&())).unwrap();
        assert!(v.to_string().len() <= beeline_feel::MAX_DISPLAY_LEN + 3);
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }

    #[test]
    fn deeply_nested_values_drop_and_compare_without_recursion_limits() {
        let mut v = Value::Null;
        for _ in 0..200_000 {
            v = Value::list(vec![v]);
        }
        let w = v.clone();
        assert_eq!(beeline_feel::eval::compare::equals(&v, &w), Some(true));
        let mut other = Value::Null;
        for _ in 0..200_000 {
            other = Value::list(vec![other]);
        }
        assert_eq!(beeline_feel::eval::compare::equals(&v, &other), None);
        let _ = v.to_json();
        let _ = v.to_string();
        drop(v);
        drop(w);
        drop(other);
        // Nesting built by an expression (each iteration wraps the previous result).
        let e = Expression::parse("for i in 1..20000 return [partial[-1]]").unwrap();
        let _ = e.evaluate(&EvalContext::new(&()));
    }

    const ALPHABET: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ".",
        "..",
        ":",
        "?",
        "@",
        "\"",
        "\"a\"",
        "-",
        "+",
        "*",
        "**",
        "/",
        "=",
        "!=",
        "<",
        "<=",
        ">",
        ">=",
        "1",
        "2.5",
        "x",
        "y z",
        "and",
        "or",
        "not",
        "in",
        "for",
        "return",
        "if",
        "then",
        "else",
        "some",
        "every",
        "satisfies",
        "between",
        "instance",
        "of",
        "function",
        "null",
        "true",
        " ",
        "date(\"2020-01-01\")",
        "item",
        "`",
        "//",
        "/*",
        "\\",
        "é",
        "🐎",
        "\n",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_text_never_panics(s in ".{0,200}") {
            let _ = Expression::parse(&s).map(|e| e.evaluate(&EvalContext::new(&())));
            let _ = UnaryTests::parse(&s);
        }

        #[test]
        fn token_soup_never_panics(parts in proptest::collection::vec(proptest::sample::select(ALPHABET), 0..60)) {
            let s = parts.concat();
            if let Ok(e) = Expression::parse(&s) {
                let ctx = EvalContext::new(&()).with_limits(Limits { max_steps: 100_000, ..Limits::default() });
                let _ = e.evaluate(&ctx);
            }
            if let Ok(t) = UnaryTests::parse(&s) {
                let _ = t.matches(&Value::number(1), &EvalContext::new(&()));
            }
        }

        #[test]
        fn errors_point_inside_the_text(s in "[a-z0-9 +*/()\\[\\]{}.,:<>=-]{0,80}") {
            if let Err(e) = Expression::parse(&s) {
                prop_assert!(e.position.offset <= s.len());
                prop_assert!(e.position.line >= 1 && e.position.column >= 1);
                prop_assert!(!e.message.is_empty());
            }
        }
    }
}
