//! Variables by scope, and the scope hierarchy they are looked up through.

use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::values::StoredVariable;
use super::{decode, read_int};

fn variable(scope: i64, name: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Variables)
        .i64(scope)
        .str(name)
        .build()
}

fn parent(scope: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::VariableScopeParents)
        .i64(scope)
        .build()
}

/// A JSON object of stored variables, in name order (the last of a repeated name wins).
///
/// Stored values are JSON text already, printed compactly when they were set: they are copied
/// as they are, not parsed and printed again. A value that is not JSON (damaged state) reads as
/// null.
pub fn document<'a>(variables: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<u8> {
    let sorted: std::collections::BTreeMap<&str, &str> = variables.into_iter().collect();
    let mut out = Vec::with_capacity(
        2 + sorted
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum::<usize>(),
    );
    out.push(b'{');
    for (i, (name, value)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, name);
        out.push(b':');
        if serde_json::from_str::<serde::de::IgnoredAny>(value).is_ok() {
            out.extend_from_slice(value.as_bytes());
        } else {
            out.extend_from_slice(b"null");
        }
    }
    out.push(b'}');
    out
}

/// Deepest scope chain followed; guards against a cycle in damaged state.
const MAX_SCOPE_DEPTH: usize = 1024;

pub struct VariableState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> VariableState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    /// The variable in exactly this scope.
    pub fn get_local(&self, scope: i64, name: &str) -> Result<Option<StoredVariable>> {
        self.txn
            .get(&variable(scope, name))?
            .map(|bytes| decode(ColumnFamily::Variables, &bytes))
            .transpose()
    }

    pub fn parent(&self, scope: i64) -> Result<Option<i64>> {
        Ok(read_int(
            ColumnFamily::VariableScopeParents,
            self.txn.get(&parent(scope))?,
            i64::from_be_bytes,
        )?
        .filter(|p| *p > 0))
    }

    /// The scope chain from `scope` up to the root, `scope` first.
    pub fn scope_chain(&self, scope: i64) -> Result<Vec<i64>> {
        let mut chain = vec![scope];
        let mut current = scope;
        while let Some(next) = self.parent(current)? {
            if chain.len() >= MAX_SCOPE_DEPTH {
                break;
            }
            chain.push(next);
            current = next;
        }
        Ok(chain)
    }

    /// The variable visible from `scope`: its own, else the nearest ancestor's. Returns the
    /// scope it lives in too.
    pub fn get_visible(&self, scope: i64, name: &str) -> Result<Option<(i64, StoredVariable)>> {
        let mut current = Some(scope);
        let mut depth = 0;
        while let Some(s) = current {
            if let Some(found) = self.get_local(s, name)? {
                return Ok(Some((s, found)));
            }
            depth += 1;
            if depth >= MAX_SCOPE_DEPTH {
                break;
            }
            current = self.parent(s)?;
        }
        Ok(None)
    }

    /// The variables of exactly this scope, by name.
    pub fn local(&self, scope: i64) -> Result<Vec<(String, StoredVariable)>> {
        let prefix = KeyBuilder::new(ColumnFamily::Variables).i64(scope).build();
        let mut variables = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, value) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::Variables, &key)?;
            reader.i64()?;
            variables.push((
                reader.str()?.to_string(),
                decode(ColumnFamily::Variables, &value)?,
            ));
        }
        Ok(variables)
    }

    /// Every variable visible from `scope` (inner scopes shadow outer ones), by name.
    pub fn visible(&self, scope: i64) -> Result<std::collections::BTreeMap<String, String>> {
        let mut visible = std::collections::BTreeMap::new();
        for s in self.scope_chain(scope)? {
            for (name, variable) in self.local(s)? {
                visible.entry(name).or_insert(variable.value);
            }
        }
        Ok(visible)
    }
}

pub struct MutableVariableState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableVariableState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// A variable new to its scope.
    pub fn create(&mut self, scope: i64, name: &str, key: i64, value: &str) {
        let stored = StoredVariable {
            key,
            value: value.to_string(),
        };
        self.txn.insert(
            variable(scope, name),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
    }

    pub fn update(&mut self, scope: i64, name: &str, key: i64, value: &str) {
        let stored = StoredVariable {
            key,
            value: value.to_string(),
        };
        self.txn.put(
            variable(scope, name),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
    }

    pub fn set_parent(&mut self, scope: i64, parent_scope: i64) {
        self.txn
            .insert(parent(scope), parent_scope.to_be_bytes().to_vec());
    }

    /// Removes a scope and its variables (its element instance ended).
    pub fn remove_scope(&mut self, scope: i64) -> Result<()> {
        let prefix = KeyBuilder::new(ColumnFamily::Variables).i64(scope).build();
        let keys: Vec<Vec<u8>> = self.txn.scan_keys(&prefix).collect::<Result<_>>()?;
        for key in keys {
            self.txn.delete(key);
        }
        self.txn.delete(parent(scope));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::document;
    use serde_json::{Map, Value as Json};

    #[test]
    fn a_document_is_what_printing_the_parsed_values_gives() {
        // Values as `write` stores them: compact JSON text.
        let values = [
            ("zeta", r#""plain""#),
            (
                "a\"quoted\"",
                r#"{"nested":[1,2.5,null,true],"s":"\u0001 é \"x\""}"#,
            ),
            ("b", "-12"),
            ("émoji 🐝", r#"["🐝"]"#),
            ("empty", r#""""#),
        ];
        let mut expected = Map::new();
        for (name, value) in values {
            expected.insert(name.to_string(), serde_json::from_str(value).unwrap());
        }
        assert_eq!(
            String::from_utf8(document(values)).unwrap(),
            Json::Object(expected).to_string()
        );
    }

    #[test]
    fn a_damaged_value_reads_as_null_and_a_repeated_name_keeps_the_last() {
        let doc = document([("b", "{broken"), ("a", "1"), ("a", "2")]);
        assert_eq!(String::from_utf8(doc).unwrap(), r#"{"a":2,"b":null}"#);
        assert_eq!(document([]), b"{}");
    }
}
