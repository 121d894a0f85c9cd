//! The JSON contract (docs/json.md) and every JSON example in docs/: every `--json` document carries
//! `"version"`, every key a command prints is documented with the right type, and every example shows what a
//! real run printed (`json_docs` reads the blocks and compares values). The main scenario runs the commands,
//! the web pages and the weaves through the real binary for docs/json.md, cli.md, mail.md, format.md and
//! weave.md; docs/series.md and docs/mcp.md have small scenarios of their own.
//!
//! `JULES_JSON_DUMP=FILE cargo test --test it json::` writes the outputs to FILE (to refresh the doc).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::harness::{stderr, stdout, Repo};

/// A documented key: its name, and the marks docs/json.md puts on it (`"name?"`: may be left out;
/// `"name|null"`: the example's type or `null`; both: `"name|null?"`; `"name|oneof"`: the example is a list
/// of alternative shapes).
pub(crate) struct DocKey<'a> {
    pub(crate) name: &'a str,
    optional: bool,
    nullable: bool,
    pub(crate) oneof: bool,
}

pub(crate) fn doc_key(raw: &str) -> DocKey<'_> {
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
pub(crate) fn check_shape(path: &str, doc: &Value, got: &Value, problems: &mut Vec<String>) {
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

/// A doc array that one run printed empty is printed with the doc's elements by another run of the name, or
/// by another element of the same list (`reports[3]` rather than `reports[0]`); recursively, its own empty
/// arrays by others still.
fn shown_by_some_run(d: &crate::json_docs::Deferred, runs: &[&Value]) -> bool {
    runs.iter()
        .flat_map(|run| at_any_index(run, &d.pointer))
        .any(|(pointer, got)| {
            if got.as_array().is_none_or(Vec::is_empty) {
                return false;
            }
            let d = crate::json_docs::Deferred {
                pointer,
                ..d.clone()
            };
            let (p, deferred) = crate::json_docs::compare_values(&d.path, &d.doc, got);
            p.is_empty()
                && deferred.iter().all(|inner| {
                    let inner = crate::json_docs::Deferred {
                        pointer: format!("{}{}", d.pointer, inner.pointer),
                        ..inner.clone()
                    };
                    shown_by_some_run(&inner, runs)
                })
        })
}

/// The values at `pointer` in `run`, with every array index in it standing for any index: (the pointer
/// with the indexes taken, the value).
fn at_any_index<'v>(run: &'v Value, pointer: &str) -> Vec<(String, &'v Value)> {
    let mut here = vec![(String::new(), run)];
    for seg in pointer.split('/').skip(1) {
        let mut next = Vec::new();
        for (at, v) in here {
            match v {
                Value::Array(items) if seg.parse::<usize>().is_ok() => {
                    for (i, item) in items.iter().enumerate() {
                        next.push((format!("{at}/{i}"), item));
                    }
                }
                _ => {
                    let key = seg.replace("~1", "/").replace("~0", "~");
                    if let Some(item) = v.get(&key) {
                        next.push((format!("{at}/{seg}"), item));
                    }
                }
            }
        }
        here = next;
    }
    here
}

/// For every array under `doc` that the doc shows with an element (and that `got` prints), record under its
/// path (`name.key[].key`) whether `got` has an element there; a path once filled stays filled.
fn arrays_filled(path: &str, doc: &Value, got: &Value, filled: &mut BTreeMap<String, bool>) {
    match (doc, got) {
        (Value::Object(d), Value::Object(g)) => {
            for (raw, dv) in d {
                let k = doc_key(raw);
                if k.oneof {
                    continue;
                }
                if k.name == "<key>" {
                    // A map keyed by data: every entry against the documented one.
                    for gv in g.values() {
                        arrays_filled(&format!("{path}.<key>"), dv, gv, filled);
                    }
                    continue;
                }
                let sub = format!("{path}.{}", k.name);
                match g.get(k.name) {
                    Some(gv) => arrays_filled(&sub, dv, gv, filled),
                    None if dv.as_array().is_some_and(|a| !a.is_empty()) => {
                        filled.entry(sub).or_insert(false);
                    }
                    None => {}
                }
            }
        }
        (Value::Array(d), Value::Array(g)) => {
            let Some(first) = d.first() else { return };
            let seen = filled.entry(path.to_owned()).or_insert(false);
            *seen |= !g.is_empty();
            for v in g {
                arrays_filled(&format!("{path}[]"), first, v, filled);
            }
        }
        _ => {}
    }
}

