//! DMN 1.3–1.5 decision models on top of `beeline-feel`: parsing (quick-xml), the
//! decision requirements graph, decision tables with every hit policy and aggregation,
//! boxed expressions (literal, context, invocation, list, relation, function, conditional,
//! filter, iterators), business knowledge models and decision services.
//!
//! ```
//! let xml = r#"<definitions xmlns="https://www.omg.org/spec/DMN/20230324/MODEL/"
//!     id="drg" name="Shipping" namespace="ex">
//!   <decision id="fee" name="Fee">
//!     <decisionTable hitPolicy="FIRST">
//!       <input id="in1"><inputExpression><text>weight</text></inputExpression></input>
//!       <output id="out1" name="fee"/>
//!       <rule id="r1"><inputEntry><text>&lt; 10</text></inputEntry>
//!                     <outputEntry><text>5</text></outputEntry></rule>
//!       <rule id="r2"><inputEntry><text>-</text></inputEntry>
//!                     <outputEntry><text>20</text></outputEntry></rule>
//!     </decisionTable>
//!   </decision>
//! </definitions>"#;
//! let model = beeline_dmn::DmnModel::parse(xml).unwrap();
//! let result = model.evaluate("fee", &serde_json::json!({"weight": 3}), None);
//! assert_eq!(result.output_json(), serde_json::json!(5));
//! assert_eq!(result.evaluated_decisions[0].matched_rules[0].rule_id, "r1");
//! ```

mod compile;
mod error;
mod eval;
pub mod model;
mod parse;
mod result;
pub mod xml;

use std::collections::HashMap;
use std::sync::Arc;

use beeline_feel::{Clock, Context, EvalContext, Evaluator, Name, Value};

pub use error::{DmnError, Location};
pub use result::{
    DecisionEvaluation, DecisionFailure, EvaluatedDecision, EvaluatedInput, EvaluatedOutput,
    MatchedRule,
};

use compile::{CBkm, CDecision, CInputData, CService, Compiled, Compiler, Knowledge};
use model::{Definitions, FunctionKind};

pub(crate) struct Inner {
    pub definitions: Definitions,
    pub compiled: Compiled,
}

/// A parsed and compiled DMN model (one `<definitions>`, plus what it imports).
/// Cheap to clone; evaluation does not mutate it.
#[derive(Clone)]
pub struct DmnModel {
    inner: Arc<Inner>,
    semantics: Semantics,
}

/// Whose rules evaluation follows where Zeebe's DMN engine departs from the DMN specification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Semantics {
    /// The DMN 1.5 specification (what the TCK checks).
    #[default]
    Specification,
    /// Zeebe's DMN engine: a value is not converted to the `typeRef` of the decision table
    /// output, literal expression or decision that yields it (a rule of an output typed
    /// `string` that yields a number gives that number, where the specification gives
    /// null).
    Zeebe,
}

impl std::fmt::Debug for DmnModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DmnModel")
            .field("id", &self.inner.definitions.id)
            .field("decisions", &self.inner.compiled.decisions.len())
            .finish()
    }
}

/// A decision as deployment lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionInfo {
    pub id: String,
    pub name: String,
    /// `DECISION_TABLE`, `LITERAL_EXPRESSION`, ...
    pub decision_type: &'static str,
}

impl DmnModel {
    /// Parses a model for deployment: any FEEL expression that does not parse is an error
    /// naming the element, the expression and the position.
    pub fn parse(xml: &str) -> Result<DmnModel, DmnError> {
        let m = DmnModel::parse_lenient(xml, &[])?;
        if let Some(p) = m.inner.compiled.problems.first() {
            return Err(p.clone());
        }
        Ok(m)
    }

    /// Parses a model and the models it imports, keeping broken expressions (they
    /// evaluate to null); [`problems`](Self::problems) lists them.
    pub fn parse_lenient(xml: &str, imports: &[&str]) -> Result<DmnModel, DmnError> {
        let main = parse::parse_definitions(xml)?;
        let mut imported = Vec::new();
        for src in imports {
            let d = parse::parse_definitions(src)?;
            if let Some(imp) = main.imports.iter().find(|i| i.namespace == d.namespace) {
                imported.push((imp.name.clone(), d));
            }
        }
        let compiled = build(&main, &imported);
        Ok(DmnModel {
            inner: Arc::new(Inner {
                definitions: main,
                compiled,
            }),
            semantics: Semantics::Specification,
        })
    }

    /// The model evaluated with `semantics`.
    pub fn with_semantics(mut self, semantics: Semantics) -> DmnModel {
        self.semantics = semantics;
        self
    }

    /// Expressions that did not parse.
    pub fn problems(&self) -> &[DmnError] {
        &self.inner.compiled.problems
    }

