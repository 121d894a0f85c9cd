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
}
