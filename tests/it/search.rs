//! `git jules mail search` (issue 30): the query language, per-persona folders and states, ranking, the
//! index as derived data (incremental after a plain `git fetch`, rebuilt when deleted or damaged, with the
//! same answers), bad input, hostile text, and the MCP tool through the official Python client.

use serde_json::Value;

use crate::harness::{stderr, stdout, Repo};

fn send(r: &Repo, from: &str, to: &str, subject: &str, body: &str) -> String {
    r.jules_ok([
        "mail",
        "send",
        "--from",
        from,
        "--to",
        to,
        "--subject",
        subject,
        "--body",
        body,
    ])
    .trim()
    .to_owned()
}

fn search(r: &Repo, args: &[&str]) -> Value {
    let mut all = vec!["--json", "mail", "search"];
    all.extend_from_slice(args);
    let out = r.jules_ok(&all);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["version"], 1, "{out}");
    doc
}

/// The ids of the hits, in order.
fn ids(doc: &Value) -> Vec<String> {
    doc["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

fn found(r: &Repo, args: &[&str]) -> Vec<String> {
    let mut v = ids(&search(r, args));
    v.sort();
    v
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// Four messages with overlapping words.
fn corpus(r: &Repo) -> [String; 4] {
    let a = send(
        r,
        "weaver",
        "curator",
        "Flaky test in module quokka",
        "The quokka test is flaky on CI: it failed twice today.",
    );
    let b = send(
        r,
        "curator",
        "refactor",
        "Parser refactor",
        "I claim the parser refactoring; the test suite stays green.",
    );
    let c = send(
        r,
        "refactor",
        "weaver",
        "Status",
        "Refactored the lexer. Test flaky? No: the flaky one is elsewhere.",
    );
    let d = send(
        r,
        "weaver",
        "refactor",
        "Release notes",
        "Nothing about tests here, only notes for the release.",
    );
    [a, b, c, d]
}

#[test]
fn words_phrases_prefixes_fields_and_booleans() {
    let r = Repo::new();
    let [a, b, c, d] = corpus(&r);
    // Words: all must match, in subject or body, any case.
    assert_eq!(
        found(&r, &["flaky", "TEST"]),
        sorted(vec![a.clone(), c.clone()])
    );
    // A phrase: the words next to each other, in order.
    assert_eq!(found(&r, &["\"quokka test\""]), [a.as_str()]);
    assert_eq!(found(&r, &["\"test quokka\""]), Vec::<String>::new());
    // Prefixes.
    assert_eq!(found(&r, &["refact*"]), sorted(vec![b.clone(), c.clone()]));
    assert_eq!(
        found(&r, &["test*"]),
        sorted(vec![a.clone(), b.clone(), c.clone(), d.clone()])
    );
    // Fields: subject, body, sender, recipients.
    assert_eq!(found(&r, &["s:flaky"]), [a.as_str()]);
    assert_eq!(found(&r, &["b:refactoring"]), [b.as_str()]);
    assert_eq!(found(&r, &["f:weaver", "notes"]), [d.as_str()]);
    assert_eq!(
        found(&r, &["t:refactor"]),
        sorted(vec![b.clone(), d.clone()])
    );
    assert_eq!(found(&r, &["f:weav*"]), sorted(vec![a.clone(), d.clone()]));
    assert_eq!(found(&r, &["s:\"parser refactor\""]), [b.as_str()]);
    // OR, -word, groups.
    assert_eq!(
        found(&r, &["lexer OR release"]),
        sorted(vec![c.clone(), d.clone()])
    );
    assert_eq!(found(&r, &["flaky -quokka"]), [c.as_str()]);
    assert_eq!(found(&r, &["(quokka OR lexer) -f:weaver"]), [c.as_str()]);
    // A query that starts with "-" follows "--".
    assert_eq!(found(&r, &["--", "-test*"]), Vec::<String>::new());
    // The CLI's filters.
    assert_eq!(
        found(&r, &["test*", "--from", "weaver"]),
        sorted(vec![a.clone(), d])
    );
    assert_eq!(
        found(&r, &["test*", "--until", "2000-01-01"]),
        Vec::<String>::new()
    );
    assert_eq!(
        found(&r, &["test*", "--since", "1h", "--limit", "1"]).len(),
        1
    );
    let doc = search(&r, &["test*", "--limit", "1"]);
    assert_eq!(doc["total"], 4);
    // Every hit says who, what, when, where, and marks the matched words.
    let doc = search(&r, &["\"quokka test\""]);
    let h = &doc["hits"][0];
    assert_eq!(h["from"], "weaver");
    assert_eq!(h["to"], serde_json::json!(["curator"]));
    assert_eq!(h["subject"], "Flaky test in module quokka");
    assert_eq!(h["thread"], a.as_str());
    assert!(h["time"].as_str().unwrap().starts_with("20"));
    let text: Vec<char> = h["snippet"]["text"].as_str().unwrap().chars().collect();
    let marks: Vec<String> = h["snippet"]["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let (s, e) = (
                m[0].as_u64().unwrap() as usize,
                m[1].as_u64().unwrap() as usize,
            );
            text[s..e].iter().collect()
        })
        .collect();
    assert_eq!(marks, ["quokka test"]);
    // Text output marks them too (no colour when piped).
    let out = r.jules_ok(["mail", "search", "quokka"]);
    assert!(out.contains("**quokka**"), "{out}");
    assert!(out.contains(&a[..12]), "{out}");
}

#[test]
fn a_persona_searches_its_own_folders_and_states() {
    let r = Repo::new();
    let [a, b, c, d] = corpus(&r);
    // refactor received b and d; c is its own (sent), not in its mailbox.
    assert_eq!(
        found(&r, &["test*", "--persona", "refactor"]),
        sorted(vec![b.clone(), d.clone()])
    );
    r.jules_ok(["mail", "archive", &b, "--persona", "refactor"]);
    r.jules_ok(["mail", "trash", &d, "--persona", "refactor"]);
    assert_eq!(
        found(&r, &["test*", "--persona", "refactor"]),
        Vec::<String>::new()
    );
    let doc = search(&r, &["test*", "--persona", "refactor", "--all-folders"]);
    assert_eq!(sorted(ids(&doc)), sorted(vec![b.clone(), d.clone()]));
    let state_of = |id: &str| {
        doc["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .unwrap()["state"]
            .clone()
    };
    assert_eq!(state_of(&b)["archived"], true);
    assert_eq!(state_of(&d)["trashed"], true);
    assert_eq!(state_of(&b)["unread"], true);
    // Reading and tagging show in the state, and the persona's own tag filters.
    r.jules_ok(["mail", "read", &a, "--persona", "curator"]);
    r.jules_ok(["mail", "tag", "add", &a, "later", "--persona", "curator"]);
    let doc = search(&r, &["quokka", "--persona", "curator", "--tag", "later"]);
    assert_eq!(ids(&doc), [a.as_str()]);
    assert_eq!(doc["hits"][0]["state"]["unread"], false);
    assert_eq!(
        doc["hits"][0]["state"]["tags"],
        serde_json::json!(["later"])
    );
    // Without a persona: everything, no state.
    let doc = search(&r, &["test*"]);
    assert_eq!(doc["total"], 4);
    assert!(doc["hits"][0]["state"].is_null());
    assert!(
        found(&r, &["lexer", "--persona", "refactor"]).is_empty(),
        "{c} is refactor's own"
    );
    // --all-folders needs a persona.
    let out = r.jules(["mail", "search", "x", "--all-folders"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ranking_is_relevance_then_newest() {
    let r = Repo::new();
    let body_once = send(&r, "weaver", "curator", "one", "a word about parsers");
    let subject = send(
        &r,
        "weaver",
        "curator",
        "parsers",
        "something else entirely",
    );
    let body_many = send(
        &r,
        "weaver",
        "curator",
        "two",
        "parsers parsers parsers, and more parsers",
    );
    let older_twin = send(&r, "weaver", "curator", "three", "a word about parsers");
    let newer_twin = send(&r, "weaver", "curator", "three", "a word about parsers");
    let order = ids(&search(&r, &["parsers"]));
    // A subject match and a body full of the word beat a single mention; equal texts: newest first.
    let pos = |id: &String| order.iter().position(|x| x == id).unwrap();
    assert!(pos(&subject) < pos(&body_once), "{order:?}");
    assert!(pos(&body_many) < pos(&body_once), "{order:?}");
    assert!(pos(&newer_twin) < pos(&older_twin), "{order:?}");
    // body_once has the twins' body too: the newest of the three comes first.
    assert!(pos(&older_twin) < pos(&body_once), "{order:?}");
    assert_eq!(order.len(), 5);
    // The same corpus gives the same order every time.
    assert_eq!(ids(&search(&r, &["parsers"])), order);
}

#[test]
fn bad_queries_are_refused_with_the_position() {
    let r = Repo::new();
    send(&r, "weaver", "curator", "s", "b");
    for (query, want) in [
        ("flaky \"test", "at character 7"),
        ("(a b", "at character 5: expected \")\""),
        ("OR a", "at character 1"),
        ("s: x", "at character 3"),
        ("🦀", "no letters or digits"),
    ] {
        let out = r.jules(["mail", "search", query]);
        assert_eq!(out.status.code(), Some(2), "{query}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{query}: {}", stderr(&out));
    }
    let out = r.jules(["mail", "search", "  "]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("empty search query"),
        "{}",
        stderr(&out)
    );
    let out = r.jules(["--json", "mail", "search", "(x"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("character 3"));
    let out = r.jules(["mail", "search", "x", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn hostile_text_is_indexed_and_shown_safely() {
    let r = Repo::new();
    let body = format!(
        "{}\u{1b}[2J\u{1b}]0;pwned\u{7} needle \u{202e}reversed\u{1} 🦀 日本語 Ελληνικά עברית {}",
        "filler ".repeat(15_000),
        "x".repeat(5_000)
    );
    let id = send(&r, "weaver", "curator", "hostile \u{202e}der", &body);
    for q in ["needle", "ελληνικά", "עברית", "日本語", "reversed"] {
        assert_eq!(found(&r, &[q]), [id.as_str()], "{q}");
    }
    let out = r.jules_ok(["mail", "search", "needle"]);
    assert!(
        !out.contains('\u{1b}'),
        "escape sequences never reach the terminal: {out:?}"
    );
    assert!(
        !out.contains('\u{7}') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(out.contains("🦀 日本語"), "{out}");
    assert!(
        out.len() < 2_000,
        "the snippet is bounded: {} bytes",
        out.len()
    );
}

/// A repository with the corpus, pushing to a bare remote, after `git jules init`.
fn origin_with_corpus() -> (Repo, Repo) {
    let a = Repo::new();
    let bare = a.bare_sibling();
    a.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    a.git(["push", "-q", "origin", "main"]);
    a.jules_ok(["init"]);
    corpus(&a);
    (a, bare)
}

/// The index is derived data: deleting or damaging it between two queries changes no answer, and an index
/// of a clone follows a plain `git fetch` incrementally.
#[test]
fn the_index_is_rebuilt_when_deleted_or_damaged_and_follows_git_fetch() {
    let (a, bare) = origin_with_corpus();
    a.git(["push", "-q", "origin", "refs/jules/mail"]);
    let b = a.clone_of(bare.path());
    b.jules_ok(["init"]);
    b.git(["fetch", "-q", "origin"]);

    let queries: [&[&str]; 3] = [&["test*"], &["flaky -quokka"], &["\"parser refactoring\""]];
    let answers = |r: &Repo| -> Vec<Value> {
        queries
            .iter()
            .map(|q| {
                let mut d = search(r, q);
                d.as_object_mut().unwrap().remove("index");
                d
            })
            .collect()
    };
    let first = search(&b, &["test*"]);
    assert_eq!(first["index"]["rebuilt"], true);
    let before = answers(&b);
    assert_eq!(search(&b, &["test*"])["index"]["rebuilt"], false);
    let idx = b.path().join(".git/jules/cache/mail/search");
    // Deleted.
    std::fs::remove_dir_all(&idx).unwrap();
    assert_eq!(answers(&b), before);
    // Damaged: every file of the index with a flipped byte in its middle, one at a time.
    let n = walk(&idx).len();
    assert!(n > 3, "{:?}", walk(&idx));
    for i in 0..n {
        // Listed again each time: a rebuild names its segment files anew.
        let Some(f) = walk(&idx).get(i).cloned() else {
            continue;
        };
        let mut bytes = std::fs::read(&f).unwrap();
        if bytes.is_empty() {
            continue;
        }
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x55;
        std::fs::write(&f, &bytes).unwrap();
        assert_eq!(answers(&b), before, "after damaging {}", f.display());
    }
    // Truncated state: rebuilt.
    std::fs::write(idx.join("state.json"), b"{").unwrap();
    assert_eq!(answers(&b), before);

    // Another clone sends; a plain fetch brings it; the next search adds just that message.
    let new = send(&a, "curator", "weaver", "Fresh", "a flaky quokka again");
    a.git(["push", "-q", "origin", "refs/jules/mail"]);
    b.git(["fetch", "-q", "origin"]);
    let doc = search(&b, &["quokka"]);
    assert_eq!(doc["index"]["rebuilt"], false);
    assert_eq!(doc["index"]["added"], 1);
    assert!(ids(&doc).contains(&new));
    // And a fresh index agrees.
    std::fs::remove_dir_all(&idx).unwrap();
    let again = search(&b, &["quokka"]);
    assert_eq!(again["index"]["rebuilt"], true);
    assert_eq!(ids(&again), ids(&doc));
    // `--full` never touches the cache and answers the same.
    let mut full: Value =
        serde_json::from_str(&b.jules_ok(["--full", "--json", "mail", "search", "quokka"]))
            .unwrap();
    assert_eq!(ids(&full), ids(&doc));
    full.as_object_mut().unwrap().remove("index");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if !p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".tantivy")
        {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The MCP tool `mail_search`, through the official Python SDK, as the server's persona.
#[test]
fn mcp_mail_search_through_the_python_sdk() {
    let r = Repo::new();
    let [a, b, ..] = corpus(&r);
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/search.py");
    // The SDK lives in the virtual environment ./test.sh makes (target/test-venv), not the system's Python.
    let mut cmd = std::process::Command::new(crate::mcp::test_venv_python());
    r.env.apply(&mut cmd);
    let out = cmd
        .arg(script)
        .arg(crate::harness::bin())
        .arg(r.path())
        .arg(&a)
        .arg(&b)
        .current_dir(r.path())
        .output()
        .expect("the test-venv's python3 runs");
    assert!(
        out.status.success(),
        "the Python MCP client failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("search ok"), "{}", stdout(&out));
}

/// A fresh clone that got a checkpoint answers its first search, saying that it builds the index first.
#[test]
fn a_fresh_clone_with_a_checkpoint_says_it_builds_the_index() {
    let (a, bare) = origin_with_corpus();
    a.jules_ok(["log", "checkpoint", "mail"]);
    send(
        &a,
        "weaver",
        "curator",
        "After the checkpoint",
        "quokka again",
    );
    a.git([
        "push",
        "-q",
        "origin",
        "refs/jules/*:refs/jules/*",
        "refs/notes/jules/*:refs/notes/jules/*",
    ]);
    let b = a.clone_of(bare.path());
    b.jules_ok(["init"]);
    b.git(["fetch", "-q", "origin"]);
    let out = b.jules(["mail", "search", "quokka"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("building the search index"),
        "{}",
        stderr(&out)
    );
    let strip = |mut d: Value| {
        d.as_object_mut().unwrap().remove("index");
        d
    };
    assert_eq!(
        strip(search(&b, &["quokka"])),
        strip(search(&a, &["quokka"]))
    );
    let out = b.jules(["mail", "search", "quokka"]);
    assert!(!stderr(&out).contains("building"), "{}", stderr(&out));
}

/// Issue 40, finding 1: `mail search` with ten thousand nested brackets overflowed the stack and aborted
/// (exit 134). Now the nesting is bounded: exit 2 with the position where the bound was crossed.
#[test]
fn deeply_nested_queries_are_refused_not_a_crash() {
    let r = Repo::new();
    send(&r, "weaver", "curator", "s", "b");
    for (depth, want) in [
        (65, "at character 65: brackets nested deeper than 64"),
        (4_000, "at character 65: brackets nested deeper than 64"),
        // The reproduction of the issue: over the size bound, refused before it is parsed.
        (
            10_000,
            "the search query is 20001 bytes long: at most 8192 are searched",
        ),
    ] {
        let q = format!("{}x{}", "(".repeat(depth), ")".repeat(depth));
        let out = r.jules(["mail", "search", &q]);
        assert_eq!(out.status.code(), Some(2), "{depth}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{depth}: {}", stderr(&out));
    }
    let q = format!("{}x{}", "(".repeat(64), ")".repeat(64));
    assert_eq!(search(&r, &[&q])["total"], 0);
}

/// Issue 40, finding 6: a 100,000-character word was echoed whole in the error. Errors quote at most 80
/// characters of the input, whatever the error.
#[test]
fn errors_quote_at_most_eighty_characters_of_the_query() {
    let r = Repo::new();
    send(&r, "weaver", "curator", "s", "b");
    for q in [
        "w".repeat(100_000),
        "é".repeat(4_000),
        "🦀".repeat(2_000),
        format!("s:\"{}", "p".repeat(3_000)),
    ] {
        let out = r.jules(["mail", "search", &q]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.chars().count() < 400, "{} chars: {err}", err.len());
    }
    let out = r.jules(["mail", "search", &"🦀".repeat(2_000)]);
    let err = stderr(&out);
    assert!(err.contains(&format!("\"{}…\"", "🦀".repeat(80))), "{err}");
}

/// Issue 40, finding 6: docs/mail.md says words over 64 bytes are not indexed, but a 64-letter word was
/// refused too (tantivy's `RemoveLongFilter::limit(n)` keeps tokens shorter than n). 64 bytes are in, 65
/// out, on the index side (a prefix query would find an indexed word) and the query side (refused, with
/// the reason), in ASCII and in two-byte letters.
#[test]
fn words_of_64_bytes_are_indexed_and_of_65_are_not() {
    let r = Repo::new();
    let in64 = "p".repeat(64);
    let out65 = "q".repeat(65);
    let e64 = "é".repeat(32);
    let e66 = "ü".repeat(33);
    let a = send(
        &r,
        "weaver",
        "curator",
        "long words",
        &format!("{in64} {e64}"),
    );
    let _b = send(
        &r,
        "weaver",
        "curator",
        "longer words",
        &format!("{out65} {e66}"),
    );
    assert_eq!(found(&r, &[&in64]), [a.as_str()]);
    assert_eq!(found(&r, &[&e64]), [a.as_str()]);
    assert_eq!(found(&r, &["pppppppp*"]), [a.as_str()]);
    assert_eq!(found(&r, &["éééé*"]), [a.as_str()]);
    assert!(
        found(&r, &["qqqqqqqq*"]).is_empty(),
        "65 bytes are not indexed"
    );
    assert!(found(&r, &["üüüü*"]).is_empty(), "66 bytes are not indexed");
    for q in [&out65, &e66] {
        let out = r.jules(["mail", "search", q]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("words over 64 bytes are not indexed"),
            "{}",
            stderr(&out)
        );
    }
    // A phrase around a word too long to index still finds the words on either side of it.
    let c = send(&r, "weaver", "curator", "x", &format!("left {out65} right"));
    assert_eq!(
        found(&r, &[&format!("\"left {out65} right\"")]),
        [c.as_str()]
    );
}

/// Issue 40, finding 6: under `jules.requireSigned` the total counted forged mail the hits left out
/// (`"total": 3, "hits": []`). The total is the number of hits a listing can page through, under every
/// filter and trust setting, with and without a persona.
#[test]
fn totals_agree_with_hits_under_every_filter_and_trust_setting() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("alice");
    let line = r.jules_ok(["keys", "new", "alice", "--out", key.to_str().unwrap()]);
    r.write(".jules/allowed_signers", &line);
    r.commit_all("trust alice");
    let send_as = |from: &str, key: Option<&std::path::Path>, subject: &str, tag: &str| {
        let mut cmd = r.jules_cmd([
            "mail",
            "send",
            "--from",
            from,
            "--to",
            "bob",
            "--subject",
            subject,
            "--body",
            "zebra crossing",
            "--tag",
            tag,
        ]);
        if let Some(k) = key {
            cmd.env("JULES_SIGNING_KEY", k);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    send_as("alice", Some(&key), "zebra signed", "t1");
    send_as("alice", Some(&key), "zebra signed again", "t2");
    send_as("mallory", None, "zebra forged", "t1");
    send_as("mallory", None, "zebra forged again", "t2");
    let filters: [&[&str]; 6] = [
        &[],
        &["--persona", "bob"],
        &["--from", "alice"],
        &["--tag", "t1"],
        &["--persona", "bob", "--tag", "t1"],
        &["--since", "1d"],
    ];
    for (require, verified) in [("false", 4), ("true", 2)] {
        r.git(["config", "jules.requireSigned", require]);
        for f in filters {
            let mut args = vec!["zebra", "--limit", "1000"];
            args.extend_from_slice(f);
            let all = search(&r, &args);
            let hits = all["hits"].as_array().unwrap().len() as u64;
            assert_eq!(all["total"], hits, "requireSigned={require} {f:?}: {all}");
            if f.is_empty() {
                assert_eq!(hits, verified, "requireSigned={require}");
            }
            // A page of one says how many there are to page through.
            args[2] = "1";
            let one = search(&r, &args);
            assert_eq!(one["total"], hits, "requireSigned={require} {f:?}: {one}");
            let mut human = vec!["mail", "search"];
            human.extend_from_slice(&args);
            let out = r.jules(&human);
            let want = if hits > 1 {
                format!("1 of {hits} matches")
            } else {
                format!("{hits} match")
            };
            assert!(stderr(&out).contains(&want), "{f:?}: {}", stderr(&out));
        }
    }
}

/// Issue 40, finding 1: through MCP, a deeply nested query overflowed the stack of the tool's thread and
/// took `git jules mcp` down. It is an error result of that call alone; the next call is answered.
#[tokio::test(flavor = "current_thread")]
async fn mcp_mail_search_refuses_a_deep_query_and_serves_the_next() {
    let r = Repo::new();
    corpus(&r);
    let (client, _) = crate::mcp::connect(&r, "curator").await;
    let q = format!("{}x{}", "(".repeat(4_000), ")".repeat(4_000));
    let bad = crate::mcp::call(&client, "mail_search", serde_json::json!({ "query": q })).await;
    let text = crate::mcp::error_text(&bad);
    assert!(text.contains("brackets nested deeper than 64"), "{text}");
    assert!(text.len() < 1_000, "{text}");
    let good = crate::mcp::call(
        &client,
        "mail_search",
        serde_json::json!({ "query": "quokka" }),
    )
    .await;
    assert_eq!(crate::mcp::ok(&good)["hits"].as_array().unwrap().len(), 1);
    // The deepest query allowed runs the whole way on the tool's thread.
    let deepest = format!("{}quokka{}", "(".repeat(64), ")".repeat(64));
    let good = crate::mcp::call(
        &client,
        "mail_search",
        serde_json::json!({ "query": deepest }),
    )
    .await;
    assert_eq!(crate::mcp::ok(&good)["hits"].as_array().unwrap().len(), 1);
    client.cancel().await.unwrap();
}

/// Found by the `config_value` fuzz target (issue 40): `--since 1000000000000000s` is a duration that
/// read, but now minus it is before the first representable time, and chrono's subtraction panicked
/// (exit 101). It is refused (exit 2), as `--until` and a mailbox's `--since` are: durations are bounded.
#[test]
fn a_duration_beyond_the_calendar_is_refused_not_a_panic() {
    let r = Repo::new();
    send(&r, "weaver", "curator", "s", "b");
    for args in [
        ["mail", "search", "b", "--since", "1000000000000000s"],
        ["mail", "search", "b", "--until", "15250284452w"],
    ] {
        let out = r.jules(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        // Every duration is bounded (settings::MAX_DURATION), so these are refused before any arithmetic.
        assert!(
            stderr(&out).contains("it is too long: at most"),
            "{}",
            stderr(&out)
        );
    }
}
