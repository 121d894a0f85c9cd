//! The JSON contract (docs/json.md): every `--json` document carries `"version"`, and every key a command
//! prints is documented with the right type. The test runs one scenario through the real binary and checks
//! each command's output against the example documented under its heading in docs/json.md.
//!
//! `JULES_JSON_DUMP=FILE cargo test --test it json::` writes the outputs to FILE (to refresh the doc).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::harness::{stderr, stdout, Repo};

/// The documented examples: `### NAME` headings, each followed by a ```json block.
fn documented() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .expect("docs/json.md");
    let mut out = BTreeMap::new();
    let mut name: Option<String> = None;
    let mut block: Option<String> = None;
    for line in text.lines() {
        if let Some(b) = &mut block {
            if line.starts_with("```") {
                let v: Value = serde_json::from_str(b)
                    .unwrap_or_else(|e| panic!("docs/json.md, {name:?}: {e}\n{b}"));
                out.insert(name.take().expect("a heading before the block"), v);
                block = None;
            } else {
                b.push_str(line);
                b.push('\n');
            }
        } else if let Some(h) = line.strip_prefix("### ") {
            name = Some(h.trim().trim_matches('`').to_owned());
        } else if line.starts_with("```json") && name.is_some() {
            block = Some(String::new());
        }
    }
    out
}

/// A documented key: its name, and the marks docs/json.md puts on it (`"name?"`: may be left out;
/// `"name|null"`: the example's type or `null`; both: `"name|null?"`; `"name|oneof"`: the example is a list
/// of alternative shapes).
struct DocKey<'a> {
    name: &'a str,
    optional: bool,
    nullable: bool,
    oneof: bool,
}

fn doc_key(raw: &str) -> DocKey<'_> {
    let (rest, optional) = match raw.strip_suffix('?') {
        Some(r) => (r, true),
        None => (raw, false),
    };
    let (rest, oneof) = match rest.strip_suffix("|oneof") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let (name, nullable) = match rest.strip_suffix("|null") {
        Some(n) => (n, true),
        None => (rest, false),
    };
    DocKey {
        name,
        optional,
        nullable,
        oneof,
    }
}

/// `got` has exactly the documented shape: every key printed is documented and every documented key is
/// printed (unless marked `?`), each value of the example's type (integers stay integers), `null` only
/// where the key is marked `|null`. A bare `null` in the doc documents nothing and is itself an error.
/// Arrays: every element against the doc's first; an empty documented array admits only empty arrays.
fn conforms(path: &str, doc: &Value, got: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    check_shape(path, doc, got, &mut problems);
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems.join("\n")),
    }
}

/// `conforms`, collecting every problem rather than stopping at the first.
fn check_shape(path: &str, doc: &Value, got: &Value, problems: &mut Vec<String>) {
    match (doc, got) {
        (Value::Null, _) => problems.push(format!(
            "docs/json.md: {path} is documented as null; write an example of its type and mark the key |null"
        )),
        (Value::Object(d), Value::Object(g)) => {
            let keys: Vec<(DocKey, &Value)> = d.iter().map(|(k, v)| (doc_key(k), v)).collect();
            // A map keyed by data (persona, kind, run index) documents one entry under "<key>".
            let data_keyed = keys.iter().find(|(k, _)| k.name == "<key>");
            for (k, v) in g {
                let Some((dk, dv)) = keys
                    .iter()
                    .find(|(dk, _)| dk.name == k.as_str())
                    .or(data_keyed)
                else {
                    problems.push(format!("{path}.{k} is printed but not documented"));
                    continue;
                };
                if v.is_null() {
                    if !dk.nullable {
                        problems.push(format!("{path}.{k} is null, documented without |null"));
                    }
                } else if dk.oneof {
                    let alternatives = dv.as_array().map(Vec::as_slice).unwrap_or_default();
                    let fits = alternatives.iter().any(|alt| {
                        let mut p = Vec::new();
                        check_shape(&format!("{path}.{k}"), alt, v, &mut p);
                        p.is_empty()
                    });
                    if !fits {
                        problems.push(format!("{path}.{k}: {v} fits none of {dv}"));
                    }
                } else {
                    check_shape(&format!("{path}.{k}"), dv, v, problems);
                }
            }
            for (dk, _) in &keys {
                if dk.name != "<key>" && !dk.optional && !g.contains_key(dk.name) {
                    problems.push(format!("{path}.{} is documented but not printed", dk.name));
                }
            }
        }
        (Value::Array(d), Value::Array(g)) => match d.first() {
            None if g.is_empty() => {}
            None => problems.push(format!(
                "{path} has elements; docs/json.md shows it empty, documenting none"
            )),
            Some(first) => {
                for (i, v) in g.iter().enumerate() {
                    check_shape(&format!("{path}[{i}]"), first, v, problems);
                }
            }
        },
        (Value::Number(d), Value::Number(g)) if d.is_f64() == g.is_f64() => {}
        (Value::String(_), Value::String(_)) | (Value::Bool(_), Value::Bool(_)) => {}
        (d, g) => problems.push(format!("{path}: documented as {d}, printed {g}")),
    }
}

