//! From the XML tree to the [`model`](crate::model). Unknown elements (diagram
//! interchange, extension elements, descriptions) are ignored; missing required parts are
//! errors that say what and where.

use crate::error::{DmnError, Location};
use crate::model::*;
use crate::xml::{self, Element};

pub fn parse_definitions(source: &str) -> Result<Definitions, DmnError> {
    let root = xml::parse(source)?;
    let p = Parser { source };
    p.definitions(&root)
}

struct Parser<'a> {
    source: &'a str,
}

const EXPRESSION_ELEMENTS: &[&str] = &[
    "literalExpression",
    "decisionTable",
    "context",
    "invocation",
    "list",
    "relation",
    "functionDefinition",
    "conditional",
    "filter",
    "for",
    "some",
    "every",
];

/// `#id` -> `id`; `namespace#id` stays as is (an imported element).
fn href(el: &Element) -> Option<String> {
    let h = el.attr("href")?;
    Some(h.strip_prefix('#').unwrap_or(h).to_string())
}

fn id_of(el: &Element) -> Option<String> {
    el.attr("id").map(str::to_string)
}

impl Parser<'_> {
    fn error(&self, el: &Element, message: impl Into<String>) -> DmnError {
        DmnError::Model {
            message: message.into(),
            location: Location::of(self.source, el.offset),
        }
    }

    fn definitions(&self, root: &Element) -> Result<Definitions, DmnError> {
        if root.name != "definitions" {
            return Err(self.error(
                root,
                format!("expected <definitions> but found <{}>", root.name),
            ));
        }
        let mut defs = Definitions {
            id: root.attr("id").unwrap_or_default().to_string(),
            name: root.attr("name").unwrap_or_default().to_string(),
            namespace: root.attr("namespace").unwrap_or_default().to_string(),
            ..Definitions::default()
        };
        for el in &root.children {
            match el.name.as_str() {
                "decision" => defs.decisions.push(self.decision(el)?),
                "inputData" => {
                    let (id, name) = self.identity(el)?;
                    defs.input_data.push(InputData {
                        variable: self.variable(el, &name),
                        id,
                        name,
                    });
                }
                "businessKnowledgeModel" => {
                    let (id, name) = self.identity(el)?;
                    defs.knowledge_models.push(BusinessKnowledgeModel {
                        variable: self.variable(el, &name),
                        required_knowledge: el
                            .children_named("knowledgeRequirement")
                            .filter_map(|k| k.child("requiredKnowledge").and_then(href))
                            .collect(),
                        logic: match el.child("encapsulatedLogic") {
                            Some(l) => Some(self.function_definition(l)?),
                            None => None,
                        },
                        id,
                        name,
                    });
                }
                "decisionService" => {
                    let (id, name) = self.identity(el)?;
                    let refs =
                        |tag: &str| el.children_named(tag).filter_map(href).collect::<Vec<_>>();
                    defs.decision_services.push(DecisionService {
                        variable: self.variable(el, &name),
                        output_decisions: refs("outputDecision"),
                        encapsulated_decisions: refs("encapsulatedDecision"),
                        input_decisions: refs("inputDecision"),
                        input_data: refs("inputData"),
                        id,
                        name,
                    });
                }
                "itemDefinition" => defs.item_definitions.push(self.item_definition(el)),
                "import" => defs.imports.push(Import {
                    name: el.attr("name").unwrap_or_default().to_string(),
                    namespace: el.attr("namespace").unwrap_or_default().to_string(),
                    location: el.attr("locationURI").map(str::to_string),
                }),
                _ => {}
            }
        }
        Ok(defs)
    }

    fn identity(&self, el: &Element) -> Result<(String, String), DmnError> {
        let name = el.attr("name").map(str::to_string);
        let id = el.attr("id").map(str::to_string);
        match (id, name) {
            (Some(id), Some(name)) => Ok((id, name)),
            (None, Some(name)) => Ok((name.clone(), name)),
            (Some(id), None) => Ok((id.clone(), id)),
            (None, None) => Err(self.error(el, format!("<{}> needs an id or a name", el.name))),
        }
    }

    fn variable(&self, el: &Element, default_name: &str) -> InfoItem {
        match el.child("variable") {
            Some(v) => InfoItem {
                name: v.attr("name").unwrap_or(default_name).to_string(),
                type_ref: v.attr("typeRef").map(str::to_string),
            },
            None => InfoItem {
                name: default_name.to_string(),
                type_ref: None,
            },
        }
    }

    fn decision(&self, el: &Element) -> Result<Decision, DmnError> {
        let (id, name) = self.identity(el)?;
        let mut d = Decision {
            variable: self.variable(el, &name),
            id,
            name,
            required_decisions: Vec::new(),
            required_inputs: Vec::new(),
            required_knowledge: Vec::new(),
            logic: None,
            offset: el.offset,
        };
        for c in &el.children {
            match c.name.as_str() {
                "informationRequirement" => {
                    if let Some(r) = c.child("requiredDecision").and_then(href) {
                        d.required_decisions.push(r);
                    }
                    if let Some(r) = c.child("requiredInput").and_then(href) {
                        d.required_inputs.push(r);
                    }
                }
                "knowledgeRequirement" => {
                    if let Some(r) = c.child("requiredKnowledge").and_then(href) {
                        d.required_knowledge.push(r);
                    }
                }
                n if EXPRESSION_ELEMENTS.contains(&n) => d.logic = Some(self.expr(c)?),
                _ => {}
            }
        }
        Ok(d)
    }

    fn item_definition(&self, el: &Element) -> ItemDefinition {
        ItemDefinition {
            name: el.attr("name").unwrap_or_default().to_string(),
            type_ref: el.child_text("typeRef").map(|t| t.trim().to_string()),
            is_collection: el.attr("isCollection") == Some("true"),
            components: el
                .children_named("itemComponent")
                .map(|c| self.item_definition(c))
                .collect(),
            allowed_values: el
                .child("allowedValues")
                .and_then(|a| a.child_text("text"))
                .map(str::to_string),
            function: el.child("functionItem").map(|f| {
                (
                    f.children_named("parameters")
                        .map(|p| InfoItem {
                            name: p.attr("name").unwrap_or_default().to_string(),
                            type_ref: p.attr("typeRef").map(str::to_string),
                        })
                        .collect(),
                    f.attr("outputTypeRef").map(str::to_string),
                )
            }),
        }
    }

    /// The single boxed expression inside a wrapper element (`<then>`, `<in>`, ...).
    fn inner_expr(&self, el: &Element) -> Result<Expr, DmnError> {
        match el
            .children
            .iter()
            .find(|c| EXPRESSION_ELEMENTS.contains(&c.name.as_str()))
        {
            Some(c) => self.expr(c),
            None => Ok(Expr::Literal {
                id: None,
                text: String::new(),
                type_ref: None,
            }),
        }
    }

    fn expr(&self, el: &Element) -> Result<Expr, DmnError> {
        let id = id_of(el);
        Ok(match el.name.as_str() {
            "literalExpression" => Expr::Literal {
                id,
                text: el.child_text("text").unwrap_or_default().to_string(),
                type_ref: el.attr("typeRef").map(str::to_string),
            },
            "decisionTable" => Expr::DecisionTable(self.decision_table(el)?),
            "context" => {
                let mut entries = Vec::new();
                for e in el.children_named("contextEntry") {
                    let variable = e.child("variable").map(|v| InfoItem {
                        name: v.attr("name").unwrap_or_default().to_string(),
                        type_ref: v.attr("typeRef").map(str::to_string),
                    });
                    entries.push(ContextEntry {
                        variable,
                        value: self.inner_expr(e)?,
                    });
                }
                Expr::Context { id, entries }
            }
            "invocation" => {
                let callee = el
                    .children
                    .iter()
                    .find(|c| c.name == "literalExpression")
                    .and_then(|c| c.child_text("text"))
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                let mut bindings = Vec::new();
                for b in el.children_named("binding") {
                    let parameter = b
                        .child("parameter")
                        .and_then(|p| p.attr("name"))
                        .unwrap_or_default()
                        .to_string();
                    let value = match b
                        .children
                        .iter()
                        .find(|c| EXPRESSION_ELEMENTS.contains(&c.name.as_str()))
                    {
                        Some(c) => Some(self.expr(c)?),
                        None => None,
                    };
                    bindings.push(Binding { parameter, value });
                }
                Expr::Invocation {
                    id,
                    callee,
                    bindings,
                }
            }
            "list" => {
                let mut items = Vec::new();
                for c in &el.children {
                    if EXPRESSION_ELEMENTS.contains(&c.name.as_str()) {
                        items.push(self.expr(c)?);
                    }
                }
                Expr::List { id, items }
            }
            "relation" => {
                let columns = el
                    .children_named("column")
                    .map(|c| c.attr("name").unwrap_or_default().to_string())
                    .collect();
                let mut rows = Vec::new();
                for r in el.children_named("row") {
                    let mut cells = Vec::new();
                    for c in &r.children {
                        if EXPRESSION_ELEMENTS.contains(&c.name.as_str()) {
                            cells.push(self.expr(c)?);
                        }
                    }
                    rows.push(cells);
                }
                Expr::Relation { id, columns, rows }
            }
            "functionDefinition" => self.function_definition(el)?,
            "conditional" => {
                let part = |name: &str| -> Result<Box<Expr>, DmnError> {
                    let p = el
                        .child(name)
                        .ok_or_else(|| self.error(el, format!("<conditional> needs <{name}>")))?;
                    Ok(Box::new(self.inner_expr(p)?))
                };
                Expr::Conditional {
                    id,
                    condition: part("if")?,
                    then: part("then")?,
                    otherwise: part("else")?,
                }
            }
            "filter" => {
                let part = |name: &str| -> Result<Box<Expr>, DmnError> {
                    let p = el
                        .child(name)
                        .ok_or_else(|| self.error(el, format!("<filter> needs <{name}>")))?;
                    Ok(Box::new(self.inner_expr(p)?))
                };
                Expr::Filter {
                    id,
                    input: part("in")?,
                    condition: part("match")?,
                }
            }
            kind @ ("for" | "some" | "every") => {
                let (kind, body_tag) = match kind {
                    "for" => (IteratorKind::For, "return"),
                    "some" => (IteratorKind::Some, "satisfies"),
                    _ => (IteratorKind::Every, "satisfies"),
                };
                let part = |name: &str| -> Result<Box<Expr>, DmnError> {
                    let p = el
                        .child(name)
                        .ok_or_else(|| self.error(el, format!("<{}> needs <{name}>", el.name)))?;
                    Ok(Box::new(self.inner_expr(p)?))
                };
                Expr::Iterator {
                    id,
                    kind,
                    variable: el.attr("iteratorVariable").unwrap_or_default().to_string(),
                    input: part("in")?,
                    body: part(body_tag)?,
                }
            }
            other => return Err(self.error(el, format!("unsupported expression <{other}>"))),
        })
    }

    fn function_definition(&self, el: &Element) -> Result<Expr, DmnError> {
        let kind = match el.attr("kind").unwrap_or("FEEL") {
            "Java" | "JAVA" | "J" => FunctionKind::Java,
            "PMML" | "P" => FunctionKind::Pmml,
            _ => FunctionKind::Feel,
        };
        let params = el
            .children_named("formalParameter")
            .map(|p| InfoItem {
                name: p.attr("name").unwrap_or_default().to_string(),
                type_ref: p.attr("typeRef").map(str::to_string),
            })
            .collect();
        let body = match el
            .children
            .iter()
            .find(|c| EXPRESSION_ELEMENTS.contains(&c.name.as_str()))
        {
            Some(c) => Some(Box::new(self.expr(c)?)),
            None => None,
        };
        Ok(Expr::Function {
            id: id_of(el),
            kind,
            params,
            body,
        })
    }

    fn decision_table(&self, el: &Element) -> Result<DecisionTable, DmnError> {
        let hit_policy = match el.attr("hitPolicy") {
            None => HitPolicy::Unique,
            Some(h) => HitPolicy::parse(h)
                .ok_or_else(|| self.error(el, format!("unknown hit policy '{h}'")))?,
        };
        let aggregation = match el.attr("aggregation") {
            None => None,
            Some(a) => Some(
                Aggregation::parse(a)
                    .ok_or_else(|| self.error(el, format!("unknown aggregation '{a}'")))?,
            ),
        };
        let inputs = el
            .children_named("input")
            .map(|i| {
                let ie = i.child("inputExpression");
                DtInput {
                    id: id_of(i),
                    label: i.attr("label").map(str::to_string),
                    expression: ie
                        .and_then(|e| e.child_text("text"))
                        .unwrap_or_default()
                        .to_string(),
                    type_ref: ie.and_then(|e| e.attr("typeRef")).map(str::to_string),
                    input_values: i
                        .child("inputValues")
                        .and_then(|v| v.child_text("text"))
                        .map(str::to_string),
                }
            })
            .collect::<Vec<_>>();
        let outputs = el
            .children_named("output")
            .map(|o| DtOutput {
                id: id_of(o),
                name: o.attr("name").map(str::to_string),
                label: o.attr("label").map(str::to_string),
                type_ref: o.attr("typeRef").map(str::to_string),
                output_values: o
                    .child("outputValues")
                    .and_then(|v| v.child_text("text"))
                    .map(str::to_string),
                default_output: o
                    .child("defaultOutputEntry")
                    .and_then(|v| v.child_text("text"))
                    .map(str::to_string),
            })
            .collect::<Vec<_>>();
        if outputs.is_empty() {
            return Err(self.error(el, "a decision table needs at least one output"));
        }
        let mut rules = Vec::new();
        for r in el.children_named("rule") {
            let input_entries: Vec<String> = r
                .children_named("inputEntry")
                .map(|e| e.child_text("text").unwrap_or_default().to_string())
                .collect();
            let output_entries: Vec<String> = r
                .children_named("outputEntry")
                .map(|e| e.child_text("text").unwrap_or_default().to_string())
                .collect();
            if input_entries.len() != inputs.len() || output_entries.len() != outputs.len() {
                return Err(self.error(
                    r,
                    format!(
                        "rule '{}' has {} input and {} output entries, the table has {} inputs and {} outputs",
                        r.attr("id").unwrap_or("?"),
                        input_entries.len(),
                        output_entries.len(),
                        inputs.len(),
                        outputs.len()
                    ),
                ));
            }
            rules.push(Rule {
                id: id_of(r),
                input_entries,
                output_entries,
            });
        }
        Ok(DecisionTable {
            id: id_of(el),
            hit_policy,
            aggregation,
            inputs,
            outputs,
            rules,
            type_ref: el.attr("typeRef").map(str::to_string),
        })
    }
}
