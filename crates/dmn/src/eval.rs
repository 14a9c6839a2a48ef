//! Evaluation of decisions, boxed expressions and decision tables on top of the FEEL
//! evaluator. Required decisions, input data and business knowledge models become local
//! bindings of the decision that requires them; the caller's variables stay visible below
//! them, as in Zeebe, where decisions read process variables directly.

use std::collections::HashMap;
use std::sync::Arc;

use beeline_feel::{
    EvalContext, EvalError, Evaluator, FeelType, Frame, Name, NativeFunction, Value,
    eval::item_frames,
};

use crate::compile::{CExpr, CTable, Feel, Knowledge, Tests};
use crate::model::{Aggregation, FunctionKind, HitPolicy, IteratorKind};
use crate::result::{
    DecisionFailure, EvaluatedDecision, EvaluatedInput, EvaluatedOutput, MatchedRule,
};
use crate::{Inner, Semantics};

/// DMN's type conversion on assignment: a conforming value passes, a singleton list
/// stands for its item and an item for a singleton list; anything else is null.
pub fn coerce(v: Value, ty: &FeelType) -> Value {
    try_coerce(v, ty).unwrap_or(Value::Null)
}

/// Like [`coerce`], but says when a non-null value did not conform (function arguments:
/// the whole invocation is then null).
pub fn try_coerce(v: Value, ty: &FeelType) -> Option<Value> {
    if ty.conforms(&v) {
        return Some(v);
    }
    if let Value::List(items) = &v
        && items.len() == 1
        && ty.conforms(&items[0])
    {
        return Some(items[0].clone());
    }
    if let FeelType::List(inner) = ty
        && inner.conforms(&v)
    {
        return Some(Value::list(vec![v]));
    }
    None
}

/// Binds typed parameters; `None` if an argument does not conform.
fn bind_params(
    ev: &mut Evaluator<'_>,
    params: &[(Name, Option<FeelType>)],
    args: Vec<Value>,
) -> Option<Vec<Frame>> {
    let mut args = args.into_iter();
    let mut frames = Vec::with_capacity(params.len());
    for (name, ty) in params {
        let v = args.next().unwrap_or(Value::Null);
        let v = match ty {
            Some(t) => match try_coerce(v, t) {
                Some(v) => v,
                None => {
                    ev.warn(beeline_feel::WarningKind::InvalidType, || {
                        format!("parameter '{name}' expects {t}")
                    });
                    return None;
                }
            },
            None => v,
        };
        frames.push(Frame::Var(name.clone(), v));
    }
    Some(frames)
}

fn coerce_opt(v: Value, ty: &Option<FeelType>) -> Value {
    match ty {
        Some(t) => coerce(v, t),
        None => v,
    }
}

pub(crate) struct Run<'m> {
    pub model: &'m Arc<Inner>,
    pub trace: Vec<EvaluatedDecision>,
    memo: HashMap<usize, Value>,
    active: Vec<usize>,
    /// Decisions whose values are given instead of evaluated (decision service inputs).
    pub given: HashMap<usize, Value>,
    pub record: bool,
    pub semantics: Semantics,
}