    /// The decision requirements graph's id (`definitions/@id`).
    pub fn id(&self) -> &str {
        &self.inner.definitions.id
    }

    /// The decision requirements graph's name (`definitions/@name`).
    pub fn name(&self) -> &str {
        &self.inner.definitions.name
    }

    pub fn namespace(&self) -> &str {
        &self.inner.definitions.namespace
    }

    /// The model's own decisions (imported ones excluded), in document order.
    pub fn decisions(&self) -> Vec<DecisionInfo> {
        let own: Vec<&str> = self
            .inner
            .definitions
            .decisions
            .iter()
            .map(|d| d.id.as_str())
            .collect();
        self.inner
            .compiled
            .decisions
            .iter()
            .filter(|d| own.contains(&d.id.as_str()))
            .map(|d| DecisionInfo {
                id: d.id.clone(),
                name: d.name.clone(),
                decision_type: d.kind_name,
            })
            .collect()
    }

    fn decision_index(&self, id_or_name: &str) -> Option<usize> {
        let ds = &self.inner.compiled.decisions;
        ds.iter()
            .position(|d| d.id == id_or_name)
            .or_else(|| ds.iter().position(|d| d.name == id_or_name))
    }

    /// Evaluates a decision with JSON variables (as Zeebe's business rule task and
    /// `EvaluateDecision` do). `clock` feeds `now()` and `today()`.
    pub fn evaluate(
        &self,
        decision_id: &str,
        variables: &serde_json::Value,
        clock: Option<Clock>,
    ) -> DecisionEvaluation {
        let vars = match Value::from_json(variables) {
            Value::Context(c) => c,
            _ => Arc::new(Context::new()),
        };
        let mut ctx = EvalContext::new(&*vars);
        ctx.clock = clock;
        self.evaluate_with(decision_id, &ctx)
    }

    /// Evaluates a decision with FEEL variables from any provider.
    pub fn evaluate_with(&self, decision_id: &str, ctx: &EvalContext<'_>) -> DecisionEvaluation {
        let Some(idx) = self.decision_index(decision_id) else {
            return DecisionEvaluation {
                decision_id: decision_id.to_string(),
                decision_name: String::new(),
                output: Value::Null,
                evaluated_decisions: Vec::new(),
                failure: Some(DecisionFailure {
                    decision_id: decision_id.to_string(),
                    message: format!("no decision found with id '{decision_id}'"),
                }),
                warnings: Vec::new(),
            };
        };
        let d = &self.inner.compiled.decisions[idx];
        let mut ev = Evaluator::new(ctx);
        let mut run = eval::Run::new(&self.inner, true);
        run.semantics = self.semantics;
        let result = run.decision(&mut ev, idx);
        let (output, failure) = match result {
            Ok(v) => (v, None),
            Err(f) => (Value::Null, Some(f)),
        };
        DecisionEvaluation {
            decision_id: d.id.clone(),
            decision_name: d.name.clone(),
            output,
            evaluated_decisions: run.trace,
            failure,
            warnings: ev.take_warnings(),
        }
    }

    /// Invokes a business knowledge model or a decision service by name with named
    /// arguments (missing ones are null).
    pub fn invoke(
        &self,
        name: &str,
        args: &Context,
        ctx: &EvalContext<'_>,
    ) -> Result<Value, beeline_feel::EvalError> {
        let c = &self.inner.compiled;
        if let Some(i) = c
            .services
            .iter()
            .position(|s| &*s.name == name || s.id == name)
        {
            let params = eval::service_params(&self.inner, i);
            let values = params
                .iter()
                .map(|p| args.get(p).cloned().unwrap_or(Value::Null))
                .collect();
            return eval::invoke_service(&self.inner, i, values, ctx);
        }
        if let Some(i) = c.bkms.iter().position(|b| &*b.name == name || b.id == name) {
            let mut ev = Evaluator::new(ctx);
            if let beeline_feel::Frame::Var(_, Value::Function(f)) =
                eval::knowledge_frame(&self.inner, Knowledge::Bkm(i))
            {
                let values = c.bkms[i]
                    .params
                    .iter()
                    .map(|(p, _)| args.get(p).cloned().unwrap_or(Value::Null))
                    .collect();
                return ev.invoke(&f, values);
            }
        }
        Ok(Value::Null)
    }
}

/// Namespace-qualified reference to an element: the namespace of the model that holds the
/// reference resolves `#id`.
fn resolve_href(href: &str, own_namespace: &str) -> (String, String) {
    match href.rsplit_once('#') {
        Some((ns, id)) if !ns.is_empty() => (ns.to_string(), id.to_string()),
        Some((_, id)) => (own_namespace.to_string(), id.to_string()),
        None => (own_namespace.to_string(), href.to_string()),
    }
}