/// The docs whose examples another scenario runs (one scenario per doc, kept small).
const OWN_SCENARIO: &[&str] = &["docs/series.md:", "docs/mcp.md:"];

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

    /// Keep `git ARGS`' output (a JSON document the tool stored: a note, a record) under `name`.
    fn record_git(&mut self, name: &str, args: &[&str]) {
        let text = self.r.git(args);
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("{name}: not one JSON document ({e}): {text}"));
        self.outputs.push((name.to_owned(), text));
    }

    /// With `JULES_JSON_DUMP=FILE`, write the outputs to FILE (a starting point for a new example).
    fn dump(&self) {
        let Some(f) = std::env::var_os("JULES_JSON_DUMP") else {
            return;
        };
        let mut text = String::new();
        for (name, out) in &self.outputs {
            text.push_str(&format!(
                "### `{name}`\n\n```json\n{}\n```\n\n",
                out.trim_end()
            ));
        }
        std::fs::write(f, text).unwrap();
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
    let made = s.run("keys new", &["keys", "new", "alice", "--out", key]);
    // No trust file on main: the check fails (exit 1) and says why.
    s.run_code(
        "keys check",
        &["keys", "check", "alice"],
        1,
        &[("JULES_SIGNING_KEY", key)],
    );
    // With a trust file on main and signatures required, fsck names the unsigned events (`unverified`)
    // and exits 1.
    s.r.write(
        ".jules/allowed_signers",
        &format!("{}\n", made["allowed_signers"].as_str().unwrap()),
    );
    s.r.commit_all("trust alice");
    s.r.git(["config", "jules.requireSigned", "true"]);
    let checked = s.run_code("log fsck", &["log", "fsck"], 1, &[]);
    s.r.git(["config", "--unset", "jules.requireSigned"]);
    assert!(
        !checked["items"][0]["unverified"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{checked}"
    );

    // Tags, a link and a file, so the message shapes' arrays all have elements.
    let attachment = keydir.path().join("notes.txt");
    std::fs::write(&attachment, "attached\n").unwrap();
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
            "--tag",
            "triage",
            "--attach",
            "https://example.com/spec",
            "--attach",
            attachment.to_str().unwrap(),
        ],
    );
    let mid = sent["id"].as_str().unwrap().to_owned();
    // The send event as stored (docs/format.md, *The event JSON*): a payload for the file.
    s.run("log show mail", &["log", "show", "mail"]);
    let reply = s.run(
        "mail reply",
        &["mail", "reply", &mid, "--from", "bob", "--body", "ok"],
    );
    let reply = reply["id"].as_str().unwrap().to_owned();
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
    // Again with bob's tag on the message (`state.tags`).
    s.run("mail inbox", &["mail", "inbox", "--persona", "bob"]);
    s.run("mail show", &["mail", "show", &mid, "--persona", "bob"]);
    s.run("mail search", &["mail", "search", "hi", "--persona", "bob"]);
    s.run("mail read", &["mail", "read", &mid, "--persona", "bob"]);
    s.run("mail unread", &["mail", "unread", &mid, "--persona", "bob"]);
    s.run("mail claim", &["mail", "claim", &mid, "--persona", "bob"]);
    s.run(
        "mail wait",
        &["mail", "wait", "--persona", "bob", "--timeout", "1"],
    );
    // A persona name the roster does not know (`bobb`): every mail document carries the CLI's warning as
    // data (`warnings`), so its elements are checked too.
    let typo = s.run(
        "mail send",
        &[
            "mail",
            "send",
            "--from",
            "alice",
            "--to",
            "bobb",
            "--subject",
            "typo",
            "--body",
            "b",
        ],
    );
    let tid_typo = typo["id"].as_str().unwrap().to_owned();
    s.run("mail inbox", &["mail", "inbox", "--persona", "bobb"]);
    s.run(
        "mail wait",
        &["mail", "wait", "--persona", "bobb", "--timeout", "1"],
    );
    s.run(
        "mail show",
        &["mail", "show", &tid_typo, "--persona", "bobb"],
    );
    s.run(
        "mail read",
        &["mail", "read", &tid_typo, "--persona", "bobb"],
    );
    s.run(
        "mail unread",
        &["mail", "unread", &tid_typo, "--persona", "bobb"],
    );
    s.run("mail sent", &["mail", "sent", "--persona", "bobb"]);
    s.run(
        "mail thread",
        &["mail", "thread", &tid_typo, "--persona", "bobb"],
    );
    s.run(
        "mail tag add",
        &[
            "mail",
            "tag",
            "add",
            &tid_typo,
            "later",
            "--persona",
            "bobb",
        ],
    );
    s.run(
        "mail tag ls",
        &["mail", "tag", "ls", &tid_typo, "--persona", "bobb"],
    );
    s.run(
        "mail thread",
        &["mail", "thread", &tid_typo, "--persona", "bobb"],
    );
    s.run(
        "mail claim",
        &["mail", "claim", &tid_typo, "--persona", "bobb"],
    );
    s.run(
        "mail reply",
        &["mail", "reply", &tid_typo, "--from", "bobb", "--body", "ok"],
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
    // A lease for the task, so finishing it releases one (`released`).
    s.r.jules_ok([
        "lease",
        "acquire",
        "docs/",
        "--persona",
        "alice",
        "--task",
        &tid,
    ]);
    s.run("task done", &["task", "done", &tid, "--actor", "alice"]);
    s.run("sprint status", &["sprint", "status"]);
    s.run("sprint stats", &["sprint", "stats"]);
    s.run("tick", &["tick", "--dry-run"]);
    s.run("prompt", &["prompt", "bob"]);
    s.run("sprint close", &["sprint", "close"]);
    s.run("sync", &["sync"]);
    // Nothing was held back; an unpushed event of a new log is dropped by id (the log goes with it).
    s.run("log held-back", &["log", "held-back"]);
    let scratch: Value = serde_json::from_str(&s.r.jules_ok([
        "--json", "log", "append", "scratch", "--kind", "t.x", "--actor", "a",
    ]))
    .unwrap();
    let scratch = scratch["items"][0]["id"].as_str().unwrap().to_owned();
    s.run(
        "log held-back drop",
        &["log", "held-back", "drop", &scratch[..12]],
    );
    // A remote whose guard requires signatures, synced with signatures required here too: every unsigned
    // event of this clone is held back (`held_back`, and `log held-back`'s `items`), the rest published.
    let signed = s.r.bare_sibling();
    s.r.git(["push", "-q", signed.path().to_str().unwrap(), "HEAD:main"]);
    let guarded = signed.jules(["guard", "--install", "--require-signed"]);
    assert!(guarded.status.success(), "{}", stderr(&guarded));
    s.r.git(["remote", "add", "signed", signed.path().to_str().unwrap()]);
    // An event on no remote yet, unsigned: listed by `log held-back` after the sync holds it back.
    s.r.jules_ok(["lease", "acquire", "held/", "--persona", "nobodyy"]);
    s.r.git(["config", "jules.requireSigned", "true"]);
    let held = s.run_code("sync", &["sync", "signed"], 1, &[]);
    assert!(!held["held_back"].as_array().unwrap().is_empty(), "{held}");
    s.run("log held-back", &["log", "held-back"]);
    s.r.git(["config", "--unset", "jules.requireSigned"]);
    s.r.git(["remote", "remove", "signed"]);
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
    s.run("series versions", &["series", "versions", "alice/feat"]);
    // The record a version carries (docs/format.md, *Series versions*).
    s.record_git(
        "series.json",
        &["show", "refs/jules/series/alice/feat:series.json"],
    );
    // A review of v1 (one comment under its patch's added line), so `series show` has `reviews`.
    let buffer =
        s.r.jules_ok(["series", "review", "--version", "alice/feat@v1", "--print"])
            .replace("> +b\n", "> +b\nR: why b?\n");
    let review = keydir.path().join("review.txt");
    std::fs::write(&review, buffer).unwrap();
    s.r.jules_ok([
        "series",
        "review",
        "--version",
        "alice/feat@v1",
        "--from-file",
        review.to_str().unwrap(),
    ]);
    let shown = s.run("series show", &["series", "show", "alice/feat@v1"]);
    assert_eq!(
        shown["reviews"][0]["notes"][0]["comments"][0]["text"], "why b?",
        "{shown}"
    );
    // A second sync, after the versions: it pushes their refs (`series_pushed`).
    let synced = s.run("sync", &["sync"]);
    assert!(
        !synced["series_pushed"].as_array().unwrap().is_empty(),
        "{synced}"
    );
    // A remote whose guard stops a forged version (a plain commit under refs/jules/series/): once the logs
    // are there, sync names the refused ref (`series_refused`) and exits 2.
    let guarded = s.r.bare_sibling();
    s.r.git(["push", "-q", guarded.path().to_str().unwrap(), "HEAD:main"]);
    let installed = guarded.jules(["guard", "--install"]);
    assert!(installed.status.success(), "{}", stderr(&installed));
    s.r.git(["remote", "add", "guarded", guarded.path().to_str().unwrap()]);
    s.r.jules_ok(["sync", "guarded"]);
    s.r.git(["update-ref", "refs/jules/series/mallory/feat", "HEAD"]);
    let refused = s.run_code("sync", &["sync", "guarded"], 2, &[]);
    assert_eq!(
        refused["series_refused"][0]["name"], "refs/jules/series/mallory/feat",
        "{refused}"
    );
    s.r.git(["update-ref", "-d", "refs/jules/series/mallory/feat"]);
    s.r.git(["remote", "remove", "guarded"]);
    // Every persona's versions, with a ref under refs/jules/series/ that is not a version (`skipped`).
    s.r.git(["update-ref", "refs/jules/series/mallory/x", "HEAD"]);
    s.run("series list --all", &["series", "list", "--all"]);
    s.r.git(["update-ref", "-d", "refs/jules/series/mallory/x"]);
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
    s.run("verify", &["verify", "--cmd", "true", "--jobs", "1"]);

    // A sync against a remote in a bad state, so that its arrays have elements: a log this clone had
    // tracked and the remote lost (`pruned`), a log ref at a blob (`skipped`), a commit on the mail log
    // that is not an event (`invalid`).
    s.r.jules_ok(["log", "append", "gone", "--kind", "t.x", "--actor", "a"]);
    s.r.jules_ok(["sync"]);
    bare.git(["update-ref", "-d", "refs/jules/gone"]);
    s.r.git(["update-ref", "-d", "refs/jules/gone"]);
    let junk = bare.path().join("junk");
    std::fs::write(&junk, "junk\n").unwrap();
    let blob = bare.git(["hash-object", "-w", junk.to_str().unwrap()]);
    bare.git(["update-ref", "refs/jules/x", &blob]);
    let tip = bare.git(["rev-parse", "refs/jules/mail"]);
    let tree = bare.git(["rev-parse", &format!("{tip}^{{tree}}")]);
    let garbage = bare.git(["commit-tree", &tree, "-p", &tip, "-m", "not an event"]);
    bare.git(["update-ref", "refs/jules/mail", &garbage]);
    let bad = s.run("sync", &["sync"]);
    for key in ["pruned", "skipped", "invalid"] {
        assert!(!bad[key].as_array().unwrap().is_empty(), "{key}: {bad}");
    }
    bare.git(["update-ref", "-d", "refs/jules/x"]);
    // A push held back by the push budget: the new version waits (`series_deferred`).
    s.r.git(["config", "jules.sync.minPushInterval", "1h"]);
    // v3 drops v2's second patch (`dropped` in `series version` and `series show`).
    s.r.jules_ok(["series", "reroll", "2", "--drop"]);
    let v3 = s.run(
        "series version",
        &["series", "version", "--persona", "alice"],
    );
    assert_eq!(v3["dropped"], serde_json::json!([2]), "{v3}");
    s.record_git(
        "series.json",
        &["show", "refs/jules/series/alice/feat:series.json"],
    );
    s.run("series show", &["series", "show", "alice/feat@v3"]);
    let deferred = s.run("sync", &["sync"]);
    assert!(
        !deferred["series_deferred"].as_array().unwrap().is_empty(),
        "{deferred}"
    );
    s.r.git(["config", "--unset", "jules.sync.minPushInterval"]);

    // The web pages' JSON (docs/web.md) after weaves that fill every list of the weave page: the fleet (alice
    // holds the lease above) and the weave page with the recorded reports.
    let here = s.r.git(["rev-parse", "--abbrev-ref", "HEAD"]);
    // On main, a long file, and a patch of its line 30 made before main gains five lines at its top: the
    // patch applies at an offset (a note).
    s.r.git(["switch", "-q", "main"]);
    let long: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    s.r.write("long.txt", &long);
    s.r.commit_all("long");
    s.r.git(["switch", "-q", "-c", "tmp"]);
    s.r.write("long.txt", &long.replace("line 30\n", "line 30 patched\n"));
    s.r.commit_all("patch line 30");
    let patches = tempfile::tempdir().unwrap();
    let offset = patches.path().join("offset.diff");
    std::fs::write(&offset, s.r.git(["diff", "main", "tmp"]) + "\n").unwrap();
    s.r.git(["switch", "-q", "main"]);
    s.r.write("long.txt", &format!("top\ntop\ntop\ntop\ntop\n{long}"));
    s.r.commit_all("main moves on");
    for (branch, file, text, message) in [
        ("jules/alice/one", "a.txt", "one\n", "jules/alice/one"),
        ("jules/bob/two", "a.txt", "two\n", "jules/bob/two"),
        ("jules/dave/four", "four.txt", "four\n", "Add four"),
        ("jules/bob/five", "a.txt", "five\n", "five\n\nPersona: bob"),
        ("jules/bob/six", "six.txt", "BROKEN\n", "jules/bob/six"),
    ] {
        s.r.git(["switch", "-q", "-c", branch, "main"]);
        s.r.write(file, text);
        if branch == "jules/alice/one" {
            s.r.write("new.txt", "A\n");
        }
        s.r.git(["add", "-A"]);
        s.r.git(["commit", "-qm", message]);
    }
    s.r.git(["switch", "-q", "-c", "jules/carol/three", "main"]);
    s.r.write("new.txt", "C\n");
    s.r.commit_all("jules/carol/three");
    s.r.git(["switch", "-q", here.trim()]);
    // A patch series with its cover letter, the cover letter alone, a file that is no patch (a NUL), and a
    // patch of bob's with a cover letter that conflicts (its mail carries the patch file), woven first.
    let mbox = s.r.git([
        "format-patch",
        "--cover-letter",
        "--stdout",
        "main..jules/dave/four",
    ]);
    let four = patches.path().join("four.mbox");
    std::fs::write(&four, format!("{mbox}\n")).unwrap();
    let cover_end = mbox[1..].find("\nFrom ").expect("two messages") + 1;
    let cover = patches.path().join("cover.mbox");
    std::fs::write(&cover, format!("{}\n", &mbox[..cover_end])).unwrap();
    let nul = patches.path().join("nul.patch");
    std::fs::write(&nul, b"diff\0\n").unwrap();
    let five = patches.path().join("five.patch");
    let five_text = s.r.git([
        "format-patch",
        "--cover-letter",
        "--stdout",
        "main..jules/bob/five",
    ]);
    // The attachment's size is in the documented example: a fixed date, whatever the day of the month (git
    // writes `Sat, 5 Dec` and `Fri, 27 Nov`, one byte apart).
    let five_text: String = five_text
        .lines()
        .map(|l| {
            if l.starts_with("Date: ") {
                "Date: Mon, 23 Nov 2026 10:00:00 +0000"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&five, format!("{five_text}\n")).unwrap();
    // a.txt is under curator's lease: a conflict there names it.
    s.r.jules_ok([
        "lease",
        "acquire",
        "a.txt",
        "--persona",
        "curator",
        "--reason",
        "tidying",
    ]);
    // bob's branch, carol's and bob's patch conflict (exit 1; carol's adds a file alice's added too; the patch
    // comes with a cover letter); the report is docs/weave.md's.
    s.run_code(
        "weave",
        &[
            "weave",
            "jules/alice/one",
            "jules/bob/two",
            "jules/carol/three",
            five.to_str().unwrap(),
        ],
        1,
        &[],
    );
    // alice's input again: already there.
    s.r.jules_ok(["weave", "jules/alice/one"]);
    let woven = s.r.jules([
        "weave",
        offset.to_str().unwrap(),
        four.to_str().unwrap(),
        cover.to_str().unwrap(),
        nul.to_str().unwrap(),
    ]);
    assert_eq!(woven.status.code(), Some(1), "{}", stderr(&woven));
    // With a check that bob's six breaks: woven, then dropped.
    let scratch = tempfile::tempdir().unwrap();
    let checked = s.r.jules([
        "weave",
        "--verify",
        "test ! -e six.txt",
        "--worktree-dir",
        scratch.path().to_str().unwrap(),
        "jules/dave/four",
        "jules/bob/six",
    ]);
    assert_eq!(checked.status.code(), Some(1), "{}", stderr(&checked));
    // A recorded tick (the fleet's `ticks`).
    s.r.jules_ok(["tick"]);
    // Alice claims bob's reply, so the fleet's alice has an open claim as well as a lease.
    s.r.jules_ok(["mail", "claim", &reply, "--persona", "alice"]);
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
    // One with a hint, one with a cause.
    let hinted = s.run_code("error", &["hooks", "show"], 2, &[]);
    assert!(
        !hinted["error"]["hints"].as_array().unwrap().is_empty(),
        "{hinted}"
    );
    let caused = s.run_code(
        "error",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "s",
            "--from",
            "bob",
            "--body-file",
            "/nonexistent/body",
        ],
        2,
        &[],
    );
    assert!(
        !caused["error"]["causes"].as_array().unwrap().is_empty(),
        "{caused}"
    );

    s.dump();

    let (blocks, mut problems) = crate::json_docs::blocks();
    let mine: Vec<_> = blocks
        .iter()
        .filter(|b| !OWN_SCENARIO.iter().any(|f| b.at.starts_with(f)))
        .collect();
    problems.extend(compare(&mine, &s.outputs));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// docs/series.md's examples, each a run of this scenario: a series of three patches verified with `make
/// check` (the second fails), the verify note, a fold and the failing patch dropped, the format, a review and its note, landing,
/// and an aborted second series.
#[test]
fn the_series_docs_examples_are_real_runs() {
    let r = Repo::new();
    r.write("Makefile", "check:\n\t! grep -rq BROKEN src\n");
    r.write("src/main.rs", "fn main() {}\n");
    r.commit_all("build");
    r.git(["config", "jules.verify.cmd", "make check"]);
    let mut s = Scenario {
        r,
        outputs: Vec::new(),
    };
    s.run("series start", &["series", "start", "feat"]);
    s.r.write("src/parse.rs", "fn parse() {}\n");
    s.run(
        "series commit",
        &[
            "series",
            "commit",
            "--summary",
            "Add the parser",
            "--rationale",
            "line one\nline two",
        ],
    );
    // Patch 1 verified now, so the next run finds it cached.
    s.r.jules_ok(["verify", "--jobs", "1"]);
    s.r.write("src/broken", "BROKEN\n");
    s.r.jules_ok([
        "series",
        "commit",
        "--summary",
        "Break the build",
        "--rationale",
        "r",
    ]);
    s.r.write("src/lex.rs", "fn lex() {}\n");
    s.r.jules_ok([
        "series",
        "commit",
        "--summary",
        "Add the lexer",
        "--rationale",
        "r",
    ]);
    s.run("series status", &["series", "status"]);
    s.run_code("verify", &["verify", "--jobs", "1"], 1, &[]);
    let broken = s.r.git(["rev-parse", "HEAD~1^{tree}"]);
    s.record_git(
        "verify note",
        &["notes", "--ref=jules/verify", "show", broken.trim()],
    );
    s.run("hooks install", &["hooks", "install"]);
    // A fold into patch 1, then the broken patch dropped.
    s.r.write("src/parse.rs", "/// Parses.\nfn parse() {}\n");
    s.run("series reroll", &["series", "reroll", "1"]);
    s.run("series reroll", &["series", "reroll", "2", "--drop"]);
    s.run("series format", &["series", "format"]);
    let buffer = s.r.jules_ok(["series", "review", "--print"]).replace(
        "> +fn parse() {}\n",
        "> +fn parse() {}\nR: parse() needs a test.\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("review.txt");
    std::fs::write(&file, buffer).unwrap();
    s.run(
        "series review",
        &["series", "review", "--from-file", file.to_str().unwrap()],
    );
    let first = s.r.git(["rev-parse", "HEAD~1"]);
    s.record_git(
        "review note",
        &["notes", "--ref=jules/review", "show", first.trim()],
    );
    s.run("series finalize", &["series", "finalize", "--jobs", "1"]);
    s.r.jules_ok(["series", "start", "feat"]);
    s.r.write("src/x.rs", "x\n");
    s.r.jules_ok(["series", "commit", "--summary", "Add x", "--rationale", "r"]);
    s.run("series abort", &["series", "abort", "--yes"]);
    s.dump();

    let (blocks, mut problems) = crate::json_docs::blocks();
    let mine: Vec<_> = blocks
        .iter()
        .filter(|b| b.at.starts_with("docs/series.md:"))
        .collect();
    problems.extend(compare(&mine, &s.outputs));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// One `git jules mcp` server spoken to as a client does on stdio: JSON-RPC messages, one a line.
struct RawMcp {
    _server: crate::harness::Guarded,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawMcp {
    /// Start a server as `persona` in `r` and shake hands.
    fn start(r: &Repo, persona: &str) -> RawMcp {
        use std::io::BufRead;
        let mut cmd = r.jules_cmd(["mcp", "--persona", persona]);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut server = crate::harness::Guarded::spawn(&mut cmd);
        let stdin = server.child.stdin.take().unwrap();
        let stdout = server.child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut mcp = RawMcp {
            _server: server,
            stdin,
            lines,
        };
        mcp.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                       "clientInfo": {"name": "docs", "version": "0"}}}),
        );
        mcp.answer(0);
        mcp.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line that satisfies `want` (the bound only catches a hang).
    fn next(&mut self, want: impl Fn(&Value) -> bool) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(120))
                .expect("the MCP server answered within the hang bound");
            let v: Value = serde_json::from_str(&line).unwrap();
            if want(&v) {
                return line;
            }
        }
    }

    /// The response to request `id`.
    fn answer(&mut self, id: i64) -> String {
        self.next(|v| v["id"] == id && v.get("method").is_none())
    }
}

