//! The command line's contract: version, help, exit codes, `-C`, man pages.

use crate::harness::{stderr, stdout, Repo};

#[test]
fn version_and_help_list_every_subcommand() {
    let r = Repo::new();
    let v = r.jules_ok(["--version"]);
    assert!(v.starts_with("git-jules "), "{v}");
    let help = r.jules_ok(["--help"]);
    for sub in [
        "init",
        "sync",
        "log",
        "mail",
        "state",
        "sprint",
        "task",
        "tick",
        "prompt",
        "series",
        "verify",
        "hooks",
        "install-man",
        "demo",
    ] {
        assert!(help.contains(sub), "help lacks {sub}: {help}");
    }
}

#[test]
fn usage_errors_exit_2_and_outside_a_repo_is_an_error() {
    let r = Repo::new();
    let out = r.jules(["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
    let outside = tempfile::tempdir().unwrap();
    let out = r.jules(["-C", outside.path().to_str().unwrap(), "log", "list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a git repository"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn git_dash_c_and_git_dir_reach_the_repository() {
    let r = Repo::new();
    let parent = r.path().parent().unwrap();
    let name = r.path().file_name().unwrap().to_str().unwrap();
    // Through git itself: `git -C DIR jules …` finds git-jules on PATH.
    let mut cmd = std::process::Command::new("git");
    r.env.apply(&mut cmd);
    let out = cmd
        .current_dir(parent)
        .args([
            "-C", name, "jules", "log", "append", "mail", "--kind", "t.x", "--actor", "a",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // GIT_DIR pointing at the repository from elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = r
        .jules_cmd(["log", "list"])
        .current_dir(elsewhere.path())
        .env("GIT_DIR", r.path().join(".git"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "refs/jules/mail");
}

#[test]
fn install_man_writes_a_page_per_command() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let out = r.jules_ok(["install-man", "--dir", dir.path().to_str().unwrap()]);
    assert!(out.contains("git-jules.1"));
    let page = std::fs::read_to_string(dir.path().join("git-jules.1")).unwrap();
    assert!(page.contains(".TH git-jules"), "{page}");
    assert!(dir.path().join("git-jules-log-fsck.1").exists());
}

#[test]
fn the_demo_runs_the_whole_mission() {
    let r = Repo::new();
    let out = r.jules(["demo"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("woven: 21 applied, 2 conflicted (refactor, visionary)"),
        "{text}"
    );
    assert!(
        text.contains("verify: patch 2 (Add the helper) fails"),
        "{text}"
    );
    assert!(
        text.contains("verify after the reroll: all 3 patches pass"),
        "{text}"
    );
    assert!(
        text.contains("the sprint took 4 ticks for 23 personas, against 23"),
        "{text}"
    );
}