/// Builds the executable model from the main definitions and the imported ones.
fn build(main: &Definitions, imported: &[(String, Definitions)]) -> Compiled {
    let mut compiler = Compiler::new(main, imported);
    let mut all: Vec<(&str, &Definitions)> = vec![("", main)];
    all.extend(imported.iter().map(|(p, d)| (p.as_str(), d)));
    let qualify = |prefix: &str, name: &str| -> Name {
        if prefix.is_empty() {
            Name::from(name)
        } else {
            Name::from(format!("{prefix}.{name}"))
        }
    };

    // Indexes by (namespace, id) across all models.
    let mut decision_ix: HashMap<(String, String), usize> = HashMap::new();
    let mut input_ix = HashMap::new();
    let mut bkm_ix = HashMap::new();
    let mut service_ix = HashMap::new();
    let (mut nd, mut ni, mut nb, mut ns) = (0, 0, 0, 0);
    for (_, d) in &all {
        for x in &d.decisions {
            decision_ix.insert((d.namespace.clone(), x.id.clone()), nd);
            nd += 1;
        }
        for x in &d.input_data {
            input_ix.insert((d.namespace.clone(), x.id.clone()), ni);
            ni += 1;
        }
        for x in &d.knowledge_models {
            bkm_ix.insert((d.namespace.clone(), x.id.clone()), nb);
            nb += 1;
        }
        for x in &d.decision_services {
            service_ix.insert((d.namespace.clone(), x.id.clone()), ns);
            ns += 1;
        }
    }
    let knowledge = |refs: &[String], own: &str| -> Vec<Knowledge> {
        refs.iter()
            .filter_map(|h| {
                let key = resolve_href(h, own);
                bkm_ix
                    .get(&key)
                    .map(|i| Knowledge::Bkm(*i))
                    .or_else(|| service_ix.get(&key).map(|i| Knowledge::Service(*i)))
            })
            .collect()
    };

    let mut c = Compiled::default();
    for (prefix, d) in &all {
        compiler.set_prefix(prefix);
        for x in &d.decisions {
            let logic = x.logic.as_ref().map(|l| compiler.expr(&x.id, l));
            c.decisions.push(CDecision {
                id: x.id.clone(),
                name: qualify(prefix, &x.name).to_string(),
                var: qualify(prefix, &x.variable.name),
                ty: compiler.type_ref(x.variable.type_ref.as_deref()),
                required_decisions: x
                    .required_decisions
                    .iter()
                    .filter_map(|h| decision_ix.get(&resolve_href(h, &d.namespace)).copied())
                    .collect(),
                required_inputs: x
                    .required_inputs
                    .iter()
                    .filter_map(|h| input_ix.get(&resolve_href(h, &d.namespace)).copied())
                    .collect(),
                knowledge: knowledge(&x.required_knowledge, &d.namespace),
                kind_name: x
                    .logic
                    .as_ref()
                    .map_or("LITERAL_EXPRESSION", |l| l.kind_name()),
                logic,
            });
        }
        for x in &d.input_data {
            c.inputs.push(CInputData {
                name: qualify(prefix, &x.variable.name),
                ty: compiler.type_ref(x.variable.type_ref.as_deref()),
            });
        }
        for x in &d.knowledge_models {
            let (params, body, kind, result_ty) = match x.logic.as_ref() {
                Some(model::Expr::Function {
                    kind, params, body, ..
                }) => {
                    let ps = params
                        .iter()
                        .map(|p| {
                            (
                                Name::from(p.name.as_str()),
                                compiler.type_ref(p.type_ref.as_deref()),
                            )
                        })
                        .collect();
                    let b = body.as_ref().map(|b| Arc::new(compiler.expr(&x.id, b)));
                    (ps, b, *kind, None)
                }
                _ => (Vec::new(), None, FunctionKind::Feel, None),
            };
            c.bkms.push(CBkm {
                id: x.id.clone(),
                name: qualify(prefix, &x.variable.name),
                params,
                body,
                kind,
                knowledge: knowledge(&x.required_knowledge, &d.namespace),
                result_ty,
            });
        }
        for x in &d.decision_services {
            let refs = |v: &[String], ix: &HashMap<(String, String), usize>| -> Vec<usize> {
                v.iter()
                    .filter_map(|h| ix.get(&resolve_href(h, &d.namespace)).copied())
                    .collect()
            };
            c.services.push(CService {
                id: x.id.clone(),
                name: qualify(prefix, &x.variable.name),
                ty: compiler.type_ref(x.variable.type_ref.as_deref()),
                outputs: refs(&x.output_decisions, &decision_ix),
                input_decisions: refs(&x.input_decisions, &decision_ix),
                input_data: refs(&x.input_data, &input_ix),
            });
        }
    }
    c.problems = compiler.take_problems();
    c
}
