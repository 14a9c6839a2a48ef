//! Compiles a parsed model: every FEEL text becomes an [`Expression`] or [`UnaryTests`],
//! item definitions become [`FeelType`]s, requirement hrefs become indexes.
//!
//! A FEEL text that does not parse is kept as a [`Feel::Broken`] and listed in
//! `problems`: deployment rejects such a model (with the element id, the expression and
//! the position), while lenient use (the TCK) evaluates the broken part to null.

use std::collections::HashMap;
use std::sync::Arc;

use beeline_feel::{Expression, FeelType, Name, ParseOptions, UnaryTests, Value};

use crate::error::DmnError;
use crate::model::*;

#[derive(Clone, Debug)]
pub enum Feel {
    Ok(Expression),
    Broken(String),
}

#[derive(Clone, Debug)]
pub enum Tests {
    Ok(UnaryTests),
    Broken(String),
}

#[derive(Debug)]
pub struct CInputClause {
    pub id: String,
    pub name: String,
    pub expr: Feel,
    pub ty: Option<FeelType>,
    pub allowed: Option<Tests>,
}

#[derive(Debug)]
pub struct COutputClause {
    pub id: String,
    pub name: Name,
    pub ty: Option<FeelType>,
    pub allowed: Option<Tests>,
    /// The output values in order, for PRIORITY and OUTPUT ORDER.
    pub priorities: Vec<Value>,
    pub default: Option<Feel>,
}

#[derive(Debug)]
pub struct CRule {
    pub id: String,
    pub inputs: Vec<Tests>,
    pub outputs: Vec<Feel>,
}

#[derive(Debug)]
pub struct CTable {
    pub hit_policy: HitPolicy,
    pub aggregation: Option<Aggregation>,
    pub inputs: Vec<CInputClause>,
    pub outputs: Vec<COutputClause>,
    pub rules: Vec<CRule>,
}

#[derive(Debug)]
pub struct CEntry {
    pub name: Option<Name>,
    pub ty: Option<FeelType>,
    pub value: CExpr,
}