impl<'m> Run<'m> {
    pub fn new(model: &'m Arc<Inner>, record: bool) -> Run<'m> {
        Run {
            model,
            trace: Vec::new(),
            memo: HashMap::new(),
            active: Vec::new(),
            given: HashMap::new(),
            record,
            semantics: Semantics::Specification,
        }
    }

    /// A result as its `typeRef` makes it: converted (the specification), or as it is
    /// (Zeebe).
    fn typed_result(&self, v: Value, ty: &Option<FeelType>) -> Value {
        match self.semantics {
            Semantics::Specification => coerce_opt(v, ty),
            Semantics::Zeebe => v,
        }
    }

    fn failure(&self, idx: usize, message: String) -> DecisionFailure {
        DecisionFailure {
            decision_id: self.model.compiled.decisions[idx].id.clone(),
            message,
        }
    }

    pub fn decision(
        &mut self,
        ev: &mut Evaluator<'_>,
        idx: usize,
    ) -> Result<Value, DecisionFailure> {
        if let Some(v) = self.given.get(&idx) {
            return Ok(v.clone());
        }
        if let Some(v) = self.memo.get(&idx) {
            return Ok(v.clone());
        }
        if self.active.contains(&idx) {
            return Err(self.failure(
                idx,
                "the decision requires itself (cycle in the requirements graph)".into(),
            ));
        }
        let model = self.model;
        let d = &model.compiled.decisions[idx];
        self.active.push(idx);
        let mut frames = Vec::new();
        for &r in &d.required_decisions {
            let v = self.decision(ev, r);
            match v {
                Ok(v) => {
                    // By variable name (DMN) and by id (Camunda Modeler models reference
                    // required decisions by id, as Zeebe's DMN engine allows).
                    let req = &model.compiled.decisions[r];
                    if *req.id != *req.var {
                        frames.push(Frame::Var(Name::from(req.id.as_str()), v.clone()));
                    }
                    frames.push(Frame::Var(req.var.clone(), v));
                }
                Err(f) => {
                    self.active.pop();
                    return Err(f);
                }
            }
        }
        for &i in &d.required_inputs {
            let input = &model.compiled.inputs[i];
            let v = ev.lookup(&input.name).unwrap_or(Value::Null);
            frames.push(Frame::Var(input.name.clone(), coerce_opt(v, &input.ty)));
        }
        for k in &d.knowledge {
            frames.push(knowledge_frame(model, *k));
        }
        let mut record = EvaluatedDecision {
            decision_id: d.id.clone(),
            decision_name: d.name.clone(),
            decision_type: d.kind_name,
            output: Value::Null,
            evaluated_inputs: Vec::new(),
            matched_rules: Vec::new(),
        };
        let base = ev.frames_len();
        for f in frames {
            ev.push_frame(f);
        }
        let result = match &d.logic {
            Some(CExpr::Table(t)) => self.table(ev, t, Some(&mut record)),
            Some(e) => self.expr(ev, e),
            None => Ok(Value::Null),
        };
        ev.truncate_frames(base);
        self.active.pop();
        let value = match result {
            Ok(v) => self.typed_result(v, &d.ty),
            Err(e) => return Err(self.failure(idx, e.to_string())),
        };
        record.output = value.clone();
        if self.record {
            self.trace.push(record);
        }
        self.memo.insert(idx, value.clone());
        Ok(value)
    }

    pub fn expr(&mut self, ev: &mut Evaluator<'_>, e: &CExpr) -> Result<Value, EvalError> {
        ev.step()?;
        match e {
            CExpr::Literal(f, ty) => Ok(self.typed_result(feel(ev, f)?, ty)),
            CExpr::Table(t) => self.table(ev, t, None),
            CExpr::Context(entries) => {
                let base = ev.frames_len();
                let mut ctx = beeline_feel::Context::with_capacity(entries.len());
                let mut result = None;
                for en in entries {
                    let v = match self.expr(ev, &en.value) {
                        Ok(v) => coerce_opt(v, &en.ty),
                        Err(err) => {
                            ev.truncate_frames(base);
                            return Err(err);
                        }
                    };
                    match &en.name {
                        Some(n) => {
                            ev.push_frame(Frame::Var(n.clone(), v.clone()));
                            ctx.insert(n.clone(), v);
                        }
                        None => result = Some(v),
                    }
                }
                ev.truncate_frames(base);
                Ok(result.unwrap_or_else(|| Value::context(ctx)))
            }
            CExpr::Invocation { callee, bindings } => {
                let f = match ev.lookup(callee) {
                    Some(Value::Function(f)) => f,
                    _ => {
                        ev.warn(beeline_feel::WarningKind::NoFunctionFound, || {
                            format!("No function found with name '{callee}'")
                        });
                        return Ok(Value::Null);
                    }
                };
                let params = f.param_names();
                let mut args = vec![Value::Null; params.len()];
                for (name, value) in bindings {
                    let v = match value {
                        Some(e) => self.expr(ev, e)?,
                        None => Value::Null,
                    };
                    match params.iter().position(|p| p == name) {
                        Some(i) => args[i] = v,
                        None => {
                            ev.warn(beeline_feel::WarningKind::FunctionInvocationFailure, || {
                                format!("'{callee}' has no parameter '{name}'")
                            });
                            return Ok(Value::Null);
                        }
                    }
                }
                ev.invoke(&f, args)
            }
            CExpr::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.expr(ev, i)?);
                }
                Ok(Value::list(out))
            }
            CExpr::Relation(columns, rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut c = beeline_feel::Context::with_capacity(columns.len());
                    for (name, cell) in columns.iter().zip(row) {
                        c.insert(name.clone(), self.expr(ev, cell)?);
                    }
                    out.push(Value::context(c));
                }
                Ok(Value::list(out))
            }
            CExpr::Function { kind, params, body } => Ok(Value::Function(Arc::new(
                beeline_feel::Function::Native(Arc::new(BoxedFunction {
                    model: self.model.clone(),
                    kind: *kind,
                    names: params.iter().map(|(n, _)| n.clone()).collect(),
                    types: params.iter().map(|(_, t)| t.clone()).collect(),
                    body: body.clone(),
                    captured: ev.capture_frames(),
                })),
            ))),
            CExpr::Conditional(c, t, f) => match self.expr(ev, c)? {
                Value::Bool(true) => self.expr(ev, t),
                Value::Bool(false) | Value::Null => self.expr(ev, f),
                other => {
                    ev.warn(beeline_feel::WarningKind::InvalidType, || {
                        format!("the condition is not a boolean: '{other}'")
                    });
                    Ok(Value::Null)
                }
            },
            // The boxed filter and iterators are strict where their FEEL counterparts are
            // lenient (DMN 1.5 TCK): the input must be a list and every condition a boolean.
            CExpr::Filter(input, cond) => {
                let Value::List(items) = self.expr(ev, input)? else {
                    return Ok(Value::Null);
                };
                let mut out = Vec::new();
                for item in items.iter() {
                    let base = ev.frames_len();
                    for f in item_frames(item) {
                        ev.push_frame(f);
                    }
                    let r = self.expr(ev, cond);
                    ev.truncate_frames(base);
                    match r? {
                        Value::Bool(true) => out.push(item.clone()),
                        Value::Bool(false) => {}
                        _ => return Ok(Value::Null),
                    }
                }
                Ok(Value::list(out))
            }
            CExpr::Iterator(kind, var, input, body) => {
                let Value::List(items) = self.expr(ev, input)? else {
                    return Ok(Value::Null);
                };
                let mut results = Vec::with_capacity(items.len());
                for item in items.iter() {
                    let base = ev.frames_len();
                    ev.push_frame(Frame::Var(var.clone(), item.clone()));
                    let r = self.expr(ev, body);
                    ev.truncate_frames(base);
                    results.push(r?);
                }
                if *kind == IteratorKind::For {
                    return Ok(Value::list(results));
                }
                let mut bools = Vec::with_capacity(results.len());
                for r in &results {
                    match r.as_bool() {
                        Some(b) => bools.push(b),
                        None => return Ok(Value::Null),
                    }
                }
                Ok(Value::Bool(match kind {
                    IteratorKind::Some => bools.iter().any(|b| *b),
                    _ => bools.iter().all(|b| *b),
                }))
            }
        }
    }

    fn table(
        &mut self,
        ev: &mut Evaluator<'_>,
        t: &CTable,
        mut record: Option<&mut EvaluatedDecision>,
    ) -> Result<Value, EvalError> {
        let mut inputs = Vec::with_capacity(t.inputs.len());
        for clause in &t.inputs {
            let v = coerce_opt(feel(ev, &clause.expr)?, &clause.ty);
            if let Some(Tests::Ok(allowed)) = &clause.allowed
                && !v.is_null()
                && !allowed.matches_in(&v, ev)?
            {
                return Err(EvalError::Failure(format!(
                    "the value '{v}' of input '{}' is not one of its input values ({})",
                    clause.name,
                    allowed.source()
                )));
            }
            if let Some(r) = record.as_deref_mut() {
                r.evaluated_inputs.push(EvaluatedInput {
                    input_id: clause.id.clone(),
                    input_name: clause.name.clone(),
                    value: v.clone(),
                });
            }
            inputs.push(v);
        }
        let mut matched: Vec<(usize, Vec<Value>)> = Vec::new();
        for (ri, rule) in t.rules.iter().enumerate() {
            ev.step()?;
            let mut all = true;
            for (test, input) in rule.inputs.iter().zip(&inputs) {
                let ok = match test {
                    Tests::Ok(u) => u.is_any() || u.matches_in(input, ev)?,
                    Tests::Broken(msg) => {
                        let msg = msg.clone();
                        ev.warn(beeline_feel::WarningKind::Unknown, || msg);
                        false
                    }
                };
                if !ok {
                    all = false;
                    break;
                }
            }
            if !all {
                continue;
            }
            let mut outs = Vec::with_capacity(rule.outputs.len());
            for (f, clause) in rule.outputs.iter().zip(&t.outputs) {
                let v = self.typed_result(feel(ev, f)?, &clause.ty);
                let v = match &clause.allowed {
                    Some(Tests::Ok(allowed)) if !v.is_null() && !allowed.matches_in(&v, ev)? => {
                        ev.warn(beeline_feel::WarningKind::InvalidType, || {
                            format!(
                                "output '{v}' is not one of the output values ({})",
                                allowed.source()
                            )
                        });
                        Value::Null
                    }
                    _ => v,
                };
                outs.push(v);
            }
            matched.push((ri, outs));
            if t.hit_policy == HitPolicy::First {
                break;
            }
        }
        let selected = self.apply_hit_policy(t, matched)?;
        if let Some(r) = record {
            for (ri, outs) in &selected {
                r.matched_rules.push(MatchedRule {
                    rule_id: t.rules[*ri].id.clone(),
                    rule_index: ri + 1,
                    evaluated_outputs: t
                        .outputs
                        .iter()
                        .zip(outs)
                        .map(|(c, v)| EvaluatedOutput {
                            output_id: c.id.clone(),
                            output_name: c.name.to_string(),
                            value: v.clone(),
                        })
                        .collect(),
                });
            }
        }
        let single_hit = matches!(
            t.hit_policy,
            HitPolicy::Unique | HitPolicy::First | HitPolicy::Priority | HitPolicy::Any
        );
        if selected.is_empty() {
            return self.no_match(ev, t, single_hit);
        }
        let shape = |outs: &Vec<Value>| -> Value {
            if t.outputs.len() == 1 {
                outs[0].clone()
            } else {
                let mut c = beeline_feel::Context::with_capacity(outs.len());
                for (clause, v) in t.outputs.iter().zip(outs) {
                    c.insert(clause.name.clone(), v.clone());
                }
                Value::context(c)
            }
        };
        if single_hit {
            return Ok(shape(&selected[0].1));
        }
        let values: Vec<Value> = selected.iter().map(|(_, o)| shape(o)).collect();
        match (t.hit_policy, t.aggregation) {
            (HitPolicy::Collect, Some(agg)) => aggregate(ev, agg, values, t.outputs.len()),
            _ => Ok(Value::list(values)),
        }
    }

    /// The result when no rule matched: the default output entries, else null (an empty
    /// list for multi-hit tables without aggregation, a count of zero for `C#`).
    fn no_match(
        &mut self,
        ev: &mut Evaluator<'_>,
        t: &CTable,
        single_hit: bool,
    ) -> Result<Value, EvalError> {
        if t.outputs.iter().any(|o| o.default.is_some()) {
            let mut outs = Vec::with_capacity(t.outputs.len());
            for o in &t.outputs {
                outs.push(match &o.default {
                    Some(f) => self.typed_result(feel(ev, f)?, &o.ty),
                    None => Value::Null,
                });
            }
            let v = if outs.len() == 1 {
                outs.remove(0)
            } else {
                let mut c = beeline_feel::Context::new();
                for (clause, v) in t.outputs.iter().zip(outs) {
                    c.insert(clause.name.clone(), v);
                }
                Value::context(c)
            };
            return Ok(v);
        }
        if single_hit {
            return Ok(Value::Null);
        }
        Ok(match t.aggregation {
            Some(Aggregation::Count) if t.hit_policy == HitPolicy::Collect => Value::number(0),
            Some(_) if t.hit_policy == HitPolicy::Collect => Value::Null,
            _ => Value::list(Vec::new()),
        })
    }

    fn apply_hit_policy(
        &self,
        t: &CTable,
        mut matched: Vec<(usize, Vec<Value>)>,
    ) -> Result<Vec<(usize, Vec<Value>)>, EvalError> {
        Ok(match t.hit_policy {
            HitPolicy::Unique => {
                if matched.len() > 1 {
                    let ids: Vec<&str> = matched
                        .iter()
                        .map(|(i, _)| t.rules[*i].id.as_str())
                        .collect();
                    return Err(EvalError::Failure(format!(
                        "multiple rules match for hit policy UNIQUE: {}",
                        ids.join(", ")
                    )));
                }
                matched
            }
            HitPolicy::Any => {
                if let Some((_, first)) = matched.first()
                    && matched.iter().any(|(_, o)| !same_outputs(o, first))
                {
                    return Err(EvalError::Failure(
                        "rules matched with different outputs for hit policy ANY".into(),
                    ));
                }
                matched.truncate(1);
                matched
            }
            HitPolicy::First => {
                matched.truncate(1);
                matched
            }
            HitPolicy::Priority => {
                let best = matched
                    .iter()
                    .enumerate()
                    .min_by(|(ia, a), (ib, b)| {
                        priority_key(t, &a.1)
                            .cmp(&priority_key(t, &b.1))
                            .then(ia.cmp(ib))
                    })
                    .map(|(i, _)| i);
                match best {
                    Some(i) => vec![matched.swap_remove(i)],
                    None => matched,
                }
            }
            HitPolicy::OutputOrder => {
                matched.sort_by_key(|(ri, o)| (priority_key(t, o), *ri));
                matched
            }
            HitPolicy::Collect | HitPolicy::RuleOrder => matched,
        })
    }
}

