//! `series reroll`, `--drop`, `--move`, `--message`, `series undo`: in-memory rewrites that change everything
//! or nothing.

use serde_json::Value;

use crate::harness::{stderr, stdout, with_stdin, Repo};
use crate::series::make_series;

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// The commits of the series, oldest first.
fn series_commits(r: &Repo) -> Vec<String> {
    let out = r.git(["rev-list", "--reverse", "main..HEAD"]);
    out.lines().map(str::to_owned).collect()
}

/// What a patch does: its diff against its parent.
fn patch_diff(r: &Repo, commit: &str) -> String {
    r.git(["diff", "--full-index", &format!("{commit}~1"), commit])
}

/// Everything a failed operation must leave as it was: HEAD, refs (with backups), the index file's bytes,
/// and every file of the working tree.
fn snapshot(r: &Repo) -> String {
    let mut s = String::new();
    s.push_str(&r.git(["symbolic-ref", "-q", "HEAD"]));
    s.push('\n');
    s.push_str(&r.git(["for-each-ref"]));
    s.push('\n');
    let index = std::fs::read(r.path().join(".git/index")).unwrap();
    s.push_str(&format!("index {:?}\n", index));
    let mut files: Vec<_> = walk(r.path());
    files.sort();
    for (p, c) in files {
        s.push_str(&format!("{p}: {c:?}\n"));
    }
    assert!(
        !r.path().join(".git/index.lock").exists(),
        "index.lock left behind"
    );
    s
}

fn walk(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.file_name().unwrap() == ".git" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// The pairing lines of a range-diff (`1:  abc1234 = 1:  def5678 subject`, git's or ours): old number,
/// old commit (7 digits), marker, new number, new commit.
fn pairing(text: &str) -> Vec<[String; 5]> {
    text.lines()
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let marker = *t.get(2)?;
            let numbered = |s: &str| s.ends_with(':') && s.len() > 1;
            (t.len() >= 5
                && numbered(t[0])
                && numbered(t[3])
                && ["=", "!", "<", ">"].contains(&marker))
            .then(|| {
                [
                    t[0],
                    &t[1][..7.min(t[1].len())],
                    marker,
                    t[3],
                    &t[4][..7.min(t[4].len())],
                ]
                .map(str::to_owned)
            })
        })
        .collect()
}

