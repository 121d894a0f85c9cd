//! The small YAML subset of seed-003 message frontmatter, read and written by hand.
//!
//! A message file starts with a line `---`, then `key: value` lines, then a line `---`; the Markdown body
//! follows after one blank line. Values are plain scalars (`status`, `2026-01-28T15:30:00Z`), quoted scalars
//! (`"a: b"` with JSON-style escapes, `'it''s'`), flow lists (`[BUG-069, fugue]`) and block lists
//! (`key:` then `  - item` lines). Comments (`# …`) and blank lines are ignored. Anything else (nested
//! maps, block scalars `|`, anchors) is rejected with the line number: a YAML library would accept more,
//! but the format needs no more, and a hand-written reader keeps the writer's output byte-for-byte stable.

use crate::kit::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Scalar(String),
    List(Vec<String>),
}

impl Value {
    pub fn as_scalar(&self) -> Option<&str> {
        match self {
            Value::Scalar(s) => Some(s),
            Value::List(_) => None,
        }
    }

    /// A list, or a scalar as a one-element list (an empty scalar is an empty list).
    pub fn to_list(&self) -> Vec<String> {
        match self {
            Value::List(l) => l.clone(),
            Value::Scalar(s) if s.is_empty() => Vec::new(),
            Value::Scalar(s) => vec![s.clone()],
        }
    }
}

/// One `key: value` line (or a key with a block list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub key: String,
    pub value: Value,
}

/// A parsed message file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub fields: Vec<Field>,
    pub body: String,
}

impl Document {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.iter().find(|f| f.key == key).map(|f| &f.value)
    }

    pub fn scalar(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_scalar)
    }
}

/// Split a message file into frontmatter fields and body.
pub fn parse(text: &str) -> Result<Document> {
    let bad = |line: usize, why: &str| Error::usage(format!("frontmatter line {line}: {why}"));
    let mut rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(|| Error::usage("no frontmatter: the file must start with a line ---"))?;
    let mut fields: Vec<Field> = Vec::new();
    let mut lineno = 1;
    let mut pending_list: Option<usize> = None;
    loop {
        lineno += 1;
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        if line.is_empty() && next.is_empty() && rest.is_empty() {
            return Err(Error::usage("frontmatter is not closed by a line ---"));
        }
        rest = next;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line == "---" || line == "..." {
            break;
        }
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed
            .strip_prefix("- ")
            .or((trimmed == "-").then_some(""))
        {
            let Some(i) = pending_list else {
                return Err(bad(lineno, "a list item outside a list"));
            };
            let item = scalar(strip_comment(item.trim()), lineno)?;
            match &mut fields[i].value {
                Value::List(l) => l.push(item),
                v => *v = Value::List(vec![item]),
            }
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            return Err(bad(lineno, "nested values are not supported"));
        }
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| bad(lineno, "expected `key: value`"))?;
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(bad(lineno, &format!("unsupported key {key:?}")));
        }
        if fields.iter().any(|f| f.key == key) {
            return Err(bad(lineno, &format!("{key} is given twice")));
        }
        let text = strip_comment(value.trim());
        pending_list = None;
        let value = if text.is_empty() {
            // Empty, unless list items follow.
            pending_list = Some(fields.len());
            Value::Scalar(String::new())
        } else if text.starts_with('[') {
            Value::List(flow_list(text, lineno)?)
        } else if text.starts_with(['{', '|', '>', '&', '*', '!']) {
            return Err(bad(
                lineno,
                "maps, block scalars, anchors and tags are not supported",
            ));
        } else {
            Value::Scalar(scalar(text, lineno)?)
        };
        fields.push(Field {
            key: key.to_owned(),
            value,
        });
    }
    let body = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))
        .unwrap_or(rest);
    Ok(Document {
        fields,
        body: body.to_owned(),
    })
}

fn strip_comment(s: &str) -> &str {
    // A `#` starts a comment at the start or after a space, outside quotes.
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev == ' ' => return s[..i].trim_end(),
            _ => {}
        }
        prev = c;
    }
    s
}

fn scalar(text: &str, line: usize) -> Result<String> {
    let bad = |why: &str| Error::usage(format!("frontmatter line {line}: {why}"));
    if let Some(inner) = text.strip_prefix('"') {
        let inner = inner
            .strip_suffix('"')
            .ok_or_else(|| bad("unterminated double quote"))?;
        return serde_json::from_str::<String>(&format!("\"{inner}\""))
            .map_err(|e| bad(&format!("bad escape in a quoted value: {e}")));
    }
    if let Some(inner) = text.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| bad("unterminated single quote"))?;
        return Ok(inner.replace("''", "'"));
    }
    Ok(text.to_owned())
}

