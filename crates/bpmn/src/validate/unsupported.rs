//! Rejects, by name, what the engine does not execute yet.

use crate::error::ValidationError;
use crate::model::{ElementKind, ElementKindSet, Process};

/// One error per element whose kind is not in `supported`, in document order. An activity
/// with multi-instance characteristics also needs [`ElementKind::MultiInstanceBody`].
pub(crate) fn unsupported_elements(
    process: &Process,
    supported: &ElementKindSet,
) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    for (_, element) in process.iter() {
        let mut kinds = vec![element.kind()];
        if element.multi_instance.is_some() {
            kinds.push(ElementKind::MultiInstanceBody);
        }
        for kind in kinds.into_iter().filter(|k| !supported.contains(*k)) {
            errors.push(ValidationError {
                element: element.id.clone(),
                element_id: Some(element.id.clone()),
                position: element.position,
                message: format!("Elements of type '{}' are not supported", kind.name()),
            });
        }
    }
    errors
}
