//! `git jules series …`: staging branches, patches with a Rationale trailer, base resolution, status.

use serde_json::Value;

use crate::harness::{stderr, stdout, with_stdin, Repo};

/// Start series `name` and commit one patch per (file, content), each with a rationale.
pub fn make_series(r: &Repo, name: &str, patches: &[(&str, &str)]) -> Vec<String> {
    r.jules_ok(["series", "start", name]);
    patches
        .iter()
        .enumerate()
        .map(|(i, (file, content))| {
            r.write(file, content);
            let summary = format!("patch {} touches {file}", i + 1);
            r.jules_ok([
                "series",
                "commit",
                "--summary",
                &summary,
                "--rationale",
                "because the test says so",
            ]);
            r.rev("HEAD").unwrap()
        })
        .collect()
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn start_creates_the_branch_from_the_current_one_and_remembers_the_base() {
    let r = Repo::new();
    r.git(["checkout", "-qb", "dev"]);
    r.write("dev.txt", "dev\n");
    let dev = r.commit_all("dev work");
    r.write("notes.txt", "untracked files are carried over\n");
    let out = json(&r.jules_ok(["--json", "series", "start", "feat"]));
    assert_eq!(out["branch"], "jules/staging/feat");
    assert_eq!(out["base"]["name"], "dev");
    assert_eq!(out["base"]["source"], "current-branch");
    assert_eq!(out["commit"], dev.as_str());
    assert_eq!(
        r.git(["symbolic-ref", "HEAD"]),
        "refs/heads/jules/staging/feat"
    );
    assert_eq!(
        r.git(["config", "branch.jules/staging/feat.julesBase"]),
        "dev"
    );
    assert_eq!(r.read("notes.txt"), "untracked files are carried over\n");

    // The same name again is refused.
    let again = r.jules(["series", "start", "feat"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn start_refuses_a_dirty_tree_and_leaves_no_branch() {
    let r = Repo::new();
    r.write("README", "changed\n");
    let out = r.jules(["series", "start", "feat"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("uncommitted changes") && err.contains("README"),
        "{err}"
    );
    assert!(r.rev("refs/heads/jules/staging/feat").is_none());
    assert_eq!(r.git(["symbolic-ref", "HEAD"]), "refs/heads/main");
    // Staged-only changes count too.
    r.git(["add", "README"]);
    assert_eq!(r.jules(["series", "start", "feat"]).status.code(), Some(2));
    // Bad names never reach git.
    r.git(["reset", "-q", "--hard"]);
    let bad = r.jules(["series", "start", "a b"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("invalid series name"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn start_with_an_explicit_base_checks_that_base_out() {
    let r = Repo::new();
    let first = r.rev("HEAD").unwrap();
    r.write("more.txt", "more\n");
    r.commit_all("more");
    let out = json(&r.jules_ok(["--json", "series", "start", "old", "--base", &first]));
    assert_eq!(out["base"]["source"], "explicit");
    assert_eq!(r.rev("HEAD").unwrap(), first);
    assert!(!r.path().join("more.txt").exists());
}

#[test]
fn commit_writes_a_rationale_trailer_git_can_parse() {
    let r = Repo::new();
    r.jules_ok(["series", "start", "feat"]);
    r.write("new.txt", "new\n");
    r.write(".gitignore", "*.log\n");
    r.write("build.log", "ignored\n");
    std::fs::remove_file(r.path().join("README")).unwrap();
    let rationale = "The parser needs it.\n\nIt also fixes:\n  - the edge case";
    let out = r.jules_ok([
        "series",
        "commit",
        "--summary",
        "Add new.txt",
        "--rationale",
        rationale,
    ]);
    assert!(out.starts_with("[jules/staging/feat "), "{out}");
    let full = r.git(["log", "-1", "--format=%B"]);
    // The Change-Id trailer that identifies the patch across versions (issue 26) ends the block.
    let (msg, change_id) = full
        .rsplit_once("\nChange-Id: ")
        .expect("a Change-Id trailer");
    assert_eq!(change_id.len(), 41, "{full}");
    assert_eq!(
        msg,
        "Add new.txt\n\nRationale: The parser needs it.\n It also fixes:\n   - the edge case"
    );
    // git reads one trailer, folded back to one line.
    let parsed = with_stdin(
        &mut r.git_cmd(["interpret-trailers", "--parse"]),
        msg.as_bytes(),
    );
    assert_eq!(
        stdout(&parsed),
        "Rationale: The parser needs it. It also fixes: - the edge case\n"
    );
    assert_eq!(
        r.git([
            "log",
            "-1",
            "--format=%(trailers:key=Rationale,valueonly,unfold)"
        ]),
        "The parser needs it. It also fixes: - the edge case"
    );
    // `git add -A` semantics: the new file and the deletion are in, the ignored file is not.
    let files = r.git(["show", "--name-status", "--format="]);
    assert!(
        files.contains("A\t.gitignore") && files.contains("A\tnew.txt"),
        "{files}"
    );
    assert!(
        files.contains("D\tREADME") && !files.contains("build.log"),
        "{files}"
    );
    assert_eq!(r.git(["status", "--porcelain"]), "");
    // HEAD's reflog records the commit, as `git commit` does.
    assert!(r.git(["reflog", "-1", "HEAD"]).contains("Add new.txt"));
}

#[test]
fn commit_refuses_an_empty_rationale_an_empty_change_and_a_non_series_branch() {
    let r = Repo::new();
    r.write("x.txt", "x\n");
    let off_series = r.jules(["series", "commit", "-s", "S", "-r", "R"]);
    assert_eq!(off_series.status.code(), Some(2));
    assert!(
        stderr(&off_series).contains("not on a series branch"),
        "{}",
        stderr(&off_series)
    );

    r.jules_ok(["series", "start", "feat"]);
    let head = r.rev("HEAD").unwrap();
    for args in [
        vec!["series", "commit", "-s", "S", "-r", "  \n \n"],
        vec!["series", "commit", "-s", "", "-r", "R"],
    ] {
        let out = r.jules(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    let empty = r.jules(["series", "commit", "-s", "S", "-r", "  "]);
    assert!(
        stderr(&empty).contains("rationale is empty"),
        "{}",
        stderr(&empty)
    );
    assert_eq!(r.rev("HEAD").unwrap(), head);

    // The rationale from a file works; then nothing is left to commit.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rationale.txt");
    std::fs::write(&file, "From a file.\n").unwrap();
    r.jules_ok(["series", "commit", "-s", "S", "-F", file.to_str().unwrap()]);
    assert_eq!(
        r.git(["log", "-1", "--format=%(trailers:key=Rationale,valueonly)"]),
        "From a file."
    );
    let nothing = r.jules(["series", "commit", "-s", "S2", "-r", "R"]);
    assert_eq!(nothing.status.code(), Some(2));
    assert!(
        stderr(&nothing).contains("nothing to commit"),
        "{}",
        stderr(&nothing)
    );
}

#[test]
fn base_resolution_explicit_then_config_then_local_then_origin() {
    let upstream = Repo::new();
    upstream.git(["checkout", "-qb", "dev"]);
    upstream.write("dev.txt", "dev\n");
    upstream.commit_all("dev");
    upstream.git(["checkout", "-q", "main"]);
    let r = upstream.clone_of(upstream.path());
    r.git(["branch", "-q", "dev", "origin/dev"]);
    r.git(["checkout", "-q", "dev"]);
    make_series(&r, "feat", &[("a.txt", "a\n")]);
    let base = |extra: &[&str]| -> Value {
        let mut args = vec!["--json", "series", "status"];
        args.extend_from_slice(extra);
        json(&r.jules_ok(&args))["base"].clone()
    };
    // 2. The series' config (it started from dev).
    let b = base(&[]);
    assert_eq!(
        (b["name"].as_str(), b["source"].as_str()),
        (Some("dev"), Some("config"))
    );
    // 1. An explicit base wins over the config.
    let b = base(&["--base", "main"]);
    assert_eq!(
        (b["name"].as_str(), b["source"].as_str()),
        (Some("main"), Some("explicit"))
    );
    // 3. Without config: local main.
    r.git(["config", "--unset", "branch.jules/staging/feat.julesBase"]);
    let b = base(&[]);
    assert_eq!(
        (b["name"].as_str(), b["source"].as_str()),
        (Some("main"), Some("local-default"))
    );
    // ... or local master when there is no main.
    r.git(["branch", "-q", "-m", "main", "master"]);
    let b = base(&[]);
    assert_eq!(
        (b["name"].as_str(), b["source"].as_str()),
        (Some("master"), Some("local-default"))
    );
    // 4. Neither: origin/main.
    r.git(["branch", "-q", "-m", "master", "trunk"]);
    let b = base(&[]);
    assert_eq!(
        (b["name"].as_str(), b["source"].as_str()),
        (Some("origin/main"), Some("remote-default"))
    );
    assert_eq!(b["commit"], r.rev("origin/main").unwrap().as_str());
    // And none of them: a clear error.
    r.git(["update-ref", "-d", "refs/remotes/origin/main"]);
    r.git(["update-ref", "-d", "refs/remotes/origin/HEAD"]);
    let out = r.jules(["series", "status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pass --base"), "{}", stderr(&out));
    // A configured base that no longer exists is an error, not a silent fallback.
    r.git(["config", "branch.jules/staging/feat.julesBase", "gone"]);
    let out = r.jules(["series", "status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("gone"), "{}", stderr(&out));
}

#[test]
fn status_and_list_number_the_patches_and_show_cached_verdicts() {
    let r = Repo::new();
    let ids = make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "BROKEN\n")]);
    let st = json(&r.jules_ok(["--json", "series", "status"]));
    assert_eq!(st["series"], "feat");
    assert_eq!(st["current"], true);
    assert_eq!(st["verify_command"], Value::Null);
    let patches = st["patches"].as_array().unwrap();
    assert_eq!(patches.len(), 2);
    assert_eq!(patches[0]["index"], 1);
    assert_eq!(patches[0]["commit"], ids[0].as_str());
    assert_eq!(patches[1]["summary"], "patch 2 touches b.txt");
    assert_eq!(patches[1]["verify"], "unknown");

    r.git([
        "config",
        "jules.verify.cmd",
        "! grep -rqx BROKEN --exclude-dir=.git .",
    ]);
    let out = r.jules(["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let st = json(&r.jules_ok(["--json", "series", "status", "feat"]));
    let verdicts: Vec<&str> = st["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verify"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["pass", "fail"]);
    let human = r.jules_ok(["series", "status"]);
    assert!(human.contains(" 2/2 ") && human.contains("FAIL"), "{human}");
    let other = r.jules_ok(["--json", "series", "status", "--cmd", "true"]);
    assert_eq!(json(&other)["patches"][0]["verify"], "unverified");

    r.git(["checkout", "-q", "main"]);
    make_series(&r, "other", &[("c.txt", "c\n")]);
    let list = crate::harness::json_items(&r.jules_ok(["--json", "series", "list"]));
    let names: Vec<(&str, bool, usize)> = list
        .iter()
        .map(|s| {
            (
                s["series"].as_str().unwrap(),
                s["current"].as_bool().unwrap(),
                s["patches"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(names, [("feat", false, 2), ("other", true, 1)]);
    let human = r.jules_ok(["series", "list"]);
    assert!(human.contains("* other"), "{human}");
    assert!(human.contains("1 pass, 1 fail, 0 unverified"), "{human}");
}
