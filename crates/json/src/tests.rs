use proptest::prelude::*;
use serde_json::Value as Json;

use super::*;

fn canon(text: &str) -> String {
    canonical(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn refused(text: &str) -> Error {
    let checked = check(text);
    match canonical(text) {
        Ok(out) => panic!("{text} was accepted as {out}"),
        Err(e) => {
            assert_eq!(checked, Err(e.clone()), "checking {text} refuses it alike");
            e
        }
    }
}

#[test]
fn doubles_keep_every_digit_they_need() {
    for text in [
        "0.12496785020850265",
        "0.9376180953623889",
        "123456789.12345679",
        "0.1",
        "-2.5",
        "1e-7",
        "5e-324",
        "1.7976931348623157e308",
        "2.2250738585072014e-308",
        "-0.0",
        "1.0",
        "9007199254740993.0",
    ] {
        let out = canon(text);
        let back: f64 = out.parse().unwrap();
        let sent: f64 = text.parse().unwrap();
        assert_eq!(back.to_bits(), sent.to_bits(), "{text} came back as {out}");
    }
    assert_eq!(canon("0.12496785020850265"), "0.12496785020850265");
    assert_eq!(canon("123456789.12345679"), "123456789.12345679");
}

#[test]
fn numbers_are_written_as_zeebe_keeps_them() {
    for (sent, kept) in [
        ("-0", "0"),
        ("-0.0", "-0.0"),
        ("0e5", "0.0"),
        ("1.50", "1.5"),
        ("1E+300", "1e+300"),
        ("1e3", "1000.0"),
        ("1.0E-7", "1e-7"),
        ("1e-07", "1e-7"),
        ("100", "100"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("18446744073709551615", "18446744073709551615"),
        ("9007199254740993", "9007199254740993"),
        ("0.1000000000000000055511151231257827", "0.1"),
        ("3.141592653589793238462643383279", "3.141592653589793"),
        ("1e-400", "0.0"),
        // Beyond 64 bits, the shortest text of a double as JavaScript and Go print it.
        ("-610787324020353100000", "-6.107873240203531e+20"),
        ("100000000000000000000", "1e+20"),
        ("36893488147419103000", "3.6893488147419103e+19"),
        ("-1e-400", "-0.0"),
    ] {
        assert_eq!(canon(sent), kept, "{sent}");
    }
}

#[test]
fn integers_beyond_64_bits_and_numbers_beyond_doubles_are_refused() {
    for text in [
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "99999999999999990000",
    ] {
        let e = refused(&format!(r#"{{"n": [1, {text}]}}"#));
        assert!(
            matches!(e.kind(), ErrorKind::IntegerOutOfRange(t) if t == text),
            "{e}"
        );
        assert_eq!(e.path(), "n[1]");
        assert_eq!(e.column(), 11, "{e}");
    }
    let e = refused(&format!("{{\"n\": {}}}", "9".repeat(400)));
    assert!(e.to_string().contains("(400 digits)"), "{e}");
    for text in ["1e400", "-1e309", "1.8e308"] {
        let e = refused(text);
        assert!(matches!(e.kind(), ErrorKind::NumberOutOfRange(_)), "{e}");
    }
    assert!(
        refused(r#"{"big": 1e400}"#)
            .to_string()
            .starts_with("the number 1e400 is beyond the range of a 64-bit floating-point number")
    );
}

#[test]
fn strings_are_decoded_and_escaped_as_serde_json_writes_them() {
    for (sent, kept) in [
        (r#""plain""#, r#""plain""#),
        (r#""\u00e9\/\"""#, r#""é/\"""#),
        (r#""\ud83d\ude00 \uD83D\uDE00""#, "\"😀 😀\""),
        (r#""\u0001\b\f\n\r\t\u001F""#, r#""\u0001\b\f\n\r\t\u001f""#),
        (r#""\u007f\u2028""#, "\"\u{7f}\u{2028}\""),
        (r#""back\\slash""#, r#""back\\slash""#),
        ("\"zaß 🐝\"", "\"zaß 🐝\""),
    ] {
        assert_eq!(canon(sent), kept, "{sent}");
    }
}

#[test]
fn lone_surrogates_and_raw_control_characters_are_refused() {
    for text in [
        r#"{"s": "\ud800"}"#,
        r#"{"s": "a\udc00b"}"#,
        r#"{"s": "\ud800\u0041"}"#,
        r#"{"s": "\ud800\ud800"}"#,
    ] {
        let e = refused(text);
        assert!(
            matches!(e.kind(), ErrorKind::LoneSurrogate(_)),
            "{text}: {e}"
        );
        assert_eq!(e.path(), "s");
        assert!(!e.is_syntax());
    }
    let e = refused("{\"s\": \"tab\there\"}");
    assert_eq!(e.kind(), &ErrorKind::ControlCharacter(b'\t'));
    assert!(e.is_syntax());
}

#[test]
fn repeated_keys_are_refused_at_any_depth_and_count() {
    let e = refused(r#"{"a": 1, "b": 2, "a": 3}"#);
    assert_eq!(e.kind(), &ErrorKind::DuplicateKey("a".into()));
    assert_eq!((e.path(), e.column()), ("", 18));
    let e = refused(r#"{"o": {"x": [{"k": 1, "\u006b": 2}]}}"#);
    assert_eq!(e.kind(), &ErrorKind::DuplicateKey("k".into()));
    assert_eq!(e.path(), "o.x[0]");
    let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
    let ok = format!("{{{}}}", many.join(","));
    assert!(canonical(&ok).is_ok());
    let repeated = format!("{{{}, \"k57\": 0}}", many.join(","));
    assert_eq!(
        refused(&repeated).kind(),
        &ErrorKind::DuplicateKey("k57".into())
    );
}

#[test]
fn nesting_is_limited_without_recursion() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(canon(&nested(MAX_DEPTH)), nested(MAX_DEPTH));
    // Whatever is accepted, serde_json reads too.
    serde_json::from_str::<Json>(&nested(MAX_DEPTH)).unwrap();
    assert_eq!(refused(&nested(MAX_DEPTH + 1)).kind(), &ErrorKind::TooDeep);
    assert_eq!(
        refused(&"[{\"a\":".repeat(100_000)).kind(),
        &ErrorKind::TooDeep
    );
}

#[test]
fn not_json_is_refused_with_where() {
    for (text, expected) in [
        (
            "{'a': 1}",
            "expected a key in double quotes (line 1, column 2)",
        ),
        ("{\"a\": NaN}", "expected a value at 'a' (line 1, column 7)"),
        (
            "{\"a\": 1} x",
            "expected the end of the text after the value (line 1, column 10)",
        ),
        (
            "{\"a\": 01}",
            "expected ',' or '}' after an object entry at 'a' (line 1, column 8)",
        ),
        (
            "{\"a\": 1.}",
            "expected a digit after the decimal point at 'a' (line 1, column 9)",
        ),
        (
            "{\"a\":\n  [1,]}",
            "expected a value at 'a[1]' (line 2, column 6)",
        ),
        (
            "{\"a\": \"x",
            "the text ends where the closing '\"' of a string should be at 'a' (line 1, column 9)",
        ),
        ("\u{feff}{}", "expected a value (line 1, column 1)"),
        (
            "",
            "the text ends where a value should be (line 1, column 1)",
        ),
        (
            r#"{"a": "\x"}"#,
            "expected an escape ('\\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t' or '\\u' and four hex digits) at 'a' (line 1, column 9)",
        ),
    ] {
        let e = refused(text);
        assert!(e.is_syntax(), "{text}");
        assert_eq!(e.to_string(), expected, "{text}");
    }
    assert_eq!(
        canonical_bytes(b"{\"a\": \"\xff\"}")
            .unwrap_err()
            .to_string(),
        "the text is not UTF-8 (line 1, column 8)"
    );
}

#[test]
fn documents_are_objects_listed_in_their_order() {
    let doc =
        document(" { \"z\" : [ 1 , 2.50 ] , \"a\" : { \"y\" : null, \"b\" : \"\\u00e9\" } } ")
            .unwrap();
    assert_eq!(
        doc,
        vec![
            ("z".to_string(), "[1,2.5]".to_string()),
            ("a".to_string(), r#"{"y":null,"b":"é"}"#.to_string()),
        ]
    );
    assert_eq!(document("{}").unwrap(), vec![]);
    for (text, kind) in [
        ("[1]", Kind::Array),
        ("1", Kind::Integer),
        ("1.5", Kind::Float),
        ("\"x\"", Kind::String),
        ("null", Kind::Null),
        ("true", Kind::Bool),
    ] {
        assert_eq!(
            document(text).unwrap_err().kind(),
            &ErrorKind::NotAnObject(kind)
        );
        assert_eq!(
            canonical_document(text).unwrap_err().kind(),
            &ErrorKind::NotAnObject(kind)
        );
    }
    assert_eq!(
        canonical_document(" {\"a\" : 1.0 }").unwrap(),
        r#"{"a":1.0}"#
    );
}

#[test]
fn double_text_is_what_serde_json_prints() {
    for value in [0.1, -0.0, 1e300, 5e-324, 123456789.12345679, 1.0] {
        assert_eq!(
            double_text(value).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }
    assert_eq!(double_text(f64::NAN), None);
    assert_eq!(double_text(f64::INFINITY), None);
}

/// `1.5e3` as Java's `Double.toString` lays it out: `1.5E3`, `1.0E-7`.
fn java_like(shortest: &str) -> String {
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((shortest, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exponent}")
}

/// Arbitrary JSON: doubles of any bit pattern, integers of the whole 64-bit range, unicode
/// strings (escapes, surrogate pairs, control characters), nesting.
fn arbitrary_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("JSON has no infinities or NaN", |f| f.is_finite())
            .prop_map(Json::from),
        (0.0f64..1.0).prop_map(Json::from),
        any::<String>().prop_map(Json::String),
        "[\\u{0}-\\u{1f}\"\\\\/é😀\u{2028}]{0,8}".prop_map(Json::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Json::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The canonical text of any value is what serde_json prints for it, whether it came
    /// compact or pretty; and reading it again changes nothing.
    #[test]
    fn canonical_text_is_serde_jsons_print(value in arbitrary_json()) {
        let compact = serde_json::to_string(&value).unwrap();
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        prop_assert_eq!(&canon(&compact), &compact);
        prop_assert!(check(&pretty).is_ok());
        prop_assert_eq!(&canon(&pretty), &compact);
        let back: Json = serde_json::from_str(&canon(&compact)).unwrap();
        prop_assert_eq!(back, value);
    }

    /// Any double, in any of the forms clients write it (Rust, Java, Python, exponent or
    /// not), comes back as the same double, in its shortest text.
    #[test]
    fn every_double_round_trips(bits in any::<u64>()) {
        let value = f64::from_bits(bits);
        prop_assume!(value.is_finite());
        let shortest = format!("{value:e}");
        let forms = [
            format!("{value:?}"),
            shortest.clone(),
            java_like(&shortest),
            format!("{value:.17e}"),
        ];
        for form in forms {
            let Ok(parsed) = form.parse::<f64>() else { continue };
            prop_assert_eq!(parsed.to_bits(), bits, "{}", form);
            let out = canon(&form);
            let back: f64 = out.parse().unwrap();
            prop_assert_eq!(back.to_bits(), bits, "{} came back as {}", form, out);
            let digits = |t: &str| {
                let mantissa = t.split(['e', 'E']).next().unwrap_or("");
                mantissa.chars().filter(char::is_ascii_digit).collect::<String>()
                    .trim_start_matches('0').trim_end_matches('0').len()
            };
            prop_assert!(digits(&out) <= digits(&shortest).max(1), "{} is not the shortest: {}", out, shortest);
        }
    }
}
