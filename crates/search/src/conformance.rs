//! What every store keeps, as library code each store's crate runs against itself: the
//! exporter conformance suite through the store exporter, then searches with every filter
//! operator, sorts, offset pages and cursors in both directions, totals, statistics.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a conformance suite: a violation fails the test that runs it, by a panic"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use beeline_exporter::conformance::{self as exporter_conformance, Subject};
use beeline_exporter::{Director, DirectorConfig};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

use crate::exporter::MAX_PENDING_ROWS;
use crate::projection::Definitions;
use crate::query::{
    Condition, ELEMENT_INSTANCES, INCIDENTS, JOBS, Op, Order, PROCESS_DEFINITION_XML,
    PROCESS_DEFINITIONS, PROCESS_INSTANCES, Page, Query, SEQUENCE_FLOWS, USER_TASK_VARIABLES,
    USER_TASKS, VARIABLES,
};
use crate::{EXPORTER_ID, Results, SearchStore, StoreExporter, Value, Writer};

/// A store under test.
pub struct TestStore<W> {
    pub writer: Arc<W>,
    pub search: Arc<dyn SearchStore>,
    /// Everything stored as canonical text (rows in key order, no bookkeeping tables).
    pub contents: Box<dyn Fn() -> String + Send + Sync>,
}

impl<W: Writer> Subject for TestStore<W> {
    type Exporter = StoreExporter<W>;

    fn exporter(&self) -> StoreExporter<W> {
        StoreExporter::new(
            self.writer.clone(),
            Definitions::default(),
            MAX_PENDING_ROWS,
        )
    }

    fn contents(&self) -> String {
        (self.contents)()
    }
}

/// Runs the exporter conformance suite and the searches against stores from `open`.
pub fn run_all<W: Writer>(open: impl Fn() -> TestStore<W>) {
    exporter_conformance::run_all(&open);
    searches(&open());
}

/// Instances the searches find: of `search-a` (A of them) and `search-b` (B).
const A: usize = 7;
const B: usize = 3;

fn search(harness: &Harness, store: &dyn SearchStore, query: Query) -> Results {
    harness
        .block_on(store.search(query))
        .expect("the store answers")
}

fn keys(results: &Results) -> Vec<i64> {
    results
        .rows
        .iter()
        .map(|row| match &row[0] {
            Value::Int(key) => *key,
            other => panic!("a key, not {other:?}"),
        })
        .collect()
}

fn filtered(field: &str, op: Op) -> Query {
    let mut query = Query::new(&PROCESS_INSTANCES);
    query.conditions.push(Condition::Field(
        PROCESS_INSTANCES.field(field).expect("a field"),
        op,
    ));
    query
}

