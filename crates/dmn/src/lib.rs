//! DMN models (work in progress).
