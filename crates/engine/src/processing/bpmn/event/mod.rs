//! Events: start and end events, intermediate catch and throw events, boundary events.

pub(super) mod boundary_event;
pub(super) mod end_event;
pub(super) mod intermediate_catch_event;
pub(super) mod intermediate_throw_event;
pub(super) mod start_event;
