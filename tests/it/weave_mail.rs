//! Weave reads mails and diffs as `git am`, `git mailinfo` and `git apply` do: every test runs git on the
//! same input in the same test and compares commits (message, author, date, tree) or trees.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{stderr, stdout, with_stdin, Repo};

/// One commit as both sides are compared: author `name <email> seconds offset`, message, tree.
#[derive(Debug, PartialEq, Eq)]
struct Commit {
    author: String,
    message: String,
    tree: String,
}

const A: &str = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n";

/// main with `a.txt` (ten lines) and `dir/b.txt`.
fn base() -> Repo {
    let r = Repo::new();
    r.write("a.txt", A);
    r.write("dir/b.txt", "b\n");
    r.commit_all("base");
    r
}

fn commit_of(r: &Repo, id: &str) -> Commit {
    let out = r.git([
        "log",
        "-1",
        "--date=raw",
        "--format=%an <%ae> %ad%x00%T%x00%B",
        id,
    ]);
    let mut parts = out.splitn(3, '\0');
    let author = parts.next().unwrap().to_owned();
    let tree = parts.next().unwrap().to_owned();
    let message: String = parts
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("Woven-from: ") && !l.starts_with("Woven-id: "))
        .collect::<Vec<_>>()
        .join("\n");
    Commit {
        author,
        message: message.trim_end().to_owned(),
        tree,
    }
}

fn commits(r: &Repo, range: &str) -> Vec<Commit> {
    let list = r.git(["rev-list", "--reverse", range]);
    list.lines().map(|c| commit_of(r, c)).collect()
}

fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `git am [args] mbox` on a detached main: the commits, or git's complaint.
fn git_am(r: &Repo, mbox: &Path, args: &[&str]) -> Result<Vec<Commit>, String> {
    r.git(["checkout", "-q", "--detach", "main"]);
    let mut all = vec!["am"];
    all.extend_from_slice(args);
    let m = mbox.display().to_string();
    all.push(&m);
    let out = r.git_output(&all);
    let result = if out.status.success() {
        Ok(commits(r, "main..HEAD"))
    } else {
        let msg = format!("{}{}", stdout(&out), stderr(&out));
        r.git_output(["am", "--abort"]);
        Err(msg)
    };
    r.git(["checkout", "-q", "main"]);
    result
}

/// `git apply` of a plain diff onto main's tree: the resulting tree, or git's complaint.
fn git_apply_tree(r: &Repo, diff: &Path) -> Result<String, String> {
    r.git(["checkout", "-q", "--detach", "main"]);
    let out = r.git_output(["apply", "--index", &diff.display().to_string()]);
    let result = if out.status.success() {
        Ok(r.git(["write-tree"]).trim().to_owned())
    } else {
        Err(stderr(&out))
    };
    r.git(["reset", "-q", "--hard", "main"]);
    r.git(["checkout", "-q", "main"]);
    result
}

/// `git jules --json weave --no-mail --into INTO [args] FILES…`: the report, the exit code, the commits.
fn weave(r: &Repo, into: &str, args: &[&str], files: &[&Path]) -> (Value, i32, Vec<Commit>) {
    let mut all: Vec<String> = ["--json", "weave", "--no-mail", "--into", into]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(files.iter().map(|f| f.display().to_string()));
    let out = r.jules(&all);
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "weave exited {code}: {}",
        stderr(&out)
    );
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    let list = if r.rev(into).is_some() {
        commits(r, &format!("main..{into}"))
    } else {
        Vec::new()
    };
    (v, code, list)
}

const FP: &str = "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n";

/// The diff changing line 3 of `a.txt`, after the `---` line.
const DIFF: &str = "---
 a.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -2,3 +2,3 @@
 line 2
-line 3
+line three
 line 4
-- 
2.47.3

";

fn mail(headers: &str, body: &str) -> Vec<u8> {
    format!("{FP}{headers}\n{body}").into_bytes()
}

const HEAD: &str =
    "From: Ada Lovelace <ada@example.org>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\nSubject: [PATCH] change line 3\n";

/// Weave and `git am` agree on `bytes`: same commits, or both refuse it.
fn same_as_am(name: &str, bytes: &[u8]) -> (Value, Vec<Commit>) {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let f = file(&dir, &format!("{name}.patch"), bytes);
    let am = git_am(&r, &f, &[]);
    let (rep, code, woven) = weave(&r, &format!("w/{name}"), &[], &[&f]);
    match am {
        Ok(am) => {
            assert_eq!(code, 0, "{name}: git am applied it, weave did not: {rep:#}");
            assert_eq!(woven, am, "{name}: weave differs from git am");
            (rep, am)
        }
        Err(e) => {
            assert_eq!(
                code, 1,
                "{name}: git am refused it ({e}), weave took it: {rep:#}"
            );
            assert_eq!(
                rep["failed"].as_array().map(Vec::len),
                Some(1),
                "{name}: {rep:#}"
            );
            assert!(woven.is_empty());
            (rep, Vec::new())
        }
    }
}

#[test]
fn mnemonic_prefixes_are_stripped_like_git_apply() {
    for (a, b) in [("i", "w"), ("c", "w"), ("o", "w"), ("c", "i")] {
        let diff = DIFF
            .replace("a/a.txt", &format!("{a}/a.txt"))
            .replace("b/a.txt", &format!("{b}/a.txt"));
        let (_, am) = same_as_am(
            &format!("mnemonic-{a}{b}"),
            &mail(HEAD, &format!("Body.\n{diff}")),
        );
        assert_eq!(am.len(), 1);
    }
}

