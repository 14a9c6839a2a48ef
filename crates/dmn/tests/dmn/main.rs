//! DMN behaviour tests, in one test binary (links are expensive on small machines): the
//! DMN TCK with its floor, the Zeebe/Camunda models of the shared corpus, and the shape of
//! evaluation results the engine reports.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod results;
mod tck;
mod zeebe_models;
