//! The JSON of the REST API: request bodies read with errors that name the property at fault,
//! keys as Camunda writes them (strings of digits; numbers are accepted too), and documents
//! (variables) passed through as the JSON text they are.

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::problem::Problem;

/// A key (`LongKey`: a Java long as a string of digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key(pub i64);

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key: a string of digits such as \"2251799813685249\"")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Key, E> {
                parse_key(text).map(Key).ok_or_else(|| {
                    E::custom(format!(
                        "'{text}' is not a valid key. Expected a numeric value"
                    ))
                })
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Key, E> {
                Ok(Key(value))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Key, E> {
                i64::try_from(value)
                    .map(Key)
                    .map_err(|_| E::custom(format!("{value} is too large for a key")))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

/// An integer of a request (int32 or int64 in the API) as Camunda's REST API reads it: a JSON
/// integer, or a string holding one (`"20000"`). Jackson, which reads Camunda's requests,
/// takes both, and clients send both: the Node client (`@camunda8/orchestration-cluster-api`
/// 8.8) validates its requests into big integers and writes those as strings. Use it as
/// `#[serde(deserialize_with = "json::integer")]`.
pub(crate) fn integer<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64> + std::str::FromStr,
{
    struct IntegerVisitor<T>(std::marker::PhantomData<T>);
    impl<T> Visitor<'_> for IntegerVisitor<T>
    where
        T: TryFrom<i64> + TryFrom<u64> + std::str::FromStr,
    {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            let what = if T::try_from(-1i64).is_ok() {
                "an integer"
            } else {
                "a non-negative integer"
            };
            write!(
                f,
                "{what} of at most {} bits (a number, or a string of digits)",
                8 * std::mem::size_of::<T>()
            )
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<T, E> {
            T::try_from(value).map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<T, E> {
            T::try_from(value).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(value), &self))
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
            let digits = text.strip_prefix('-').unwrap_or(text);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(E::invalid_value(de::Unexpected::Str(text), &self));
            }
            text.parse()
                .map_err(|_| E::invalid_value(de::Unexpected::Str(text), &self))
        }
    }
    deserializer.deserialize_any(IntegerVisitor(std::marker::PhantomData))
}

/// [`integer`] for a property that may be absent or `null`: use it as
/// `#[serde(default, deserialize_with = "json::optional_integer")]`.
pub(crate) fn optional_integer<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64> + std::str::FromStr,
{
    #[derive(Deserialize)]
    #[serde(bound = "T: TryFrom<i64> + TryFrom<u64> + std::str::FromStr")]
    struct Integer<T>(#[serde(deserialize_with = "integer")] T);
    Ok(Option::<Integer<T>>::deserialize(deserializer)?.map(|Integer(value)| value))
}

/// A key as text: an optional minus and at most 19 digits that fit a Java long.
fn parse_key(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A key from the request path, named `name` in the error.
pub(crate) fn path_key(name: &str, text: &str) -> Result<i64, Problem> {
    parse_key(text).ok_or_else(|| {
        Problem::invalid(format!(
            "The provided {name} '{text}' is not a valid key. Expected a numeric value."
        ))
    })
}

/// A request body as `T`. An empty body reads as `{}` (bodies the API marks optional); any
/// other failure names the property and what was wrong with it.
pub(crate) fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    let bytes = match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => b"{}".as_slice(),
        Some(b'{') => bytes,
        // serde would read a struct from an array too, and blame its first element.
        Some(_) => {
            return Err(Problem::invalid(
                "The request body must be a JSON object ({...})",
            ));
        }
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(body_problem)?;
    deserializer.end().map_err(|e| {
        Problem::invalid(format!(
            "The request body is not valid JSON: {e}; send one JSON object"
        ))
    })?;
    Ok(value)
}

fn body_problem(error: serde_path_to_error::Error<serde_json::Error>) -> Problem {
    let path = error.path().to_string();
    let inner = error.inner();
    if inner.is_syntax() || inner.is_eof() {
        return Problem::invalid(format!("The request body is not valid JSON: {inner}"));
    }
    let message = inner.to_string();
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        let property = if path == "." {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        };
        return Problem::invalid(format!("No {property} provided"));
    }
    // serde_json appends the position: keep what says what was wrong.
    let reason = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(reason, _)| reason);
    if path == "." {
        Problem::invalid(format!("The request body cannot be read: {reason}"))
    } else {
        Problem::invalid(format!(
            "Request property [{path}] cannot be parsed: {reason}"
        ))
    }
}

