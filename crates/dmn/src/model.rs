//! The DMN model as written in the file (DMN 1.3 to 1.5): the decision requirements graph
//! and the boxed expressions, with FEEL still as text. [`crate::compile`] turns it into
//! something to evaluate.

#[derive(Clone, Debug, Default)]
pub struct InfoItem {
    pub name: String,
    pub type_ref: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitPolicy {
    Unique,
    First,
    Priority,
    Any,
    Collect,
    RuleOrder,
    OutputOrder,
}

impl HitPolicy {
    pub fn parse(s: &str) -> Option<HitPolicy> {
        Some(
            match s.trim().to_ascii_uppercase().replace('_', " ").as_str() {
                "UNIQUE" | "U" => HitPolicy::Unique,
                "FIRST" | "F" => HitPolicy::First,
                "PRIORITY" | "P" => HitPolicy::Priority,
                "ANY" | "A" => HitPolicy::Any,
                "COLLECT" | "C" => HitPolicy::Collect,
                "RULE ORDER" | "R" => HitPolicy::RuleOrder,
                "OUTPUT ORDER" | "O" => HitPolicy::OutputOrder,
                _ => return None,
            },
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            HitPolicy::Unique => "UNIQUE",
            HitPolicy::First => "FIRST",
            HitPolicy::Priority => "PRIORITY",
            HitPolicy::Any => "ANY",
            HitPolicy::Collect => "COLLECT",
            HitPolicy::RuleOrder => "RULE ORDER",
            HitPolicy::OutputOrder => "OUTPUT ORDER",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregation {
    Sum,
    Min,
    Max,
    Count,
}

impl Aggregation {
    pub fn parse(s: &str) -> Option<Aggregation> {
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "SUM" | "+" => Aggregation::Sum,
            "MIN" | "<" => Aggregation::Min,
            "MAX" | ">" => Aggregation::Max,
            "COUNT" | "#" => Aggregation::Count,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct DtInput {
    pub id: Option<String>,
    pub label: Option<String>,
    pub expression: String,
    pub type_ref: Option<String>,
    pub input_values: Option<String>,
}

#[derive(Clone, Debug)]
pub struct DtOutput {
    pub id: Option<String>,
    pub name: Option<String>,
    pub label: Option<String>,
    pub type_ref: Option<String>,
    pub output_values: Option<String>,
    pub default_output: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub id: Option<String>,
    pub input_entries: Vec<String>,
    pub output_entries: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct DecisionTable {
    pub id: Option<String>,
    pub hit_policy: HitPolicy,
    pub aggregation: Option<Aggregation>,
    pub inputs: Vec<DtInput>,
    pub outputs: Vec<DtOutput>,
    pub rules: Vec<Rule>,
    /// The table's own type (for a single unnamed output).
    pub type_ref: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IteratorKind {
    For,
    Some,
    Every,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    Feel,
    Java,
    Pmml,
}

/// A boxed expression.
#[derive(Clone, Debug)]
pub enum Expr {
    Literal {
        id: Option<String>,
        text: String,
        type_ref: Option<String>,
    },
    DecisionTable(DecisionTable),
    Context {
        id: Option<String>,
        entries: Vec<ContextEntry>,
    },
    Invocation {
        id: Option<String>,
        callee: String,
        bindings: Vec<Binding>,
    },
    List {
        id: Option<String>,
        items: Vec<Expr>,
    },
    Relation {
        id: Option<String>,
        columns: Vec<String>,
        rows: Vec<Vec<Expr>>,
    },
    Function {
        id: Option<String>,
        kind: FunctionKind,
        params: Vec<InfoItem>,
        body: Option<Box<Expr>>,
    },
    Conditional {
        id: Option<String>,
        condition: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Filter {
        id: Option<String>,
        input: Box<Expr>,
        condition: Box<Expr>,
    },
    Iterator {
        id: Option<String>,
        kind: IteratorKind,
        variable: String,
        input: Box<Expr>,
        body: Box<Expr>,
    },
}

impl Expr {
    pub fn id(&self) -> Option<&str> {
        match self {
            Expr::Literal { id, .. }
            | Expr::Context { id, .. }
            | Expr::Invocation { id, .. }
            | Expr::List { id, .. }
            | Expr::Relation { id, .. }
            | Expr::Function { id, .. }
            | Expr::Conditional { id, .. }
            | Expr::Filter { id, .. }
            | Expr::Iterator { id, .. } => id.as_deref(),
            Expr::DecisionTable(t) => t.id.as_deref(),
        }
    }

    /// Zeebe's `decisionType` of a decision with this logic.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Expr::Literal { .. } => "LITERAL_EXPRESSION",
            Expr::DecisionTable(_) => "DECISION_TABLE",
            Expr::Context { .. } => "CONTEXT",
            Expr::Invocation { .. } => "INVOCATION",
            Expr::List { .. } => "LIST",
            Expr::Relation { .. } => "RELATION",
            Expr::Function { .. } => "FUNCTION_DEFINITION",
            Expr::Conditional { .. } => "CONDITIONAL",
            Expr::Filter { .. } => "FILTER",
            Expr::Iterator { .. } => "ITERATOR",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ContextEntry {
    pub variable: Option<InfoItem>,
    pub value: Expr,
}

#[derive(Clone, Debug)]
pub struct Binding {
    pub parameter: String,
    pub value: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct Decision {
    pub id: String,
    pub name: String,
    pub variable: InfoItem,
    /// Ids (hrefs without `#`) of required decisions and input data.
    pub required_decisions: Vec<String>,
    pub required_inputs: Vec<String>,
    pub required_knowledge: Vec<String>,
    pub logic: Option<Expr>,
    pub offset: usize,
}

#[derive(Clone, Debug)]
pub struct InputData {
    pub id: String,
    pub name: String,
    pub variable: InfoItem,
}

#[derive(Clone, Debug)]
pub struct BusinessKnowledgeModel {
    pub id: String,
    pub name: String,
    pub variable: InfoItem,
    pub required_knowledge: Vec<String>,
    /// The encapsulated logic: a function definition.
    pub logic: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct DecisionService {
    pub id: String,
    pub name: String,
    pub variable: InfoItem,
    pub output_decisions: Vec<String>,
    pub encapsulated_decisions: Vec<String>,
    pub input_decisions: Vec<String>,
    pub input_data: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct ItemDefinition {
    pub name: String,
    pub type_ref: Option<String>,
    pub is_collection: bool,
    pub components: Vec<ItemDefinition>,
    pub allowed_values: Option<String>,
    /// `functionItem`: parameter types and the output type.
    pub function: Option<(Vec<InfoItem>, Option<String>)>,
}

#[derive(Clone, Debug)]
pub struct Import {
    pub name: String,
    pub namespace: String,
    pub location: Option<String>,
}

/// One `<definitions>` document.
#[derive(Clone, Debug, Default)]
pub struct Definitions {
    pub id: String,
    pub name: String,
    pub namespace: String,
    pub decisions: Vec<Decision>,
    pub input_data: Vec<InputData>,
    pub knowledge_models: Vec<BusinessKnowledgeModel>,
    pub decision_services: Vec<DecisionService>,
    pub item_definitions: Vec<ItemDefinition>,
    pub imports: Vec<Import>,
}
