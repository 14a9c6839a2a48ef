//! `function(...) external {java: {class: ..., method signature: ...}}`.
//!
//! Zeebe runs no user Java; this maps the handful of side-effect-free JDK methods the DMN
//! TCK uses (`java.lang.Math`, the boxed `valueOf`s, `String.format` with `%s`), so such
//! models evaluate the same. Anything else is unsupported and gives null.

use crate::ast::Node;
use crate::eval::Evaluator;
use crate::number::Number;
use crate::value::Value;

pub fn call(ev: &mut Evaluator<'_>, body: &Node, args: &[Value]) -> Option<Value> {
    let spec = ev.eval(body).ok()?;
    let java = spec.as_context()?.get("java")?.as_context()?.clone();
    let class = java.get("class")?.as_str()?.to_string();
    let signature = java.get("method signature")?.as_str()?.to_string();
    call_java(&class, &signature, args)
}

pub fn call_java(class: &str, signature: &str, args: &[Value]) -> Option<Value> {
    let open = signature.find('(')?;
    let method = signature[..open].trim();
    let params: Vec<String> = signature[open + 1..signature.rfind(')')?]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if params.len() != args.len() {
        return None;
    }
    let num = |i: usize| args.get(i).and_then(|v| v.as_number());
    let float = |i: usize| num(i).map(|n| n.to_f64());
    let from_f64 = |f: f64| Number::from_f64(f).map(Value::Number);
    let is_float = |p: &str| matches!(p, "double" | "float");
    match (class, method, params.first().map(String::as_str)) {
        ("java.lang.Math", "max" | "min", Some(p)) => {
            let (a, b) = (num(0)?, num(1)?);
            let pick = if method == "max" { a.max(b) } else { a.min(b) };
            if is_float(p) || matches!(p, "int" | "long") {
                Some(Value::Number(pick))
            } else {
                None
            }
        }
        ("java.lang.Math", m, Some("double")) => {
            let x = float(0)?;
            let r = match m {
                "cos" => x.cos(),
                "sin" => x.sin(),
                "tan" => x.tan(),
                "sqrt" => x.sqrt(),
                "exp" => x.exp(),
                "log" => x.ln(),
                "abs" => x.abs(),
                "floor" => x.floor(),
                "ceil" => x.ceil(),
                _ => return None,
            };
            from_f64(r)
        }
        (
            "java.lang.Short" | "java.lang.Byte" | "java.lang.Integer" | "java.lang.Long",
            "valueOf",
            Some(p),
        ) => {
            let n = match (p, &args[0]) {
                ("java.lang.String", Value::String(s)) => Number::parse(s)?,
                (_, Value::Number(n)) => *n,
                _ => return None,
            };
            Some(Value::Number(n.round(0, crate::number::RoundMode::Down)?))
        }
        ("java.lang.Float" | "java.lang.Double", "valueOf", Some(p)) => match (p, &args[0]) {
            ("java.lang.String", Value::String(s)) => Number::parse(s).map(Value::Number),
            (_, Value::Number(n)) => Some(Value::Number(*n)),
            _ => None,
        },
        ("java.lang.String", "valueOf", Some("char")) => match &args[0] {
            Value::String(s) if s.chars().count() == 1 => Some(Value::String(s.clone())),
            _ => None,
        },
        ("java.lang.String", "format", Some("java.lang.String")) => {
            let Value::String(fmt) = &args[0] else {
                return None;
            };
            let mut rest = args[1..].iter().flat_map(|v| match v {
                Value::List(l) => l.to_vec(),
                other => vec![other.clone()],
            });
            let mut out = String::new();
            let mut parts = fmt.split("%s");
            out.push_str(parts.next()?);
            for p in parts {
                out.push_str(&rest.next()?.to_string());
                out.push_str(p);
            }
            Some(Value::string(out))
        }
        _ => None,
    }
}
