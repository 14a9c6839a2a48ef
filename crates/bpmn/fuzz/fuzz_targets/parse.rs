//! `cargo fuzz run parse` (from `crates/bpmn`): any bytes, parsed and the model walked.
//! Seed it with the corpora: `cargo fuzz run parse ../../../shared/corpora/zeebe-models`.

#![no_main]

use beeline_bpmn::{ElementKindSet, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
        Err(error) => {
            let _ = error.to_string();
        }
    }
});