fn same_outputs(a: &[Value], b: &[Value]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| beeline_feel::eval::compare::equals(x, y) == Some(true))
}

/// Position of each output value in its output's list of output values (earlier =
/// higher priority); values not listed rank last.
fn priority_key(t: &CTable, outs: &[Value]) -> Vec<usize> {
    t.outputs
        .iter()
        .zip(outs)
        .map(|(clause, v)| {
            clause
                .priorities
                .iter()
                .position(|p| beeline_feel::eval::compare::equals(p, v) == Some(true))
                .unwrap_or(usize::MAX)
        })
        .collect()
}

fn aggregate(
    ev: &mut Evaluator<'_>,
    agg: Aggregation,
    values: Vec<Value>,
    outputs: usize,
) -> Result<Value, EvalError> {
    if outputs != 1 {
        return Err(EvalError::Failure(
            "an aggregation needs a decision table with one output".into(),
        ));
    }
    let values: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
    if agg == Aggregation::Count {
        return Ok(Value::number(values.len() as i64));
    }
    if values.is_empty() {
        return Ok(Value::Null);
    }
    let name = match agg {
        Aggregation::Sum => "sum",
        Aggregation::Min => "min",
        Aggregation::Max => "max",
        Aggregation::Count => "count",
    };
    call_builtin(ev, name, vec![Value::list(values)])
}