/// docs/mcp.md's examples: each request block is sent as written to a server running as the persona its mark
/// names, and each answer is the run `mcp response ID`; the inbox notification is `mcp notification`.
#[test]
fn the_mcp_docs_examples_are_real_runs() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"curator\", \"refactor\"]\n",
    );
    r.commit_all("roster");
    let (blocks, mut problems) = crate::json_docs::blocks();
    let mine: Vec<_> = blocks
        .iter()
        .filter(|b| b.at.starts_with("docs/mcp.md:"))
        .collect();
    let mut servers: BTreeMap<String, RawMcp> = BTreeMap::new();
    let mut outputs = Vec::new();
    let mut subscribed = None;
    for block in &mine {
        let crate::json_docs::Kind::McpRequest(persona) = &block.kind else {
            continue;
        };
        let server = servers
            .entry(persona.clone())
            .or_insert_with(|| RawMcp::start(&r, persona));
        server.send(&block.value);
        let id = block.value["id"].as_i64().expect("a request has an id");
        outputs.push((format!("mcp response {id}"), server.answer(id)));
        if block.value["method"] == "resources/subscribe" {
            subscribed = Some(persona.clone());
        }
    }
    // Mail for the subscribed persona, from another process: the server says so.
    let persona = subscribed.expect("docs/mcp.md subscribes to the inbox");
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "curator",
        "--to",
        &persona,
        "--subject",
        "s",
        "--body",
        "b",
    ]);
    let note = servers
        .get_mut(&persona)
        .unwrap()
        .next(|v| v["method"] == "notifications/resources/updated");
    outputs.push(("mcp notification".to_owned(), note));
    if let Some(f) = std::env::var_os("JULES_JSON_DUMP") {
        let text: Vec<String> = outputs.iter().map(|(n, o)| format!("{n}: {o}")).collect();
        std::fs::write(f, text.join("\n")).unwrap();
    }
    problems.extend(compare(&mine, &outputs));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every run against the doc blocks of its name, and every block against the runs: the problems found.