#[derive(Debug)]
pub enum CExpr {
    Literal(Feel, Option<FeelType>),
    Table(Box<CTable>),
    Context(Vec<CEntry>),
    Invocation {
        callee: Name,
        bindings: Vec<(Name, Option<CExpr>)>,
    },
    List(Vec<CExpr>),
    Relation(Vec<Name>, Vec<Vec<CExpr>>),
    Function {
        kind: FunctionKind,
        params: Vec<(Name, Option<FeelType>)>,
        body: Arc<CExpr>,
    },
    Conditional(Box<CExpr>, Box<CExpr>, Box<CExpr>),
    Filter(Box<CExpr>, Box<CExpr>),
    Iterator(IteratorKind, Name, Box<CExpr>, Box<CExpr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knowledge {
    Bkm(usize),
    Service(usize),
}

#[derive(Debug)]
pub struct CDecision {
    pub id: String,
    pub name: String,
    pub var: Name,
    pub ty: Option<FeelType>,
    pub required_decisions: Vec<usize>,
    pub required_inputs: Vec<usize>,
    pub knowledge: Vec<Knowledge>,
    pub logic: Option<CExpr>,
    pub kind_name: &'static str,
}

#[derive(Debug)]
pub struct CInputData {
    pub name: Name,
    pub ty: Option<FeelType>,
}

#[derive(Debug)]
pub struct CBkm {
    pub id: String,
    pub name: Name,
    pub params: Vec<(Name, Option<FeelType>)>,
    pub body: Option<Arc<CExpr>>,
    pub kind: FunctionKind,
    pub knowledge: Vec<Knowledge>,
    pub result_ty: Option<FeelType>,
}

#[derive(Debug)]
pub struct CService {
    pub id: String,
    pub name: Name,
    pub ty: Option<FeelType>,
    pub outputs: Vec<usize>,
    pub input_decisions: Vec<usize>,
    pub input_data: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct Compiled {
    pub decisions: Vec<CDecision>,
    pub inputs: Vec<CInputData>,
    pub bkms: Vec<CBkm>,
    pub services: Vec<CService>,
    pub problems: Vec<DmnError>,
}

pub struct Compiler<'a> {
    opts: ParseOptions,
    problems: Vec<DmnError>,
    /// Item definitions by name, resolved lazily (they may refer to later ones).
    items: HashMap<String, &'a ItemDefinition>,
    resolving: Vec<String>,
    /// Prefix for imported names (`import.name`), empty for the main model.
    prefix: String,
}

/// Every name the model declares that FEEL text may mention: DRG elements, context entries,
/// parameters, item components, relation columns, iterator variables.
fn collect_names(defs: &Definitions, prefix: &str, out: &mut Vec<String>) {
    fn expr_names(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Literal { .. } => {}
            Expr::DecisionTable(t) => {
                for o in &t.outputs {
                    if let Some(n) = &o.name {
                        out.push(n.clone());
                    }
                }
            }
            Expr::Context { entries, .. } => {
                for en in entries {
                    if let Some(v) = &en.variable {
                        out.push(v.name.clone());
                    }
                    expr_names(&en.value, out);
                }
            }
            Expr::Invocation { bindings, .. } => {
                for b in bindings {
                    out.push(b.parameter.clone());
                    if let Some(v) = &b.value {
                        expr_names(v, out);
                    }
                }
            }
            Expr::List { items, .. } => items.iter().for_each(|i| expr_names(i, out)),
            Expr::Relation { columns, rows, .. } => {
                out.extend(columns.iter().cloned());
                rows.iter().flatten().for_each(|c| expr_names(c, out));
            }
            Expr::Function { params, body, .. } => {
                out.extend(params.iter().map(|p| p.name.clone()));
                if let Some(b) = body {
                    expr_names(b, out);
                }
            }
            Expr::Conditional {
                condition,
                then,
                otherwise,
                ..
            } => {
                expr_names(condition, out);
                expr_names(then, out);
                expr_names(otherwise, out);
            }
            Expr::Filter {
                input, condition, ..
            } => {
                expr_names(input, out);
                expr_names(condition, out);
            }
            Expr::Iterator {
                variable,
                input,
                body,
                ..
            } => {
                out.push(variable.clone());
                expr_names(input, out);
                expr_names(body, out);
            }
        }
    }
    fn item_names(i: &ItemDefinition, out: &mut Vec<String>) {
        out.push(i.name.clone());
        for c in &i.components {
            item_names(c, out);
        }
    }
    let p = |n: &str| {
        if prefix.is_empty() {
            n.to_string()
        } else {
            format!("{prefix}.{n}")
        }
    };
    for d in &defs.decisions {
        out.push(p(&d.name));
        out.push(p(&d.variable.name));
        if let Some(l) = &d.logic {
            expr_names(l, out);
        }
    }
    for i in &defs.input_data {
        out.push(p(&i.name));
    }
    for b in &defs.knowledge_models {
        out.push(p(&b.name));
        if let Some(l) = &b.logic {
            expr_names(l, out);
        }
    }
    for s in &defs.decision_services {
        out.push(p(&s.name));
    }
    for i in &defs.item_definitions {
        item_names(i, out);
    }
    for imp in &defs.imports {
        out.push(imp.name.clone());
    }
}

impl<'a> Compiler<'a> {
    pub fn new(defs: &'a Definitions, imported: &'a [(String, Definitions)]) -> Compiler<'a> {
        let mut names = Vec::new();
        collect_names(defs, "", &mut names);
        for (prefix, d) in imported {
            collect_names(d, prefix, &mut names);
        }
        let mut items = HashMap::new();
        for i in &defs.item_definitions {
            items.insert(i.name.clone(), i);
        }
        for (prefix, d) in imported {
            for i in &d.item_definitions {
                items.insert(format!("{prefix}.{}", i.name), i);
            }
        }
        let mut c = Compiler {
            opts: ParseOptions {
                known_names: names,
                types: HashMap::new(),
            },
            problems: Vec::new(),
            items,
            resolving: Vec::new(),
            prefix: String::new(),
        };
        let names: Vec<String> = c.items.keys().cloned().collect();
        for n in names {
            if let Some(t) = c.item_type(&n) {
                c.opts.types.insert(n, t);
            }
        }
        c
    }

    pub fn take_problems(&mut self) -> Vec<DmnError> {
        std::mem::take(&mut self.problems)
    }

    pub fn set_prefix(&mut self, prefix: &str) {
        self.prefix = prefix.to_string();
    }

    fn item_type(&mut self, name: &str) -> Option<FeelType> {
        if self.resolving.iter().any(|n| n == name) {
            return Some(FeelType::Any);
        }
        let item = *self.items.get(name)?;
        self.resolving.push(name.to_string());
        let t = self.item_definition_type(item);
        self.resolving.pop();
        Some(t)
    }