struct Scenario {
    r: Repo,
    outputs: Vec<(String, String)>,
}

impl Scenario {
    /// Run `git jules --json ARGS` (it must succeed, or exit with `code`) and keep its output under `name`.
    fn run_code(&mut self, name: &str, args: &[&str], code: i32, env: &[(&str, &str)]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let mut cmd = self.r.jules_cmd(&all);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{name}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        let text = stdout(&out);
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{name}: not one JSON document ({e}): {text}"));
        assert_eq!(v["version"], 1, "{name}: no version: {text}");
        self.outputs.push((name.to_owned(), text));
        v
    }

    fn run(&mut self, name: &str, args: &[&str]) -> Value {
        self.run_code(name, args, 0, &[])
    }
}

#[test]
fn every_json_document_has_a_version_and_its_documented_shape() {
    let seed = Repo::new();
    let bare = seed.bare_sibling();
    let r = bare.clone_of(bare.path());
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"alice\", \"bob\"]\n[groups]\nteam = [\"alice\", \"bob\"]\n",
    );
    r.write("a.txt", "a\n");
    r.commit_all("initial");
    r.git(["push", "-q", "origin", "HEAD:main"]);
    let mut s = Scenario {
        r,
        outputs: Vec::new(),
    };

    s.run("init", &["init"]);
    let appended = s.run(
        "log append",
        &["log", "append", "mail", "--kind", "t.x", "--actor", "a"],
    );
    let eid = appended["items"][0]["id"].as_str().unwrap().to_owned();
    s.run("log show", &["log", "show", "mail"]);
    s.run("log get", &["log", "get", "mail", &eid]);
    s.run("log stats", &["log", "stats", "mail"]);
    s.run("log fsck", &["log", "fsck"]);
    s.run("log list", &["log", "list"]);
    let keydir = tempfile::tempdir().unwrap();
    let key = keydir.path().join("alice");
    let key = key.to_str().unwrap();
    s.run("keys new", &["keys", "new", "alice", "--out", key]);
    // No trust file on main: the check fails (exit 1) and says why.
    s.run_code(
        "keys check",
        &["keys", "check", "alice"],
        1,
        &[("JULES_SIGNING_KEY", key)],
    );

    let sent = s.run(
        "mail send",
        &[
            "mail",
            "send",
            "--from",
            "alice",
            "--to",
            "bob",
            "--subject",
            "hi",
            "--body",
            "b",
            "--needs-response",
        ],
    );
    let mid = sent["id"].as_str().unwrap().to_owned();
    s.run(
        "mail reply",
        &["mail", "reply", &mid, "--from", "bob", "--body", "ok"],
    );
    s.run("mail inbox", &["mail", "inbox", "--persona", "bob"]);
    s.run("mail read", &["mail", "read", &mid, "--persona", "bob"]);
    s.run("mail show", &["mail", "show", &mid, "--persona", "bob"]);
    s.run("mail sent", &["mail", "sent", "--persona", "alice"]);
    s.run("mail thread", &["mail", "thread", &mid]);
    s.run(
        "mail search",
        &["mail", "search", "ok", "--persona", "alice"],
    );
    s.run(
        "mail tag add",
        &["mail", "tag", "add", &mid, "later", "--persona", "bob"],
    );
    s.run(
        "mail tag ls",
        &["mail", "tag", "ls", &mid, "--persona", "bob"],
    );
    s.run("mail unread", &["mail", "unread", &mid, "--persona", "bob"]);
    s.run("mail claim", &["mail", "claim", &mid, "--persona", "bob"]);
    s.run(
        "mail wait",
        &["mail", "wait", "--persona", "bob", "--timeout", "1"],
    );
    s.run("mail stats", &["mail", "stats"]);
    let maildir = tempfile::tempdir().unwrap();
    let md = maildir.path().join("m");
    s.run(
        "mail export",
        &["mail", "export", "--maildir", md.to_str().unwrap()],
    );
    s.run(
        "mail import",
        &["mail", "import", "--maildir", md.to_str().unwrap()],
    );

    s.run("sprint start", &["sprint", "start"]);
    let rec = s.run(
        "state record",
        &["state", "record", "--persona", "alice", "--session", "S1"],
    );
    assert!(rec["run"].is_string());
    s.run("state done", &["state", "done", "--session", "S1"]);
    s.run("state show", &["state", "show"]);
    s.run(
        "sprint note",
        &[
            "sprint",
            "note",
            "--persona",
            "alice",
            "--kind",
            "plan",
            "--text",
            "t",
        ],
    );
    let task = s.run("task add", &["task", "add", "tidy", "--persona", "alice"]);
    let tid = task["task"].as_str().unwrap().to_owned();
    s.run("task ls", &["task", "ls"]);
    s.run("task done", &["task", "done", &tid]);
    s.run("sprint status", &["sprint", "status"]);
    s.run("sprint stats", &["sprint", "stats"]);
    s.run("tick", &["tick", "--dry-run"]);
    s.run("prompt", &["prompt", "bob"]);
    s.run("sprint close", &["sprint", "close"]);
    s.run("sync", &["sync"]);
    s.run("hooks install", &["hooks", "install"]);

    s.run("series start", &["series", "start", "feat"]);
    s.r.write("b.txt", "b\n");
    s.run(
        "series commit",
        &[
            "series",
            "commit",
            "--summary",
            "Add b",
            "--rationale",
            "b is needed",
        ],
    );
    s.run("series status", &["series", "status"]);
    s.run("series list", &["series", "list"]);
    // Series versions (issue 26): two versions of alice/feat, then the reads that compare them.
    s.run(
        "series version",
        &["series", "version", "--persona", "alice"],
    );
    s.r.write("c.txt", "c\n");
    s.run_code(
        "series commit",
        &[
            "series",
            "commit",
            "--summary",
            "Add c",
            "--rationale",
            "c too",
        ],
        0,
        &[],
    );
    s.run(
        "series version",
        &["series", "version", "--persona", "alice"],
    );
    s.run("series show", &["series", "show", "alice/feat@v1"]);
    s.run(
        "series range-diff",
        &["series", "range-diff", "alice/feat", "v1", "v2"],
    );
    s.run(
        "series interdiff",
        &["series", "interdiff", "alice/feat", "v1", "v2"],
    );
    // A lease (issue 25), as `lease renew` prints it.
    let held: Value = serde_json::from_str(&s.r.jules_ok([
        "--json",
        "lease",
        "acquire",
        "src/",
        "--persona",
        "alice",
        "--ttl",
        "1h",
        "--reason",
        "r",
        "--task",
        "t-1",
    ]))
    .unwrap();
    let lease_id = held["lease"]["id"].as_str().expect("lease.id").to_owned();
    s.run(
        "lease",
        &[
            "lease",
            "renew",
            &lease_id,
            "--persona",
            "alice",
            "--ttl",
            "2h",
        ],
    );
    s.run("verify", &["verify", "--cmd", "true"]);

    // The web pages' JSON (docs/web.md) after a weave with one applied and one conflicting input: the fleet
    // (alice holds the lease above) and the weave page with the recorded report.
    let here = s.r.git(["rev-parse", "--abbrev-ref", "HEAD"]);
    for (branch, text) in [("jules/alice/one", "one\n"), ("jules/bob/two", "two\n")] {
        s.r.git(["switch", "-q", "-c", branch, "main"]);
        s.r.write("a.txt", text);
        s.r.git(["commit", "-qam", branch]);
        s.r.git(["switch", "-q", here.trim()]);
    }
    let woven = s.r.jules(["weave", "jules/alice/one", "jules/bob/two"]);
    assert_eq!(woven.status.code(), Some(1), "bob's input conflicts");
    let server = crate::web::Server::start(&s.r, &[]);
    for page in ["fleet", "weave"] {
        let got = server.get(&format!("/api/{page}"));
        assert_eq!(got.status, 200, "{}", got.text());
        s.outputs.push((format!("web /api/{page}"), got.text()));
    }

    // A harness set up for alice (docs/agents.md): `agent status`.
    s.r.jules_ok(["agent", "setup", "claude", "--persona", "alice"]);
    s.run(
        "agent status",
        &["agent", "status", "claude", "--scope", "project"],
    );

    // A failure with --json: the error object.
    s.run_code("error", &["task", "done", "zzzz"], 2, &[]);

    if let Some(f) = std::env::var_os("JULES_JSON_DUMP") {
        let mut text = String::new();
        for (name, out) in &s.outputs {
            text.push_str(&format!(
                "### `{name}`\n\n```json\n{}\n```\n\n",
                out.trim_end()
            ));
        }
        std::fs::write(f, text).unwrap();
    }

    let docs = documented();
    let mut problems = Vec::new();
    for (name, out) in &s.outputs {
        let got: Value = serde_json::from_str(out).unwrap();
        match docs.get(name) {
            None => problems.push(format!("{name}: no `### {name}` example in docs/json.md")),
            Some(doc) => {
                if let Err(e) = conforms(name, doc, &got) {
                    problems.push(e);
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every documented command was run: an example nothing checks would drift.
    let ran: Vec<&str> = s.outputs.iter().map(|(n, _)| n.as_str()).collect();
    let unchecked: Vec<&String> = docs.keys().filter(|n| !ran.contains(&n.as_str())).collect();
    assert!(
        unchecked.is_empty(),
        "documented but not run: {unchecked:?}"
    );
}

#[test]
fn the_shape_check_catches_an_undocumented_key_and_a_wrong_type() {
    let doc = serde_json::json!({"version": 1, "items": [{"id": "x", "n": 1, "note?": "s", "by|null": "p", "r|oneof?": ["warm", {"n": 1}]}]});
    let check = |got: Value| conforms("t", &doc, &got);
    assert!(
        check(serde_json::json!({"version": 1, "items": [{"id": "y", "n": 2, "by": "q"}]})).is_ok()
    );
    assert!(check(
        serde_json::json!({"version": 1, "items": [{"id": "y", "n": 2, "by": null, "note": "z"}]})
    )
    .is_ok());
    // An undocumented key, a wrong type, a float for an integer, a missing key, a null without |null.
    for bad in [
        serde_json::json!({"version": 1, "items": [{"id": "y", "n": 2, "by": "q", "new": 1}]}),
        serde_json::json!({"version": 1, "items": [{"id": 3, "n": 2, "by": "q"}]}),
        serde_json::json!({"version": 1, "items": [{"id": "y", "n": 2.5, "by": "q"}]}),
        serde_json::json!({"version": 1, "items": [{"id": "y", "by": "q"}]}),
        serde_json::json!({"version": 1, "items": [{"id": null, "n": 2, "by": "q"}]}),
        serde_json::json!({"version": 1, "items": [{"id": "y", "n": 2, "by": "q", "note": 1}]}),
        serde_json::json!({"version": 1, "items": [{"id": "y", "n": 2, "by": "q", "r": {"n": "1"}}]}),
    ] {
        assert!(check(bad.clone()).is_err(), "{bad}");
    }
    // A bare null in the doc documents nothing.
    assert!(conforms(
        "t",
        &serde_json::json!({"a": null}),
        &serde_json::json!({"a": null})
    )
    .is_err());
}