fn flow_list(text: &str, line: usize) -> Result<Vec<String>> {
    let bad = |why: &str| Error::usage(format!("frontmatter line {line}: {why}"));
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| bad("unterminated list"))?;
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in inner.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if q == '"' && c == '\\' && !escaped {
                    escaped = true;
                    continue;
                }
                if c == q && !escaped {
                    quote = None;
                }
                escaped = false;
            }
            None => match c {
                '"' | '\'' => {
                    quote = Some(c);
                    cur.push(c);
                }
                ',' => {
                    items.push(std::mem::take(&mut cur));
                }
                '[' | ']' | '{' | '}' => {
                    return Err(bad("nested lists and maps are not supported"))
                }
                _ => cur.push(c),
            },
        }
    }
    if quote.is_some() {
        return Err(bad("unterminated quote in a list"));
    }
    items.push(cur);
    let items: Vec<&str> = items.iter().map(|s| s.trim()).collect();
    if items == [""] {
        return Ok(Vec::new());
    }
    items
        .into_iter()
        .map(|i| {
            if i.is_empty() {
                Err(bad("empty list item"))
            } else {
                scalar(i, line)
            }
        })
        .collect()
}

/// A value as the writer puts it.
pub fn write_value(v: &Value) -> String {
    match v {
        Value::Scalar(s) => write_scalar(s),
        Value::List(l) => write_list(l),
    }
}

/// A scalar as the writer puts it: bare when YAML reads it back as the same string, else double-quoted.
pub fn write_scalar(s: &str) -> String {
    if needs_quotes(s) {
        serde_json::to_string(s).expect("strings encode")
    } else {
        s.to_owned()
    }
}

pub fn write_list(items: &[String]) -> String {
    let inner: Vec<String> = items
        .iter()
        .map(|i| {
            if i.contains(',') {
                serde_json::to_string(i).expect("strings encode")
            } else {
                write_scalar(i)
            }
        })
        .collect();
    format!("[{}]", inner.join(", "))
}

fn needs_quotes(s: &str) -> bool {
    if s.is_empty() || s.trim() != s {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~"
    ) || s.parse::<f64>().is_ok()
    {
        return true;
    }
    if s.starts_with([
        '-', '?', ':', '@', '%', '`', '!', '&', '*', '|', '>', '#', '\'', '"', '[', '{',
    ]) {
        return true;
    }
    if s.contains(": ") || s.ends_with(':') || s.contains(" #") {
        return true;
    }
    s.chars()
        .any(|c| c.is_control() || matches!(c, '[' | ']' | '{' | '}' | ',' | '"'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_example() {
        let text = "---\nfrom: worker-bug-069\nto: orchestrator\ntype: status\ntimestamp: 2026-01-28T15:30:00Z\n\
                    needs_response: false\npriority: normal\ntags: [BUG-069, fugue]\n---\n\n## Status Update\n\nDone.\n";
        let d = parse(text).unwrap();
        assert_eq!(d.scalar("from"), Some("worker-bug-069"));
        assert_eq!(d.scalar("timestamp"), Some("2026-01-28T15:30:00Z"));
        assert_eq!(
            d.get("tags"),
            Some(&Value::List(vec!["BUG-069".into(), "fugue".into()]))
        );
        assert_eq!(d.body, "## Status Update\n\nDone.\n");
    }

    #[test]
    fn quoting_block_lists_comments_and_errors() {
        let d = parse(
            "---\na: \"x: \\\"y\\\"\"\nb: 'it''s'\nc:\n  - one\n  - \"t, w\"\nd: plain # note\ne:\nf: []\n---\nbody",
        )
        .unwrap();
        assert_eq!(d.scalar("a"), Some("x: \"y\""));
        assert_eq!(d.scalar("b"), Some("it's"));
        assert_eq!(
            d.get("c"),
            Some(&Value::List(vec!["one".into(), "t, w".into()]))
        );
        assert_eq!(d.scalar("d"), Some("plain"));
        assert_eq!(d.scalar("e"), Some(""));
        assert_eq!(d.get("f"), Some(&Value::List(vec![])));
        assert_eq!(d.body, "body");
        assert!(parse("no frontmatter").is_err());
        assert!(parse("---\na: b\n").is_err());
        assert!(parse("---\na: |\n  x\n---\n").is_err());
        assert!(parse("---\na: b\na: c\n---\n").is_err());
    }

    #[test]
    fn writer_round_trips() {
        for s in [
            "plain",
            "2026-01-28T15:30:00Z",
            "a: b",
            "true",
            "42",
            "",
            " pad",
            "x, y",
            "#hash",
            "line\nbreak",
            "ünïcode",
            "https://example.com/a?b=c#d",
        ] {
            let text = format!(
                "---\nk: {}\nl: {}\n---\n",
                write_scalar(s),
                write_list(&[s.to_owned(), "z".into()])
            );
            let d = parse(&text).unwrap();
            assert_eq!(d.scalar("k"), Some(s), "{text}");
            if !s.is_empty() {
                assert_eq!(
                    d.get("l"),
                    Some(&Value::List(vec![s.to_owned(), "z".into()])),
                    "{text}"
                );
            }
        }
    }
}