/// Every filter operator, sorts, pages and cursors, totals, lookups by key, statistics.
pub fn searches<W: Writer>(store: &TestStore<W>) {
    let harness = Harness::with_config(1, |config| config.exporters = vec![EXPORTER_ID.into()]);
    let task = {
        let partition = harness.partition(1).clone();
        let exporter = store.exporter();
        harness
            .block_on(
                async move { Director::spawn(partition, exporter, DirectorConfig::default()) },
            )
            .expect("configured")
    };
    harness.deploy_process(
        &ProcessBuilder::new("search-a")
            .start_event("start")
            .service_task("work", "search-a")
            .end_event("end"),
    );
    // Instances of search-b wait at a Camunda user task.
    harness.deploy_process(
        &ProcessBuilder::new("search-b")
            .start_event("start")
            .user_task(
                "review",
                true,
                r#"<zeebe:assignmentDefinition candidateGroups="sales, support"/><zeebe:priorityDefinition priority="=item * 10"/>"#,
            )
            .service_task("work", "search-b")
            .end_event("end"),
    );
    let mut a = Vec::new();
    for i in 0..A {
        a.push(harness.create_instance(
            "search-a",
            &format!(
                r#"{{"item": {i}, "region": "{}"}}"#,
                if i % 2 == 0 { "EMEA" } else { "APAC" }
            ),
        ));
    }
    let mut b = Vec::new();
    for i in 0..B {
        b.push(harness.create_instance("search-b", &format!(r#"{{"item": {i}}}"#)));
    }
    // a[0] and a[1] complete, a[2] gets an incident, b[0] is canceled.
    let jobs = harness.activate_jobs("search-a", 3);
    let job_of = |instance: i64| {
        jobs.iter()
            .find(|(_, job)| job.process_instance_key == instance)
            .map(|(key, _)| *key)
            .expect("a job of the instance")
    };
    harness.complete_job(job_of(a[0]), "{}").expect("completes");
    harness.complete_job(job_of(a[1]), "{}").expect("completes");
    harness
        .fail_job(job_of(a[2]), 0, "out of stock", 0)
        .expect("fails");
    harness.cancel_instance(b[0]).expect("canceled");
    harness.settle();
    let last = harness.records().list().last().map_or(0, |r| r.position);
    let started = Instant::now();
    while task.metrics().position.get() < last {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "exported in time"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let store = store.search.as_ref();
    let all = A + B;
    let text = |s: &str| Value::text(s);

    // $eq, $neq, $in, $notIn, $exists, $like
    let found = search(
        &harness,
        store,
        filtered("processDefinitionId", Op::Eq(text("search-a"))),
    );
    assert_eq!((found.rows.len(), found.total), (A, A as u64), "$eq");
    let found = search(
        &harness,
        store,
        filtered("processDefinitionId", Op::Neq(text("search-a"))),
    );
    assert_eq!(keys(&found), b, "$neq");
    let found = search(
        &harness,
        store,
        filtered("state", Op::In(vec![text("COMPLETED"), text("TERMINATED")])),
    );
    let mut finished = vec![a[0], a[1], b[0]];
    finished.sort_unstable();
    assert_eq!(keys(&found), finished, "$in");
    let found = search(
        &harness,
        store,
        filtered("state", Op::NotIn(vec![text("ACTIVE")])),
    );
    assert_eq!(keys(&found), finished, "$notIn");
    let found = search(&harness, store, filtered("endDate", Op::Exists(true)));
    assert_eq!(keys(&found), finished, "$exists true");
    let found = search(&harness, store, filtered("endDate", Op::Exists(false)));
    assert_eq!(found.rows.len(), all - 3, "$exists false");
    let found = search(
        &harness,
        store,
        filtered("processDefinitionId", Op::Like("search-*".into())),
    );
    assert_eq!(found.rows.len(), all, "$like *");
    let found = search(
        &harness,
        store,
        filtered("processDefinitionId", Op::Like("*-?".into())),
    );
    assert_eq!(found.rows.len(), all, "$like ?");
    let found = search(
        &harness,
        store,
        filtered("processDefinitionId", Op::Like("*a".into())),
    );
    assert_eq!(found.rows.len(), A, "$like suffix");
    let found = search(
        &harness,
        store,
        filtered("processDefinitionId", Op::Like(r"search\*".into())),
    );
    assert_eq!(found.rows.len(), 0, "$like with an escaped star is literal");
    // $gt, $gte, $lt, $lte on keys and dates
    let found = search(
        &harness,
        store,
        filtered("processInstanceKey", Op::Gt(Value::Int(a[3]))),
    );
    assert_eq!(found.rows.len(), all - 4, "$gt");
    let found = search(
        &harness,
        store,
        filtered("processInstanceKey", Op::Gte(Value::Int(a[3]))),
    );
    assert_eq!(found.rows.len(), all - 3, "$gte");
    let found = search(
        &harness,
        store,
        filtered("processInstanceKey", Op::Lt(Value::Int(a[3]))),
    );
    assert_eq!(keys(&found), a[..3].to_vec(), "$lt");
    let found = search(
        &harness,
        store,
        filtered("processInstanceKey", Op::Lte(Value::Int(a[3]))),
    );
    assert_eq!(keys(&found), a[..4].to_vec(), "$lte");
    let found = search(
        &harness,
        store,
        filtered("startDate", Op::Gte(Value::Int(0))),
    );
    assert_eq!(found.rows.len(), all, "dates compare as instants");
    // Booleans, variables, $or
    let found = search(
        &harness,
        store,
        filtered("hasIncident", Op::Eq(Value::Int(1))),
    );
    assert_eq!(keys(&found), vec![a[2]], "hasIncident");
    let mut query = Query::new(&PROCESS_INSTANCES);
    query.conditions.push(Condition::Variable(
        PROCESS_INSTANCES.variable_filters[0].1,
        "region".into(),
        Op::Eq(text("\"EMEA\"")),
    ));
    let found = search(&harness, store, query);
    assert_eq!(
        keys(&found),
        vec![a[0], a[2], a[4], a[6]],
        "a variable's JSON text"
    );
    let mut query = Query::new(&PROCESS_INSTANCES);
    query.conditions.push(Condition::Or(vec![
        vec![Condition::Field(
            PROCESS_INSTANCES
                .field("processInstanceKey")
                .expect("field"),
            Op::Eq(Value::Int(a[1])),
        )],
        vec![Condition::Field(
            PROCESS_INSTANCES
                .field("processDefinitionId")
                .expect("field"),
            Op::Eq(text("search-b")),
        )],
    ]));
    let mut expected = vec![a[1]];
    expected.extend(&b);
    assert_eq!(keys(&search(&harness, store, query)), expected, "$or");

    // Sorts: by process id descending, then state, then the key.
    let mut query = Query::new(&PROCESS_INSTANCES);
    query.sort = vec![
        (
            PROCESS_INSTANCES
                .field("processDefinitionId")
                .expect("field"),
            Order::Desc,
        ),
        (PROCESS_INSTANCES.field("state").expect("field"), Order::Asc),
    ];
    let sorted = keys(&search(&harness, store, query.clone()));
    let mut expected = vec![b[1], b[2], b[0], a[2], a[3], a[4], a[5], a[6], a[0], a[1]];
    expected.truncate(all);
    assert_eq!(sorted, expected, "sorted on several fields");

    // Offset pages and cursors both ways.
    query.page = Page::Offset { from: 3, limit: 4 };
    let page = search(&harness, store, query.clone());
    assert_eq!(keys(&page), sorted[3..7].to_vec(), "from and limit");
    assert_eq!(page.total, all as u64, "totalItems counts every match");
    let mut walked = Vec::new();
    query.page = Page::Offset { from: 0, limit: 3 };
    loop {
        let page = search(&harness, store, query.clone());
        walked.extend(keys(&page));
        let Some(last) = page.sort_values.last() else {
            break;
        };
        query.page = Page::After {
            cursor: last.clone(),
            limit: 3,
        };
    }
    assert_eq!(walked, sorted, "after the end cursor, page by page");
    query.page = Page::Offset { from: 6, limit: 3 };
    let later = search(&harness, store, query.clone());
    query.page = Page::Before {
        cursor: later.sort_values[0].clone(),
        limit: 3,
    };
    assert_eq!(
        keys(&search(&harness, store, query)),
        sorted[3..6].to_vec(),
        "before the start cursor"
    );

    // The other entities.
    let mut query = Query::new(&INCIDENTS);
    query.conditions.push(Condition::Field(
        INCIDENTS.field("processInstanceKey").expect("field"),
        Op::Eq(Value::Int(a[2])),
    ));
    let incidents = search(&harness, store, query);
    assert_eq!(incidents.rows.len(), 1, "the incident");
    let message = INCIDENTS
        .items()
        .position(|f| f.name == "errorMessage")
        .expect("item");
    assert_eq!(incidents.rows[0][message], text("out of stock"));
    let mut query = Query::new(&JOBS);
    query.conditions.push(Condition::Field(
        JOBS.field("state").expect("field"),
        Op::Eq(text("COMPLETED")),
    ));
    assert_eq!(
        search(&harness, store, query).rows.len(),
        2,
        "completed jobs"
    );
    let mut query = Query::new(&VARIABLES);
    query.conditions.push(Condition::Field(
        VARIABLES.field("processInstanceKey").expect("field"),
        Op::Eq(Value::Int(a[1])),
    ));
    assert_eq!(
        search(&harness, store, query).rows.len(),
        2,
        "an instance's variables"
    );
    let definitions = search(&harness, store, Query::new(&PROCESS_DEFINITIONS));
    assert_eq!(definitions.rows.len(), 2, "both definitions");
    let definition = match &definitions.rows[0][0] {
        Value::Int(key) => *key,
        other => panic!("a key, not {other:?}"),
    };
    let xml = search(
        &harness,
        store,
        Query::by_key(&PROCESS_DEFINITION_XML, Value::Int(definition)),
    );
    assert!(
        matches!(&xml.rows[0][1], Value::Text(xml) if xml.contains("search-a")),
        "the definition's XML"
    );
    let mut query = Query::new(&ELEMENT_INSTANCES);
    query.conditions.push(Condition::Field(
        ELEMENT_INSTANCES
            .field("processInstanceKey")
            .expect("field"),
        Op::Eq(Value::Int(a[0])),
    ));
    assert_eq!(
        search(&harness, store, query).rows.len(),
        4,
        "process, start, task, end"
    );
    let mut query = Query::new(&SEQUENCE_FLOWS);
    query.conditions.push(Condition::Field(
        SEQUENCE_FLOWS.field("processInstanceKey").expect("field"),
        Op::Eq(Value::Int(a[0])),
    ));
    assert_eq!(
        search(&harness, store, query).rows.len(),
        2,
        "the flows taken"
    );
    // User tasks: lists of candidates, variables of the instance, sorts.
    let tasks = |conditions: Vec<Condition>| {
        let mut query = Query::new(&USER_TASKS);
        query.conditions = conditions;
        query.sort = vec![(USER_TASKS.field("priority").expect("field"), Order::Desc)];
        let found = search(&harness, store, query);
        let instance = USER_TASKS
            .items()
            .position(|f| f.name == "processInstanceKey")
            .expect("item");
        found
            .rows
            .iter()
            .map(|row| match &row[instance] {
                Value::Int(key) => *key,
                other => panic!("a key, not {other:?}"),
            })
            .collect::<Vec<i64>>()
    };
    let field = |name: &str| USER_TASKS.field(name).expect("field");
    assert_eq!(
        tasks(vec![]),
        vec![b[2], b[1], b[0]],
        "by priority, descending"
    );
    assert_eq!(
        tasks(vec![Condition::Field(
            field("state"),
            Op::Eq(text("CREATED"))
        )]),
        vec![b[2], b[1]],
        "open tasks"
    );
    assert_eq!(
        tasks(vec![Condition::Field(
            field("state"),
            Op::Eq(text("CANCELED"))
        )]),
        vec![b[0]],
        "the canceled instance's task"
    );
    assert_eq!(
        tasks(vec![Condition::Field(
            field("candidateGroup"),
            Op::Eq(text("support"))
        )])
        .len(),
        B,
        "a candidate group is one of the list"
    );
    assert!(
        tasks(vec![Condition::Field(
            field("candidateGroup"),
            Op::Neq(text("sales"))
        )])
        .is_empty(),
        "$neq: no candidate group is sales"
    );
    assert_eq!(
        tasks(vec![Condition::Field(
            field("candidateGroup"),
            Op::Like("sup*".into())
        )])
        .len(),
        B,
        "$like on a member"
    );
    assert_eq!(
        tasks(vec![Condition::Field(
            field("candidateUser"),
            Op::Exists(false)
        )])
        .len(),
        B,
        "no candidate users"
    );
    assert_eq!(
        tasks(vec![Condition::Variable(
            USER_TASKS.variable_filters[0].1,
            "item".into(),
            Op::Eq(text("1")),
        )]),
        vec![b[1]],
        "by a variable of the instance"
    );
    let of_instance = |key: i64| {
        let mut query = Query::new(&PROCESS_INSTANCES);
        query.conditions.push(Condition::Field(
            PROCESS_INSTANCES.key_field(),
            Op::Eq(Value::Int(key)),
        ));
        query
    };
    let statistics = harness
        .block_on(store.element_statistics(of_instance(a[2])))
        .expect("statistics");
    let work = statistics
        .iter()
        .find(|s| s.element_id == "work")
        .expect("the task's statistics");
    assert_eq!((work.active, work.incidents, work.completed), (1, 1, 0));
    // Over every instance of a definition: two completed, one with an incident, four waiting.
    let statistics = harness
        .block_on(
            store.element_statistics(filtered("processDefinitionId", Op::Eq(text("search-a")))),
        )
        .expect("statistics");
    let of = |element: &str| {
        statistics
            .iter()
            .find(|s| s.element_id == element)
            .map(|s| (s.active, s.canceled, s.incidents, s.completed))
    };
    assert_eq!(of("start"), Some((0, 0, 0, A as u64)), "{statistics:?}");
    assert_eq!(of("work"), Some((A as u64 - 2, 0, 1, 2)), "{statistics:?}");
    assert_eq!(of("end"), Some((0, 0, 0, 2)), "{statistics:?}");
    assert_eq!(of("review"), None, "another definition's element");

    // The variables a user task sees: its instance's, not another's.
    let mut review = Query::new(&ELEMENT_INSTANCES);
    for (name, value) in [
        ("processInstanceKey", Value::Int(b[1])),
        ("elementId", text("review")),
    ] {
        review.conditions.push(Condition::Field(
            ELEMENT_INSTANCES.field(name).expect("a field"),
            Op::Eq(value),
        ));
    }
    let review = keys(&search(&harness, store, review));
    assert_eq!(review.len(), 1, "the user task's element instance");
    let mut visible = Query::new(&USER_TASK_VARIABLES);
    visible.conditions.push(Condition::VisibleFrom(review[0]));
    let found = search(&harness, store, visible);
    let names: Vec<(&Value, &Value)> = found.rows.iter().map(|r| (&r[1], &r[4])).collect();
    assert_eq!(
        names,
        vec![(&text("item"), &Value::Int(b[1]))],
        "the instance's variable, seen from its user task"
    );
    harness.block_on(task.stop());
}