#[test]
fn an_indented_first_body_line_keeps_its_indentation() {
    let body = format!("    git branch (--set-upstream-to)\n\nmore words\n{DIFF}");
    let (_, am) = same_as_am("indent", &mail(HEAD, &body));
    assert!(
        am[0].message.contains("\n\n    git branch"),
        "{:?}",
        am[0].message
    );
}

#[test]
fn utf8_subject_does_not_panic_and_matches() {
    let head = HEAD.replace("[PATCH] change line 3", "Изменён файл");
    let (_, am) = same_as_am("utf8", &mail(&head, &format!("Тело.\n{DIFF}")));
    assert!(am[0].message.starts_with("Изменён файл"));
    let head = HEAD.replace("[PATCH] change line 3", "[PATCH] 変更");
    same_as_am("cjk", &mail(&head, &format!("本文\n{DIFF}")));
}

#[test]
fn multipart_attach_and_inline_match_git_am() {
    let r = base();
    r.git(["switch", "-q", "-c", "src"]);
    r.write("a.txt", &A.replace("line 3\n", "line three\n"));
    r.git(["add", "-A"]);
    r.git([
        "-c",
        "user.name=Zoë Attach",
        "-c",
        "user.email=zoe@example.org",
        "commit",
        "-qm",
        "attach: change line 3\n\nWith a body line.\n\nSigned-off-by: Zoë Attach <zoe@example.org>",
    ]);
    r.git(["switch", "-q", "main"]);
    let dir = tempfile::tempdir().unwrap();
    for mode in ["--attach", "--inline"] {
        let text = r.git(["format-patch", "--stdout", mode, "main..src"]);
        assert!(text.contains("Content-Type: multipart/mixed"), "{text}");
        let f = file(&dir, &format!("{mode}.patch"), text.as_bytes());
        let am = git_am(&r, &f, &[]).unwrap();
        let (rep, code, woven) = weave(&r, &format!("w/{}", &mode[2..]), &[], &[&f]);
        assert_eq!(code, 0, "{rep:#}");
        assert_eq!(woven, am, "{mode}");
        assert!(!woven[0].message.contains("MIME"), "{:?}", woven[0].message);
    }
}

#[test]
fn iso_8859_1_rfc2047_and_iso_2022_jp_headers_are_converted() {
    // Raw ISO-8859-1 body with its charset, RFC 2047 Q and B words in several charsets.
    let mut m = FP.as_bytes().to_vec();
    m.extend_from_slice(
        b"From: =?ISO8859-1?Q?Ren=E9_M=FCller?= <rene@example.org>\n\
Date: Sat, 9 Mar 2024 16:00:00 +0100\n\
Subject: [PATCH] =?iso-8859-1?q?caf=E9?= and =?ISO-2022-JP?B?GyRCRnxLXDhsGyhC?=\n\
MIME-Version: 1.0\n\
Content-Type: text/plain; charset=ISO-8859-1\n\
Content-Transfer-Encoding: 8bit\n\nR\xe9sum\xe9 of the change.\n\nSigned-off-by: Ren\xe9 M\xfcller <rene@example.org>\n",
    );
    m.extend_from_slice(DIFF.as_bytes());
    let (_, am) = same_as_am("latin1", &m);
    assert!(
        am[0].author.starts_with("René Müller <rene@example.org>"),
        "{:?}",
        am[0]
    );
    assert!(am[0].message.contains("日本語"), "{:?}", am[0].message);
    assert!(am[0].message.contains("Signed-off-by: René Müller"));
}

#[test]
fn in_body_headers_valid_folded_and_invalid() {
    // Valid: From, Date and Subject in the body override the mail's.
    let body = format!(
        "From: Grace Hopper <grace@example.org>\nDate: Mon, 1 Jan 2024 10:00:00 +0000\nSubject: the real subject\n\nBody.\n{DIFF}"
    );
    let (_, am) = same_as_am("inbody", &mail(HEAD, &body));
    assert!(am[0]
        .author
        .starts_with("Grace Hopper <grace@example.org> 1704103200"));
    // Folded in-body From, and a comment in the name.
    let body = format!("From: Grace\n Hopper (Navy) <grace@example.org>\n\nBody.\n{DIFF}");
    let (_, am) = same_as_am("folded", &mail(HEAD, &body));
    assert!(
        am[0]
            .author
            .starts_with("Grace Hopper (Navy) <grace@example.org>"),
        "{:?}",
        am[0]
    );
    // A `[PATCH] …` first line is the subject.
    let body = format!("[PATCH] subject from the body\n\nBody.\n{DIFF}");
    let (_, am) = same_as_am("patchline", &mail(HEAD, &body));
    assert!(am[0].message.starts_with("subject from the body\n"));
    // In-body From after quoted-printable decoding.
    let head = format!("{HEAD}Content-Transfer-Encoding: quoted-printable\n");
    let body = format!("From: Gr=C3=A2ce <grace@example.org>\n\nBody =3D QP.\n{DIFF}");
    let (_, am) = same_as_am("qp-inbody", &mail(&head, &body));
    assert!(
        am[0].author.starts_with("Grâce <grace@example.org>"),
        "{:?}",
        am[0]
    );
    // Invalid ones: git am refuses, and so does weave (one failed input, exit 1).
    same_as_am(
        "bogus-from",
        &mail(HEAD, &format!("From: bogosity\n\nBody.\n{DIFF}")),
    );
    same_as_am(
        "bogus-date",
        &mail(HEAD, &format!("Date: bogus\n\nBody.\n{DIFF}")),
    );
}