fn assert_clean(r: &Repo) {
    assert_eq!(
        r.git(["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
}

/// The seed's case: three patches, a fix for patch 1 in the working tree, `reroll 1`.
#[test]
fn reroll_folds_the_working_tree_into_patch_1_and_keeps_2_and_3() {
    let r = Repo::new();
    r.write("lib.txt", "one\ntwo\nthree\n");
    r.commit_all("lib");
    let old = make_series(
        &r,
        "feat",
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
    );
    let old_diffs: Vec<String> = old.iter().map(|c| patch_diff(&r, c)).collect();
    let old_meta = r.git(["log", "--format=%an|%ae|%ad|%B", "main..HEAD"]);
    // The fix: a modified file, a staged change, and a new file.
    r.write("a.txt", "a, fixed\n");
    r.write("lib.txt", "one\nTWO\nthree\n");
    r.git(["add", "lib.txt"]);
    r.write("new.txt", "a new file belongs to the fix too\n");
    let fixed_tree = {
        r.git(["add", "-A"]);
        let t = r.git(["write-tree"]);
        r.git(["reset", "-q"]);
        t
    };

    let out = json(&r.jules_ok(["--json", "series", "reroll", "1"]));
    assert_eq!(out["operation"], "fold");
    assert_eq!(out["old_tip"], old[2].as_str());
    let new = series_commits(&r);
    assert_eq!(new.len(), 3, "the series keeps its length");
    assert_eq!(out["new_tip"], new[2].as_str());
    let changes: Vec<&str> = out["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["change"].as_str().unwrap())
        .collect();
    assert_eq!(changes, ["changed", "rebased", "rebased"]);

    // Patch 1 holds the fix; 2 and 3 make exactly the changes they made before.
    let p1 = r.git(["diff", "--name-only", &format!("{}~1", new[0]), &new[0]]);
    assert_eq!(p1, "a.txt\nlib.txt\nnew.txt");
    assert_eq!(r.git(["show", &format!("{}:a.txt", new[0])]), "a, fixed");
    assert_eq!(patch_diff(&r, &new[1]), old_diffs[1]);
    assert_eq!(patch_diff(&r, &new[2]), old_diffs[2]);
    // Messages, authors and author dates are kept.
    assert_eq!(
        r.git(["log", "--format=%an|%ae|%ad|%B", "main..HEAD"]),
        old_meta
    );
    // The series ends at the working tree's content; HEAD, index and working tree are clean.
    assert_eq!(r.git(["rev-parse", "HEAD^{tree}"]), fixed_tree);
    assert_clean(&r);
    assert_eq!(
        r.git(["symbolic-ref", "HEAD"]),
        "refs/heads/jules/staging/feat"
    );
    // The old tip is kept, and the move is in both reflogs.
    assert_eq!(r.rev("refs/jules/backup/series/feat/1").unwrap(), old[2]);
    assert_eq!(out["backup"]["ref"], "refs/jules/backup/series/feat/1");
    assert!(r
        .git(["reflog", "-1", "jules/staging/feat"])
        .contains("jules series reroll: fold into patch 1/3"));
    assert!(r
        .git(["reflog", "-1", "HEAD"])
        .contains("jules series reroll"));
    assert!(r
        .git(["reflog", "-1", "refs/jules/backup/series/feat/1"])
        .contains("jules series reroll"));
    r.git(["fsck", "--no-progress"]);

    // The human summary is range-diff like.
    r.write("b.txt", "b, fixed\n");
    let human = stdout(&r.jules(["series", "reroll", "2"]));
    // Its pairing is git range-diff's on the same commits (patch 2's diff changed a lot relative to its
    // size, so git needs a creation factor that lets it pair such a patch at all).
    let git = r.git([
        "range-diff",
        "--no-color",
        "--creation-factor=100",
        &format!("main..{}", new[2]),
        "main..HEAD",
    ]);
    assert_eq!(
        pairing(&human),
        pairing(&git),
        "ours:\n{human}\ngit:\n{git}"
    );
    assert_eq!(pairing(&human).len(), 3, "{human}");
    assert!(human.contains("(unchanged)"), "{human}");
    assert_eq!(r.rev("refs/jules/backup/series/feat/2").unwrap(), new[2]);
}

/// A fix that the later patch 3 changes too: nothing moves, the fix stays, exit 3 names patch 3 and the file.
#[test]
fn a_conflict_in_patch_3_changes_nothing() {
    let r = Repo::new();
    r.jules_ok(["series", "start", "feat"]);
    let lines: String = (1..=9).map(|i| format!("{i}\n")).collect();
    for (i, (file, content)) in [
        ("f.txt", lines.clone()),
        ("g.txt", "g\n".to_owned()),
        ("f.txt", lines.replace("5\n", "five\n")),
        ("f.txt", lines.clone()),
    ]
    .iter()
    .enumerate()
    {
        r.write(file, content);
        r.jules_ok([
            "series",
            "commit",
            "-s",
            &format!("patch {}", i + 1),
            "-r",
            "test",
        ]);
    }
    // Patch 3 changed line 5 and patch 4 changed it back: folding a change of line 5 into patch 1 is clean,
    // but patch 3 then no longer applies.
    r.write("f.txt", &lines.replace("5\n", "FIXED\n"));
    r.write("untracked.txt", "also part of the fix\n");
    r.git(["add", "f.txt"]);
    let before = snapshot(&r);
    let out = r.jules(["series", "reroll", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("patch 3/4"), "{err}");
    assert!(err.contains("f.txt"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    assert_eq!(snapshot(&r), before);
    assert!(r.rev("refs/jules/backup/series/feat/1").is_none());
}

/// Dropping the patch a later one builds on: patch 3 no longer applies, nothing changes.
#[test]
fn dropping_a_needed_patch_conflicts_in_the_patch_that_needs_it() {
    let r = Repo::new();
    r.jules_ok(["series", "start", "feat"]);
    r.write("f.txt", "base\n");
    r.jules_ok(["series", "commit", "-s", "add f", "-r", "r"]);
    r.write("g.txt", "g\n");
    r.jules_ok(["series", "commit", "-s", "add g", "-r", "r"]);
    r.write("f.txt", "base\nmore\n");
    r.jules_ok(["series", "commit", "-s", "extend f", "-r", "r"]);
    let before = snapshot(&r);
    let out = r.jules(["series", "reroll", "1", "--drop"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("patch 3/3") && err.contains("f.txt"), "{err}");
    assert_eq!(snapshot(&r), before);
}

#[test]
fn undo_restores_the_backup_and_backs_up_what_it_replaces() {
    let r = Repo::new();
    let old = make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    r.write("a.txt", "a2\n");
    r.jules_ok(["series", "reroll", "1"]);
    let rerolled = r.rev("HEAD").unwrap();
    r.write("untracked.txt", "stays\n");

    let out = json(&r.jules_ok(["--json", "series", "undo"]));
    assert_eq!(out["operation"], "undo");
    assert_eq!(out["restored"]["number"], 1);
    assert_eq!(out["backup"]["number"], 2);
    assert_eq!(r.rev("HEAD").unwrap(), old[1]);
    assert_eq!(r.read("a.txt"), "a\n");
    assert_eq!(r.read("untracked.txt"), "stays\n");
    assert_eq!(r.rev("refs/jules/backup/series/feat/2").unwrap(), rerolled);
    assert_eq!(
        r.git(["status", "--porcelain"]),
        "?? untracked.txt",
        "only the untracked file"
    );
    assert!(r
        .git(["reflog", "-1", "HEAD"])
        .contains("jules series undo"));

    // Undo twice is a redo; an explicit number restores that backup.
    r.jules_ok(["series", "undo"]);
    assert_eq!(r.rev("HEAD").unwrap(), rerolled);
    r.jules_ok(["series", "undo", "1"]);
    assert_eq!(r.rev("HEAD").unwrap(), old[1]);

    // A dirty tracked file is never overwritten.
    r.write("b.txt", "local edit\n");
    let before = snapshot(&r);
    let out = r.jules(["series", "undo"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("b.txt"), "{}", stderr(&out));
    assert_eq!(snapshot(&r), before);
}

#[test]
fn message_summary_and_rationale_reword_patch_n() {
    let r = Repo::new();
    let old = make_series(
        &r,
        "feat",
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
    );
    let out = json(&r.jules_ok([
        "--json",
        "series",
        "reroll",
        "2",
        "--summary",
        "Add b, properly",
    ]));
    assert_eq!(out["operation"], "reword");
    let new = series_commits(&r);
    assert_eq!(new[0], old[0], "patch 1 is untouched");
    // The patch keeps its Change-Id trailer (issue 26).
    let msg = r.git(["log", "-1", "--format=%B", &new[1]]);
    let (kept, change_id) = msg
        .rsplit_once("\nChange-Id: ")
        .expect("a Change-Id trailer");
    assert_eq!(
        kept,
        "Add b, properly\n\nRationale: because the test says so"
    );
    assert!(change_id.starts_with('I'), "{msg}");
    assert_eq!(
        r.git(["rev-parse", &format!("{}^{{tree}}", new[2])]),
        r.git(["rev-parse", &format!("{}^{{tree}}", old[2])]),
        "a reword changes no tree"
    );
    let changes: Vec<&str> = out["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["change"].as_str().unwrap())
        .collect();
    assert_eq!(changes, ["unchanged", "reworded", "rebased"]);

    // A multi-line rationale, together with a fold.
    r.write("c.txt", "c2\n");
    r.jules_ok([
        "series",
        "reroll",
        "3",
        "--rationale",
        "First line.\nSecond line.",
    ]);
    let msg = r.git(["log", "-1", "--format=%B"]);
    assert_eq!(
        msg.rsplit_once("\nChange-Id: ")
            .expect("the Change-Id is kept")
            .0,
        "patch 3 touches c.txt\n\nRationale: First line.\n Second line."
    );
    assert_eq!(r.git(["show", "HEAD:c.txt"]), "c2");

    // --message must keep the Rationale trailer the patch had.
    let out = r.jules(["series", "reroll", "1", "-m", "Just a subject"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Rationale"), "{}", stderr(&out));
    r.jules_ok([
        "series",
        "reroll",
        "1",
        "-m",
        "New subject\n\nRationale: a new reason",
    ]);
    assert_eq!(
        r.git(["log", "-1", "--format=%s", &series_commits(&r)[0]]),
        "New subject"
    );
    assert_clean(&r);
}

#[test]
fn drop_and_move_replay_the_rest() {
    let r = Repo::new();
    let old = make_series(
        &r,
        "feat",
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
    );
    let old_diffs: Vec<String> = old.iter().map(|c| patch_diff(&r, c)).collect();
    r.write("notes.txt", "an untracked file survives both\n");

    let out = json(&r.jules_ok(["--json", "series", "reroll", "--move", "3:1"]));
    assert_eq!(out["operation"], "move");
    let new = series_commits(&r);
    assert_eq!(new.len(), 3);
    assert_eq!(patch_diff(&r, &new[0]), old_diffs[2]);
    assert_eq!(patch_diff(&r, &new[1]), old_diffs[0]);
    assert_eq!(patch_diff(&r, &new[2]), old_diffs[1]);
    assert_eq!(out["patches"][0]["old_index"], 3);
    assert_eq!(
        r.git(["log", "--format=%s", "main..HEAD"]),
        "patch 2 touches b.txt\npatch 1 touches a.txt\npatch 3 touches c.txt"
    );
    assert_eq!(
        r.git(["status", "--porcelain"]),
        "?? notes.txt",
        "the tree did not change, only the history"
    );

    let out = json(&r.jules_ok(["--json", "series", "reroll", "2", "--drop"]));
    assert_eq!(out["operation"], "drop");
    assert_eq!(out["dropped"][0]["summary"], "patch 1 touches a.txt");
    assert_eq!(series_commits(&r).len(), 2);
    assert!(!r.path().join("a.txt").exists(), "the dropped file is gone");
    assert_eq!(r.read("notes.txt"), "an untracked file survives both\n");
    assert_eq!(r.git(["status", "--porcelain"]), "?? notes.txt");
    // Each step left a backup: the original tip, then the moved series.
    assert_eq!(r.rev("refs/jules/backup/series/feat/1").unwrap(), old[2]);
    assert_eq!(r.rev("refs/jules/backup/series/feat/2").unwrap(), new[2]);
}

#[test]
fn refusals_change_nothing() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let check = |args: &[&str], code: i32, needle: &str| {
        let before = snapshot(&r);
        let out = r.jules(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert_eq!(snapshot(&r), before, "{args:?} changed something");
    };
    // Nothing to fold, out of range, drop/move on a dirty tree.
    check(&["series", "reroll", "1"], 2, "nothing to fold");
    check(&["series", "reroll", "3"], 2, "patches 1 to 2");
    check(
        &["series", "reroll", "--move", "1:1"],
        2,
        "already at position",
    );
    check(&["series", "reroll", "--move", "x"], 2, "FROM:TO");
    r.write("a.txt", "changed\n");
    check(&["series", "reroll", "2", "--drop"], 2, "a.txt");
    check(&["series", "reroll", "--move", "2:1"], 2, "a.txt");
    r.git(["checkout", "--", "a.txt"]);
    // A staged deletion the working tree undoes (`git rm --cached`): the index is dirty but there is
    // nothing to fold, and folding would silently drop the staged change.
    r.git(["rm", "-q", "--cached", "a.txt"]);
    check(
        &["series", "reroll", "1", "-s", "reworded"],
        2,
        "staged changes",
    );
    r.git(["reset", "-q"]);
    // Unmerged paths (a `git stash pop` that stopped): their conflict markers must not be folded.
    let blob = r.git(["rev-parse", "HEAD:a.txt"]);
    r.git(["rm", "-q", "--cached", "a.txt"]);
    let out = with_stdin(
        &mut r.git_cmd(["update-index", "--index-info"]),
        format!("100644 {blob} 1\ta.txt\n100644 {blob} 2\ta.txt\n").as_bytes(),
    );
    assert!(out.status.success());
    r.write("a.txt", "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n");
    check(&["series", "reroll", "1"], 2, "unmerged");
    r.git(["reset", "-q", "--hard"]);
    // A lock held by another git process.
    std::fs::write(r.path().join(".git/index.lock"), b"").unwrap();
    r.write("b.txt", "fix\n");
    let out = r.jules(["series", "reroll", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("index.lock"), "{}", stderr(&out));
    assert!(
        r.path().join(".git/index.lock").exists(),
        "someone else's lock stays"
    );
    std::fs::remove_file(r.path().join(".git/index.lock")).unwrap();
    // Not on a series.
    r.git(["stash", "-q"]);
    r.git(["checkout", "-q", "main"]);
    check(&["series", "reroll", "1"], 2, "HEAD is on main");
}

#[test]
fn a_fold_that_would_empty_a_patch_is_refused() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    // Undo patch 2's change in the working tree and fold that into patch 2: it would be left empty.
    std::fs::remove_file(r.path().join("b.txt")).unwrap();
    let before = snapshot(&r);
    let out = r.jules(["series", "reroll", "2"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    assert_eq!(snapshot(&r), before);
}

/// The same fold done by `git commit --fixup` + `git rebase -i --autosquash` gives the same trees: through the
/// tree-edit fast path (patches that do not touch the fix) and through three-way merges (patches that do,
/// including a rename of a fixed file, a deletion and a file becoming a directory).
#[test]
fn reroll_gives_the_trees_git_rebase_autosquash_gives() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    r.jules_ok(["series", "start", "feat"]);
    let commit = |n: u32| {
        r.jules_ok(["series", "commit", "-s", &format!("step {n}"), "-r", "r"]);
    };
    r.write("dir/x.txt", "x1\nx2\nx3\nx4\nx5\nx6\nx7\nx8\n");
    r.write("dir/y.txt", "y\n");
    r.write(
        "top.txt",
        &(1..=20).map(|i| format!("top {i}\n")).collect::<String>(),
    );
    r.write("thing", "a file that becomes a directory\n");
    commit(1);
    r.write("top.txt", &r.read("top.txt").replace("top 1\n", "TOP 1\n"));
    commit(2);
    std::fs::remove_file(r.path().join("dir/y.txt")).unwrap();
    r.write("other/z.txt", "z\n");
    commit(3);
    r.git(["mv", "dir/x.txt", "moved-x.txt"]);
    commit(4);
    std::fs::remove_file(r.path().join("thing")).unwrap();
    r.write("thing/inside.txt", "now a directory\n");
    commit(5);
    r.write("last.txt", "untouched by the fix\n");
    commit(6);
    let tip = r.rev("HEAD").unwrap();
    let p1 = series_commits(&r)[0].clone();
    // The fix for patch 1: edit the file patch 4 renames, a line of top.txt away from patch 2's, a new file.
    r.write("moved-x.txt", "x1\nx2\nx3\nx4\nx5\nx6\nx7\nX8 fixed\n");
    r.write(
        "top.txt",
        &r.read("top.txt").replace("top 15\n", "top fifteen\n"),
    );
    r.write("n.txt", "new\n");

    // git's way, in a clone of the same state.
    r.git(["branch", "rebase-copy", &tip]);
    let wt = side.path().join("rebase-wt");
    r.git(["worktree", "add", "-q", wt.to_str().unwrap(), "rebase-copy"]);
    for f in ["moved-x.txt", "top.txt", "n.txt"] {
        std::fs::copy(r.path().join(f), wt.join(f)).unwrap();
    }
    let in_wt = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        r.env.apply(&mut cmd);
        let out = cmd
            .current_dir(&wt)
            .env("GIT_SEQUENCE_EDITOR", "true")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
        stdout(&out)
    };
    in_wt(&["add", "-A"]);
    in_wt(&["commit", "-q", "--fixup", &p1]);
    in_wt(&["rebase", "-q", "-i", "--autosquash", "main"]);
    let git_trees = in_wt(&["log", "--format=%T", "main..HEAD"]);

    r.jules_ok(["series", "reroll", "1"]);
    let ours = r.git(["log", "--format=%T", "main..HEAD"]);
    assert_eq!(ours, git_trees.trim_end());
    assert_clean(&r);
}

/// Issue 12: a series may be called `weave`, and weave keeps backups of its integration branch. The two
/// must not share a directory: `series undo` restores the series' own backup, never weave's newest one.
#[test]
fn a_series_called_weave_never_undoes_onto_a_weave_backup() {
    let r = Repo::new();
    let old = make_series(&r, "weave", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    r.write("a.txt", "a2\n");
    r.jules_ok(["series", "reroll", "1"]);
    let rerolled = r.rev("HEAD").unwrap();

    // Two weaves of different inputs: the second is not a fast-forward, so weave keeps a backup.
    for (name, file) in [("one", "one.txt"), ("two", "two.txt")] {
        r.git(["switch", "-q", "-c", name, "main"]);
        r.write(file, "x\n");
        r.git(["add", file]);
        r.git(["commit", "-qm", name]);
    }
    r.git(["switch", "-q", "jules/staging/weave"]);
    r.jules_ok(["weave", "one"]);
    let first = r.rev("jules/integration/weave").unwrap();
    let out = json(&r.jules_ok(["--json", "weave", "--fresh", "two"]));
    let weave_backup = out["backup"].as_str().unwrap().to_owned();
    assert_eq!(r.rev(&weave_backup).unwrap(), first);

    let out = json(&r.jules_ok(["--json", "series", "undo"]));
    assert_eq!(r.rev("HEAD").unwrap(), old[1], "undo restored {out}");
    assert_ne!(r.rev("HEAD").unwrap(), first);
    assert!(
        weave_backup.starts_with("refs/jules/backup/weave/jules/integration/weave/"),
        "{weave_backup}"
    );
    assert_eq!(
        out["backup"]["ref"], "refs/jules/backup/series/weave/2",
        "{out}"
    );
    assert_eq!(r.rev("refs/jules/backup/series/weave/2").unwrap(), rerolled);
    r.jules_ok(["series", "undo"]);
    assert_eq!(r.rev("HEAD").unwrap(), rerolled);
}

/// Backups written before the namespaces (`refs/jules/backup/<series>/<n>`) are still restored, and new
/// numbers continue after them.
#[test]
fn undo_reads_backups_of_the_old_layout() {
    let r = Repo::new();
    let old = make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    r.git(["update-ref", "refs/jules/backup/feat/4", &old[0]]);
    let out = json(&r.jules_ok(["--json", "series", "undo"]));
    assert_eq!(out["restored"]["number"], 4);
    assert_eq!(out["backup"]["ref"], "refs/jules/backup/series/feat/5");
    assert_eq!(r.rev("HEAD").unwrap(), old[0]);
    assert_eq!(r.rev("refs/jules/backup/series/feat/5").unwrap(), old[1]);
}

/// Issue 18: reroll (fold), drop, move and undo killed at every step boundary (the test-only
/// `JULES_TEST_CRASH_AT` hook aborts the process there, as `kill -9` would) leave the repository in the old
/// state or the new one with ref, index and working tree agreeing, or with `series status` naming the
/// interrupted operation; then `series reroll` finishes it (the new state) and `series undo` reverts it.
#[test]
fn rewrites_killed_at_every_step_leave_old_new_or_a_recoverable_state() {
    const STEPS: [&str; 5] = ["locked", "journaled", "switched", "moved", "indexed"];
    type Setup = fn(&Repo);
    let ops: [(&str, Setup, &[&str]); 4] = [
        (
            "fold",
            |r| r.write("a.txt", "a2\n"),
            &["series", "reroll", "1"],
        ),
        ("drop", |_| {}, &["series", "reroll", "2", "--drop"]),
        ("move", |_| {}, &["series", "reroll", "--move", "3:1"]),
        (
            "undo",
            |r| {
                r.jules_ok(["series", "reroll", "1", "--drop"]);
            },
            &["series", "undo"],
        ),
    ];
    // What must agree: the trees of the series' commits (deterministic whatever the dates) and `git status`.
    let state = |r: &Repo| -> (String, String) {
        (
            r.git(["log", "--format=%T", "main..HEAD"]),
            r.git(["status", "--porcelain", "--untracked-files=all"]),
        )
    };
    let fresh = |setup: Setup| -> Repo {
        let r = Repo::new();
        make_series(
            &r,
            "feat",
            &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
        );
        r.write("untracked.txt", "stays\n");
        setup(&r);
        r
    };
    for (name, setup, args) in ops {
        let reference = fresh(setup);
        let old = state(&reference);
        reference.jules_ok(args);
        let new = state(&reference);
        assert_ne!(old, new, "{name}: the operation changes something");
        for step in STEPS {
            let ctx = format!("{name} killed at {step}");
            let r = fresh(setup);
            assert_eq!(state(&r), old, "{ctx}: same start");
            let out = r
                .jules_cmd(args)
                .env("JULES_TEST_CRASH_AT", step)
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                None,
                "{ctx}: the hook stops the process: {}",
                stderr(&out)
            );
            let index_lock = r.path().join(".git/index.lock");
            let status = r.jules(["series", "status"]);
            if stdout(&status).contains("interrupted: `series") {
                // Recoverable: undo reverts (in a twin), a rerun finishes.
                let twin = fresh(setup);
                let out = twin
                    .jules_cmd(args)
                    .env("JULES_TEST_CRASH_AT", step)
                    .output()
                    .unwrap();
                assert_eq!(out.status.code(), None, "{ctx}");
                twin.jules_ok(["series", "undo"]);
                assert_eq!(state(&twin).0, old.0, "{ctx}: undo reverts the history");
                assert_eq!(
                    twin.git(["status", "--porcelain", "--untracked-files=no"]),
                    "",
                    "{ctx}: after undo, ref, index and working tree agree"
                );
                // `series reroll` (whatever its arguments) finishes it, also an interrupted undo.
                let again = r.jules(["series", "reroll", "1"]);
                assert!(again.status.success(), "{ctx}: rerun: {}", stderr(&again));
                assert!(
                    stdout(&again).contains("finished the interrupted"),
                    "{ctx}: {}",
                    stdout(&again)
                );
                assert_eq!(state(&r), new, "{ctx}: the rerun finished the operation");
                assert!(!index_lock.exists(), "{ctx}");
            } else if index_lock.exists() {
                // Killed holding only the index lock: every command names it, its age and the cure.
                let again = r.jules(args);
                assert_eq!(again.status.code(), Some(2), "{ctx}");
                let err = stderr(&again);
                assert!(
                    err.contains("index.lock") && err.contains(" s old") && err.contains("rm "),
                    "{ctx}: {err}"
                );
                std::fs::remove_file(&index_lock).unwrap();
                assert_eq!(state(&r), old, "{ctx}: nothing changed");
            } else {
                let now = state(&r);
                assert!(now == old || now == new, "{ctx}: {now:?}");
            }
            assert_eq!(r.read("untracked.txt"), "stays\n", "{ctx}");
        }
    }
}

/// A `HEAD.lock` left by a killed git is named with its age and the command that clears it; nothing changes.
#[test]
fn a_leftover_head_lock_is_named_with_its_age_and_cure() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    std::fs::write(r.path().join(".git/HEAD.lock"), "").unwrap();
    let before = snapshot(&r);
    let out = r.jules(["series", "reroll", "2", "--drop"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("HEAD.lock") && err.contains(" s old") && err.contains("rm "),
        "{err}"
    );
    assert_eq!(snapshot(&r), before);
    std::fs::remove_file(r.path().join(".git/HEAD.lock")).unwrap();
    r.jules_ok(["series", "reroll", "2", "--drop"]);
}

/// Issue 13: with `--base`, reroll, format and review work on the current branch when it is not a series,
/// without adopting it (no staging branch, no julesBase); its backups are its own and `undo` restores them.
#[test]
fn reroll_format_and_review_work_on_any_branch_with_base() {
    let r = Repo::new();
    r.git(["switch", "-q", "-c", "feature"]);
    for (f, c) in [("a.txt", "a\n"), ("b.txt", "b\n")] {
        r.write(f, c);
        r.git(["add", f]);
        r.git(["commit", "-qm", &format!("add {f}")]);
    }
    let old_tip = r.rev("HEAD").unwrap();
    // Without --base it says how to do it.
    let out = r.jules(["series", "reroll", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--base"), "{}", stderr(&out));

    r.write("a.txt", "a2\n");
    let out = json(&r.jules_ok(["--json", "series", "reroll", "1", "--base", "main"]));
    assert_eq!(out["branch"], "feature");
    assert_eq!(out["backup"]["ref"], "refs/jules/backup/branch/feature/1");
    assert_eq!(r.git(["symbolic-ref", "--short", "HEAD"]), "feature");
    assert_eq!(r.git(["show", "HEAD~1:a.txt"]), "a2");
    assert_eq!(r.git(["status", "--porcelain"]), "");
    assert_eq!(
        r.git(["for-each-ref", "refs/heads/jules/"]),
        "",
        "not adopted"
    );
    assert!(r
        .git_output(["config", "branch.feature.julesBase"])
        .stdout
        .is_empty());

    let fmt = json(&r.jules_ok(["--json", "series", "format", "--base", "main"]));
    assert_eq!(fmt["patches"].as_array().map(Vec::len), Some(2), "{fmt}");
    let review = r.jules(["series", "review", "1", "--print", "--base", "main"]);
    assert!(review.status.success(), "{}", stderr(&review));

    r.jules_ok(["series", "undo"]);
    assert_eq!(r.rev("HEAD").unwrap(), old_tip);
    assert_eq!(r.git(["status", "--porcelain"]), "");
}

/// Finishing an interrupted rewrite refuses when a tracked file changed since the kill (it matches neither the
/// old nor the new tree), names it and changes nothing; once the file is put back, it finishes.
#[test]
fn finishing_an_interrupted_rewrite_refuses_files_edited_since() {
    let r = Repo::new();
    make_series(
        &r,
        "feat",
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
    );
    let out = r
        .jules_cmd(["series", "reroll", "1", "--drop"])
        .env("JULES_TEST_CRASH_AT", "switched")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "{}", stderr(&out));
    assert!(!r.path().join("a.txt").exists(), "the switch removed a.txt");
    r.write("c.txt", "edited after the kill\n");
    let before = r.git(["rev-parse", "HEAD"]);
    let out = r.jules(["series", "reroll", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("c.txt"), "{}", stderr(&out));
    assert_eq!(r.git(["rev-parse", "HEAD"]), before);
    assert_eq!(r.read("c.txt"), "edited after the kill\n");
    r.write("c.txt", "c\n");
    let out = r.jules(["series", "reroll", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        r.git(["log", "--format=%s", "main..HEAD"]),
        "patch 3 touches c.txt\npatch 2 touches b.txt"
    );
    assert_eq!(
        r.git(["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
}

/// Issue 23: a rewrite killed while its `git read-tree -m -u` was switching the working tree leaves, beside the
/// journal and `index.lock`, the lock that read-tree took on the index copy (`index.lock.lock`). Recovery knows
/// both names: `series undo` and the command the hint names, `git jules series reroll` as written, finish it.
#[test]
fn an_interrupted_rewrite_with_read_trees_own_lock_left_is_finished_by_the_hinted_command() {
    for finisher in [&["series", "undo"][..], &["series", "reroll"][..]] {
        let r = Repo::new();
        make_series(
            &r,
            "feat",
            &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
        );
        let out = r
            .jules_cmd(["series", "reroll", "2", "--drop"])
            .env("JULES_TEST_CRASH_AT", "journaled")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), None, "{}", stderr(&out));
        // What a `read-tree` killed with it leaves on the copy it was writing.
        std::fs::write(r.path().join(".git/index.lock.lock"), "").unwrap();
        // `series status` names the interrupted operation and the two commands that deal with it.
        let status = r.jules_ok(["series", "status"]);
        assert!(
            status.contains("`git jules series reroll` finishes it")
                && status.contains("`git jules series undo` reverts it"),
            "{status}"
        );
        let out = r.jules(finisher);
        assert!(
            out.status.success(),
            "{finisher:?}: {}{}",
            stderr(&out),
            stdout(&out)
        );
        for lock in [".git/index.lock", ".git/index.lock.lock"] {
            assert!(!r.path().join(lock).exists(), "{finisher:?}: {lock} left");
        }
        assert_eq!(
            r.git(["status", "--porcelain", "--untracked-files=no"]),
            "",
            "{finisher:?}: ref, index and working tree agree"
        );
    }
    // With nothing interrupted, `series reroll` alone says what it takes (exit 2).
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n")]);
    let out = r.jules(["series", "reroll"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was interrupted"),
        "{}",
        stderr(&out)
    );
}