/// Calls a FEEL built-in through the language, so aggregation shares its semantics.
fn call_builtin(ev: &mut Evaluator<'_>, name: &str, args: Vec<Value>) -> Result<Value, EvalError> {
    match beeline_feel::eval::builtin_function(name) {
        Some(f) => ev.invoke(&f, args),
        None => Ok(Value::Null),
    }
}

fn feel(ev: &mut Evaluator<'_>, f: &Feel) -> Result<Value, EvalError> {
    match f {
        Feel::Ok(e) => e.evaluate_in(ev),
        Feel::Broken(msg) => {
            let msg = msg.clone();
            ev.warn(beeline_feel::WarningKind::Unknown, || msg);
            Ok(Value::Null)
        }
    }
}

pub(crate) fn knowledge_frame(model: &Arc<Inner>, k: Knowledge) -> Frame {
    match k {
        Knowledge::Bkm(i) => {
            let b = &model.compiled.bkms[i];
            Frame::Var(
                b.name.clone(),
                Value::Function(Arc::new(beeline_feel::Function::Native(Arc::new(
                    BkmFunction {
                        model: model.clone(),
                        index: i,
                        names: b.params.iter().map(|(n, _)| n.clone()).collect(),
                    },
                )))),
            )
        }
        Knowledge::Service(i) => {
            let s = &model.compiled.services[i];
            Frame::Var(
                s.name.clone(),
                Value::Function(Arc::new(beeline_feel::Function::Native(Arc::new(
                    ServiceFunction {
                        model: model.clone(),
                        index: i,
                        names: service_params(model, i),
                    },
                )))),
            )
        }
    }
}

