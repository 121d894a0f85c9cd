//! `git jules weave`: the seed's appendix A, patch formats, offsets, renames, binaries, verify, check-only,
//! idempotence and smart ordering, all through the real binary.

use std::path::Path;

use serde_json::Value;

use crate::harness::{stderr, stdout, Repo};

/// `n` numbered lines `"{prefix} {i}"`.
fn lines(prefix: &str, n: usize) -> String {
    (1..=n).map(|i| format!("{prefix} {i}\n")).collect()
}

/// `text` with line `n` (1-based) replaced.
fn set_line(text: &str, n: usize, new: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == n {
                format!("{new}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// A repository with `src/x.rs` (60 lines) and `README` (20 lines) on main.
pub fn project() -> Repo {
    let r = Repo::new();
    r.write("src/x.rs", &lines("line", 60));
    r.write("README", &lines("doc", 20));
    r.commit_all("project");
    r
}

/// Create `branch` from `from` with `edits` (path, full content) committed as `persona`.
fn branch(r: &Repo, name: &str, from: &str, persona: &str, edits: &[(&str, String)], msg: &str) {
    r.git(["switch", "-q", "-c", name, from]);
    for (p, c) in edits {
        r.write(p, c);
    }
    r.git(["add", "-A"]);
    r.git([
        "-c",
        &format!("user.name={persona}"),
        "-c",
        &format!("user.email={persona}@jules.invalid"),
        "commit",
        "-qm",
        msg,
    ]);
    r.git(["switch", "-q", "main"]);
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(out), stderr(out)))
}

fn weave(r: &Repo, args: &[&str]) -> (Value, i32) {
    let mut all = vec!["--json", "weave"];
    all.extend_from_slice(args);
    let out = r.jules(&all);
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "weave {args:?} exited {code}: {}",
        stderr(&out)
    );
    (json(&out), code)
}

fn labels(report: &Value, list: &str) -> Vec<String> {
    report[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["input"].as_str().unwrap().to_owned())
        .collect()
}