/// A document (variables) of a request as the JSON text it is; absent or `null` is empty.
pub(crate) fn document(value: Option<Box<RawValue>>) -> String {
    value
        .map(|raw| String::from(Box::<str>::from(raw)))
        .unwrap_or_default()
}

/// A document of a record (JSON text) for a response: `{}` when empty.
pub(crate) fn raw(bytes: Vec<u8>) -> Box<RawValue> {
    String::from_utf8(bytes)
        .ok()
        .filter(|text| !text.trim().is_empty())
        .and_then(|text| RawValue::from_string(text).ok())
        .unwrap_or_else(empty_object)
}

pub(crate) fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| null())
}

fn null() -> Box<RawValue> {
    serde_json::value::to_raw_value(&()).unwrap_or_default()
}

/// A response body as JSON bytes.
pub(crate) fn to_vec<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing our own response types cannot fail (no maps with non-string keys).
    serde_json::to_vec(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Request {
        r#type: String,
        #[serde(default)]
        max_jobs_to_activate: Option<i32>,
        #[serde(default)]
        key: Option<Key>,
        #[serde(default)]
        variables: Option<Box<RawValue>>,
        #[serde(default)]
        changeset: Option<Changeset>,
    }

    #[derive(Debug, Deserialize)]
    struct Changeset {
        retries: i32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Numbers {
        #[serde(deserialize_with = "integer")]
        timeout: i64,
        #[serde(default, deserialize_with = "optional_integer")]
        request_timeout: Option<i64>,
        #[serde(default, deserialize_with = "optional_integer")]
        retries: Option<i32>,
        #[serde(default, deserialize_with = "optional_integer")]
        operation_reference: Option<u64>,
    }

    fn detail(text: &str) -> String {
        body::<Request>(text.as_bytes()).unwrap_err().detail
    }

    #[test]
    fn keys_are_strings_of_digits_or_numbers() {
        let request: Request = body(br#"{"type":"a","key":"2251799813685249"}"#).unwrap();
        assert_eq!(request.key, Some(Key(2_251_799_813_685_249)));
        let request: Request = body(br#"{"type":"a","key":2251799813685249}"#).unwrap();
        assert_eq!(request.key, Some(Key(2_251_799_813_685_249)));
        assert_eq!(
            serde_json::to_string(&Key(2_251_799_813_685_249)).unwrap(),
            r#""2251799813685249""#
        );
        assert_eq!(
            detail(r#"{"type":"a","key":"12x"}"#),
            "Request property [key] cannot be parsed: '12x' is not a valid key. Expected a numeric value"
        );
        assert!(path_key("jobKey", "-1").is_ok());
        assert_eq!(
            path_key("jobKey", "abc").unwrap_err().detail,
            "The provided jobKey 'abc' is not a valid key. Expected a numeric value."
        );
        assert!(path_key("jobKey", "99999999999999999999").is_err());
        assert!(path_key("jobKey", "+1").is_err());
    }

    #[test]
    fn integers_are_numbers_or_strings_of_digits() {
        let numbers: Numbers =
            body(br#"{"timeout":60000,"requestTimeout":-1,"retries":3}"#).unwrap();
        assert_eq!(
            (numbers.timeout, numbers.request_timeout, numbers.retries),
            (60000, Some(-1), Some(3))
        );
        let strings: Numbers = body(
            br#"{"timeout":"60000","requestTimeout":"-1","retries":"3","operationReference":"9223372036854775808"}"#,
        )
        .unwrap();
        assert_eq!(
            (strings.timeout, strings.request_timeout, strings.retries),
            (60000, Some(-1), Some(3))
        );
        assert_eq!(strings.operation_reference, Some(1 << 63));
        let absent: Numbers = body(br#"{"timeout":1,"requestTimeout":null}"#).unwrap();
        assert_eq!((absent.request_timeout, absent.retries), (None, None));

        let detail = |text: &str| body::<Numbers>(text.as_bytes()).unwrap_err().detail;
        assert_eq!(
            detail(r#"{"timeout":"soon"}"#),
            "Request property [timeout] cannot be parsed: invalid value: string \"soon\", \
             expected an integer of at most 64 bits (a number, or a string of digits)"
        );
        assert_eq!(
            detail(r#"{"timeout":1,"retries":"4294967296"}"#),
            "Request property [retries] cannot be parsed: invalid value: string \"4294967296\", \
             expected an integer of at most 32 bits (a number, or a string of digits)"
        );
        assert_eq!(
            detail(r#"{"timeout":1,"retries":4294967296}"#),
            "Request property [retries] cannot be parsed: invalid value: integer `4294967296`, \
             expected an integer of at most 32 bits (a number, or a string of digits)"
        );
        assert_eq!(
            detail(r#"{"timeout":1,"operationReference":-1}"#),
            "Request property [operationReference] cannot be parsed: invalid value: integer `-1`, \
             expected a non-negative integer of at most 64 bits (a number, or a string of digits)"
        );
        assert!(detail(r#"{"timeout":1.5}"#).starts_with(
            "Request property [timeout] cannot be parsed: invalid type: floating point `1.5`"
        ));
        assert!(
            detail(r#"{"timeout":" 1"}"#)
                .starts_with("Request property [timeout] cannot be parsed: invalid value")
        );
        assert_eq!(detail(r#"{"requestTimeout":1}"#), "No timeout provided");
    }

    #[test]
    fn a_request_reads_as_its_type() {
        let ok: Request =
            body(br#"{"type":"a","maxJobsToActivate":3,"changeset":{"retries":1},"extra":[]}"#)
                .unwrap();
        assert_eq!(ok.r#type, "a");
        assert_eq!(ok.max_jobs_to_activate, Some(3));
        assert_eq!(ok.changeset.map(|c| c.retries), Some(1));
    }

    #[test]
    fn errors_name_the_property() {
        assert_eq!(detail("{}"), "No type provided");
        assert_eq!(
            detail(r#"{"type":"a","changeset":{}}"#),
            "No changeset.retries provided"
        );
        assert_eq!(
            detail(r#"{"type":"a","maxJobsToActivate":"many"}"#),
            "Request property [maxJobsToActivate] cannot be parsed: invalid type: string \"many\", expected i32"
        );
        assert!(detail(r#"{"type":"a""#).starts_with("The request body is not valid JSON"));
        assert!(detail(r#"{"type":"a"} x"#).starts_with("The request body is not valid JSON"));
        assert_eq!(
            detail("[1]"),
            "The request body must be a JSON object ({...})"
        );
        assert_eq!(
            detail("3"),
            "The request body must be a JSON object ({...})"
        );
    }

    #[test]
    fn documents_pass_through_as_text() {
        let request: Request =
            body(br#"{"type":"a","variables":{"x": 0.12496785020850265, "y":[1]}}"#).unwrap();
        assert_eq!(
            document(request.variables),
            r#"{"x": 0.12496785020850265, "y":[1]}"#
        );
        let none: Request = body(br#"{"type":"a","variables":null}"#).unwrap();
        assert_eq!(document(none.variables), "");
        assert_eq!(raw(Vec::new()).get(), "{}");
        assert_eq!(raw(br#"{"a":1}"#.to_vec()).get(), r#"{"a":1}"#);
    }

    #[test]
    fn an_empty_body_is_an_empty_object() {
        #[derive(Deserialize)]
        struct Optional {
            #[serde(default)]
            a: Option<i32>,
        }
        assert_eq!(body::<Optional>(b"").unwrap().a, None);
        assert_eq!(body::<Optional>(b"  \n").unwrap().a, None);
    }
}