/// A decision service's parameters: its input data, then its input decisions.
pub(crate) fn service_params(model: &Inner, i: usize) -> Vec<Name> {
    let s = &model.compiled.services[i];
    s.input_data
        .iter()
        .map(|&d| model.compiled.inputs[d].name.clone())
        .chain(
            s.input_decisions
                .iter()
                .map(|&d| model.compiled.decisions[d].var.clone()),
        )
        .collect()
}

/// A business knowledge model as a FEEL function value.
struct BkmFunction {
    model: Arc<Inner>,
    index: usize,
    names: Vec<Name>,
}

impl NativeFunction for BkmFunction {
    fn params(&self) -> &[Name] {
        &self.names
    }

    fn call(&self, args: Vec<Value>, ev: &mut Evaluator<'_>) -> Result<Value, EvalError> {
        let b = &self.model.compiled.bkms[self.index];
        let Some(body) = &b.body else {
            return Ok(Value::Null);
        };
        let Some(params) = bind_params(ev, &b.params, args) else {
            return Ok(Value::Null);
        };
        let base = ev.frames_len();
        // The model's own knowledge (and the BKM itself, for recursion) is in scope.
        ev.push_frame(knowledge_frame(&self.model, Knowledge::Bkm(self.index)));
        for k in &b.knowledge {
            ev.push_frame(knowledge_frame(&self.model, *k));
        }
        for f in params {
            ev.push_frame(f);
        }
        let mut run = Run::new(&self.model, false);
        let r = match b.kind {
            FunctionKind::Feel => run.expr(ev, body),
            FunctionKind::Java => java(&mut run, ev, body, &b.params, base),
            FunctionKind::Pmml => Ok(Value::Null),
        };
        ev.truncate_frames(base);
        Ok(coerce_opt(r?, &b.result_ty))
    }
}

