//! Every JSON example in `docs/*.md`, and how one is compared with a real run (issue 41, finding 3).
//!
//! Each ```json block is one of these kinds, said by the line above it:
//!
//! * in docs/json.md, a block under `### NAME` is the output of the run `NAME` (the heading is the mark);
//! * elsewhere, `<!-- output: NAME -->`: the output of the run `NAME` of one of `tests/it/json.rs`'s scenarios
//!   (a command, a web page, an MCP response, or a `git` read of what the tool stored); `NAME#/a/0/b` is the
//!   part of that run a JSON pointer names;
//! * `<!-- mcp-request: PERSONA -->` (docs/mcp.md only): a JSON-RPC message that the scenario sends, as
//!   written, to an MCP server running as PERSONA (its answer is the run `mcp response ID`);
//! * `<!-- not-output -->`: not output at all (arguments, configuration); still parsed as JSON.
//!
//! An unmarked block, or one that does not parse, is an error: an example nothing checks would drift.
//!
//! A block matches a run when the run has the block's shape (`json::conforms`) and every value the block
//! shows is the run's, after the placeholder rule (`normalise`) replaced what no two runs share.

use std::path::Path;

use serde_json::Value;

/// What a block documents.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// The output of the run of this name.
    Output(String),
    /// A JSON-RPC message sent to an MCP server running as this persona.
    McpRequest(String),
    /// Not output (arguments, configuration).
    NotOutput,
}

/// One ```json block of a doc.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    /// `docs/FILE.md:LINE` of the opening fence.
    pub(crate) at: String,
    pub(crate) kind: Kind,
    pub(crate) value: Value,
}

/// Every ```json block of every `docs/*.md`, in file and line order; a block that is unmarked or is not JSON
/// is a problem.
pub(crate) fn blocks() -> (Vec<Block>, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        let name = format!("docs/{}", file.file_name().unwrap().to_string_lossy());
        let text = std::fs::read_to_string(&file).unwrap();
        blocks_of(&name, &text, &mut out, &mut problems);
    }
    (out, problems)
}

