//! Zeebe's checks that the events catching in one place (the boundary events of an
//! activity, the start events of a scope's event sub-processes) are told apart.

use crate::model::EventDefinition;

/// Message and signal names, and link names, must be unique among `definitions`.
pub(super) fn names(definitions: &[&EventDefinition]) -> Vec<String> {
    let mut messages = Vec::new();
    let mut signals = Vec::new();
    let mut links = Vec::new();
    let mut message_ids = Vec::new();
    for definition in definitions {
        match definition {
            EventDefinition::Message(m) => {
                if let Some(message) = &m.message {
                    message_ids.push(message.message_id.as_str());
                    messages.push(message.name.raw());
                }
            }
            EventDefinition::Signal(s) => signals.push(s.signal.name.raw()),
            EventDefinition::Link(l) => links.push(l.name.clone()),
            _ => {}
        }
    }
    let mut errors = Vec::new();
    for name in duplicated(&messages) {
        errors.push(format!(
            "Multiple message event definitions with the same name '{name}' are not allowed."
        ));
    }
    for name in duplicated(&signals) {
        errors.push(format!(
            "Multiple signal event definitions with the same name '{name}' are not allowed."
        ));
    }
    for name in duplicated(&links) {
        errors.push(format!(
            "Multiple intermediate catch link event definitions with the same name '{name}' are not allowed."
        ));
    }
    errors
}

/// At most one catch-all and one handler per code, for errors and escalations.
pub(super) fn handlers(definitions: &[&EventDefinition]) -> Vec<String> {
    let mut errors = Vec::new();
    let error_codes: Vec<Option<Option<String>>> = definitions
        .iter()
        .filter_map(|d| match d {
            EventDefinition::Error(e) => Some(
                e.error
                    .as_ref()
                    .map(|r| r.error_code.as_ref().map(|c| c.raw())),
            ),
            _ => None,
        })
        .collect();
    errors.extend(handler_errors(&error_codes, "error", "error code"));
    let escalation_codes: Vec<Option<Option<String>>> = definitions
        .iter()
        .filter_map(|d| match d {
            EventDefinition::Escalation(e) => Some(
                e.escalation
                    .as_ref()
                    .map(|r| r.escalation_code.as_ref().map(|c| c.raw())),
            ),
            _ => None,
        })
        .collect();
    errors.extend(handler_errors(
        &escalation_codes,
        "escalation",
        "escalation code",
    ));
    errors
}

/// `codes`: per catch event, `None` without a reference, `Some(None)` referencing an element
/// without a code, `Some(Some(code))` otherwise.
fn handler_errors(codes: &[Option<Option<String>>], kind: &str, code_words: &str) -> Vec<String> {
    let catch_all = format!(
        "The same scope can not contain more than one {kind} catch event without {code_words}. \
         An {kind} catch event without {code_words} catches all {kind}s."
    );
    let mut errors = Vec::new();
    if codes.iter().filter(|c| c.is_none()).count() > 1 {
        errors.push(catch_all.clone());
    }
    let referenced: Vec<Option<String>> = codes.iter().flatten().cloned().collect();
    let mut counted: Vec<(Option<String>, usize)> = Vec::new();
    for code in referenced {
        match counted.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => counted.push((code, 1)),
        }
    }
    for (code, count) in counted {
        if count > 1 {
            errors.push(match code {
                Some(code) => format!(
                    "Multiple {kind} catch events with the same {code_words} '{code}' are not \
                     supported on the same scope."
                ),
                None => catch_all.clone(),
            });
        }
    }
    errors
}

/// Values that occur more than once, each once, in order of first occurrence; empty ones
/// are ignored as Zeebe does.
pub(super) fn duplicated(values: &[String]) -> Vec<&str> {
    let mut result: Vec<&str> = Vec::new();
    for (i, value) in values.iter().enumerate() {
        if !value.is_empty() && values[..i].contains(value) && !result.contains(&value.as_str()) {
            result.push(value);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_each_duplicate_once_in_order() {
        let values: Vec<String> = ["b", "a", "", "b", "a", "b", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(duplicated(&values), vec!["b", "a"]);
    }
}