    fn item_definition_type(&mut self, item: &ItemDefinition) -> FeelType {
        let base = if let Some((params, out)) = &item.function {
            let ps = params
                .iter()
                .map(|p| {
                    self.type_ref(p.type_ref.as_deref())
                        .unwrap_or(FeelType::Any)
                })
                .collect();
            let r = self.type_ref(out.as_deref()).unwrap_or(FeelType::Any);
            FeelType::Function(Some(ps), Box::new(r))
        } else if !item.components.is_empty() {
            let entries = item
                .components
                .iter()
                .map(|c| (Name::from(c.name.as_str()), self.item_definition_type(c)))
                .collect();
            FeelType::Context(entries)
        } else {
            self.type_ref(item.type_ref.as_deref())
                .unwrap_or(FeelType::Any)
        };
        let constrained = match &item.allowed_values {
            Some(text) => match UnaryTests::parse_with(text, &self.opts) {
                Ok(t) => FeelType::Constrained(Box::new(base), Arc::new(t)),
                Err(_) => base,
            },
            None => base,
        };
        if item.is_collection {
            FeelType::List(Box::new(constrained))
        } else {
            constrained
        }
    }

    /// A `typeRef`: a built-in type, an item definition (possibly imported), or a FEEL
    /// type expression. Unknown names mean "no constraint".
    pub fn type_ref(&mut self, t: Option<&str>) -> Option<FeelType> {
        let t = t?.trim();
        if t.is_empty() {
            return None;
        }
        if let Some(ft) = self.opts.types.get(t) {
            return Some(ft.clone());
        }
        if self.items.contains_key(t) {
            return self.item_type(t);
        }
        if !self.prefix.is_empty() {
            let q = format!("{}.{t}", self.prefix);
            if self.items.contains_key(&q) {
                return self.item_type(&q);
            }
        }
        // `feel:number`, `xsd:string` and friends.
        let bare = t.rsplit(':').next().unwrap_or(t);
        if let Some(ft) = FeelType::by_name(bare) {
            return Some(ft);
        }
        FeelType::parse(t, &self.opts).ok()
    }

    fn feel(&mut self, element_id: &str, text: &str) -> Feel {
        match Expression::parse_with(text.trim(), &self.opts) {
            Ok(e) => Feel::Ok(e),
            Err(e) => {
                let msg = format!("{e}");
                self.problems.push(DmnError::Expression {
                    element_id: element_id.to_string(),
                    expression: text.to_string(),
                    message: e.message,
                    line: e.position.line,
                    column: e.position.column,
                });
                Feel::Broken(msg)
            }
        }
    }

    fn tests(&mut self, element_id: &str, text: &str) -> Tests {
        let t = text.trim();
        let t = if t.is_empty() { "-" } else { t };
        match UnaryTests::parse_with(t, &self.opts) {
            Ok(u) => Tests::Ok(u),
            Err(e) => {
                let msg = format!("{e}");
                self.problems.push(DmnError::Expression {
                    element_id: element_id.to_string(),
                    expression: text.to_string(),
                    message: e.message,
                    line: e.position.line,
                    column: e.position.column,
                });
                Tests::Broken(msg)
            }
        }
    }

