//! Function invocation: resolving the callee, binding positional and named arguments, and
//! running built-in, FEEL-defined and host functions.

use std::sync::Arc;

use super::{Evaluator, Frame, R};
use crate::ast::{Args, Kind, Node};
use crate::builtins::{self, Builtin};
use crate::error::WarningKind;
use crate::value::{Function, Name, Value};

/// Arguments after evaluation.
pub enum ArgValues {
    Positional(Vec<Value>),
    Named(Vec<(Name, Value)>),
}

/// Orders named arguments by parameter names. Unknown names fail; missing parameters are
/// null.
pub fn bind_args(params: &[Name], named: Vec<(Name, Value)>) -> Result<Vec<Value>, Name> {
    let mut out = vec![Value::Null; params.len()];
    for (name, v) in named {
        match params.iter().position(|p| *p == name) {
            Some(i) => out[i] = v,
            None => return Err(name),
        }
    }
    Ok(out)
}

impl Evaluator<'_> {
    pub(super) fn call_node(&mut self, callee: &Node, args: &Args) -> R {
        // `is defined(x)` must see whether `x` exists, not only its value.
        if let Kind::Var(name) = &callee.kind
            && &**name == "is defined"
            && let Args::Positional(a) = args
            && a.len() == 1
            && self.lookup_local(name).is_none()
        {
            return self.is_defined(&a[0]);
        }
        let values = match args {
            Args::Positional(a) => {
                let mut v = Vec::with_capacity(a.len());
                for n in a {
                    v.push(self.eval(n)?);
                }
                ArgValues::Positional(v)
            }
            Args::Named(a) => {
                let mut v = Vec::with_capacity(a.len());
                for (k, n) in a {
                    v.push((k.clone(), self.eval(n)?));
                }
                ArgValues::Named(v)
            }
        };
        if let Kind::Var(name) = &callee.kind {
            // Local functions (parameters, context entries, BKMs) shadow built-ins; the
            // caller's variables are only asked for names that are not built-ins.
            if let Some(Value::Function(f)) = self.lookup_local(name) {
                return self.invoke_with(&f, values);
            }
            if let Some(b) = builtins::lookup(name) {
                return self.call_builtin(b, values);
            }
            return match self.variables.get(name) {
                Some(Value::Function(f)) => self.invoke_with(&f, values),
                _ => {
                    self.warn(WarningKind::NoFunctionFound, || {
                        format!("No function found with name '{name}'")
                    });
                    Ok(Value::Null)
                }
            };
        }
        match self.eval(callee)? {
            Value::Function(f) => self.invoke_with(&f, values),
            other => {
                self.warn(WarningKind::NoFunctionFound, || {
                    format!("Expected a function but found '{other}'")
                });
                Ok(Value::Null)
            }
        }
    }

    /// A call of a built-in resolved at parse time: only local bindings can shadow it.
    pub(super) fn call_builtin_node(&mut self, b: &'static Builtin, name: &Name, args: &Args) -> R {
        let shadowed = !self.frames.is_empty() && self.lookup_local(name).is_some();
        if shadowed {
            let callee = Node {
                kind: Kind::Var(name.clone()),
                start: 0,
                end: 0,
                height: 1,
            };
            return self.call_node(&callee, args);
        }
        if b.name == "is defined"
            && let Args::Positional(a) = args
            && a.len() == 1
        {
            return self.is_defined(&a[0]);
        }
        let values = self.eval_args(args)?;
        self.call_builtin(b, values)
    }

    fn eval_args(&mut self, args: &Args) -> Result<ArgValues, crate::error::EvalError> {
        Ok(match args {
            Args::Positional(a) => {
                let mut v = Vec::with_capacity(a.len());
                for n in a {
                    v.push(self.eval(n)?);
                }
                ArgValues::Positional(v)
            }
            Args::Named(a) => {
                let mut v = Vec::with_capacity(a.len());
                for (k, n) in a {
                    v.push((k.clone(), self.eval(n)?));
                }
                ArgValues::Named(v)
            }
        })
    }

    fn is_defined(&mut self, arg: &Node) -> R {
        let before = self.warnings.len();
        let v = self.eval(arg)?;
        let missing = self.warnings[before.min(self.warnings.len())..]
            .iter()
            .any(|w| {
                matches!(
                    w.kind,
                    WarningKind::NoVariableFound | WarningKind::NoContextEntryFound
                )
            });
        self.warnings.truncate(before);
        let _ = v;
        Ok(Value::Bool(!missing))
    }

    fn invoke_with(&mut self, f: &Arc<Function>, args: ArgValues) -> R {
        match &**f {
            Function::Builtin(b) => self.call_builtin(b, args),
            _ => {
                let positional = match args {
                    ArgValues::Positional(v) => v,
                    ArgValues::Named(named) => match bind_args(&f.param_names(), named) {
                        Ok(v) => v,
                        Err(unknown) => {
                            self.warn(WarningKind::FunctionInvocationFailure, || {
                                format!("Unknown parameter '{unknown}' in function call")
                            });
                            return Ok(Value::Null);
                        }
                    },
                };
                self.invoke(f, positional)
            }
        }
    }

    /// Calls a function value with positional arguments.
    pub fn invoke(&mut self, f: &Arc<Function>, args: Vec<Value>) -> R {
        self.step()?;
        match &**f {
            Function::Builtin(b) => self.call_builtin(b, ArgValues::Positional(args)),
            Function::Native(n) => {
                if args.len() > n.params().len() {
                    self.warn(WarningKind::FunctionInvocationFailure, || {
                        format!(
                            "Expected {} parameters but found {}",
                            n.params().len(),
                            args.len()
                        )
                    });
                    return Ok(Value::Null);
                }
                let n = n.clone();
                n.call(args, self)
            }
            Function::User { def, captured } => {
                if def.external {
                    return Ok(self.call_external(&def.body, args));
                }
                if args.len() > def.params.len() {
                    self.warn(WarningKind::FunctionInvocationFailure, || {
                        format!(
                            "Expected {} parameters but found {}",
                            def.params.len(),
                            args.len()
                        )
                    });
                    return Ok(Value::Null);
                }
                let mut bound = Vec::with_capacity(def.params.len());
                let mut args = args.into_iter();
                for p in &def.params {
                    let mut v = args.next().unwrap_or(Value::Null);
                    if let Some(ty) = &p.ty
                        && !v.is_null()
                        && !ty.is_instance(&v)
                    {
                        match coerce(&v, ty) {
                            Some(c) => v = c,
                            None => {
                                self.warn(WarningKind::InvalidType, || {
                                    format!("Parameter '{}' expects {ty} but found '{v}'", p.name)
                                });
                                return Ok(Value::Null);
                            }
                        }
                    }
                    bound.push(Frame::Var(p.name.clone(), v));
                }
                // The caller's bindings stay below the closure's, so a function stored in
                // a context entry can call itself by name.
                let base = self.frames.len();
                self.frames.extend(captured.iter().cloned());
                self.frames.extend(bound);
                let r = self.eval(&def.body);
                self.frames.truncate(base);
                r
            }
        }
    }

    fn call_builtin(&mut self, b: &'static Builtin, args: ArgValues) -> R {
        let ordered = match args {
            ArgValues::Positional(v) => {
                self.signature = None;
                if !b.accepts_arity(v.len()) {
                    self.warn(WarningKind::NoFunctionFound, || {
                        format!(
                            "No function found with name '{}' and {} parameters",
                            b.name,
                            v.len()
                        )
                    });
                    return Ok(Value::Null);
                }
                v
            }
            ArgValues::Named(named) => match b.bind_named(named) {
                Some((sig, v)) => {
                    self.signature = Some(sig);
                    v
                }
                None => {
                    self.warn(WarningKind::NoFunctionFound, || {
                        format!(
                            "No function found with name '{}' and these named parameters",
                            b.name
                        )
                    });
                    return Ok(Value::Null);
                }
            },
        };
        (b.f)(self, ordered)
    }

    /// `function(...) external {java: {...}}`: only a few `java.lang.Math` methods are
    /// mapped; the engine runs no Java.
    fn call_external(&mut self, body: &Node, args: Vec<Value>) -> Value {
        match builtins::external::call(self, body, &args) {
            Some(v) => v,
            None => {
                self.warn(WarningKind::FunctionInvocationFailure, || {
                    "External functions are not supported".to_string()
                });
                Value::Null
            }
        }
    }
}

/// DMN's implicit conversions for typed parameters: a singleton list stands for its item,
/// and an item for a singleton list.
fn coerce(v: &Value, ty: &crate::types::FeelType) -> Option<Value> {
    use crate::types::FeelType;
    match (v, ty) {
        (Value::List(items), t) if items.len() == 1 && t.is_instance(&items[0]) => {
            Some(items[0].clone())
        }
        (v, FeelType::List(item)) if item.is_instance(v) => Some(Value::list(vec![v.clone()])),
        _ => None,
    }
}