/// A boxed function definition as a FEEL function value, with the bindings it closed over.
struct BoxedFunction {
    model: Arc<Inner>,
    kind: FunctionKind,
    names: Vec<Name>,
    types: Vec<Option<FeelType>>,
    body: Arc<CExpr>,
    captured: Vec<Frame>,
}

impl NativeFunction for BoxedFunction {
    fn params(&self) -> &[Name] {
        &self.names
    }

    fn call(&self, args: Vec<Value>, ev: &mut Evaluator<'_>) -> Result<Value, EvalError> {
        let params: Vec<(Name, Option<FeelType>)> = self
            .names
            .iter()
            .cloned()
            .zip(self.types.iter().cloned())
            .collect();
        let Some(bound) = bind_params(ev, &params, args) else {
            return Ok(Value::Null);
        };
        let base = ev.frames_len();
        for f in &self.captured {
            ev.push_frame(f.clone());
        }
        for f in bound {
            ev.push_frame(f);
        }
        let mut run = Run::new(&self.model, false);
        let r = match self.kind {
            FunctionKind::Feel => run.expr(ev, &self.body),
            FunctionKind::Java => java(&mut run, ev, &self.body, &params, base),
            FunctionKind::Pmml => Ok(Value::Null),
        };
        ev.truncate_frames(base);
        r
    }
}