/// The blocks of one doc (`name` is its path from the repository's top).
pub(crate) fn blocks_of(name: &str, text: &str, out: &mut Vec<Block>, problems: &mut Vec<String>) {
    let headed = name == "docs/json.md";
    let mut heading: Option<String> = None;
    let mut last_line = "";
    let mut block: Option<(usize, Option<Kind>, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some((start, kind, body)) = &mut block {
            if line.starts_with("```") {
                let at = format!("{name}:{start}");
                match (serde_json::from_str::<Value>(body), kind.take()) {
                    (Err(e), _) => problems.push(format!("{at}: not JSON ({e})")),
                    (Ok(_), None) => problems.push(format!(
                        "{at}: a JSON block without a mark (<!-- output: NAME -->, <!-- not-output -->, \
                         <!-- mcp-request: PERSONA -->)"
                    )),
                    (Ok(_), Some(Kind::McpRequest(_))) if name != "docs/mcp.md" => problems.push(
                        format!("{at}: MCP requests are sent by docs/mcp.md's scenario only"),
                    ),
                    (Ok(value), Some(kind)) => out.push(Block { at, kind, value }),
                }
                block = None;
            } else {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        if let Some(h) = line.strip_prefix("### ") {
            heading = Some(h.trim().trim_matches('`').to_owned());
        } else if line.starts_with("## ") || line.starts_with("# ") {
            heading = None;
        }
        if line.starts_with("```json") {
            let kind = mark(last_line).or_else(|| match (headed, &heading) {
                (true, Some(h)) => Some(Kind::Output(h.clone())),
                _ => None,
            });
            block = Some((i + 1, kind, String::new()));
        }
        if !line.trim().is_empty() {
            last_line = line;
        }
    }
}

/// The kind an HTML comment line gives the block below it.
fn mark(line: &str) -> Option<Kind> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    if inner == "not-output" {
        return Some(Kind::NotOutput);
    }
    if let Some(name) = inner.strip_prefix("output:") {
        return Some(Kind::Output(name.trim().to_owned()));
    }
    inner
        .strip_prefix("mcp-request:")
        .map(|p| Kind::McpRequest(p.trim().to_owned()))
}

/// The placeholder rule, applied alike to the doc's strings and the run's: what differs from run to run is
/// replaced, the rest compared exactly. In this order:
///
/// 1. an absolute path (a `/` at the start of the string or after a space, `(` or a quote, up to the next
///    space, quote, `)`, `,` or `:`) becomes `<path>`: temporary directories (`/dev/null`, git's, stays);
/// 2. an RFC 3339 time (`2026-11-28T09:39:20.123Z`, `…+00:00`) becomes `<time>`;
/// 3. a run of 40 or more base64 characters with lower-case letters and four or more capitals becomes
///    `<base64>`: keys and key fingerprints (a change id, `I` and 40 hex digits, is not one);
/// 4. a run of 7 or more lowercase hex digits becomes `<40 hex>` or `<64 hex>` (a commit, an event id), else
///    `<hex>` (an abbreviation, a nonce): git ids hash commit times.
///
/// In a doc string, `<40 hex: a comment>` is `<40 hex>` (a placeholder may say what it stands for), and `…`
/// stands for any text. A number under a key named `millis` or `expires_in`, or ending in `_ms` or `_secs`,
/// is a measured or counted-down time: only its type is compared.
pub(crate) fn normalise(s: &str) -> String {
    let s = paths(s);
    let s = times(&s);
    let s = base64(&s);
    hex(&s)
}

fn paths(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev: Option<char> = None;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let starts = matches!(
            prev,
            None | Some(' ' | '\n' | '\t' | '(' | '"' | '\'' | '`')
        );
        if c == '/' && starts && chars.peek().is_some_and(|n| !n.is_whitespace()) {
            let mut path = String::from('/');
            while let Some(n) = chars.next_if(|n| !n.is_whitespace() && !"\"'`),:".contains(*n)) {
                path.push(n);
            }
            // git's name for no file is part of a diff's text, the same in every run.
            match path.as_str() {
                "/dev/null" => out.push_str(&path),
                _ => out.push_str("<path>"),
            }
            prev = Some('>');
            continue;
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

fn times(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if let Some(len) = time_at(&b[i..]) {
            out.push_str(&s[copied..i]);
            out.push_str("<time>");
            i += len;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// The length of the RFC 3339 time at the start of `b`, if there is one.
fn time_at(b: &[u8]) -> Option<usize> {
    let shape = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < shape.len() {
        return None;
    }
    for (x, p) in b.iter().zip(shape) {
        let ok = match p {
            b'd' => x.is_ascii_digit(),
            _ => x == p,
        };
        if !ok {
            return None;
        }
    }
    let mut n = shape.len();
    if b.get(n) == Some(&b'.') {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    match b.get(n) {
        Some(b'Z') => n += 1,
        Some(b'+' | b'-') if b.len() >= n + 6 => n += 6,
        _ => {}
    }
    Some(n)
}

fn base64(s: &str) -> String {
    replace_runs(
        s,
        |c| c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '=',
        |run| {
            (run.len() >= 40
                && run.chars().filter(|c| c.is_ascii_uppercase()).count() >= 4
                && run.chars().any(|c| c.is_ascii_lowercase()))
            .then(|| "<base64>".to_owned())
        },
    )
}

fn hex(s: &str) -> String {
    replace_runs(
        s,
        |c| c.is_ascii_digit() || ('a'..='f').contains(&c),
        |run| match run.len() {
            40 => Some("<40 hex>".to_owned()),
            64 => Some("<64 hex>".to_owned()),
            n if n >= 7 => Some("<hex>".to_owned()),
            _ => None,
        },
    )
}

/// `s` with each maximal run of characters in `class` replaced by what `with` says (or kept).
fn replace_runs(
    s: &str,
    class: impl Fn(char) -> bool,
    with: impl Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(s.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        match with(run) {
            Some(p) => out.push_str(&p),
            None => out.push_str(run),
        }
        run.clear();
    };
    for c in s.chars() {
        if class(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A doc string's placeholders written out (`<40 hex: the old tip>` is `<40 hex>`), then the rule.
fn normalise_doc(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        match (tail.find(": "), tail.find('>')) {
            (Some(colon), Some(end)) if colon < end => {
                out.push_str(&tail[..colon]);
                out.push('>');
                rest = &tail[end + 1..];
            }
            _ => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    normalise(&out)
}

/// `got` (a run's string) is what `doc` shows, under the placeholder rule; `…` in `doc` is any text.
pub(crate) fn same_text(doc: &str, got: &str) -> bool {
    let doc = normalise_doc(doc);
    let got = normalise(got);
    let parts: Vec<&str> = doc.split('…').collect();
    if parts.len() == 1 {
        return doc == got;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !got.starts_with(first) || got.len() < first.len() + last.len() || !got.ends_with(last) {
        return false;
    }
    let mut at = first.len();
    let end = got.len() - last.len();
    for part in &parts[1..parts.len() - 1] {
        match got[at..end].find(part) {
            Some(i) => at += i + part.len(),
            None => return false,
        }
    }
    true
}

/// A number under this key is a measured or counted-down time (see `normalise`).
fn timed(key: &str) -> bool {
    key == "millis" || key == "expires_in" || key.ends_with("_ms") || key.ends_with("_secs")
}

/// A doc array the run printed empty: its elements are compared with the runs that fill it (`compare`).
#[derive(Debug, Clone)]
pub(crate) struct Deferred {
    /// Where, as the problems name it (`sync.skipped`, `x.items[0].tags`).
    pub(crate) path: String,
    /// Where, as a JSON pointer into a run.
    pub(crate) pointer: String,
    pub(crate) doc: Value,
}

/// Every value `doc` shows is `got`'s, under the placeholder rule; the differences go to `problems`. The
/// shapes are `json::conforms`'s to check: a key the doc marks `?` and the run leaves out, or shows `null`
/// where the doc shows an example of the type (`|null`), is not compared. Arrays: each element the doc shows
/// is one of the run's (a doc may show fewer); an array the run prints empty goes to `deferred`, for another run
/// to show. `<key>` (a map keyed by data): some entry is the doc's. `|oneof`: the run's value is one of the
/// alternatives.
pub(crate) fn same_values(
    path: &str,
    pointer: &str,
    key: &str,
    doc: &Value,
    got: &Value,
    problems: &mut Vec<String>,
    deferred: &mut Vec<Deferred>,
) {
    match (doc, got) {
        (Value::Object(d), Value::Object(g)) => {
            for (raw, dv) in d {
                let k = crate::json::doc_key(raw);
                let sub = format!("{path}.{}", k.name);
                let ptr = format!("{pointer}/{}", k.name.replace('~', "~0").replace('/', "~1"));
                if k.name == "<key>" {
                    let any = g.values().any(|gv| {
                        let (mut p, mut d) = (Vec::new(), Vec::new());
                        same_values(&sub, "", k.name, dv, gv, &mut p, &mut d);
                        p.is_empty() && d.is_empty()
                    });
                    if !g.is_empty() && !any {
                        problems.push(format!("{sub}: no entry is {dv}"));
                    }
                    continue;
                }
                let Some(gv) = g.get(k.name) else { continue };
                if gv.is_null() && !dv.is_null() {
                    continue;
                }
                if k.oneof {
                    let alternatives = dv.as_array().map(Vec::as_slice).unwrap_or_default();
                    let any = alternatives.iter().any(|alt| {
                        let (mut p, mut d) = (Vec::new(), Vec::new());
                        crate::json::check_shape(&sub, alt, gv, &mut p);
                        same_values(&sub, "", k.name, alt, gv, &mut p, &mut d);
                        p.is_empty() && d.is_empty()
                    });
                    if !any {
                        problems.push(format!("{sub}: printed {gv}, none of {dv}"));
                    }
                    continue;
                }
                same_values(&sub, &ptr, k.name, dv, gv, problems, deferred);
            }
        }
        (Value::Array(d), Value::Array(g)) => {
            if g.is_empty() && !d.is_empty() && !pointer.is_empty() {
                deferred.push(Deferred {
                    path: path.to_owned(),
                    pointer: pointer.to_owned(),
                    doc: doc.clone(),
                });
                return;
            }
            if g.len() < d.len() {
                problems.push(format!(
                    "{path}: the doc shows {} elements, the run printed {}",
                    d.len(),
                    g.len()
                ));
            }
            // Each element the doc shows is one of the run's: lists sorted by id have no fixed order.
            for (i, dv) in d.iter().enumerate() {
                let sub = format!("{path}[{i}]");
                let mut closest: Option<(Vec<String>, Vec<Deferred>)> = None;
                for (j, gv) in g.iter().enumerate() {
                    let (mut p, mut q) = (Vec::new(), Vec::new());
                    let ptr = format!("{pointer}/{j}");
                    same_values(&sub, &ptr, key, dv, gv, &mut p, &mut q);
                    if closest.as_ref().is_none_or(|(c, _)| p.len() < c.len()) {
                        closest = Some((p, q));
                    }
                }
                if let Some((p, q)) = closest {
                    problems.extend(p);
                    deferred.extend(q);
                }
            }
        }
        (Value::String(d), Value::String(g)) => {
            if !same_text(d, g) {
                problems.push(format!(
                    "{path}: the doc shows {doc}, the run printed {got}"
                ));
            }
        }
        (Value::Number(_), Value::Number(_)) if timed(key) => {}
        (d, g) => {
            if d != g {
                problems.push(format!("{path}: the doc shows {d}, the run printed {g}"));
            }
        }
    }
}

/// `same_values` at the top of a run: the problems, and the arrays left to other runs.
pub(crate) fn compare_values(name: &str, doc: &Value, got: &Value) -> (Vec<String>, Vec<Deferred>) {
    let (mut p, mut d) = (Vec::new(), Vec::new());
    same_values(name, "", "", doc, got, &mut p, &mut d);
    (p, d)
}

#[test]
fn the_placeholder_rule_replaces_only_what_differs_between_runs() {
    assert_eq!(
        normalise("/tmp/.tmpjvGMMP/alice (JULES_SIGNING_KEY)"),
        "<path> (JULES_SIGNING_KEY)"
    );
    assert_eq!(
        normalise("cannot read /nonexistent/body: gone"),
        "cannot read <path>: gone"
    );
    assert_eq!(normalise("refs/jules/mail"), "refs/jules/mail");
    assert_eq!(
        normalise("--- /dev/null\n+++ b/c.txt"),
        "--- /dev/null\n+++ b/c.txt"
    );
    assert_eq!(
        normalise("https://example.com/spec"),
        "https://example.com/spec"
    );
    assert_eq!(
        normalise("at 2026-11-28T09:39:20.253Z and 2025-01-01T12:00:00+00:00."),
        "at <time> and <time>."
    );
    assert_eq!(
        normalise("SHA256:0sPBxXbmlxhiWcuLMu0z/7JWTWxOYK8Vwq6Wwu9YPxE"),
        "SHA256:<base64>"
    );
    assert_eq!(
        normalise("weave-1229eb8edbedbeb535b03243f86af98f47fc60e5 at ab4f758, I320f84db671fe2d0de929484f4155f40dfeabb37"),
        "weave-<40 hex> at <hex>, I<40 hex>"
    );
    // Words and short numbers stay.
    assert_eq!(
        normalise("added 1 of 12345 faced"),
        "added 1 of 12345 faced"
    );
    assert!(same_text(
        "<40 hex: the old tip>",
        "8b6e7aa1229eb8edbedbeb535b03243f86af98f4"
    ));
    assert!(same_text(
        "build failed: …",
        "build failed: exit 2 at line 3"
    ));
    assert!(same_text("a…c…e", "abcde"));
    assert!(!same_text("a…c…e", "abde"));
    assert!(!same_text("Add the parser", "Add b"));
}

#[test]
fn a_value_the_run_does_not_print_is_a_difference() {
    let doc = serde_json::json!({"n": 1, "id": "<64 hex>", "at": "2025-01-01T12:00:00Z",
        "duration_ms": 3, "note?": "x", "items": [{"s": "a"}], "by_kind": {"<key>": 2}});
    let got = serde_json::json!({"n": 1, "id": "3217da59cd3a0617407a10f981eb1653d3d22307c7043eed75917a8a6910ec45",
        "at": "2026-11-28T09:39:20.253Z", "duration_ms": 812, "items": [{"s": "a"}, {"s": "b"}],
        "by_kind": {"t.x": 1, "t.y": 2}});
    let (p, d) = compare_values("t", &doc, &got);
    assert!(p.is_empty() && d.is_empty(), "{p:?} {d:?}");
    for bad in [
        serde_json::json!({"n": 2}),
        serde_json::json!({"id": "a short one"}),
        serde_json::json!({"items": [{"s": "b"}]}),
        serde_json::json!({"items": []}),
        serde_json::json!({"by_kind": {"t.x": 1}}),
    ] {
        let mut got = got.clone();
        for (k, v) in bad.as_object().unwrap() {
            got[k] = v.clone();
        }
        let (p, d) = compare_values("t", &doc, &got);
        assert!(!p.is_empty() || !d.is_empty(), "{got}");
    }
}

#[test]
fn every_block_is_marked_and_parses() {
    let text = "## A\n\n<!-- output: sync -->\n```json\n{\"a\": 1}\n```\n\n<!-- not-output -->\n```json\n[1]\n```\n\n\
                ```json\n{}\n```\n\n<!-- output: x -->\n```json\n{\"a\": …}\n```\n\n\
                <!-- mcp-request: alice -->\n```json\n{\"id\": 1}\n```\n";
    let (mut out, mut problems) = (Vec::new(), Vec::new());
    blocks_of("docs/x.md", text, &mut out, &mut problems);
    let kinds: Vec<&Kind> = out.iter().map(|b| &b.kind).collect();
    assert_eq!(
        kinds,
        [&Kind::Output("sync".into()), &Kind::NotOutput],
        "{problems:?}"
    );
    // The unmarked block, the one that is not JSON, and an MCP request outside docs/mcp.md.
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].starts_with("docs/x.md:13: a JSON block without a mark"));
    assert!(problems[1].starts_with("docs/x.md:18: not JSON"));
    assert!(problems[2].contains("MCP requests are sent by docs/mcp.md's scenario only"));
    // In docs/json.md a heading names the run.
    let (mut out, mut problems) = (Vec::new(), Vec::new());
    blocks_of(
        "docs/json.md",
        "### `log list`\n\n```json\n{}\n```\n",
        &mut out,
        &mut problems,
    );
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(out[0].kind, Kind::Output("log list".into()));
}
