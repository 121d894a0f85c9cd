//! Series versions on `refs/jules/series/<persona>/<name>` (issue 26): recorded by `series format` and
//! `series version`, carried by sync through the smart-HTTP test remote, compared with `series range-diff`
//! against `git range-diff` on the same commits, change ids kept by every rewrite, forged refs skipped,
//! rewrites refused by the guard.

use serde_json::Value;

use crate::harness::{json_items, stderr, stdout, with_stdin, Repo};
use crate::remotes::{alice_auth, http_server, remote_in, Clone};

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `(old index or 0, status sign, new index or 0)` of each line of `git range-diff -s` output.
fn git_pairs(text: &str) -> Vec<(usize, char, usize)> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |s: &str| s.trim_end_matches(':').parse::<usize>().unwrap_or(0);
            (n(f[0]), f[2].chars().next().unwrap(), n(f[3]))
        })
        .collect()
}

/// The same triples from `series range-diff --json`.
fn our_pairs(doc: &Value) -> Vec<(usize, char, usize)> {
    doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let sign = match e["status"].as_str().unwrap() {
                "same" => '=',
                "changed" => '!',
                "dropped" => '<',
                "added" => '>',
                s => panic!("status {s}"),
            };
            let n = |v: &Value| v.as_u64().unwrap_or(0) as usize;
            (n(&e["old_index"]), sign, n(&e["new_index"]))
        })
        .collect()
}

fn commit_file(c: &Clone, persona: &str, file: &str, content: &str, summary: &str) {
    std::fs::write(c.repo.path().join(file), content).unwrap();
    c.ok(
        persona,
        &[
            "series",
            "commit",
            "--summary",
            summary,
            "--rationale",
            "because",
        ],
    );
}