/// A `kind="Java"` function: the body is a context naming a class and a method signature.
fn java(
    run: &mut Run<'_>,
    ev: &mut Evaluator<'_>,
    body: &CExpr,
    params: &[(Name, Option<FeelType>)],
    _base: usize,
) -> Result<Value, EvalError> {
    let spec = run.expr(ev, body)?;
    let Some(c) = spec.as_context() else {
        return Ok(Value::Null);
    };
    let (Some(class), Some(sig)) = (
        c.get("class").and_then(|v| v.as_str()),
        c.get("method signature").and_then(|v| v.as_str()),
    ) else {
        return Ok(Value::Null);
    };
    let args: Vec<Value> = params
        .iter()
        .map(|(n, _)| ev.lookup(n).unwrap_or(Value::Null))
        .collect();
    Ok(beeline_feel::call_java_static(class, sig, &args).unwrap_or(Value::Null))
}

/// A decision service as a FEEL function value.
struct ServiceFunction {
    model: Arc<Inner>,
    index: usize,
    names: Vec<Name>,
}

impl NativeFunction for ServiceFunction {
    fn params(&self) -> &[Name] {
        &self.names
    }

    fn call(&self, args: Vec<Value>, ev: &mut Evaluator<'_>) -> Result<Value, EvalError> {
        if args.len() != self.names.len() {
            ev.warn(beeline_feel::WarningKind::FunctionInvocationFailure, || {
                format!(
                    "the decision service expects {} arguments but got {}",
                    self.names.len(),
                    args.len()
                )
            });
            return Ok(Value::Null);
        }
        let ctx = EvalContext {
            variables: &(),
            clock: ev.clock(),
            limits: ev.limits(),
            // Derived from the caller's generator: still replayable.
            seed: ev.next_random(),
        };
        invoke_service(&self.model, self.index, args, &ctx)
    }
}

/// Evaluates a decision service in isolation: only its parameters are visible; input
/// decisions take the values passed for them.
pub(crate) fn invoke_service(
    model: &Arc<Inner>,
    index: usize,
    args: Vec<Value>,
    outer: &EvalContext<'_>,
) -> Result<Value, EvalError> {
    let s = &model.compiled.services[index];
    let names = service_params(model, index);
    let mut vars = beeline_feel::Context::new();
    for (n, v) in names
        .iter()
        .zip(args.into_iter().chain(std::iter::repeat(Value::Null)))
    {
        vars.insert(n.clone(), v);
    }
    let ctx = EvalContext {
        variables: &vars,
        clock: outer.clock,
        limits: outer.limits,
        seed: outer.seed,
    };
    let mut ev = Evaluator::new(&ctx);
    let mut run = Run::new(model, false);
    for &d in &s.input_decisions {
        let name = &model.compiled.decisions[d].var;
        let v = vars.get(name).cloned().unwrap_or(Value::Null);
        match &model.compiled.decisions[d].ty {
            Some(t) => match try_coerce(v, t) {
                Some(v) => {
                    run.given.insert(d, v);
                }
                // A wrongly typed input decision: the service is not invoked.
                None => return Ok(Value::Null),
            },
            None => {
                run.given.insert(d, v);
            }
        }
    }
    let mut out = beeline_feel::Context::new();
    let mut single = None;
    for &d in &s.outputs {
        let v = run
            .decision(&mut ev, d)
            .map_err(|f| EvalError::Failure(f.message))?;
        single = Some(v.clone());
        out.insert(model.compiled.decisions[d].var.clone(), v);
    }
    let result = if s.outputs.len() == 1 {
        single.unwrap_or(Value::Null)
    } else {
        Value::context(out)
    };
    Ok(coerce_opt(result, &s.ty))
}
