//! The BPMN parser under the fuzzing harness (`beeline-fuzz`): the seeds in `fuzz/seeds/bpmn`,
//! the shared corpora's models where present, then mutations of them. Whatever parses is walked
//! as the engine walks it; an error must say where.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use beeline_bpmn::{ElementKindSet, parse};

fn target(data: &[u8]) {
    match parse(data) {
        Ok(definitions) => {
            for process in &definitions.processes {
                let _ = process.unsupported_elements(&ElementKindSet::empty());
                for element in process.elements() {
                    let _ = (
                        element.kind(),
                        element.job_worker(),
                        element.event_definition(),
                    );
                }
                let _ = process.expressions().len();
            }
        }
        Err(error) => assert!(!error.to_string().is_empty(), "an error without a message"),
    }
}

#[test]
fn fuzz_bpmn() {
    let mut extra = beeline_fuzz::shared_corpus("zeebe-models", "bpmn");
    extra.extend(beeline_fuzz::shared_corpus("bpmn-miwg", "bpmn"));
    beeline_fuzz::fuzz_with("bpmn", extra, target);
}