fn inbox(r: &Repo, persona: &str) -> Vec<Value> {
    let out = r.jules_ok(["--json", "mail", "inbox", "--persona", persona]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v["messages"].as_array().unwrap().clone()
}

fn show(r: &Repo, id: &str) -> String {
    r.jules_ok(["mail", "show", id])
}

fn file_at(r: &Repo, rev: &str, path: &str) -> String {
    r.git(["show", &format!("{rev}:{path}")])
}

/// The seed's three personas: curator and refactor change the same lines, visionary the README.
pub fn appendix_a(r: &Repo) {
    let x = lines("line", 60);
    let curated = set_line(&set_line(&x, 41, "line 41 curated"), 45, "line 45 curated");
    branch(
        r,
        "jules/curator/tidy",
        "main",
        "curator",
        &[("src/x.rs", curated)],
        "tidy: curate x",
    );
    let refactored = set_line(
        &set_line(&x, 42, "line 42 refactored"),
        43,
        "line 43 refactored",
    );
    branch(
        r,
        "jules/refactor/rename",
        "main",
        "refactor",
        &[("src/x.rs", refactored)],
        "refactor: rename in x",
    );
    let docs = set_line(&lines("doc", 20), 3, "doc 3 vision");
    branch(
        r,
        "jules/visionary/docs",
        "main",
        "visionary",
        &[("README", docs)],
        "docs: vision",
    );
}

pub const THREE: [&str; 3] = [
    "jules/curator/tidy",
    "jules/refactor/rename",
    "jules/visionary/docs",
];

#[test]
fn appendix_a_conflict_is_mailed_with_its_counterpart_and_applies_after_a_rebase() {
    let r = project();
    appendix_a(&r);
    let (rep, code) = weave(&r, &THREE);
    assert_eq!(code, 1);
    assert_eq!(rep["into"], "jules/integration/weave");
    assert_eq!(
        labels(&rep, "applied"),
        ["jules/curator/tidy", "jules/visionary/docs"]
    );
    assert_eq!(labels(&rep, "conflicted"), ["jules/refactor/rename"]);
    let c = &rep["conflicted"][0];
    assert_eq!(c["persona"], "refactor");
    assert_eq!(c["persona_from"], "branch");
    let f = &c["conflicts"][0];
    assert_eq!(f["path"], "src/x.rs");
    let hunk = &f["hunks"][0];
    let cp = &hunk["counterparts"][0];
    assert_eq!(cp["input"], "jules/curator/tidy");
    assert_eq!(cp["persona"], "curator");
    assert_eq!(cp["lines"], serde_json::json!([41, 45]));
    // The documented shape, exactly: the key sets come from the JSON examples of docs/weave.md's "Report"
    // section, read here, not from a copy of them.
    let keys = |v: &Value| {
        let mut k: Vec<String> = v
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {v}"))
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    let [doc_report, doc_input] = documented_report_shapes();
    assert_eq!(keys(&rep), keys(&doc_report));
    assert_eq!(keys(&rep["base"]), keys(&doc_report["base"]));
    assert_eq!(keys(c), keys(&doc_input));
    assert_eq!(keys(&c["mail"]), keys(&doc_input["mail"]));
    let (conflict, doc_conflict) = (&c["conflicts"][0], &doc_input["conflicts"][0]);
    // `"key?"` in the doc: left out when empty; it counts only when printed.
    let doc_keys = |doc: &Value, got: &Value| -> Vec<String> {
        keys(doc)
            .into_iter()
            .filter_map(|k| match k.strip_suffix('?') {
                Some(opt) => got.get(opt).map(|_| opt.to_owned()),
                None => Some(k),
            })
            .collect()
    };
    assert_eq!(keys(conflict), doc_keys(doc_conflict, conflict));
    assert_eq!(keys(&conflict["hunks"][0]), keys(&doc_conflict["hunks"][0]));
    assert_eq!(
        keys(&conflict["hunks"][0]["counterparts"][0]),
        keys(&doc_conflict["hunks"][0]["counterparts"][0])
    );
    // The failing hunk's lines (42-43 with 3 lines of context) in the integration tip.
    assert_eq!(hunk["lines"], serde_json::json!([39, 46]));

    // The branch: base + curator + visionary, with trailers; author kept.
    let tip = rep["tip"].as_str().unwrap();
    assert_eq!(r.rev("jules/integration/weave").unwrap(), tip);
    assert!(file_at(&r, tip, "src/x.rs").contains("line 41 curated"));
    assert!(file_at(&r, tip, "README").contains("doc 3 vision"));
    let log = r.git([
        "log",
        "--format=%an|%(trailers:key=Woven-from,valueonly)",
        "main..jules/integration/weave",
    ]);
    assert_eq!(
        log,
        "visionary|jules/visionary/docs\n\ncurator|jules/curator/tidy"
    );

    // The mail: to refactor, type conflict, naming the lines, the counterpart and the fix.
    let mails = inbox(&r, "refactor");
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["type"], "conflict");
    assert_eq!(
        mails[0]["subject"],
        "Conflict weaving jules/refactor/rename"
    );
    let body = show(&r, mails[0]["id"].as_str().unwrap());
    assert!(
        body.contains(
            "conflicts with curator's change to src/x.rs:41-45, woven from jules/curator/tidy"
        ),
        "{body}"
    );
    assert!(
        body.contains("git rebase jules/integration/weave jules/refactor/rename"),
        "{body}"
    );
    assert!(inbox(&r, "curator").is_empty());

    // Tick 3: refactor rebases onto the integration branch and resolves; tick 4: weave again.
    r.git(["switch", "-q", "jules/refactor/rename"]);
    r.git(["reset", "-q", "--hard", "jules/integration/weave"]);
    let now = file_at(&r, "HEAD", "src/x.rs");
    r.write(
        "src/x.rs",
        &set_line(
            &set_line(&now, 42, "line 42 refactored"),
            43,
            "line 43 refactored",
        ),
    );
    r.commit_all("refactor: rename in x (rebased)");
    r.git(["switch", "-q", "main"]);
    let (rep2, code) = weave(&r, &THREE);
    assert_eq!(code, 0, "{rep2:#}");
    assert_eq!(labels(&rep2, "applied"), ["jules/refactor/rename"]);
    assert_eq!(
        labels(&rep2, "already"),
        ["jules/curator/tidy", "jules/visionary/docs"]
    );
    assert_eq!(rep2["previous"], tip);
    assert!(rep2["backup"].is_null(), "a fast-forward keeps no backup");
    let fin = file_at(&r, "jules/integration/weave", "src/x.rs");
    assert!(fin.contains("line 41 curated") && fin.contains("line 43 refactored"));
    assert_eq!(inbox(&r, "refactor").len(), 1, "no new mail");
}

#[test]
fn rerun_is_idempotent_and_does_not_mail_twice() {
    let r = project();
    appendix_a(&r);
    let (first, _) = weave(&r, &THREE);
    let reflog = r.git(["reflog", "show", "jules/integration/weave"]);
    let (second, code) = weave(&r, &THREE);
    assert_eq!(code, 1);
    assert_eq!(second["tree"], first["tree"]);
    assert_eq!(second["tip"], first["tip"]);
    assert_eq!(
        labels(&second, "already"),
        ["jules/curator/tidy", "jules/visionary/docs"]
    );
    assert_eq!(second["conflicted"][0]["mail"]["status"], "already-sent");
    assert_eq!(
        second["conflicted"][0]["mail"]["thread"],
        first["conflicted"][0]["mail"]["thread"]
    );
    assert_eq!(inbox(&r, "refactor").len(), 1);
    assert_eq!(r.git(["reflog", "show", "jules/integration/weave"]), reflog);

    // Starting over from the base rebuilds the same tree, and keeps the old tip as a backup. The commit time
    // is pinned to another date than the first run's, so the new tip always differs from the old one and the
    // backup is checked at every run.
    let out = r.jules_at(
        "2030-01-01T00:00:00Z",
        ["--json", "weave", "--fresh", THREE[0], THREE[1], THREE[2]],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let fresh = json(&out);
    assert_eq!(fresh["tree"], first["tree"]);
    assert_ne!(fresh["tip"], first["tip"]);
    let backup = fresh["backup"].as_str().unwrap();
    assert_eq!(backup, "refs/jules/backup/weave/jules/integration/weave/1");
    assert_eq!(r.rev(backup).unwrap(), first["tip"].as_str().unwrap());
    assert_eq!(inbox(&r, "refactor").len(), 1);
}

#[test]
fn check_writes_nothing() {
    let r = project();
    appendix_a(&r);
    let snapshot = |r: &Repo| {
        let objects: Vec<String> = walk(&r.path().join(".git/objects"));
        (r.git(["for-each-ref"]), objects)
    };
    let before = snapshot(&r);
    let out = r.jules(["--json", "weave", "--check", THREE[0], THREE[1], THREE[2]]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rep = json(&out);
    assert_eq!(rep["check"], true);
    assert_eq!(labels(&rep, "conflicted"), ["jules/refactor/rename"]);
    assert_eq!(rep["conflicted"][0]["mail"]["status"], "not-sent");
    assert_eq!(rep["conflicted"][0]["prediction"]["applies"], false);
    assert_eq!(rep["applied"][0]["prediction"]["applies"], true);
    assert_eq!(snapshot(&r), before, "refs or objects changed");
    assert!(r.rev("refs/jules/mail").is_none());
    // Human output says what would happen.
    let out = r.jules(["weave", "--check", THREE[0], THREE[1], THREE[2]]);
    assert!(stderr(&out).contains("check only"), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("would mail refactor (conflict)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(snapshot(&r), before);
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out.sort();
    out
}

/// A second repository with the same first commits, to make patches whose blobs are unknown here.
fn patches_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn patch_files_in_all_three_formats() {
    let r = project();
    // Patches made on a throwaway branch, then the branch is deleted: the commits stay unreferenced but
    // the point is the files.
    r.git(["switch", "-q", "-c", "tmp"]);
    r.write("README", &set_line(&lines("doc", 20), 2, "doc 2 one"));
    r.git(["add", "-A"]);
    r.git([
        "-c",
        "user.name=Curator Bot",
        "-c",
        "user.email=curator@jules.invalid",
        "commit",
        "-qm",
        "one: first patch\n\nPersona: curator",
    ]);
    r.write(
        "README",
        &set_line(
            &set_line(&lines("doc", 20), 2, "doc 2 one"),
            10,
            "doc 10 two",
        ),
    );
    r.git(["add", "-A"]);
    r.git([
        "-c",
        "user.name=Visionary",
        "-c",
        "user.email=visionary@jules.invalid",
        "commit",
        "-qm",
        "two: second patch",
    ]);
    r.write(
        "src/x.rs",
        &set_line(&lines("line", 60), 30, "line 30 three"),
    );
    r.git(["add", "-A"]);
    r.git([
        "-c",
        "user.name=Refactor",
        "-c",
        "user.email=refactor@jules.invalid",
        "commit",
        "-qm",
        "three: third patch",
    ]);
    let expected_tree = r.git(["rev-parse", "tmp^{tree}"]);
    let dir = patches_dir();
    let d = dir.path();
    // 1. format-patch of the first commit; 2. an mbox holding the second; 3. a plain diff of the third.
    r.git([
        "format-patch",
        "-q",
        "-o",
        &d.join("fp").display().to_string(),
        "main~0..tmp~2",
    ]);
    let mbox = r.git(["format-patch", "--stdout", "tmp~2..tmp~1"]);
    std::fs::write(d.join("series.mbox"), format!("{mbox}\n")).unwrap();
    let plain = r.git(["diff", "tmp~1", "tmp"]);
    std::fs::write(d.join("third.diff"), format!("{plain}\n")).unwrap();
    std::fs::write(
        d.join("map"),
        "# who wrote the plain diff\n*third.diff = refactor\n",
    )
    .unwrap();
    r.git(["switch", "-q", "main"]);
    r.git(["branch", "-D", "tmp"]);

    let fp = std::fs::read_dir(d.join("fp"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let (rep, code) = weave(
        &r,
        &[
            fp.to_str().unwrap(),
            d.join("series.mbox").to_str().unwrap(),
            d.join("third.diff").to_str().unwrap(),
            "--persona-map",
            d.join("map").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(rep["applied"].as_array().unwrap().len(), 3);
    assert_eq!(rep["tree"], expected_tree.as_str());
    let personas: Vec<(&str, &str)> = rep["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["persona"].as_str().unwrap(),
                i["persona_from"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        personas,
        [
            ("curator", "trailer"),
            ("visionary", "author"),
            ("refactor", "map")
        ]
    );
    let log = r.git([
        "log",
        "--format=%an <%ae>|%s",
        "main..jules/integration/weave",
    ]);
    assert_eq!(
        log,
        "refactor <refactor@jules.invalid>|weave: apply ".to_owned()
            + d.join("third.diff").to_str().unwrap()
            + "\nVisionary <visionary@jules.invalid>|two: second patch\nCurator Bot <curator@jules.invalid>|one: first patch"
    );
}

#[test]
fn a_patch_whose_context_moved_applies_at_an_offset() {
    let r = project();
    // The patch is made against main; main then gains five lines at the top.
    r.git(["switch", "-q", "-c", "tmp"]);
    r.write(
        "src/x.rs",
        &set_line(&lines("line", 60), 30, "line 30 patched"),
    );
    r.commit_all("patch line 30");
    let dir = patches_dir();
    let plain = r.git(["diff", "main", "tmp"]);
    let file = dir.path().join("offset.diff");
    std::fs::write(&file, format!("{plain}\n")).unwrap();
    r.git(["switch", "-q", "main"]);
    r.write(
        "src/x.rs",
        &format!("{}{}", lines("top", 5), lines("line", 60)),
    );
    r.commit_all("main moves on");
    let (rep, code) = weave(&r, &[file.to_str().unwrap()]);
    assert_eq!(code, 0, "{rep:#}");
    let notes = rep["applied"][0]["notes"].to_string();
    assert!(notes.contains("offset +5 (line 32)"), "{notes}");
    let x = file_at(&r, "jules/integration/weave", "src/x.rs");
    assert_eq!(x.lines().nth(34), Some("line 30 patched"));
}

#[test]
fn a_rename_patch_and_a_binary_patch_apply() {
    let r = project();
    std::fs::write(r.path().join("logo.bin"), [0u8, 1, 2, 3, 255, 254, 0, 7]).unwrap();
    r.commit_all("add a binary");
    r.git(["switch", "-q", "-c", "tmp"]);
    r.git(["mv", "src/x.rs", "src/y.rs"]);
    r.write(
        "src/y.rs",
        &set_line(&lines("line", 60), 60, "line 60 renamed"),
    );
    r.commit_all("rename x to y");
    let mut bin: Vec<u8> = (0..2000u32).map(|i| (i % 251) as u8).collect();
    bin[0] = 0;
    std::fs::write(r.path().join("logo.bin"), &bin).unwrap();
    r.commit_all("new logo");
    // A small edit of a large binary: git writes it as a delta.
    bin[1000..1010].copy_from_slice(b"0123456789");
    std::fs::write(r.path().join("logo.bin"), &bin).unwrap();
    r.commit_all("touch up the logo");
    let expected = r.git(["rev-parse", "tmp^{tree}"]);
    let dir = patches_dir();
    let out = dir.path().display().to_string();
    r.git([
        "format-patch",
        "-q",
        "-M",
        "--binary",
        "-o",
        &out,
        "main..tmp",
    ]);
    r.git(["switch", "-q", "main"]);
    r.git(["branch", "-D", "tmp"]);
    // A directory stands for its patches, in name order.
    let (rep, code) = weave(&r, &[&out]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(rep["tree"], expected.as_str());
    assert_eq!(rep["applied"][0]["commits"].as_array().unwrap().len(), 3);
    let show = r.git([
        "show",
        "--stat",
        "-M",
        "--format=",
        "jules/integration/weave~2",
    ]);
    assert!(show.contains("src/{x.rs => y.rs}"), "{show}");
}

#[test]
fn a_binary_patch_without_data_is_a_clear_error() {
    // Made in another repository, so the new blob is unknown here.
    let other = project();
    std::fs::write(other.path().join("logo.bin"), [0u8, 1, 2]).unwrap();
    other.commit_all("binary");
    std::fs::write(other.path().join("logo.bin"), [0u8, 9, 9, 9]).unwrap();
    other.commit_all("binary changed");
    let patch = other.git(["format-patch", "--no-binary", "--stdout", "-1"]);
    let dir = patches_dir();
    let file = dir.path().join("bin.patch");
    std::fs::write(&file, format!("{patch}\n")).unwrap();

    let r = project();
    std::fs::write(r.path().join("logo.bin"), [0u8, 1, 2]).unwrap();
    r.commit_all("binary");
    let (rep, code) = weave(&r, &[file.to_str().unwrap()]);
    assert_eq!(code, 1);
    let failed = &rep["failed"][0];
    assert_eq!(failed["status"], "error");
    let err = failed["error"].as_str().unwrap();
    assert!(
        err.contains("binary patch without data") && err.contains("--binary"),
        "{err}"
    );
    // Its author (Test User <test@example.com>: the email's local part) is told.
    assert_eq!(failed["mail"]["type"], "alert");
    assert_eq!(inbox(&r, "test").len(), 1);
}

#[test]
fn a_patch_that_does_not_apply_is_skipped_and_its_author_mailed() {
    let r = project();
    r.git(["switch", "-q", "-c", "tmp"]);
    r.write(
        "src/x.rs",
        &set_line(&lines("line", 60), 20, "line 20 theirs"),
    );
    r.git(["add", "-A"]);
    r.git([
        "-c",
        "user.name=Refactor",
        "-c",
        "user.email=refactor@jules.invalid",
        "commit",
        "-qm",
        "change line 20",
    ]);
    let dir = patches_dir();
    let out = dir.path().display().to_string();
    r.git(["format-patch", "-q", "-o", &out, "main..tmp"]);
    r.git(["switch", "-q", "main"]);
    // The branch's commit is still in the object store, so drop it: then no 3-way is possible... it is,
    // since the preimage blob is main's. Make main disagree instead.
    r.git(["branch", "-D", "tmp"]);
    r.write(
        "src/x.rs",
        &set_line(&lines("line", 60), 20, "line 20 ours"),
    );
    r.commit_all("main changes line 20");
    let (rep, code) = weave(&r, &[&out]);
    assert_eq!(code, 1);
    let c = &rep["conflicted"][0];
    assert_eq!(c["persona"], "refactor");
    assert_eq!(c["persona_from"], "author");
    assert_eq!(c["conflicts"][0]["path"], "src/x.rs");
    assert!(c["conflicts"][0]["hunks"][0]["header"]
        .as_str()
        .unwrap()
        .starts_with("@@ -17,7"));
    // Nothing was woven: the branch sits at the base, ready to rebase onto.
    assert_eq!(rep["tip"], r.rev("main").unwrap().as_str());
    assert_eq!(r.rev("jules/integration/weave"), r.rev("main"));
    let mails = inbox(&r, "refactor");
    assert_eq!(mails.len(), 1);
    let body = show(&r, mails[0]["id"].as_str().unwrap());
    assert!(body.contains("git am -3"), "{body}");
    assert!(
        body.contains("No input woven earlier touched these lines"),
        "{body}"
    );
}

/// The "build": fails when a tracked file has a line `BROKEN`.
const BUILD: &str = "if grep -rlx --exclude-dir=.git BROKEN .; then echo 'build failed: BROKEN marker' >&2; exit 1; fi";

#[test]
fn verify_drops_exactly_the_input_that_breaks_the_build() {
    let r = project();
    let readme = lines("doc", 20);
    branch(
        &r,
        "jules/a/one",
        "main",
        "alpha",
        &[("one.txt", "one\n".into())],
        "one",
    );
    branch(
        &r,
        "jules/b/two",
        "main",
        "beta",
        &[("two.txt", "BROKEN\n".into())],
        "two",
    );
    branch(
        &r,
        "jules/c/three",
        "main",
        "gamma",
        &[("README", set_line(&readme, 5, "doc 5 three"))],
        "three",
    );
    branch(
        &r,
        "jules/d/four",
        "main",
        "delta",
        &[("four.txt", "four\n".into())],
        "four",
    );
    let scratch = tempfile::tempdir().unwrap();
    let (rep, code) = weave(
        &r,
        &[
            "--verify",
            BUILD,
            "--worktree-dir",
            scratch.path().to_str().unwrap(),
            "jules/a/one",
            "jules/b/two",
            "jules/c/three",
            "jules/d/four",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(labels(&rep, "dropped"), ["jules/b/two"]);
    assert_eq!(
        labels(&rep, "applied"),
        ["jules/a/one", "jules/c/three", "jules/d/four"]
    );
    assert_eq!(rep["verify"]["passed"], true);
    let d = &rep["dropped"][0];
    assert_eq!(d["verify"]["exit_code"], 1);
    assert!(d["verify"]["tail"]
        .as_str()
        .unwrap()
        .contains("BROKEN marker"));
    let tip = r.rev("jules/integration/weave").unwrap();
    assert!(r.git(["ls-tree", "--name-only", &tip]).contains("four.txt"));
    assert!(!r.git(["ls-tree", "--name-only", &tip]).contains("two.txt"));
    let mails = inbox(&r, "b");
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["type"], "alert");
    assert!(show(&r, mails[0]["id"].as_str().unwrap()).contains("build failed: BROKEN marker"));
    // No worktree is left behind.
    assert_eq!(r.git(["worktree", "list"]).lines().count(), 1);
}

#[test]
fn smart_order_lets_more_inputs_apply_and_check_shows_the_prediction() {
    let r = project();
    let x = lines("line", 60);
    // wide touches lines 10-30; narrow1 touches 12, narrow2 touches 28: given order applies only wide.
    let mut wide = x.clone();
    for n in [10, 20, 30] {
        wide = set_line(&wide, n, &format!("line {n} wide"));
    }
    for n in 11..30 {
        wide = set_line(&wide, n, &format!("line {n} wide"));
    }
    branch(
        &r,
        "jules/wide/all",
        "main",
        "wide",
        &[("src/x.rs", wide)],
        "wide",
    );
    branch(
        &r,
        "jules/n1/a",
        "main",
        "n1",
        &[("src/x.rs", set_line(&x, 12, "line 12 n1"))],
        "n1",
    );
    branch(
        &r,
        "jules/n2/b",
        "main",
        "n2",
        &[("src/x.rs", set_line(&x, 28, "line 28 n2"))],
        "n2",
    );
    let inputs = ["jules/wide/all", "jules/n1/a", "jules/n2/b"];
    let mut given = vec!["--check"];
    given.extend(inputs);
    let (rep, _) = weave(&r, &given);
    assert_eq!(labels(&rep, "applied"), ["jules/wide/all"]);
    let mut smart = vec!["--check", "--order", "smart"];
    smart.extend(inputs);
    let (rep, _) = weave(&r, &smart);
    assert_eq!(rep["order"], "smart");
    assert_eq!(labels(&rep, "applied"), ["jules/n1/a", "jules/n2/b"]);
    let wide = &rep["conflicted"][0];
    assert_eq!(wide["tried"], 3);
    assert_eq!(wide["prediction"]["applies"], false);
    assert_eq!(wide["prediction"]["overlaps"].as_array().unwrap().len(), 2);
    let mut cmd = vec!["weave"];
    cmd.extend(smart);
    let human = stdout(&r.jules(&cmd));
    assert!(
        human.contains("predicted to conflict with jules/n1/a (src/x.rs:"),
        "{human}"
    );
}

#[test]
fn branches_glob_ranges_and_sprint_default() {
    let r = project();
    appendix_a(&r);
    r.jules_ok(["sprint", "start"]);
    let (rep, _) = weave(&r, &["--branches", "jules/*"]);
    assert_eq!(rep["into"], "jules/integration/sprint-1");
    // Name order: curator, refactor, visionary.
    assert_eq!(
        labels(&rep, "applied"),
        ["jules/curator/tidy", "jules/visionary/docs"]
    );
    // A range of the refactor branch onto another integration branch.
    let (rep, code) = weave(
        &r,
        &[
            "--into",
            "jules/integration/ranges",
            "main..jules/refactor/rename",
        ],
    );
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(rep["applied"][0]["kind"], "range");
    // A range is not a branch (docs/weave.md, "Persona resolution" rule 2): its persona comes from the
    // author of its commits, refactor@jules.invalid.
    assert_eq!(
        (
            &rep["applied"][0]["persona"],
            &rep["applied"][0]["persona_from"]
        ),
        (&Value::from("refactor"), &Value::from("author"))
    );
    // Usage errors exit 2.
    let out = r.jules(["weave", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no such branch, commit or patch file: no-such-branch"));
    let out = r.jules(["weave"]);
    assert_eq!(out.status.code(), Some(2));
    let out = r.jules(["weave", "--into", "main", "jules/curator/tidy"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it is checked out here"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn three_way_when_the_preimage_is_known_exact_context_otherwise() {
    let r = project();
    r.git(["switch", "-q", "-c", "tmp"]);
    r.write(
        "src/x.rs",
        &set_line(&lines("line", 60), 20, "line 20 theirs"),
    );
    r.commit_all("change line 20");
    let dir = patches_dir();
    let d = dir.path();
    r.git([
        "format-patch",
        "-q",
        "-o",
        &d.join("fp").display().to_string(),
        "main..tmp",
    ]);
    let plain = r.git(["diff", "main", "tmp"]);
    // Without `index` lines there is no preimage to merge from.
    let plain: String = plain
        .lines()
        .filter(|l| !l.starts_with("index "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(d.join("plain.diff"), plain).unwrap();
    r.git(["switch", "-q", "main"]);
    r.git(["branch", "-D", "tmp"]);
    // Main changes line 22: inside the patch's context (17-23), but not next to line 20.
    r.write(
        "src/x.rs",
        &set_line(&lines("line", 60), 22, "line 22 ours"),
    );
    r.commit_all("main changes line 22");

    let fp = std::fs::read_dir(d.join("fp"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let (rep, code) = weave(&r, &["--into", "jules/integration/a", fp.to_str().unwrap()]);
    assert_eq!(code, 0, "{rep:#}");
    assert!(rep["applied"][0]["notes"]
        .to_string()
        .contains("3-way merge"));
    let x = file_at(&r, "jules/integration/a", "src/x.rs");
    assert!(x.contains("line 20 theirs") && x.contains("line 22 ours"));

    let (rep, code) = weave(
        &r,
        &[
            "--into",
            "jules/integration/b",
            d.join("plain.diff").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    let f = &rep["conflicted"][0]["conflicts"][0];
    assert_eq!(
        f["reason"],
        "the context of the patch is not in the integration branch"
    );
    assert_eq!(f["hunks"][0]["lines"], serde_json::json!([17, 23]));
    // A plain diff has no author: no persona, no mail.
    assert!(rep["conflicted"][0]["persona"].is_null());
    assert!(rep["conflicted"][0]["mail"].is_null());
}

/// `v` with docs/json.md's marks on keys taken off but `?` (`"previous|null"` is `"previous"`; the values'
/// types and nulls are tests/it/json.rs's to check).
fn unmarked(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| {
                    let optional = k.ends_with('?');
                    let name = k.trim_end_matches('?');
                    let name = name.strip_suffix("|oneof").unwrap_or(name);
                    let name = name.strip_suffix("|null").unwrap_or(name);
                    let key = format!("{name}{}", if optional { "?" } else { "" });
                    (key, unmarked(v))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(unmarked).collect()),
        v => v,
    }
}

/// The two JSON examples of docs/weave.md's "Report" section, the report and an `InputReport`, parsed (the
/// report's lists are written `[InputReport…]` there and read as empty), marks taken off their keys.
fn documented_report_shapes() -> [Value; 2] {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/weave.md"),
    )
    .unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Report\n"))
        .expect("docs/weave.md has a Report section");
    let blocks: Vec<Value> = section
        .split("```json\n")
        .skip(1)
        .map(|b| {
            let json = b
                .split("\n```")
                .next()
                .unwrap()
                .replace("[InputReport…]", "[]");
            let v: Value = serde_json::from_str(&json)
                .unwrap_or_else(|e| panic!("docs/weave.md: {e}\n{json}"));
            unmarked(v)
        })
        .collect();
    blocks
        .try_into()
        .unwrap_or_else(|b: Vec<Value>| panic!("{} JSON blocks in the Report section", b.len()))
}
