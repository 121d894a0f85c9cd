//! `series format`: Markdown, JSON and an mbox that `git am` applies onto the base.

use serde_json::Value;

use crate::harness::{stderr, Repo};

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

const RATIONALE: &str =
    "The parser needs a tokenizer first.\nIt also handles:\n  - trailing commas\n  - empty input";

/// A series with everything a diff can show: text edits with a function context, a binary file, a rename
/// with a mode change, a deletion, a file without a final newline, an empty file, a symlink, a path with a
/// space and one with a non-ASCII name.
fn rich_series(r: &Repo) -> Vec<String> {
    let body: String = (1..=30).map(|i| format!("    line {i}\n")).collect();
    r.write("src/main.c", &format!("int main(void)\n{{\n{body}}}\n"));
    r.write("old name.txt", "moves\nwith\nsome\nlines\n");
    r.write("gone.txt", "to be deleted\n");
    r.commit_all("base files");
    r.jules_ok(["series", "start", "feat"]);
    let mut ids = Vec::new();
    r.write(
        "src/main.c",
        &format!(
            "int main(void)\n{{\n{}}}\n",
            body.replace("    line 20\n", "    line twenty\n")
        ),
    );
    std::fs::write(r.path().join("logo.bin"), [0u8, 1, 2, 3, 255, 0, 7]).unwrap();
    r.jules_ok([
        "series",
        "commit",
        "--summary",
        "Zoë's parser: tokens",
        "--rationale",
        RATIONALE,
    ]);
    ids.push(r.rev("HEAD").unwrap());
    r.git(["mv", "old name.txt", "new name.txt"]);
    r.write("new name.txt", "moves\nwith\nsome\nlines\nand one more\n");
    std::fs::set_permissions(
        r.path().join("new name.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::remove_file(r.path().join("gone.txt")).unwrap();
    r.write("no-newline.txt", "last line");
    r.write("empty.txt", "");
    r.write("café.txt", "non-ASCII path\n");
    std::os::unix::fs::symlink("src/main.c", r.path().join("link")).unwrap();
    r.jules_ok([
        "series",
        "commit",
        "--summary",
        "Rename, delete, add odd files",
        "--rationale",
        "Shapes.",
    ]);
    ids.push(r.rev("HEAD").unwrap());
    ids
}

#[test]
fn mbox_applies_with_git_am_and_recreates_every_tree() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    let ids = rich_series(&r);
    let out = r
        .jules_cmd(["series", "format", "--mbox"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mbox = side.path().join("series.mbox");
    std::fs::write(&mbox, &out.stdout).unwrap();

    r.git(["checkout", "-q", "-b", "applied", "main"]);
    r.git(["am", "-q", mbox.to_str().unwrap()]);
    let applied: Vec<String> = r
        .git(["rev-list", "--reverse", "main..applied"])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(applied.len(), ids.len());
    for (a, b) in applied.iter().zip(&ids) {
        assert_eq!(
            r.git(["rev-parse", &format!("{a}^{{tree}}")]),
            r.git(["rev-parse", &format!("{b}^{{tree}}")]),
            "git am recreates the tree of {b}"
        );
        assert_eq!(
            r.git(["log", "-1", "--format=%an|%ae|%at|%B", a]),
            r.git(["log", "-1", "--format=%an|%ae|%at|%B", b]),
            "author, date and the whole message (multi-line rationale included) survive"
        );
    }
}

#[test]
fn diffs_are_exactly_gits() {
    let r = Repo::new();
    let ids = rich_series(&r);
    let doc = json(&r.jules_ok(["--json", "series", "format"]));
    for (p, id) in doc["patches"].as_array().unwrap().iter().zip(&ids) {
        let git = r.git([
            "-c",
            "core.quotePath=true",
            "diff",
            "--histogram",
            "-M",
            "--full-index",
            "--binary",
            &format!("{id}~1"),
            id,
        ]);
        let ours = p["diff"].as_str().unwrap();
        // `git diff` prints the binary literal with its own zlib stream; compare everything else exactly.
        let strip = |d: &str| -> String {
            let mut out = String::new();
            let mut in_binary = false;
            for line in d.lines() {
                if line == "GIT binary patch" {
                    in_binary = true;
                } else if line.starts_with("diff --git") {
                    in_binary = false;
                }
                if !in_binary || line.starts_with("literal") {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            out
        };
        assert_eq!(strip(ours.trim_end()), strip(&git));
        // The binary literal itself: `git apply` outside any repository (so it cannot take the blob the
        // `index` line names from the object store, and must decode our payload) applies our diff to the
        // parent's files; they must then be the commit's, byte for byte.
        let scratch = tempfile::tempdir().unwrap();
        let (before, after) = (scratch.path().join("before"), scratch.path().join("after"));
        let extract = |rev: &str, into: &std::path::Path| {
            std::fs::create_dir_all(into).unwrap();
            let tar = into.with_extension("tar");
            r.git(["archive", "-o", tar.to_str().unwrap(), rev]);
            let out = std::process::Command::new("tar")
                .args(["-xf", tar.to_str().unwrap(), "-C", into.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(out.status.success(), "tar: {}", stderr(&out));
        };
        extract(&format!("{id}~1"), &before);
        extract(id, &after);
        let patch = scratch.path().join("p.diff");
        std::fs::write(&patch, format!("{}\n", ours.trim_end())).unwrap();
        let out = r
            .git_cmd(["apply", patch.to_str().unwrap()])
            .current_dir(&before)
            .env("GIT_CEILING_DIRECTORIES", scratch.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git apply: {}", stderr(&out));
        assert_eq!(
            files_in(&before),
            files_in(&after),
            "our diff of {id}, applied by git, is the commit"
        );
    }
}

#[test]
fn markdown_and_json_carry_the_whole_rationale() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    let ids = rich_series(&r);
    let md = r.jules_ok(["series", "format"]);
    assert!(
        md.starts_with("# Series `feat`: 2 patches on `main`"),
        "{md}"
    );
    assert!(
        md.contains(&format!("### Rationale\n\n{RATIONALE}\n")),
        "{md}"
    );
    assert!(md.contains("| 1/2 |"), "{md}");
    assert!(
        md.contains("```diff\ndiff --git a/logo.bin b/logo.bin"),
        "{md}"
    );
    // The cover letter's shortstat is the whole series'.
    let shortstat = r.git(["diff", "--shortstat", "main", "jules/staging/feat"]);
    assert!(md.contains(shortstat.trim()), "{md}");

    let doc = json(&r.jules_ok(["--json", "series", "format"]));
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["series"], "feat");
    assert_eq!(doc["base"]["name"], "main");
    assert_eq!(doc["patches"][0]["rationale"], RATIONALE);
    assert_eq!(doc["patches"][0]["commit"], ids[0].as_str());
    assert_eq!(doc["patches"][0]["summary"], "Zoë's parser: tokens");
    assert_eq!(doc["patches"][1]["rationale"], "Shapes.");
    let numstat = |id: &str| r.git(["diff", "--shortstat", &format!("{id}~1"), id]);
    assert_eq!(
        doc["patches"][0]["shortstat"]["insertions"]
            .as_u64()
            .unwrap(),
        1
    );
    assert!(numstat(&ids[0]).contains("1 insertion(+), 1 deletion(-)"));

    // -o DIR writes files like git format-patch.
    let dir = side.path().join("out");
    let listed = r.jules_ok(["series", "format", "--mbox", "-o", dir.to_str().unwrap()]);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // The names git format-patch gives the same commits.
    let git_dir = side.path().join("git-out");
    r.git([
        "format-patch",
        "-q",
        "--cover-letter",
        "-o",
        git_dir.to_str().unwrap(),
        "main..jules/staging/feat",
    ]);
    let mut git_names: Vec<String> = std::fs::read_dir(&git_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    git_names.sort();
    assert_eq!(names, git_names);
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(listed.lines().count(), 3);
    let cover = std::fs::read_to_string(dir.join("0000-cover-letter.patch")).unwrap();
    assert!(
        cover.contains("Subject: [PATCH 0/2] Series feat"),
        "{cover}"
    );
    assert!(cover.contains("  1/2 Zoë's parser: tokens"), "{cover}");
    // Each patch file against git format-patch's for the same commit: the From line (commit id and the
    // fixed date), the headers (From, Date, the RFC 2047-encoded Subject with its numbering), the message,
    // the diffstat and the signature, byte for byte; the diff itself is `diffs_are_exactly_gits`'s.
    for name in names.iter().filter(|n| !n.starts_with("0000-")) {
        let ours = std::fs::read_to_string(dir.join(name)).unwrap();
        let gits = std::fs::read_to_string(git_dir.join(name)).unwrap();
        std::fs::write(format!("/tmp/ours-{name}"), without_diff(&ours)).unwrap();
        std::fs::write(format!("/tmp/gits-{name}"), without_diff(&gits)).unwrap();
        assert_eq!(
            without_diff(&ours),
            without_diff(&gits),
            "{name}: ours\n{ours}\ngit's\n{gits}"
        );
    }
    let gits_cover = std::fs::read_to_string(git_dir.join("0000-cover-letter.patch")).unwrap();
    assert_eq!(
        cover.lines().next(),
        gits_cover.lines().next(),
        "the cover letter's From line"
    );
}

/// Every file under `dir` (symlinks as their targets), by relative path, with its bytes.
fn files_in(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, target.to_string_lossy().into_owned().into_bytes());
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A format-patch file without its diff body (the lines from the first `diff --git` to the signature
/// separator `-- `): what `git format-patch` writes around the diff. The signature's one line is the
/// writer's name and version (`2.47.3` from git, `git-jules 0.1.0` from us, on purpose): it becomes
/// `<version>`, after a check that ours names git-jules.
fn without_diff(patch: &str) -> String {
    let mut out = String::new();
    let mut in_diff = false;
    let mut signature = false;
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            in_diff = true;
        } else if line == "-- \n" {
            in_diff = false;
            signature = true;
            out.push_str(line);
            continue;
        }
        if signature {
            signature = false;
            if !line.starts_with(|c: char| c.is_ascii_digit()) {
                assert_eq!(
                    line,
                    format!("git-jules {}\n", env!("CARGO_PKG_VERSION")),
                    "our signature"
                );
            }
            out.push_str("<version>\n");
        } else if !in_diff {
            out.push_str(line);
        }
    }
    out
}