    pub fn expr(&mut self, owner: &str, e: &Expr) -> CExpr {
        let id = e.id().unwrap_or(owner).to_string();
        match e {
            Expr::Literal { text, type_ref, .. } => {
                let ty = self.type_ref(type_ref.as_deref());
                if text.trim().is_empty() {
                    return CExpr::Literal(self.feel(&id, "null"), ty);
                }
                CExpr::Literal(self.feel(&id, text), ty)
            }
            Expr::DecisionTable(t) => CExpr::Table(Box::new(self.table(&id, t))),
            Expr::Context { entries, .. } => CExpr::Context(
                entries
                    .iter()
                    .map(|en| CEntry {
                        name: en.variable.as_ref().map(|v| Name::from(v.name.as_str())),
                        ty: en
                            .variable
                            .as_ref()
                            .and_then(|v| self.type_ref(v.type_ref.as_deref())),
                        value: self.expr(&id, &en.value),
                    })
                    .collect(),
            ),
            Expr::Invocation {
                callee, bindings, ..
            } => CExpr::Invocation {
                callee: Name::from(callee.split_whitespace().collect::<Vec<_>>().join(" ")),
                bindings: bindings
                    .iter()
                    .map(|b| {
                        (
                            Name::from(b.parameter.as_str()),
                            b.value.as_ref().map(|v| self.expr(&id, v)),
                        )
                    })
                    .collect(),
            },
            Expr::List { items, .. } => {
                CExpr::List(items.iter().map(|i| self.expr(&id, i)).collect())
            }
            Expr::Relation { columns, rows, .. } => CExpr::Relation(
                columns.iter().map(|c| Name::from(c.as_str())).collect(),
                rows.iter()
                    .map(|r| r.iter().map(|c| self.expr(&id, c)).collect())
                    .collect(),
            ),
            Expr::Function {
                kind, params, body, ..
            } => CExpr::Function {
                kind: *kind,
                params: params
                    .iter()
                    .map(|p| {
                        (
                            Name::from(p.name.as_str()),
                            self.type_ref(p.type_ref.as_deref()),
                        )
                    })
                    .collect(),
                body: Arc::new(match body {
                    Some(b) => self.expr(&id, b),
                    None => CExpr::List(Vec::new()),
                }),
            },
            Expr::Conditional {
                condition,
                then,
                otherwise,
                ..
            } => CExpr::Conditional(
                Box::new(self.expr(&id, condition)),
                Box::new(self.expr(&id, then)),
                Box::new(self.expr(&id, otherwise)),
            ),
            Expr::Filter {
                input, condition, ..
            } => CExpr::Filter(
                Box::new(self.expr(&id, input)),
                Box::new(self.expr(&id, condition)),
            ),
            Expr::Iterator {
                kind,
                variable,
                input,
                body,
                ..
            } => CExpr::Iterator(
                *kind,
                Name::from(variable.as_str()),
                Box::new(self.expr(&id, input)),
                Box::new(self.expr(&id, body)),
            ),
        }
    }

    fn table(&mut self, table_id: &str, t: &DecisionTable) -> CTable {
        let inputs = t
            .inputs
            .iter()
            .enumerate()
            .map(|(i, inp)| {
                let id = inp
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("{table_id}_input_{}", i + 1));
                CInputClause {
                    name: inp
                        .label
                        .clone()
                        .unwrap_or_else(|| inp.expression.trim().to_string()),
                    expr: self.feel(&id, &inp.expression),
                    ty: self.type_ref(inp.type_ref.as_deref()),
                    allowed: inp.input_values.as_ref().map(|v| self.tests(&id, v)),
                    id,
                }
            })
            .collect();
        let single = t.outputs.len() == 1;
        let multi_hit = matches!(
            t.hit_policy,
            HitPolicy::Collect | HitPolicy::RuleOrder | HitPolicy::OutputOrder
        );
        // The table's own type describes its result: for a multi-hit table a list, whose
        // item type is what each output cell must have.
        let table_ty = match self.type_ref(t.type_ref.as_deref()) {
            Some(FeelType::List(item)) if multi_hit => Some(*item),
            Some(_) if multi_hit => None,
            other => other,
        };
        let outputs = t
            .outputs
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let id =
                    o.id.clone()
                        .unwrap_or_else(|| format!("{table_id}_output_{}", i + 1));
                let ty = self
                    .type_ref(o.type_ref.as_deref())
                    .or_else(|| if single { table_ty.clone() } else { None });
                let allowed = o.output_values.as_ref().map(|v| self.tests(&id, v));
                let priorities = match &allowed {
                    Some(Tests::Ok(u)) => literal_values(u),
                    _ => Vec::new(),
                };
                COutputClause {
                    name: Name::from(o.name.clone().unwrap_or_default().as_str()),
                    ty,
                    allowed,
                    priorities,
                    default: o.default_output.as_ref().map(|d| self.feel(&id, d)),
                    id,
                }
            })
            .collect();
        let rules = t
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let id =
                    r.id.clone()
                        .unwrap_or_else(|| format!("{table_id}_rule_{}", i + 1));
                CRule {
                    inputs: r.input_entries.iter().map(|e| self.tests(&id, e)).collect(),
                    outputs: r
                        .output_entries
                        .iter()
                        .map(|e| {
                            if e.trim().is_empty() {
                                self.feel(&id, "null")
                            } else {
                                self.feel(&id, e)
                            }
                        })
                        .collect(),
                    id,
                }
            })
            .collect();
        CTable {
            hit_policy: t.hit_policy,
            aggregation: t.aggregation,
            inputs,
            outputs,
            rules,
        }
    }
}

/// The literal values of an output-values list (`"high", "medium", "low"`), in order.
fn literal_values(tests: &UnaryTests) -> Vec<Value> {
    tests.literal_values()
}