#[test]
fn messages_are_cleaned_like_git_am_stripspace() {
    let body =
        format!("\n\n  Indented first.   \n\n\n\nTrailing spaces   \nand tabs\t\t\n\n\n{DIFF}");
    let (_, am) = same_as_am("stripspace", &mail(HEAD, &body));
    assert!(!am[0].message.contains("\n\n\n"));
}

/// A `format=flowed` mail (`params` after it) with `text` then the diff, its context lines space-stuffed.
fn flowed(head: &str, params: &str, text: &str) -> Vec<u8> {
    let head = format!("{head}Content-Type: text/plain; charset=utf-8; format=flowed{params}\n");
    mail(
        &head,
        &format!("{text}{}", DIFF.replace("\n line ", "\n  line ")),
    )
}

#[test]
fn format_flowed_and_quoted_printable_parts() {
    // format=flowed with delsp=yes: soft breaks are joined, the space before them dropped.
    let m = flowed(
        HEAD,
        "; delsp=yes",
        "This line is wrapped by the mail \nclient, twice \nover.\n",
    );
    let (_, am) = same_as_am("flowed", &m);
    assert!(
        am[0].message.contains("mailclient, twiceover."),
        "{:?}",
        am[0].message
    );
    // A quoted-printable part inside a multipart mail.
    let head =
        format!("{HEAD}MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XyZ\"\n");
    let body = format!(
        "This is a multi-part message in MIME format.\n--XyZ\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable\n\nCaf=C3=A9 =3D body with a soft=\n break.\n{}\n--XyZ--\n",
        DIFF.trim_end()
    );
    let (_, am) = same_as_am("qp-part", &mail(&head, &body));
    assert!(
        am[0].message.contains("Café = body with a soft break."),
        "{:?}",
        am[0].message
    );
    // A base64 body.
    let b64 = "Qm9keSBpbiBiYXNlNjQuCi0tLQpkaWZmIC0tZ2l0IGEvYS50eHQgYi9hLnR4dAotLS0gYS9hLnR4dAor\nKysgYi9hLnR4dApAQCAtMiwzICsyLDMgQEAKIGxpbmUgMgotbGluZSAzCitsaW5lIHRocmVlCiBs\naW5lIDQK\n";
    let head = format!("{HEAD}Content-Transfer-Encoding: base64\n");
    let (_, am) = same_as_am("base64", &mail(&head, b64));
    assert!(am[0].message.contains("Body in base64."));
}

#[test]
fn scissors_follow_mailinfo_scissors() {
    let body = format!(
        "Discussion above the cut.\n\n-- >8 --\nSubject: after the scissors\n\nKept body.\n{DIFF}"
    );
    let m = mail(HEAD, &body);
    // Off by default (as in git am): everything is message.
    let (_, am) = same_as_am("no-scissors", &m);
    assert!(am[0].message.contains("Discussion above"));
    // On with mailinfo.scissors.
    let r = base();
    r.git(["config", "mailinfo.scissors", "true"]);
    let dir = tempfile::tempdir().unwrap();
    let f = file(&dir, "s.patch", &m);
    let am = git_am(&r, &f, &[]).unwrap();
    let (_, code, woven) = weave(&r, "w/s", &[], &[&f]);
    assert_eq!(code, 0);
    assert_eq!(woven, am);
    assert!(
        am[0]
            .message
            .starts_with("after the scissors\n\nKept body."),
        "{:?}",
        am[0].message
    );
}