/// A's versions reach B through the smart-HTTP remote; B's range-diff pairs like git's on the same commits.
#[test]
fn versions_travel_through_sync_and_range_diff_pairs_as_git_does() {
    let root = tempfile::tempdir().unwrap();
    let (origin, _bare) = remote_in(root.path());
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let auth = alice_auth();
    let a = Clone::new(&origin, &url, &auth);
    let b = Clone::new(&origin, &url, &auth);

    a.ok("alice", &["series", "start", "feat"]);
    let lines: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    commit_file(&a, "alice", "one.txt", &lines, "Add one");
    let two: String = (1..=10).map(|i| format!("two {i}\n")).collect();
    commit_file(&a, "alice", "two.txt", &two, "Add two");
    commit_file(&a, "alice", "three.txt", "three\n", "Add three");
    a.ok("alice", &["series", "format"]);
    a.ok("alice", &["sync"]);

    b.ok("bob", &["sync"]);
    let v = json(&b.ok("bob", &["--json", "series", "versions", "alice/feat"]));
    assert_eq!(v["items"].as_array().unwrap().len(), 1, "{v}");
    let listed = json(&b.ok("bob", &["--json", "series", "list", "--all"]));
    assert_eq!(listed["series"][0]["series"], "alice/feat", "{listed}");
    assert_eq!(listed["series"][0]["versions"], 1);

    // B reviews v1 from its own clone (no series branch there) and mails alice; the comments name v1.
    let buffer = b.ok(
        "bob",
        &["series", "review", "--version", "alice/feat@v1", "--print"],
    );
    let edited = buffer.replace(
        "### Patch [2/3] ###\n",
        "### Patch [2/3] ###\nR: say why two has ten lines\n",
    );
    assert_ne!(edited, buffer);
    let mut cmd = b.cmd(
        "bob",
        &[
            "--json",
            "series",
            "review",
            "--version",
            "alice/feat@v1",
            "--from-file",
            "-",
            "--mail-to",
            "alice",
        ],
    );
    let out = with_stdin(&mut cmd, edited.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let review = json(&stdout(&out));
    assert_eq!(review["series_version"], "alice/feat@v1", "{review}");
    b.ok("bob", &["sync"]);
    a.ok("alice", &["sync"]);
    let inbox = a.ok("alice", &["mail", "inbox", "--persona", "alice"]);
    assert!(inbox.contains("alice/feat@v1"), "{inbox}");

    // Reroll patch 2 (v2, recorded because v1 was reviewed), drop patch 3, format: v3.
    std::fs::write(
        a.repo.path().join("two.txt"),
        two.replace("two 5\n", "two, better\n"),
    )
    .unwrap();
    // The reroll answers B's review of v1: it records v2. The drop does not (nobody reviewed v2); format does.
    let out = a.run("alice", &["series", "reroll", "2"]);
    assert!(
        stderr(&out).contains("alice/feat@v2 recorded"),
        "{}",
        stderr(&out)
    );
    let out = a.run("alice", &["series", "reroll", "3", "--drop"]);
    assert!(!stderr(&out).contains("recorded"), "{}", stderr(&out));
    a.ok("alice", &["series", "format"]);
    // Formatting again without a change records nothing new.
    a.ok("alice", &["series", "format"]);
    a.ok("alice", &["sync"]);

    b.ok("bob", &["sync"]);
    let versions = json(&b.ok("bob", &["--json", "series", "versions", "alice/feat"]));
    let items = versions["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{versions}");
    let v3 = &items[2];
    assert_eq!(v3["number"], 3);
    assert_eq!(items[1]["dropped"], serde_json::json!([]));
    assert_eq!(v3["dropped"], serde_json::json!([3]));
    let prev: Vec<Value> = v3["patches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["previous"].clone())
        .collect();
    assert_eq!(prev, vec![serde_json::json!(1), serde_json::json!(2)]);
    // Change ids survive the reroll.
    for i in 0..2 {
        assert_eq!(
            items[0]["patches"][i]["change_id"],
            v3["patches"][i]["change_id"]
        );
    }

    let rd = json(&b.ok(
        "bob",
        &["--json", "series", "range-diff", "alice/feat", "v1", "v3"],
    ));
    let range = |v: &Value| {
        format!(
            "{}..{}",
            v["base"]["commit"].as_str().unwrap(),
            v["tip"].as_str().unwrap()
        )
    };
    let git = b.repo.git([
        "range-diff",
        "--no-color",
        "-s",
        &range(&items[0]),
        &range(v3),
    ]);
    assert_eq!(our_pairs(&rd), git_pairs(&git), "git:\n{git}\nours: {rd}");
    assert_eq!(git_pairs(&git), vec![(1, '=', 1), (2, '!', 2), (3, '<', 0)]);
    // The human output's header lines are git's.
    let ours = b.ok(
        "bob",
        &["series", "range-diff", "-s", "alice/feat", "v1", "v3"],
    );
    assert_eq!(ours.trim_end(), git.trim_end());
    // And so is the whole output, the diffs of changed pairs included.
    let ours = b.ok("bob", &["series", "range-diff", "alice/feat", "v1", "v3"]);
    let git = b
        .repo
        .git(["range-diff", "--no-color", &range(&items[0]), &range(v3)]);
    assert_eq!(ours.trim_end(), git.trim_end());

    let show = b.ok("bob", &["series", "show", "alice/feat@v1"]);
    assert!(show.contains("Add three"), "{show}");
    let inter = json(&b.ok(
        "bob",
        &["--json", "series", "interdiff", "alice/feat", "v1", "v3"],
    ));
    let diff = inter["diff"].as_str().unwrap();
    assert!(
        diff.contains("+two, better") && diff.contains("three.txt"),
        "{diff}"
    );

    // The comments stay attached to v1.
    let shown = json(&b.ok("bob", &["--json", "series", "show", "alice/feat@v1"]));
    assert_eq!(shown["reviews"][0]["patch"], 2, "{shown}");
    assert_eq!(
        shown["reviews"][0]["notes"][0]["series_version"],
        "alice/feat@v1"
    );

    // A third clone weaves v3 by name; the report says which version.
    let c = Clone::new(&origin, &url, &auth);
    c.ok("weaver", &["sync"]);
    let rep = json(&c.ok(
        "weaver",
        &[
            "--json",
            "weave",
            "--into",
            "jules/integration/s1",
            "alice/feat@v3",
        ],
    ));
    assert_eq!(rep["applied"][0]["input"], "alice/feat@v3", "{rep}");
    assert_eq!(rep["applied"][0]["kind"], "series");
    assert_eq!(rep["applied"][0]["persona"], "alice");
    assert_eq!(rep["applied"][0]["commits"].as_array().unwrap().len(), 2);

    // Bad input: unknown series, unknown version.
    let out = b.run("bob", &["series", "versions", "alice/nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("alice/nope"), "{}", stderr(&out));
    let out = b.run("bob", &["series", "show", "alice/feat@v9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("v1 to v3"), "{}", stderr(&out));
}

fn change_ids(r: &Repo, range: &str) -> Vec<String> {
    r.git([
        "log",
        "--reverse",
        "--format=%(trailers:key=Change-Id,valueonly)",
        range,
    ])
    .lines()
    .filter(|l| !l.is_empty())
    .map(str::to_owned)
    .collect()
}

#[test]
fn change_ids_survive_reroll_move_drop_undo_and_finalize() {
    let r = Repo::new();
    r.jules_ok(["series", "start", "feat"]);
    for (f, s) in [("a", "Add a"), ("b", "Add b"), ("c", "Add c")] {
        r.write(f, &format!("{f}\n"));
        r.jules_ok(["series", "commit", "--summary", s, "--rationale", "why"]);
    }
    let ids = change_ids(&r, "main..HEAD");
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter().all(|i| i.starts_with('I') && i.len() == 41),
        "{ids:?}"
    );
    assert_ne!(ids[0], ids[1]);

    // Fold with a new rationale (the message is rebuilt), then a new summary.
    r.write("a", "a2\n");
    r.jules_ok(["series", "reroll", "1", "--rationale", "a better why"]);
    r.jules_ok(["series", "reroll", "2", "--summary", "Add b, renamed"]);
    assert_eq!(change_ids(&r, "main..HEAD"), ids);
    r.jules_ok(["series", "reroll", "--move", "3:1"]);
    assert_eq!(
        change_ids(&r, "main..HEAD"),
        vec![ids[2].clone(), ids[0].clone(), ids[1].clone()]
    );
    r.jules_ok(["series", "reroll", "2", "--drop"]);
    assert_eq!(
        change_ids(&r, "main..HEAD"),
        vec![ids[2].clone(), ids[1].clone()]
    );
    r.jules_ok(["series", "undo"]);
    assert_eq!(
        change_ids(&r, "main..HEAD"),
        vec![ids[2].clone(), ids[0].clone(), ids[1].clone()]
    );
    r.jules_ok(["series", "finalize", "--no-verify"]);
    assert_eq!(
        change_ids(&r, "main~3..main"),
        vec![ids[2].clone(), ids[0].clone(), ids[1].clone()]
    );
}

#[test]
fn forged_version_refs_are_skipped_and_named_and_the_guard_refuses_them_and_rewrites() {
    let origin = Repo::new();
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let installed = bare.jules(["guard", "--install"]);
    assert!(installed.status.success(), "{}", stderr(&installed));
    let a = origin.clone_of(bare.path());
    a.jules_ok(["series", "start", "feat"]);
    a.write("x", "x\n");
    a.jules_ok(["series", "commit", "--summary", "Add x", "--rationale", "r"]);
    a.jules_ok(["series", "version", "--persona", "alice"]);
    a.write("x", "x2\n");
    a.jules_ok(["series", "reroll", "1"]);
    a.jules_ok(["series", "version", "--persona", "alice"]);
    a.jules_ok(["sync"]);
    assert!(bare.rev("refs/jules/series/alice/feat").is_some());

    // A rewrite (back to v1) is refused.
    let out = a.git_output([
        "push",
        "origin",
        "+refs/jules/series/alice/feat~1:refs/jules/series/alice/feat",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("does not contain"),
        "{}",
        stderr(&out)
    );
    // So is a plain commit that is not a version, and a deletion.
    let out = a.git_output(["push", "origin", "HEAD:refs/jules/series/mallory/feat"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not a series version"),
        "{}",
        stderr(&out)
    );
    let out = a.git_output(["push", "origin", ":refs/jules/series/alice/feat"]);
    assert!(!out.status.success());

    // Locally, a forged ref is skipped and named; the good series still lists.
    a.git(["update-ref", "refs/jules/series/mallory/feat", "HEAD"]);
    let out = a.jules(["--json", "series", "list", "--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&stdout(&out));
    assert_eq!(doc["series"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(doc["skipped"][0]["name"], "refs/jules/series/mallory/feat");
    assert!(stderr(&out).contains("refs/jules/series/mallory/feat"));
    let out = a.jules(["series", "versions", "mallory/feat"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a series version"),
        "{}",
        stderr(&out)
    );
    let _ = json_items;
}

/// The shared ripgrep corpus, cloned; `None` when the bundle is absent: the test then fails under CI and
/// is counted as skipped elsewhere (`harness::skipped_for_want_of`), never passed silently.
fn ripgrep() -> Option<Repo> {
    // JULES_CORPORA points elsewhere (a test of the skip itself points it at an empty directory).
    let corpora = std::env::var_os("JULES_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora")
        });
    let bundle = corpora.join("ripgrep.bundle");
    if crate::harness::skipped_for_want_of(
        bundle.exists(),
        &format!("the ripgrep corpus {}", bundle.display()),
    ) {
        return None;
    }
    let r = Repo {
        env: std::rc::Rc::new(crate::harness::Env::new()),
        dir: tempfile::tempdir().unwrap(),
    };
    let out = r
        .git_cmd([
            "clone",
            "-q",
            bundle.to_str().unwrap(),
            r.path().to_str().unwrap(),
        ])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    Some(r)
}

/// Matching without change ids, against `git range-diff` on real history: a 30-patch stretch of ripgrep
/// rewritten (two patches dropped, one reworded, one amended, two swapped, one added) and compared at several
/// creation factors, plus the untouched stretch against itself.
#[test]
fn pairing_without_change_ids_matches_git_range_diff_on_ripgrep() {
    let Some(r) = ripgrep() else { return };
    let base = r.git(["rev-parse", "HEAD~30"]);
    let tip = r.git(["rev-parse", "HEAD"]);
    let commits: Vec<String> = r
        .git([
            "rev-list",
            "--reverse",
            "--no-merges",
            &format!("{base}..{tip}"),
        ])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(commits.len(), 30);
    r.git(["checkout", "-q", "--detach", &base]);
    let mut order: Vec<usize> = (0..30).filter(|i| ![4, 16].contains(i)).collect();
    order.swap(10, 11);
    for &i in &order {
        let out = r.git_output([
            "cherry-pick",
            "--allow-empty",
            "--keep-redundant-commits",
            &commits[i],
        ]);
        if !out.status.success() {
            // A swap that conflicts: keep the original order for this pair.
            r.git(["cherry-pick", "--abort"]);
            panic!("cherry-pick of patch {} failed: {}", i + 1, stderr(&out));
        }
        if i == 2 {
            r.git([
                "commit",
                "-q",
                "--amend",
                "--allow-empty",
                "-m",
                "A reworded summary\n\nNew body.",
            ]);
        }
        if i == 7 {
            r.write("EXTRA.md", "an amended patch\n");
            r.git(["add", "EXTRA.md"]);
            r.git(["commit", "-q", "--amend", "--no-edit"]);
        }
        if i == 20 {
            r.write("NEW.md", "a new patch\n");
            r.git(["add", "NEW.md"]);
            r.git(["commit", "-q", "-m", "A new patch"]);
        }
    }
    let new_tip = r.git(["rev-parse", "HEAD"]);
    let git_dir = r.path().join(".git");
    let oid = |s: &str| gix::ObjectId::from_hex(s.as_bytes()).unwrap();
    let a =
        git_jules::capabilities::series::rangediff::read_patches(&git_dir, oid(&base), oid(&tip))
            .unwrap();
    let b = git_jules::capabilities::series::rangediff::read_patches(
        &git_dir,
        oid(&base),
        oid(&new_tip),
    )
    .unwrap();
    // The texts made in-process (what `series range-diff` uses) are `git log`'s, byte for byte.
    let repo = gix::open(&git_dir).unwrap();
    for (from_git, tip) in [(&a, &tip), (&b, &new_tip)] {
        let ours =
            git_jules::capabilities::series::rangediff::texts::read(&repo, oid(&base), oid(tip))
                .unwrap()
                .expect("made in-process");
        assert_same_texts(&ours, from_git);
    }
    let cases = [
        (&a, &b, tip.as_str(), new_tip.as_str()),
        (&a, &a, tip.as_str(), tip.as_str()),
        (&b, &a, new_tip.as_str(), tip.as_str()),
    ];
    for factor in [0, 30, 60, 100, 200] {
        for (x, y, xt, yt) in cases {
            let p = git_jules::capabilities::series::rangediff::pair(x, y, factor);
            let ours: Vec<(usize, char, usize)> =
                git_jules::capabilities::series::rangediff::entries(x, y, &p, false)
                    .iter()
                    .map(|e| {
                        (
                            e.old_index.unwrap_or(0),
                            e.status.sign(),
                            e.new_index.unwrap_or(0),
                        )
                    })
                    .collect();
            let git = r.git([
                "range-diff",
                "--no-color",
                "-s",
                &format!("--creation-factor={factor}"),
                &format!("{base}..{xt}"),
                &format!("{base}..{yt}"),
            ]);
            assert_eq!(
                ours,
                git_pairs(&git),
                "creation factor {factor}, git:\n{git}"
            );
        }
    }
}

fn assert_same_texts(
    ours: &[git_jules::capabilities::series::rangediff::PatchText],
    git: &[git_jules::capabilities::series::rangediff::PatchText],
) {
    assert_eq!(ours.len(), git.len());
    for (o, g) in ours.iter().zip(git) {
        assert_eq!(o.commit, g.commit);
        if o.text != g.text {
            let (ol, gl): (Vec<&str>, Vec<&str>) =
                (o.text.lines().collect(), g.text.lines().collect());
            let at = (0..ol.len().max(gl.len()))
                .find(|&i| ol.get(i) != gl.get(i))
                .unwrap_or(0);
            panic!(
                "patch text of {} differs at line {}: ours {:?}, git's {:?}",
                o.commit,
                at + 1,
                &ol[at.saturating_sub(3)..(at + 3).min(ol.len())],
                &gl[at.saturating_sub(3)..(at + 3).min(gl.len())]
            );
        }
        assert_eq!(
            (o.diff_offset, o.diff_lines),
            (g.diff_offset, g.diff_lines),
            "{}",
            o.commit
        );
    }
}

/// range-diff's patch texts made in-process equal those made of `git log -p` over 1,500 commits of real
/// history (renames, deletions, mode changes, binary files, files without a final newline as ripgrep has them),
/// and a setting that changes `git log -p` (here `diff.algorithm`, patience) hands the job to `git log`.
#[test]
fn in_process_patch_texts_are_git_logs_on_ripgrep() {
    let Some(r) = ripgrep() else { return };
    let oid = |s: &str| gix::ObjectId::from_hex(s.as_bytes()).unwrap();
    let base = oid(&r.git(["rev-parse", "HEAD~1500"]));
    let tip = oid(&r.git(["rev-parse", "HEAD"]));
    let git_dir = r.path().join(".git");
    let from_git =
        git_jules::capabilities::series::rangediff::read_patches(&git_dir, base, tip).unwrap();
    let repo = gix::open(&git_dir).unwrap();
    let ours = git_jules::capabilities::series::rangediff::texts::read(&repo, base, tip)
        .unwrap()
        .expect("made in-process");
    assert_same_texts(&ours, &from_git);
    r.git(["config", "diff.algorithm", "patience"]);
    let repo = gix::open(&git_dir).unwrap();
    assert!(
        git_jules::capabilities::series::rangediff::texts::read(&repo, base, tip)
            .unwrap()
            .is_none()
    );
}

/// Upstream drift between two bases shows as a change in a plain range-diff, and not with `--rebase`, which
/// replays the older version onto the newer base first.
#[test]
fn range_diff_rebase_hides_upstream_drift() {
    let r = Repo::new();
    let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    r.write("f.txt", &lines);
    r.commit_all("ten lines");
    r.jules_ok(["series", "start", "feat"]);
    r.write("f.txt", &lines.replace("line 5\n", "line five\n"));
    r.jules_ok([
        "series",
        "commit",
        "--summary",
        "Spell five",
        "--rationale",
        "r",
    ]);
    r.write("g.txt", "g\n");
    r.jules_ok(["series", "commit", "--summary", "Add g", "--rationale", "r"]);
    r.jules_ok(["series", "version", "--persona", "alice"]);
    // Upstream changes a line in patch 1's context; the series is rebased onto it.
    r.git(["checkout", "-q", "main"]);
    r.write("f.txt", &lines.replace("line 3\n", "line three\n"));
    r.commit_all("upstream: spell three");
    r.git(["checkout", "-q", "jules/staging/feat"]);
    r.git(["rebase", "-q", "main"]);
    r.jules_ok(["series", "version", "--persona", "alice"]);

    let plain = r.jules_ok(["series", "range-diff", "-s", "alice/feat", "v1", "v2"]);
    let signs: Vec<&str> = plain
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(signs, ["!", "="], "{plain}");
    let doc = json(&r.jules_ok([
        "--json",
        "series",
        "range-diff",
        "--rebase",
        "alice/feat",
        "v1",
        "v2",
    ]));
    assert_eq!(doc["rebased"], true);
    assert_eq!(our_pairs(&doc), vec![(1, '=', 1), (2, '=', 2)], "{doc}");
    // Nothing moved: the branch, HEAD and the version ref are where they were.
    assert_eq!(r.rev("HEAD"), r.rev("jules/staging/feat"));
    assert_eq!(
        json(&r.jules_ok(["--json", "series", "versions", "alice/feat"]))["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// A version whose commits are not in this clone (a partial fetch): refused with what to fetch.
#[test]
fn a_version_whose_commits_are_missing_says_what_to_fetch() {
    let r = Repo::new();
    let missing = "1234567890123456789012345678901234567890";
    let base = r.rev("HEAD").unwrap();
    let record = format!(
        "{{\"format\": 1, \"persona\": \"alice\", \"name\": \"gone\", \"number\": 1, \
         \"base\": {{\"name\": \"main\", \"commit\": \"{base}\"}}, \"tip\": \"{missing}\", \
         \"patches\": [], \"dropped\": []}}\n"
    );
    let blob = with_stdin(
        &mut r.git_cmd(["hash-object", "-w", "--stdin"]),
        record.as_bytes(),
    );
    let blob = stdout(&blob).trim().to_owned();
    let tree = with_stdin(
        &mut r.git_cmd(["mktree"]),
        format!("100644 blob {blob}\tseries.json\n").as_bytes(),
    );
    let tree = stdout(&tree).trim().to_owned();
    // git commit-tree checks parents exist; the raw object does not.
    let raw = format!(
        "tree {tree}\nparent {missing}\nauthor a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\nseries alice/gone v1\n"
    );
    let commit = with_stdin(
        &mut r.git_cmd([
            "hash-object",
            "-w",
            "-t",
            "commit",
            "--literally",
            "--stdin",
        ]),
        raw.as_bytes(),
    );
    let commit = stdout(&commit).trim().to_owned();
    r.git(["update-ref", "refs/jules/series/alice/gone", &commit]);
    let out = r.jules(["series", "range-diff", "alice/gone", "v1", "v1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(missing)
            && err.contains("is missing here")
            && err.contains("refs/jules/series/alice/gone"),
        "{err}"
    );
}

/// The remote's version ref, read in the bare repository.
fn remote_rev(bare: &std::path::Path, name: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(bare)
        .args(["rev-parse", "--verify", "-q", name])
        .output()
        .unwrap();
    out.status.success().then(|| stdout(&out).trim().to_owned())
}

/// Through the smart-HTTP test remote with the guard installed: version pushes spend the push budget
/// (`jules.sync.minPushInterval`) like log pushes, waiting for the next sync allowed to push unless `--now`;
/// a version ref the remote refuses (a forged one the guard stops, a rewrite) is named in sync's human output
/// and `--json` report, and sync exits 2.
#[test]
fn version_pushes_wait_for_the_push_budget_and_refused_ones_are_reported() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    let installed = origin
        .jules_cmd(["guard", "--install"])
        .current_dir(&bare)
        .output()
        .unwrap();
    assert!(installed.status.success(), "{}", stderr(&installed));
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let auth = alice_auth();
    let a = Clone::new(&origin, &url, &auth);
    let name = "refs/jules/series/alice/feat";

    a.ok("alice", &["series", "start", "feat"]);
    commit_file(&a, "alice", "one.txt", "one\n", "Add one");
    a.ok("alice", &["series", "version"]);
    let doc = json(&a.ok("alice", &["--json", "sync"]));
    assert_eq!(doc["series_pushed"], serde_json::json!([name]), "{doc}");
    let v1 = a.repo.rev(name).unwrap();
    assert_eq!(remote_rev(&bare, name), Some(v1.clone()));

    // One push an hour: v2 waits (the last sync pushed), and says so; `--now` carries it.
    a.repo.git(["config", "jules.sync.minPushInterval", "1h"]);
    commit_file(&a, "alice", "two.txt", "two\n", "Add two");
    a.ok("alice", &["series", "version"]);
    let v2 = a.repo.rev(name).unwrap();
    assert_ne!(v1, v2);
    let doc = json(&a.ok("alice", &["--json", "sync"]));
    assert_eq!(doc["series_deferred"], serde_json::json!([name]), "{doc}");
    assert_eq!(doc["series_pushed"], serde_json::json!([]), "{doc}");
    assert!(doc["push_deferred_secs"].as_u64().unwrap() > 0, "{doc}");
    assert_eq!(remote_rev(&bare, name), Some(v1.clone()), "v2 waited");
    let out = a.run("alice", &["sync"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("waiting to push {name}")),
        "{}",
        stderr(&out)
    );
    let out = a.run("alice", &["sync", "--now"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(name), "{}", stdout(&out));
    assert_eq!(remote_rev(&bare, name), Some(v2.clone()));

    // A forged version ref (a plain commit): the guard refuses it; sync says so and exits 2.
    let forged = "refs/jules/series/mallory/feat";
    a.repo.git(["update-ref", forged, "HEAD"]);
    let out = a.run("alice", &["--json", "sync", "--now"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc = json(&stdout(&out));
    assert_eq!(doc["series_refused"][0]["name"], forged, "{doc}");
    let reason = doc["series_refused"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("not a series version"), "{reason}");
    assert!(
        stderr(&out).contains(&format!("refused {forged}")),
        "{}",
        stderr(&out)
    );
    assert_eq!(remote_rev(&bare, forged), None);
    a.repo.git(["update-ref", "-d", forged]);

    // A rewrite of a published version (back to v1) is refused too, in the human output as well.
    a.repo.git(["update-ref", name, &v1]);
    let out = a.run("alice", &["sync", "--now"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("refused {name}")),
        "{}",
        stderr(&out)
    );
    assert_eq!(remote_rev(&bare, name), Some(v2));
}

/// Issue 40, finding 2: a clone without refactor's key records versions as refactor. Before, the guard with
/// `--require-signed` took them (it only parsed `series.json`) and every read took them for refactor's.
/// Now the version commit carries refactor's signature (namespace `git-jules-series`), the guard refuses
/// an unsigned one over a real guarded bare remote, every read marks it (`signature.state`, human "NOT
/// VERIFIED … likely forged"), weave refuses it, and under `jules.requireSigned` reads drop it.
#[test]
fn a_version_forged_without_the_personas_key_is_refused_by_the_guard_and_marked_in_reads() {
    let origin = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("refactor");
    let key = key.to_str().unwrap();
    let line = origin.jules_ok(["keys", "new", "refactor", "--out", key]);
    origin.write(".jules/allowed_signers", &format!("{}\n", line.trim()));
    origin.commit_all("trust roots");
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let installed = bare.jules(["guard", "--install", "--require-signed"]);
    assert!(installed.status.success(), "{}", stderr(&installed));

    // The holder of refactor's key records and publishes feat: signed, so the guard takes it.
    let a = origin.clone_of(bare.path());
    a.git(["config", "jules.persona.refactor.signingKey", key]);
    a.jules_ok(["series", "start", "feat"]);
    a.write("x", "x\n");
    a.jules_ok(["series", "commit", "--summary", "Add x", "--rationale", "r"]);
    a.jules_ok(["series", "version", "--persona", "refactor"]);
    a.jules_ok(["sync"]);
    let good = "refs/jules/series/refactor/feat";
    assert_eq!(
        bare.rev(good),
        a.rev(good),
        "a signed version passes the guard"
    );
    let v = json(&a.jules_ok(["--json", "series", "versions", "refactor/feat"]));
    assert_eq!(v["items"][0]["signature"]["state"], "verified", "{v}");

    // The forger: no key, two versions of evil as refactor.
    let f = origin.clone_of(bare.path());
    f.jules_ok(["sync"]);
    f.jules_ok(["series", "start", "evil"]);
    f.write("y", "y\n");
    f.jules_ok(["series", "commit", "--summary", "Add y", "--rationale", "r"]);
    f.jules_ok(["series", "version", "--persona", "refactor"]);
    f.write("y", "y2\n");
    f.jules_ok(["series", "reroll", "1"]);
    f.jules_ok(["series", "version", "--persona", "refactor"]);
    let evil = "refs/jules/series/refactor/evil";
    let out = f.jules(["sync"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("refused {evil}")),
        "{}",
        stderr(&out)
    );
    let out = f.git_output(["push", "origin", &format!("{evil}:{evil}")]);
    assert!(!out.status.success(), "a plain push is refused too");
    assert!(stderr(&out).contains("not verified"), "{}", stderr(&out));
    assert!(stderr(&out).contains("likely forged"), "{}", stderr(&out));
    assert_eq!(bare.rev(evil), None, "nothing of the forgery landed");

    // A clone that fetched the forgery some other way (no guard between) marks it in every read.
    let b = origin.clone_of(bare.path());
    b.jules_ok(["sync"]);
    b.git([
        "fetch",
        "-q",
        f.path().to_str().unwrap(),
        "+refs/jules/series/*:refs/remotes/f/jules/series/*",
    ]);
    b.git([
        "fetch",
        "-q",
        f.path().to_str().unwrap(),
        "+refs/heads/*:refs/remotes/f/*",
    ]);
    let v = json(&b.jules_ok(["--json", "series", "versions", "refactor/evil"]));
    for item in v["items"].as_array().unwrap() {
        assert_eq!(item["signature"]["state"], "unsigned_with_key", "{v}");
    }
    let text = b.jules_ok(["series", "versions", "refactor/evil"]);
    assert!(text.contains("NOT VERIFIED"), "{text}");
    assert!(text.contains("likely forged"), "{text}");
    let text = b.jules_ok(["series", "versions", "refactor/feat"]);
    assert!(!text.contains("NOT VERIFIED"), "{text}");
    let shown = json(&b.jules_ok(["--json", "series", "show", "refactor/evil@v2"]));
    assert_eq!(shown["signature"]["state"], "unsigned_with_key", "{shown}");
    let text = b.jules_ok(["series", "show", "refactor/evil@v2"]);
    assert!(text.contains("NOT VERIFIED"), "{text}");
    let listed = json(&b.jules_ok(["--json", "series", "list", "--all"]));
    let states: Vec<(String, String)> = listed["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["series"].as_str().unwrap().to_owned(),
                s["latest"]["signature"]["state"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![
            ("refactor/evil".to_owned(), "unsigned_with_key".to_owned()),
            ("refactor/feat".to_owned(), "verified".to_owned())
        ]
    );
    let text = b.jules_ok(["series", "list", "--all"]);
    let evil_line = text.lines().find(|l| l.contains("refactor/evil")).unwrap();
    assert!(evil_line.contains("NOT VERIFIED"), "{text}");
    let rd = json(&b.jules_ok([
        "--json",
        "series",
        "range-diff",
        "refactor/evil",
        "v1",
        "v2",
    ]));
    assert_eq!(rd["old_signature"]["state"], "unsigned_with_key", "{rd}");
    assert_eq!(rd["new_signature"]["state"], "unsigned_with_key", "{rd}");
    let out = b.jules(["series", "range-diff", "refactor/evil", "v1", "v2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("NOT VERIFIED"), "{}", stderr(&out));
    let inter = json(&b.jules_ok(["--json", "series", "interdiff", "refactor/evil", "v1", "v2"]));
    assert_eq!(
        inter["new_signature"]["state"], "unsigned_with_key",
        "{inter}"
    );
    let out = b.jules(["series", "interdiff", "refactor/evil", "v1", "v2"]);
    assert!(stderr(&out).contains("likely forged"), "{}", stderr(&out));
    // Weaving a version that is not refactor's refuses, naming why.
    let out = b.jules([
        "weave",
        "--into",
        "jules/integration/s1",
        "refactor/evil@v2",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not verified"), "{}", stderr(&out));
    let out = b.jules([
        "weave",
        "--into",
        "jules/integration/s1",
        "refactor/feat@v1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Under jules.requireSigned the forgery is no version at all: not listed (named as skipped), not shown.
    b.git(["config", "jules.requireSigned", "true"]);
    let listed = json(&b.jules_ok(["--json", "series", "list", "--all"]));
    assert_eq!(listed["series"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["series"][0]["series"], "refactor/feat");
    assert!(
        listed["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "refs/remotes/f/jules/series/refactor/evil"),
        "{listed}"
    );
    for args in [
        &["series", "versions", "refactor/evil"][..],
        &["series", "show", "refactor/evil@v1"],
        &["series", "range-diff", "refactor/evil", "v1", "v2"],
        &["series", "interdiff", "refactor/evil", "v1", "v2"],
        &[
            "weave",
            "--into",
            "jules/integration/s2",
            "refactor/evil@v1",
        ],
    ] {
        let out = b.jules(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not verified"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let v = json(&b.jules_ok(["--json", "series", "versions", "refactor/feat"]));
    assert_eq!(v["items"][0]["signature"]["state"], "verified", "{v}");
}
