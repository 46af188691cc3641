//! Reading users: a JSON-lines file, one user per line, each a JSON array of items or an
//! object `{"id": ID, "items": [...]}` (ID a string or an integer, passed to every output
//! about that user). An item is a label of the space (a string) or a 0-based site index (an
//! integer). Streaming
//! and bounded: one line at a time, each at most [`MAX_LINE`] bytes, so memory does not
//! grow with the number of users.

use std::collections::HashMap;
use std::io::BufRead;

/// The longest accepted line (bytes): 16 MiB.
pub const MAX_LINE: usize = 16 << 20;

/// A user record that cannot be read: its 1-based line and the problem.
#[derive(Debug, Clone, PartialEq)]
pub struct UserError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "users line {}: {}", self.line, self.message)
    }
}

/// How items are named: by the space's labels, and by index.
pub struct ItemNames {
    sites: usize,
    labels: HashMap<String, usize>,
}

impl ItemNames {
    pub fn new(sites: usize, labels: Option<&[String]>) -> ItemNames {
        let labels = labels
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i))
            .collect();
        ItemNames { sites, labels }
    }

    /// The items of one line (`[…]` or `{"id": …, "items": […]}`, non-empty).
    pub fn parse(&self, line: &str) -> Result<Vec<usize>, String> {
        self.parse_user(line).map(|(_, items)| items)
    }

    /// The id (if the line gives one) and the items of one line.
    pub fn parse_user(
        &self,
        line: &str,
    ) -> Result<(Option<serde_json::Value>, Vec<usize>), String> {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let (id, items) = match v {
            serde_json::Value::Object(mut o) => {
                let id = o
                    .remove("id")
                    .ok_or("a user object needs \"id\" and \"items\"")?;
                if !(id.is_string() || id.is_u64() || id.is_i64()) {
                    return Err("\"id\" is a string or an integer".into());
                }
                let items = o
                    .remove("items")
                    .ok_or("a user object needs \"id\" and \"items\"")?;
                if let Some(k) = o.keys().next() {
                    return Err(format!(
                        "unknown key {k:?} (a user object has \"id\" and \"items\")"
                    ));
                }
                (Some(id), items)
            }
            v => (None, v),
        };
        let arr = items
            .as_array()
            .ok_or("a user is a JSON array of items, or {\"id\": …, \"items\": […]}")?;
        if arr.is_empty() {
            return Err("empty user (no items)".into());
        }
        let items = arr
            .iter()
            .enumerate()
            .map(|(k, it)| self.item(it).map_err(|m| format!("item {k}: {m}")))
            .collect::<Result<_, _>>()?;
        Ok((id, items))
    }

    fn item(&self, it: &serde_json::Value) -> Result<usize, String> {
        if let Some(s) = it.as_str() {
            return self.labels.get(s).copied().ok_or_else(|| {
                format!("unknown label {:?}", s.chars().take(80).collect::<String>())
            });
        }
        match it.as_u64() {
            Some(i) if (i as u128) < self.sites as u128 => Ok(i as usize),
            Some(i) => Err(format!("index {i} outside the space (0..{})", self.sites)),
            None => Err("an item is a label (string) or a site index (integer ≥ 0)".into()),
        }
    }
}

/// One user read from a line: its id (the line's `"id"`, else the 1-based line number, so
/// that every output about the user can be joined back to the input) and its items.
#[derive(Clone, Debug, PartialEq)]
pub struct User {
    pub id: serde_json::Value,
    pub items: Vec<usize>,
}

/// Call `f(user)` for each user of `input` (blank lines skipped: ids are given or are line
/// numbers, so no output is misaligned); stops at the first bad line or the first error of
/// `f`. Returns the number of users.
pub fn for_each_user(
    mut input: impl BufRead,
    names: &ItemNames,
    mut f: impl FnMut(User) -> Result<(), String>,
) -> Result<u64, UserError> {
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut users = 0u64;
    loop {
        buf.clear();
        line_no += 1;
        let err = |message: String| UserError {
            line: line_no,
            message,
        };
        let reader: &mut dyn BufRead = &mut input;
        let n = std::io::Read::take(reader, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| err(format!("cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        if buf.len() > MAX_LINE {
            return Err(err(format!("line longer than {MAX_LINE} bytes")));
        }
        let line = std::str::from_utf8(&buf).map_err(|_| err("not UTF-8".into()))?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (id, items) = names.parse_user(line).map_err(err)?;
        let id = id.unwrap_or_else(|| serde_json::Value::from(line_no));
        f(User { id, items }).map_err(err)?;
        users += 1;
    }
    Ok(users)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_indices_and_errors() {
        let labels = vec!["a".to_string(), "b".to_string()];
        let names = ItemNames::new(2, Some(&labels));
        assert_eq!(names.parse(r#"["a", 1, "b"]"#).unwrap(), vec![0, 1, 1]);
        assert!(names.parse("[]").unwrap_err().contains("empty"));
        assert!(names.parse("[2]").unwrap_err().contains("outside"));
        assert!(names
            .parse(r#"["c"]"#)
            .unwrap_err()
            .contains("unknown label"));
        let input = "[0]\n\n{\"id\": \"u7\", \"items\": [1, \"a\"]}\n[7]\n";
        let mut seen = Vec::new();
        let e = for_each_user(input.as_bytes(), &names, |u| {
            seen.push(u);
            Ok(())
        })
        .unwrap_err();
        assert_eq!(e.line, 4);
        let ids: Vec<String> = seen.iter().map(|u| u.id.to_string()).collect();
        assert_eq!(ids, vec!["1", "\"u7\""]);
        assert_eq!(seen[1].items, vec![1, 0]);
        for bad in [
            r#"{"items": [0]}"#,
            r#"{"id": [1], "items": [0]}"#,
            r#"{"id": 1, "items": [0], "x": 2}"#,
        ] {
            assert!(names.parse(bad).is_err(), "{bad}");
        }
    }
}