fn skipped(rep: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for list in ["applied", "already", "skipped", "failed", "conflicted"] {
        for i in rep[list].as_array().unwrap() {
            for s in i["skipped"].as_array().unwrap() {
                out.push((
                    s["name"].as_str().unwrap().to_owned(),
                    s["reason"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    out
}

/// A new branch `src` off main, checked out, whose first commit (`message`) changes line 3 of `a.txt`.
fn switch_to_src_changing_line_3(r: &Repo, message: &str) {
    r.git(["switch", "-q", "-c", "src"]);
    r.write("a.txt", &A.replace("line 3\n", "line three\n"));
    r.commit_all(message);
}

#[test]
fn cover_letters_and_empty_patches_are_reported_by_name() {
    let r = base();
    switch_to_src_changing_line_3(&r, "first change");
    r.write(
        "a.txt",
        &A.replace("line 3\n", "line three\n")
            .replace("line 7\n", "line seven\n"),
    );
    r.commit_all("second change");
    r.git(["commit", "-q", "--allow-empty", "-m", "an empty commit"]);
    r.git(["switch", "-q", "main"]);
    let dir = tempfile::tempdir().unwrap();
    let text = r.git([
        "format-patch",
        "--stdout",
        "--cover-letter",
        "--always",
        "main..src",
    ]);
    let mbox = file(&dir, "series.mbox", text.as_bytes());
    // git am stops at the cover letter; with --empty=drop it drops the cover letter and the empty patch.
    assert!(git_am(&r, &mbox, &[]).is_err());
    let am = git_am(&r, &mbox, &["--empty=drop"]).unwrap();
    let (rep, code, woven) = weave(&r, "w/mbox", &[], &[&mbox]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven, am);
    assert_eq!(
        skipped(&rep),
        [
            (
                "[PATCH 0/3] *** SUBJECT HERE ***".to_owned(),
                "cover-letter".to_owned()
            ),
            ("[PATCH 3/3] an empty commit".to_owned(), "empty".to_owned())
        ]
    );
    // The same mails as separate files: the same names and reasons, the files as inputs of their own.
    let files_dir = tempfile::tempdir().unwrap();
    let out = files_dir.path().display().to_string();
    r.git([
        "format-patch",
        "-q",
        "--cover-letter",
        "--always",
        "-o",
        &out,
        "main..src",
    ]);
    let mut files: Vec<PathBuf> = std::fs::read_dir(files_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (rep, code, woven2) = weave(&r, "w/files", &[], &refs);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven2, am);
    assert_eq!(
        skipped(&rep),
        skipped(&weave(&r, "w/mbox2", &["--check"], &[&mbox]).0)
    );
    assert_eq!(rep["skipped"].as_array().unwrap().len(), 2, "{rep:#}");
    // The human report names them too.
    let human = r.jules([
        "weave",
        "--no-mail",
        "--check",
        "--into",
        "w/h",
        &mbox.display().to_string(),
    ]);
    let text = stdout(&human);
    assert!(
        text.contains("skipped: cover letter: [PATCH 0/3] *** SUBJECT HERE ***"),
        "{text}"
    );
    assert!(
        text.contains("skipped: empty: [PATCH 3/3] an empty commit"),
        "{text}"
    );
    // --empty=stop fails the input as git am does; --empty=keep records the empty commit as git am does.
    let (rep, code, _) = weave(&r, "w/stop", &["--empty=stop"], &[&mbox]);
    assert_eq!(code, 1);
    assert_eq!(rep["failed"].as_array().unwrap().len(), 1);
    let kept_dir = tempfile::tempdir().unwrap();
    let one = r.git(["format-patch", "--stdout", "--always", "src~1..src"]);
    let one = file(&kept_dir, "empty.patch", one.as_bytes());
    let am = git_am(&r, &one, &["--empty=keep"]).unwrap();
    let (rep, code, woven) = weave(&r, "w/keep", &["--empty=keep"], &[&one]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven, am);
}

#[test]
fn traditional_diffs_in_all_four_shapes_match_git_apply() {
    let r = base();
    let shapes = [
        // .orig names with timestamps after a tab.
        ("orig", "--- a.txt.orig\t2024-03-09 16:00:00.000000000 +0100\n+++ a.txt\t2024-03-09 16:05:00.000000000 +0100\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n"),
        // diff -N: a creation whose old name is not /dev/null but carries the epoch.
        ("dash-n", "diff -Nu old/new.txt new/new.txt\n--- old/new.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ new/new.txt\t2024-03-09 16:05:00.000000000 +0100\n@@ -0,0 +1,2 @@\n+fresh\n+file\n"),
        // names with a tab and no timestamp, one directory deep (-p1).
        ("tab", "--- x/dir/b.txt\t\n+++ y/dir/b.txt\t\n@@ -1 +1 @@\n-b\n+bee\n"),
        // timestamps after spaces, no tab; a deletion marked by the epoch on the new side.
        ("spaces", "--- a/dir/b.txt 2024-03-09 16:00:00 +0100\n+++ b/dir/b.txt 1970-01-01 00:00:00 +0000\n@@ -1 +0,0 @@\n-b\n"),
    ];
    for (name, text) in shapes {
        same_as_apply(&r, name, text.as_bytes());
    }
}

#[test]
fn git_extended_headers_match_git_apply() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let text = "diff --git a/a.txt b/c.txt\nsimilarity index 90%\nrename from a.txt\nrename to c.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/c.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\ndiff --git a/dir/b.txt b/dir/b.txt\nold mode 100644\nnew mode 100755\ndiff --git a/dir/b.txt b/dir/copy.txt\nsimilarity index 100%\ncopy from dir/b.txt\ncopy to dir/copy.txt\ndiff --git a/n.txt b/n.txt\nnew file mode 100755\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n";
    let f = file(&dir, "ext.diff", text.as_bytes());
    let want = git_apply_tree(&r, &f).unwrap();
    let (rep, code, woven) = weave(&r, "w/ext", &[], &[&f]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven[0].tree, want);
}

#[test]
fn adjacent_appends_name_their_counterpart() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let one = "--- a/a.txt\n+++ b/a.txt\n@@ -9,2 +9,3 @@\n line 9\n line 10\n+appended by one\n";
    let two = "--- a/a.txt\n+++ b/a.txt\n@@ -9,2 +9,3 @@\n line 9\n line 10\n+appended by two\n";
    let f1 = file(&dir, "one.diff", one.as_bytes());
    let f2 = file(&dir, "two.diff", two.as_bytes());
    // git: the second no longer applies once the first is in.
    let r2 = base();
    r2.git(["apply", "--index", &f1.display().to_string()]);
    r2.commit_all("one");
    assert!(!r2
        .git_output(["apply", "--check", &f2.display().to_string()])
        .status
        .success());
    let (rep, code, _) = weave(&r, "w/adj", &[], &[&f1, &f2]);
    assert_eq!(code, 1, "{rep:#}");
    let c = &rep["conflicted"][0];
    let cps: Vec<&Value> = c["conflicts"][0]["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["counterparts"].as_array().unwrap())
        .chain(c["conflicts"][0]["counterparts"].as_array().unwrap())
        .collect();
    assert!(
        cps.iter()
            .any(|cp| cp["input"].as_str().unwrap().ends_with("one.diff")),
        "{rep:#}"
    );
}

#[test]
fn a_conflicting_patch_file_is_mailed_as_an_attachment() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let patch = mail(
        "From: Refactor <refactor@jules.invalid>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\nSubject: [PATCH] change line 3\n",
        &format!("Body.\n{DIFF}"),
    );
    let f = file(&dir, "change.patch", &patch);
    r.write("a.txt", &A.replace("line 3\n", "line 3 ours\n"));
    r.commit_all("main changes line 3");
    assert!(git_am(&r, &f, &[]).is_err());
    let out = r.jules([
        "--json",
        "weave",
        "--into",
        "w/mail",
        &f.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let inbox: Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "inbox", "--persona", "refactor"]))
            .unwrap();
    let msgs = inbox["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 1);
    let id = msgs[0]["id"].as_str().unwrap();
    let body = r.jules_ok(["mail", "show", id]);
    assert!(body.contains("git jules mail attachment"), "{body}");
    assert!(
        !body.contains(&dir.path().display().to_string()),
        "a path of the weaver's machine: {body}"
    );
    // The attachment is the patch, byte for byte, and git am takes it back once rebased.
    let got = r.jules(["mail", "attachment", id, "change.patch"]);
    assert!(got.status.success(), "{}", stderr(&got));
    assert_eq!(got.stdout, patch);
}

#[test]
fn one_hostile_author_and_one_huge_path_fail_alone_and_fsck_strict_passes() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let good1 = mail(HEAD, &format!("Good one.\n{DIFF}"));
    // RFC 2047 author that decodes to a name with `<` and a newline.
    let evil = mail(
        "From: =?UTF-8?B?RXZlIDwKRXZpbA==?= <eve@example.org>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\nSubject: [PATCH] evil\n",
        "Evil.\n---\ndiff --git a/evil.txt b/evil.txt\nnew file mode 100644\n--- /dev/null\n+++ b/evil.txt\n@@ -0,0 +1 @@\n+evil\n",
    );
    let nul = mail(
        "From: =?UTF-8?Q?Nul=00Name?= <nul@example.org>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\nSubject: [PATCH] nul\n",
        "Nul.\n---\ndiff --git a/nul.txt b/nul.txt\nnew file mode 100644\n--- /dev/null\n+++ b/nul.txt\n@@ -0,0 +1 @@\n+nul\n",
    );
    let long = "p".repeat(5000);
    let huge = mail(
        "From: Long <long@example.org>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\nSubject: [PATCH] huge path\n",
        &format!("Huge.\n---\ndiff --git a/{long} b/{long}\nnew file mode 100644\n--- /dev/null\n+++ b/{long}\n@@ -0,0 +1 @@\n+x\n"),
    );
    let good2 = mail(
        HEAD,
        "Good two.\n---\ndiff --git a/dir/b.txt b/dir/b.txt\n--- a/dir/b.txt\n+++ b/dir/b.txt\n@@ -1 +1 @@\n-b\n+good\n",
    );
    let files = [
        file(&dir, "1-good.patch", &good1),
        file(&dir, "2-evil.patch", &evil),
        file(&dir, "3-nul.patch", &nul),
        file(&dir, "4-huge.patch", &huge),
        file(&dir, "5-good.patch", &good2),
    ];
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let out = r.jules(
        ["--json", "weave", "--into", "w/hostile"]
            .into_iter()
            .map(String::from)
            .chain(files.iter().map(|f| f.display().to_string())),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rep: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names = |list: &str| -> Vec<String> {
        rep[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                Path::new(i["input"].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    // `Eve <` + newline: git am's mailinfo turns a name holding `<` into the address, so does weave.
    assert_eq!(
        names("applied"),
        ["1-good.patch", "2-evil.patch", "5-good.patch"],
        "{rep:#}"
    );
    assert_eq!(names("failed"), ["3-nul.patch", "4-huge.patch"], "{rep:#}");
    let evil_am = git_am(&r, &files[1], &[]).unwrap();
    assert!(evil_am[0]
        .author
        .starts_with("eve@example.org <eve@example.org>"));
    let woven = commits(&r, "main..w/hostile");
    assert_eq!(woven[1].author, evil_am[0].author);
    // The NUL: git am's commit would carry it in the header; weave names it and skips the patch.
    assert!(
        rep["failed"][0]["error"].as_str().unwrap().contains("NUL"),
        "{rep:#}"
    );
    assert!(
        rep["failed"][1]["error"]
            .as_str()
            .unwrap()
            .contains("largePathname"),
        "{rep:#}"
    );
    for f in rep["failed"].as_array().unwrap() {
        let e = f["error"].as_str().unwrap();
        assert!(e.len() < 400, "the error is short: {e}");
        // Each failure is mailed to its author's persona, by the patch's file name.
        assert_eq!(f["mail"]["status"], "sent", "{f:#}");
        let subject = f["mail"]["subject"].as_str().unwrap();
        assert!(
            subject.starts_with("Cannot weave ") && subject.ends_with(".patch"),
            "{subject}"
        );
        assert!(
            !subject.contains(&dir.path().display().to_string()),
            "{subject}"
        );
    }
    let _ = refs;
    let fsck = r.git_output(["fsck", "--strict", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "git fsck --strict: {}{}",
        stdout(&fsck),
        stderr(&fsck)
    );
    // The rules are real: the tree weave refused to write is one git fsck --strict rejects.
    let scratch = Repo::new();
    let blob = scratch
        .git(["hash-object", "-w", "README"])
        .trim()
        .to_owned();
    let mut mktree = scratch.git_cmd(["mktree"]);
    let out = with_stdin(
        &mut mktree,
        format!("100644 blob {blob}\t{long}\n").as_bytes(),
    );
    let tree = stdout(&out).trim().to_owned();
    let commit = scratch
        .git(["commit-tree", "-m", "huge", &tree])
        .trim()
        .to_owned();
    scratch.git(["update-ref", "refs/heads/huge", &commit]);
    let fsck = scratch.git_output(["fsck", "--strict", "--no-dangling"]);
    assert!(!fsck.status.success());
    assert!(stderr(&fsck).contains("largePathname") || stdout(&fsck).contains("largePathname"));
}

#[test]
fn a_large_weave_is_one_pack_with_an_index_git_verifies() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..40)
        .map(|i| {
            let m = mail(
                HEAD,
                &format!(
                    "Add f{i}.\n---\ndiff --git a/d{i}/f{i}.txt b/d{i}/f{i}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/d{i}/f{i}.txt\n@@ -0,0 +1 @@\n+{i}\n"
                ),
            );
            file(&dir, &format!("{i:03}.patch"), &m)
        })
        .collect();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let packs = || std::fs::read_dir(r.path().join(".git/objects/pack")).map_or(0, |d| d.count());
    assert_eq!(packs(), 0);
    let (rep, code, woven) = weave(&r, "w/large", &[], &refs);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven.len(), 40);
    assert_eq!(packs(), 2, "one .pack and its .idx");
    let idx = std::fs::read_dir(r.path().join(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .unwrap();
    let v = r.git_output(["verify-pack", "-v", &idx.display().to_string()]);
    assert!(v.status.success(), "{}", stderr(&v));
    let fsck = r.git_output(["fsck", "--strict", "--no-dangling"]);
    assert!(fsck.status.success(), "{}{}", stdout(&fsck), stderr(&fsck));
    // git reads every object through the new index.
    assert_eq!(
        r.git(["cat-file", "-p", "w/large:d39/f39.txt"]).trim(),
        "39"
    );
}

/// A real series, as `git format-patch --binary` writes it: a large text file changed in several far-apart
/// places and a binary file changed by a few bytes (delta binary patches), again and again, beside new files.
/// Weave makes the commits `git am` makes, and writes them as one pack that holds deltas (each entry
/// compressed on its own thread, then laid out in order) and that `git verify-pack` and `git fsck --strict`
/// accept.
#[test]
fn a_series_of_text_and_binary_changes_is_one_pack_git_verifies() {
    let r = base();
    r.git(["checkout", "-q", "-b", "src"]);
    let text = |k: usize| -> String {
        (0..4000)
            .map(|i| match i % 700 {
                0 => format!("line {i}, changed by {k}\n"),
                _ => format!("line {i}\n"),
            })
            .collect()
    };
    let mut seed = 7u32;
    let mut binary: Vec<u8> = (0..96 * 1024)
        .map(|_| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as u8
        })
        .collect();
    for k in 0..24usize {
        r.write("big.txt", &text(k));
        binary[k * 3000..k * 3000 + 16].fill(k as u8);
        std::fs::write(r.path().join("bin.dat"), &binary).unwrap();
        r.write(&format!("d/f{k}.txt"), &format!("{k}\n"));
        if k == 12 {
            std::fs::write(r.path().join("new.bin"), &binary[..5000]).unwrap();
        }
        r.commit_all(&format!("change {k}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let mbox = r.git(["format-patch", "--binary", "--stdout", "main..src"]);
    assert!(mbox.contains("\ndelta ") && mbox.contains("\nliteral "));
    let f = file(&dir, "series.mbox", mbox.as_bytes());
    r.git(["checkout", "-q", "main"]);
    let am = git_am(&r, &f, &[]).unwrap();
    assert_eq!(am.len(), 24);
    let packs = || {
        std::fs::read_dir(r.path().join(".git/objects/pack"))
            .map(|d| d.map(|e| e.unwrap().path()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert!(packs().is_empty());
    let (rep, code, woven) = weave(&r, "w/series", &[], &[&f]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven, am);
    let idx = packs()
        .into_iter()
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .expect("one pack");
    let v = r.git_output(["verify-pack", "-v", &idx.display().to_string()]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stdout(&v).contains("chain length = 2:"), "{}", stdout(&v));
    let fsck = r.git_output(["fsck", "--strict", "--no-dangling"]);
    assert!(fsck.status.success(), "{}{}", stdout(&fsck), stderr(&fsck));
}

#[test]
fn dash_p_strips_like_git_apply_and_git_am() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    // `--no-prefix` (what `diff.noprefix` writes): only -p0 reads it right.
    let noprefix =
        "diff --git dir/b.txt dir/b.txt\n--- dir/b.txt\n+++ dir/b.txt\n@@ -1 +1 @@\n-b\n+bee\n";
    // Two components of prefix: -p2.
    let deep = "diff --git x/y/a.txt x/y/a.txt\n--- x/y/a.txt\n+++ x/y/a.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n";
    for (name, text, p) in [("noprefix", noprefix, "0"), ("deep", deep, "2")] {
        let f = file(&dir, &format!("{name}.diff"), text.as_bytes());
        r.git(["checkout", "-q", "--detach", "main"]);
        let out = r.git_output([
            "apply",
            "--index",
            &format!("-p{p}"),
            &f.display().to_string(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let want = r.git(["write-tree"]).trim().to_owned();
        r.git(["reset", "-q", "--hard", "main"]);
        r.git(["checkout", "-q", "main"]);
        let (rep, code, woven) = weave(&r, &format!("w/{name}"), &["-p", p], &[&f]);
        assert_eq!(code, 0, "{name}: {rep:#}");
        assert_eq!(woven[0].tree, want, "{name}");
    }
    // And a mail, against git am -p0.
    let m = mail(HEAD, &format!("Body.\n---\n{noprefix}"));
    let f = file(&dir, "noprefix.patch", &m);
    let am = git_am(&r, &f, &["-p0"]).unwrap();
    let (_, code, woven) = weave(&r, "w/am-p0", &["-p", "0"], &[&f]);
    assert_eq!(code, 0);
    assert_eq!(woven, am);
}

#[test]
fn rfc2047_words_next_to_each_other_join_as_mailinfo_joins_them() {
    // RFC 2047 §6.2: white space between two encoded words goes, inside parentheses too; literal text
    // (the parentheses, white space next to them) stays as written.
    let cases = [
        ("(=?UTF-8?Q?a?= =?UTF-8?Q?b?=)", "(ab)"),
        ("( =?UTF-8?Q?a?= =?UTF-8?Q?b?= )", "( ab )"),
        ("(=?UTF-8?Q?a_?=\t =?UTF-8?B?Yg==?=)", "(a b)"),
        ("x =?UTF-8?Q?a?= y =?UTF-8?Q?b?=", "x a y b"),
    ];
    for (n, (encoded, decoded)) in cases.iter().enumerate() {
        let head = format!(
            "From: Ada Lovelace {encoded} <ada@example.org>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\nSubject: [PATCH] change {encoded} line 3\n"
        );
        let (_, am) = same_as_am(
            &format!("rfc2047-{n}"),
            &mail(&head, &format!("Body.\n{DIFF}")),
        );
        let (subject, author) = (
            am[0].message.lines().next(),
            am[0].author.split(" <").next(),
        );
        assert_eq!(
            (subject, author),
            (
                Some(format!("change {decoded} line 3").as_str()),
                Some(format!("Ada Lovelace {decoded}").as_str())
            ),
            "{encoded}"
        );
    }
    // An `=?` that starts no encoded word: git mailinfo gives up and git am refuses the mail; so does weave.
    let head = HEAD.replace("change line 3", "what =? is this");
    same_as_am("rfc2047-broken", &mail(&head, &format!("Body.\n{DIFF}")));
}

#[test]
fn one_and_two_letter_author_names_stay_as_git_keeps_them() {
    let head = HEAD.replace(
        "Ada Lovelace <ada@example.org>",
        "wm <1234+wm@users.noreply.github.com>",
    );
    let (_, am) = same_as_am("two-letters", &mail(&head, &format!("Body.\n{DIFF}")));
    assert!(am[0].author.starts_with("wm <"), "{:?}", am[0].author);
    // git's own format=flowed vector (t4256) comes from `A <author@example.com>`.
    let head = HEAD.replace("Ada Lovelace <ada@example.org>", "A <author@example.com>");
    let m = flowed(&head, "", "A flowed line \nthat goes on.\n");
    let (_, am) = same_as_am("flowed-author", &m);
    assert!(
        am[0].author.starts_with("A <author@example.com>"),
        "{:?}",
        am[0].author
    );
}

/// Weave and `git apply` give the same tree for `diff` on `r`'s main.
fn same_as_apply(r: &Repo, name: &str, diff: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let f = file(&dir, &format!("{name}.diff"), diff);
    let want = git_apply_tree(r, &f).unwrap_or_else(|e| panic!("{name}: git apply: {e}"));
    let (rep, code, woven) = weave(r, &format!("w/{name}"), &[], &[&f]);
    assert_eq!(code, 0, "{name}: {rep:#}");
    assert_eq!(
        woven.last().unwrap().tree,
        want,
        "{name}: tree differs from git apply"
    );
}

#[test]
fn names_with_tabs_and_damaged_timestamps_match_git_apply() {
    // git's t4135 vectors: a tab inside the name, timestamps after spaces (a mailer ate the tab), zones
    // with a colon, and a creation told only by its single hunk that removes nothing.
    let r = base();
    let creations: [(&str, &[u8]); 4] = [
        ("add-with-tab", b"diff -pruN a/post\timage.txt b/post\timage.txt\n--- a/post\timage.txt\t1969-12-31 18:00:00.000000000 -0600\n+++ b/post\timage.txt\t2010-08-18 20:13:31.628002255 -0500\n@@ -0,0 +1 @@\n+postimage\n"),
        ("damaged", b"diff -pruN a/postimage.txt b/postimage.txt\n--- a/postimage.txt     1969-12-31 18:00:00.000000000 -0600\n+++ b/postimage.txt     2010-08-18 20:13:31.484002255 -0500\n@@ -0,0 +1 @@\n+postimage\n"),
        ("damaged-tz", b"diff -urN -X /usr/people/jes/exclude-linux linux-2.6.12-rc2-mm3-vanilla/post image.txt linux-2.6.12-rc2-mm3/post image.txt\n--- linux-2.6.12-rc2-mm3-vanilla/post image.txt 1969-12-31 16:00:00 -08:00\n+++ linux-2.6.12-rc2-mm3/post image.txt 2005-04-12 02:14:06 -07:00\n@@ -0,0 +1 @@\n+postimage\n"),
        ("funny-tz", b"diff -urN -X /usr/people/jes/exclude-linux linux-2.6.12-rc2-mm3-vanilla/post image.txt linux-2.6.12-rc2-mm3/post image.txt\n--- linux-2.6.12-rc2-mm3-vanilla/post image.txt\t1969-12-31 16:00:00 -08:00\n+++ linux-2.6.12-rc2-mm3/post image.txt\t2005-04-12 02:14:06 -07:00\n@@ -0,0 +1 @@\n+postimage\n"),
    ];
    for (name, diff) in creations {
        same_as_apply(&r, name, diff);
    }
    let r = base();
    r.write("post\timage.txt", "preimage\n");
    r.commit_all("preimage");
    same_as_apply(
        &r,
        "diff-with-tab",
        b"--- post\timage.txt.orig\t2010-08-18 20:13:31.616002255 -0500\n+++ post\timage.txt\t2010-08-18 20:13:31.616002255 -0500\n@@ -1 +1 @@\n-preimage\n+postimage\n",
    );
    assert_eq!(
        r.git(["show", "w/diff-with-tab:post\timage.txt"]).trim(),
        "postimage"
    );
}

#[test]
fn an_overflowing_hunk_header_is_read_as_git_apply_reads_it() {
    // t4100's inline patch: the line numbers overflow a machine word.
    let r = base();
    r.write("file", "a\n");
    r.commit_all("file");
    let diff = b"diff -u a/file b/file\n--- a/file\n+++ b/file\n@@ -98765432109876543210 +98765432109876543210 @@\n-a\n+b\n";
    let dir = tempfile::tempdir().unwrap();
    let f = file(&dir, "overflow.diff", diff);
    let (rep, code, woven) = weave(&r, "w/overflow", &[], &[&f]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(r.git(["show", "w/overflow:file"]).trim(), "b");
    match git_apply_tree(&r, &f) {
        // git up to 2.48 saturates the numbers and places the hunk by its content, as weave does.
        Ok(tree) => assert_eq!(woven[0].tree, tree),
        // git 2.49 refuses it ("corrupt patch"): the difference docs/weave.md names.
        Err(e) => assert!(e.contains("corrupt patch"), "{e}"),
    }
}

#[test]
fn a_patch_to_a_file_renamed_on_the_branch_follows_the_rename_as_git_am_3way() {
    let r = base();
    switch_to_src_changing_line_3(&r, "change line 3");
    r.git(["switch", "-q", "main"]);
    let dir = tempfile::tempdir().unwrap();
    let text = r.git(["format-patch", "--stdout", "main..src"]);
    let f = file(&dir, "change.patch", text.as_bytes());
    r.git(["mv", "a.txt", "moved.txt"]);
    r.git(["commit", "-qm", "rename a.txt"]);
    assert!(git_am(&r, &f, &[]).is_err(), "plain git am cannot apply it");
    let am = git_am(&r, &f, &["-3"]).unwrap();
    let (rep, code, woven) = weave(&r, "w/renamed", &[], &[&f]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(woven, am);
    assert_eq!(
        r.git(["show", "w/renamed:moved.txt"]).trim_end(),
        A.replace("line 3\n", "line three\n").trim_end()
    );
    let notes = rep["applied"][0]["notes"].to_string();
    assert!(notes.contains("3-way"), "{rep:#}");
}

#[test]
fn paths_git_apply_refuses_are_refused_with_the_reason() {
    let r = base();
    let dir = tempfile::tempdir().unwrap();
    let creation = |name: &str| {
        format!("diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+x\n")
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("absolute", creation("/etc/evil"), "absolute"),
        ("dotdot", creation("x/../../y"), "`..` component"),
        ("dot", creation("x/./y"), "`.` component"),
        ("dotgit", creation("x/.GIT/y"), "`.git`"),
        ("dotgit-ntfs", creation("x/.git. /y"), "`.git`"),
        ("git-short", creation("x/GIT~1/y"), "`.git`"),
        ("backslash", creation("x/.git\\y"), "`.git`"),
        (
            "trailing-slash",
            "--- /dev/null\n+++ b/x/y/\n@@ -0,0 +1 @@\n+x\n".into(),
            "ends with /",
        ),
        (
            "traditional-absolute",
            "--- /dev/null\n+++ b//etc/evil\n@@ -0,0 +1 @@\n+x\n".into(),
            "absolute",
        ),
        (
            "gitmodules-link",
            "diff --git a/.gitmodules b/.gitmodules\nnew file mode 120000\n--- /dev/null\n+++ b/.gitmodules\n@@ -0,0 +1 @@\n+x\n".into(),
            "symbolic link",
        ),
        ("inconsistent", creation("x//y"), "inconsistent"),
    ];
    for (name, diff, reason) in &cases {
        let f = file(&dir, &format!("{name}.diff"), diff.as_bytes());
        let git = git_apply_tree(&r, &f);
        assert!(git.is_err(), "{name}: git apply took it: {git:?}");
        let (rep, code, woven) = weave(&r, &format!("w/{name}"), &[], &[&f]);
        assert_eq!(code, 1, "{name}: {rep:#}");
        assert!(woven.is_empty(), "{name}: {woven:?}");
        let error = rep["failed"][0]["error"].as_str().unwrap_or_default();
        assert!(error.contains(reason), "{name}: {reason:?} not in {rep:#}");
    }
    // The one difference on purpose (docs/weave.md): `.git` with a character HFS+ ignores. git on Linux
    // (core.protectHFS off) takes it; weave refuses it, so that a clone on a Mac is safe.
    let hfs = file(&dir, "hfs.diff", creation(".g\u{200c}it/x").as_bytes());
    assert!(git_apply_tree(&r, &hfs).is_ok());
    let (rep, code, _) = weave(&r, "w/hfs", &[], &[&hfs]);
    assert_eq!(code, 1, "{rep:#}");
    assert!(rep["failed"][0]["error"]
        .as_str()
        .unwrap()
        .contains("`.git`"));
    // What git takes, weave takes: doubled slashes in a traditional name are squashed.
    same_as_apply(
        &r,
        "squashed",
        b"--- a/dir//b.txt\n+++ b/dir//b.txt\n@@ -1 +1 @@\n-b\n+bee\n",
    );
}
