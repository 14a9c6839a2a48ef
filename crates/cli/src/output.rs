//! A command's answer, for a person and for a script.
//!
//! The JSON form is the gateway's response as protobuf's JSON mapping writes it, which is what
//! zbctl prints: the proto's field names, 64-bit numbers (keys) as strings, enums by name,
//! every field present even when empty.

use std::io::Write;

use serde_json::Value;

/// What a command prints when it succeeds.
#[derive(Debug)]
pub struct Reply {
    /// For a person.
    pub text: String,
    /// For a script (`--json`).
    pub json: Value,
}

impl Reply {
    pub fn print(&self, json: bool) {
        let mut out = std::io::stdout().lock();
        let _ = if json {
            writeln!(out, "{}", self.json)
        } else {
            writeln!(out, "{}", self.text.trim_end())
        };
    }
}

/// A 64-bit number as protobuf's JSON mapping writes it: a string, so no script loses digits
/// to floating point.
pub fn int64(value: i64) -> Value {
    Value::String(value.to_string())
}

/// A JSON document the gateway sent as text (variables), indented for a person; as it came
/// when it is not JSON.
pub fn pretty(document: &str) -> String {
    serde_json::from_str::<Value>(document)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| document.to_owned())
}

/// Rows as columns, each as wide as its widest cell, two spaces apart, no trailing blanks.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|row| row.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            line.push_str(&format!("{cell:<width$}  "));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns() {
        let rows = vec![
            vec!["process".to_owned(), "order".to_owned(), "1".to_owned()],
            vec!["decision".to_owned(), "x".to_owned(), "12".to_owned()],
        ];
        assert_eq!(table(&rows), "process   order  1\ndecision  x      12\n");
    }

    #[test]
    fn documents_are_indented_when_they_are_json() {
        assert_eq!(pretty(r#"{"a":1}"#), "{\n  \"a\": 1\n}");
        assert_eq!(pretty("not json"), "not json");
        assert_eq!(int64(2251799813685249), Value::from("2251799813685249"));
    }
}