///
/// A block's name is a run's, or a run's and a JSON pointer after `#` (`mail read#/message`: the block shows
/// that part of the run). A run has the shape of some whole-document block of its name (most names have one; a name
/// whose runs differ in which arrays they fill may have more), and is named by some block. A block has the
/// shape of, and shows the values of, at least one run of its name. Every array a block shows with an element
/// was printed with one in some run of that shape.
fn compare(blocks: &[&crate::json_docs::Block], outputs: &[(String, String)]) -> Vec<String> {
    use crate::json_docs::Kind;
    let mut problems = Vec::new();
    // (run name, pointer, block)
    let documented: Vec<(&str, &str, &crate::json_docs::Block)> = blocks
        .iter()
        .filter_map(|b| match &b.kind {
            Kind::Output(name) => Some(match name.split_once('#') {
                Some((run, pointer)) => (run, pointer, *b),
                None => (name.as_str(), "", *b),
            }),
            _ => None,
        })
        .collect();
    let runs: Vec<(&str, Value)> = outputs
        .iter()
        .map(|(n, out)| (n.as_str(), serde_json::from_str(out).unwrap()))
        .collect();
    let mut filled: BTreeMap<String, bool> = BTreeMap::new();
    for (name, got) in &runs {
        if !documented.iter().any(|(n, _, _)| n == name) {
            problems.push(format!("{name}: no example in docs/ (`### {name}` in docs/json.md, or <!-- output: {name} -->)"));
            continue;
        }
        let mine: Vec<_> = documented
            .iter()
            .filter(|(n, ptr, _)| n == name && ptr.is_empty())
            .collect();
        let mut misfits = Vec::new();
        for (_, _, block) in &mine {
            match conforms(name, &block.value, got) {
                Ok(()) => arrays_filled(name, &block.value, got, &mut filled),
                Err(e) => misfits.push(format!("{}: {e}", block.at)),
            }
        }
        if !mine.is_empty() && misfits.len() == mine.len() {
            problems.extend(misfits);
        }
    }
    for (name, pointer, block) in &documented {
        let label = match pointer.is_empty() {
            true => name.to_string(),
            false => format!("{name}#{pointer}"),
        };
        let mine: Vec<&Value> = runs
            .iter()
            .filter(|(n, _)| n == name)
            .filter_map(|(_, v)| v.pointer(pointer))
            .collect();
        let whole: Vec<&Value> = runs
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .collect();
        let mut best: Option<Vec<String>> = None;
        for got in &mine {
            let mut p = Vec::new();
            check_shape(&label, &block.value, got, &mut p);
            let (values, deferred) = crate::json_docs::compare_values(&label, &block.value, got);
            p.extend(values);
            for d in deferred {
                // From the top of the runs, so that a sibling of the block's part may show it.
                let d = crate::json_docs::Deferred {
                    pointer: format!("{pointer}{}", d.pointer),
                    ..d
                };
                if !shown_by_some_run(&d, &whole) {
                    p.push(format!(
                        "{}: no run prints these elements: {}",
                        d.path, d.doc
                    ));
                }
            }
            if best.as_ref().is_none_or(|b| p.len() < b.len()) {
                best = Some(p);
            }
        }
        match best {
            None => problems.push(format!("{}: documented but not run: {label}", block.at)),
            Some(p) if !p.is_empty() => problems.push(format!(
                "{}: no run of {label} prints this example; the closest differs in:\n  {}",
                block.at,
                p.join("\n  ")
            )),
            Some(_) => {}
        }
    }
    // Every array the doc shows with an element was printed with one in some run: an array empty in every
    // run has elements no run checked (their shape could be anything).
    let empty: Vec<&String> = filled
        .iter()
        .filter(|(_, full)| !**full)
        .map(|(path, _)| path)
        .collect();
    if !empty.is_empty() {
        problems.push(format!(
            "documented with elements, printed empty in every run: {empty:?}"
        ));
    }
    problems
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
