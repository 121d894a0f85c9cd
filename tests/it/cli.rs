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
    // Manuals: every page has examples and the exit codes, no `[-C ]` artifact; a leaf page has its JSON.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let p = entry.unwrap().path();
        let page = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(page.contains(".SH EXAMPLES"), "{name}");
        assert!(
            page.contains(".SH EXIT STATUS") && page.contains("internal"),
            "{name}"
        );
        assert!(!page.contains("\\-C \\fR]"), "{name}: [-C ] artifact");
    }
    let ls = std::fs::read_to_string(dir.path().join("git-jules-task-ls.1")).unwrap();
    assert!(
        ls.contains(".SH JSON OUTPUT") && ls.contains("items"),
        "{ls}"
    );
    assert!(
        ls.contains("git jules task ls"),
        "synopsis names the git command: {ls}"
    );
    let demo = std::fs::read_to_string(dir.path().join("git-jules-demo.1")).unwrap();
    assert!(demo.contains("no JSON output"), "{demo}");
}

#[test]
fn the_demo_runs_the_whole_mission() {
    let r = Repo::new();
    let out = r.jules(["demo", "--keep"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    // The demo teaches: each step prints the real commands, quoted so they can be pasted.
    assert!(
        text.contains(
            "$ JULES_PERSONA=patcher git jules series commit --summary 'Add the feature flag' --rationale 'The feature needs a switch.'"
        ),
        "{text}"
    );
    assert!(text
        .contains("$ JULES_PERSONA=weaver git jules weave --branches 'jules/*/sprint-1' --json"));
    // --keep ends with commands to try in the kept directory, and they work there.
    let kept = text
        .lines()
        .find_map(|l| l.strip_prefix("kept "))
        .and_then(|l| l.split(';').next())
        .expect("the kept directory")
        .to_owned();
    assert!(text.contains("three commands to try next"), "{text}");
    let project = std::path::Path::new(&kept).join("project");
    let mut cmd = std::process::Command::new(crate::harness::bin());
    r.env.apply(&mut cmd);
    let inbox = cmd
        .args(["mail", "inbox", "--persona", "refactor", "--all"])
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(
        stdout(&inbox).contains("Conflict weaving"),
        "{}",
        stdout(&inbox)
    );
    std::fs::remove_dir_all(&kept).unwrap();
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
        text.contains("denied by the lease guard; what the model reads: git-jules lease guard: edit refused. src/config.txt is under sage's exclusive lease"),
        "{text}"
    );
    assert!(
        text.contains("the sprint took 4 ticks for 23 personas, against 23"),
        "{text}"
    );
}

// ------------------------------------------------------------------------------------------------------
// The first hour: one error style, the JSON contract, terminal manners, completions

#[test]
fn outside_a_repository_is_one_git_style_line() {
    let r = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    let out = r.jules([
        "-C",
        outside.path().to_str().unwrap(),
        "mail",
        "inbox",
        "--persona",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("error: not a git repository (or any of the parent directories): "),
        "{err}"
    );
    assert!(lines[1..].iter().all(|l| l.starts_with("hint: ")), "{err}");
    assert!(
        !err.contains("caused by") && !err.contains("Could not find"),
        "{err}"
    );
    let out = r.jules(["-C", "/nonexistent", "mail", "inbox"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().next(),
        Some("error: cannot change to '/nonexistent': No such directory")
    );
}

#[test]
fn with_json_a_failure_is_also_a_json_error_object_on_stdout() {
    let r = Repo::new();
    let out = r.jules(["--json", "task", "done", "zzzz"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["exit"], 2);
    assert_eq!(doc["error"]["kind"], "usage");
    assert_eq!(
        doc["error"]["message"],
        "task id \"zzzz\" is not hexadecimal (ids are written with 0-9 and a-f)"
    );
    assert!(stderr(&out).starts_with("error: task id \"zzzz\" is not hexadecimal"));
    // A bad flag with --json: still a JSON error.
    let out = r.jules(["--json", "log", "show", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["error"]["kind"], "usage");
}

#[test]
fn json_on_a_command_without_json_output_is_an_error() {
    let r = Repo::new();
    for args in [
        vec!["--json", "hooks", "show"],
        vec!["--json", "series", "review", "--print"],
        vec!["--json", "completions", "bash"],
        vec!["--json", "demo"],
        vec!["--json", "install-man", "--dir", "x"],
    ] {
        let out = r.jules(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("has no JSON output"),
            "{}",
            stderr(&out)
        );
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["error"]["kind"], "usage");
    }
    assert!(
        !r.path().join("x").exists(),
        "a refused command does nothing"
    );
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let r = Repo::new();
    r.jules_ok([
        "log", "append", "mail", "--kind", "t.x", "--actor", "a", "--repeat", "300",
    ]);
    let mut child = r
        .jules_cmd(["log", "show", "mail"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "", "no error for a closed pipe");
}

#[test]
fn quiet_silences_status_but_not_data() {
    let r = Repo::new();
    let id = r.jules_ok(["task", "add", "tidy"]);
    let out = r.jules(["-q", "task", "done", id.trim()]);
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
    let again = r.jules(["-q", "task", "done", id.trim()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).starts_with("error: "), "errors still print");
}

/// Run `git-jules ARGS` (or `git ARGS`) under a pseudo-terminal with `env`; return what the terminal saw.
/// The command must succeed, and all it wrote must have reached the terminal.
fn on_a_terminal(r: &Repo, program: &str, args: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new("script");
    r.env.apply(&mut cmd);
    cmd.env_remove("NO_COLOR").env("TERM", "xterm");
    for (k, v) in env {
        cmd.env(k, v);
    }
    String::from_utf8_lossy(&under_script(&mut cmd, r, &format!("{program} {args}"))).into_owned()
}

/// Run `script -qec LINE /dev/null` (a prepared `script` command) in `r` and return what it copied from the
/// terminal. script(1) whose stdin reaches EOF can exit before it copied the last output of a child that
/// exits at once: its stdin is a pipe this test holds open until script has exited, so script ends only
/// when the child does, after draining the terminal; no pause is needed. The shell then prints a sentinel
/// with the exit code: the terminal is one ordered stream, so a sentinel seen means everything before it was
/// seen too. The command must succeed; the sentinel is not part of what is returned.
fn under_script(cmd: &mut std::process::Command, r: &Repo, line: &str) -> Vec<u8> {
    let line = format!("{line}; echo \"[exit $?]\"");
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(r.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = crate::harness::Guarded::spawn(cmd).wait_output(std::time::Duration::from_secs(120));
    let seen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "script {line}: {:?} {seen:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let end = seen.trim_end();
    assert!(
        end.ends_with("[exit 0]"),
        "script {line}: the command failed or its output was cut: {seen:?}"
    );
    let mut bytes = out.stdout;
    let sentinel = bytes
        .windows(b"[exit 0]".len())
        .rposition(|w| w == b"[exit 0]")
        .expect("the sentinel was seen");
    bytes.truncate(sentinel);
    bytes
}

#[test]
fn colour_follows_the_terminal_no_color_term_dumb_and_color_ui() {
    if crate::harness::skipped_for_want_of(
        crate::harness::on_path("script"),
        "script(1) (util-linux)",
    ) {
        return;
    }
    let r = Repo::new();
    r.jules_ok(["log", "append", "mail", "--kind", "t.x", "--actor", "a"]);
    let bin = crate::harness::bin();
    let bin = bin.to_str().unwrap();
    let coloured = on_a_terminal(&r, bin, "log show mail", &[]);
    assert!(
        coloured.contains("\x1b["),
        "a terminal gets colour: {coloured:?}"
    );
    for env in [[("NO_COLOR", "1")], [("TERM", "dumb")]] {
        let plain = on_a_terminal(&r, bin, "log show mail", &env);
        assert!(!plain.contains("\x1b["), "{env:?}: {plain:?}");
        assert!(plain.contains("t.x"), "{plain:?}");
    }
    let plain = on_a_terminal(&r, "git", "-c color.ui=never jules log show mail", &[]);
    assert!(
        plain.contains("t.x") && !plain.contains("\x1b["),
        "{plain:?}"
    );
    r.git(["config", "color.ui", "false"]);
    let plain = on_a_terminal(&r, bin, "log show mail", &[]);
    assert!(
        plain.contains("t.x") && !plain.contains("\x1b["),
        "{plain:?}"
    );
    // stderr on a terminal, stdout piped: the error label is coloured, the data is not.
    r.git(["config", "--unset", "color.ui"]);
    let mixed = on_a_terminal(&r, bin, "task done zzzz | cat", &[]);
    assert!(mixed.contains("\x1b[31merror:"), "{mixed:?}");
}

#[test]
fn completions_complete_git_jules_and_git_jules_subcommands() {
    let r = Repo::new();
    let bash = r.jules_ok(["completions", "bash"]);
    assert!(bash.contains("_git_jules()"), "git's completion hook");
    let f = r.path().join("c.bash");
    std::fs::write(&f, &bash).unwrap();
    let complete = |words: &str, cword: usize| {
        let script = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; _git_jules; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            f.display()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let got = complete("git jules ma", 2);
    assert_eq!(got.trim(), "mail", "{got}");
    let got = complete("git jules mail in", 3);
    assert_eq!(got.trim(), "inbox", "{got}");
    // The help tree lists the groups' commands too (clap's deferral once left them out).
    let got = complete("git jules help mail in", 4);
    assert_eq!(got.trim(), "inbox", "{got}");
    let got = complete("git jules help series re", 4);
    assert_eq!(
        got.split_whitespace().collect::<Vec<_>>(),
        ["reroll", "review"],
        "{got}"
    );
    // Through git's own completion: `git jules <TAB>` calls _git_jules.
    let script = format!(
        "source /usr/share/bash-completion/completions/git; source {}; \
         COMP_WORDS=(git jules sy); COMP_CWORD=2; COMP_LINE='git jules sy'; COMP_POINT=12; \
         __git_wrap__git_main; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        f.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("sync"),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for shell in ["zsh", "fish"] {
        let s = r.jules_ok(["completions", shell]);
        assert!(s.contains("git-jules"), "{shell}");
    }
}

#[test]
fn tick_with_a_missing_config_does_not_suggest_passing_it() {
    let r = Repo::new();
    let out = r.jules(["tick", "--dry-run", "--config", "/nonexistent.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("error: no schedules at /nonexistent.toml"),
        "{err}"
    );
    assert!(!err.contains("--config"), "{err}");
}

#[test]
fn verify_on_a_terminal_shows_one_progress_line_then_the_table_once() {
    if crate::harness::skipped_for_want_of(
        crate::harness::on_path("script"),
        "script(1) (util-linux)",
    ) {
        return;
    }
    let r = Repo::new();
    r.git(["checkout", "-q", "-b", "work"]);
    for i in 0..4 {
        r.write(&format!("f{i}.txt"), "x\n");
        r.commit_all(&format!("patch {i}"));
    }
    let bin = crate::harness::bin();
    let seen = on_a_terminal(
        &r,
        bin.to_str().unwrap(),
        "verify --base main --cmd true -j 2",
        &[],
    );
    assert!(seen.contains("[4/4] verifying, 0 running"), "{seen:?}");
    let rows = seen.matches("\x1b[32mpass").count();
    assert_eq!(rows, 4, "each commit once: {seen:?}");
    assert!(seen.contains("all 4 patches pass"), "{seen:?}");
    // Piped: no progress at all.
    let out = r.jules(["verify", "--base", "main", "--cmd", "true"]);
    assert!(!stderr(&out).contains("verifying"), "{}", stderr(&out));
}

/// Run `git-jules ARGS` under a pseudo-terminal (script(1), see [`under_script`]) and return the bytes the
/// terminal got, with the terminal's `\r\n` line ends turned back into `\n`.
fn jules_on_a_pty(r: &Repo, args: &[&str]) -> Vec<u8> {
    let mut line = crate::harness::bin().to_str().unwrap().to_owned();
    for a in args {
        line.push(' ');
        line.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
    }
    let mut cmd = std::process::Command::new("script");
    r.env.apply(&mut cmd);
    // Colour on, as on an operator's terminal: our own colour codes must survive the escaping.
    cmd.env_remove("NO_COLOR").env("TERM", "xterm");
    let raw = under_script(&mut cmd, r, &line);
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i..].starts_with(b"\r\n") {
            i += 1;
        }
        bytes.push(raw[i]);
        i += 1;
    }
    bytes
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Issue 40, finding 4: `mail read`/`show` printed ESC and OSC sequences from a body raw (clear screen,
/// window title) and `inbox` a U+202E from a subject raw, which reverses the `(NOT VERIFIED …)` suffix on
/// screen. On a terminal they show escaped (`^[`, `<U+202E>`, as the web view shows them); our own colour
/// codes still work; a pipe and `--json` stay byte-exact.
#[test]
fn untrusted_mail_cannot_drive_the_terminal_but_pipes_and_json_stay_exact() {
    let r = Repo::new();
    // `mail send` refuses controls in subjects and tags, a replica's log need not: the event is written
    // as a hostile clone would.
    let subject = "invoice \u{202e}fdp.exe \x1b[8mhidden";
    let body = "hello\x1b]0;pwned\x07\x1b[2J\r\nline two\tend\rfake\n\u{9b}31m";
    let data = serde_json::json!({
        "to": ["bob"], "subject": subject, "type": "status", "priority": "normal",
        "tags": ["t\x1b[5mag"], "body": body,
    });
    r.jules_ok([
        "log",
        "append",
        "mail",
        "--kind",
        "mail.send",
        "--actor",
        "mallory",
        "--data",
        &data.to_string(),
    ]);
    let id = r.jules_ok(["mail", "inbox", "--persona", "bob", "--json"]);
    let id = serde_json::from_str::<serde_json::Value>(&id).unwrap()["messages"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let read = jules_on_a_pty(&r, &["mail", "show", &id, "--persona", "bob"]);
    let text = String::from_utf8_lossy(&read);
    assert!(
        !contains(&read, b"\x1b]"),
        "an OSC reached the terminal: {text:?}"
    );
    assert!(
        !contains(&read, b"\x1b[2J"),
        "a clear screen reached the terminal: {text:?}"
    );
    assert!(!contains(&read, b"\x1b[8m"), "{text:?}");
    assert!(!contains(&read, "\u{202e}".as_bytes()), "{text:?}");
    assert!(
        !contains(&read, "\u{9b}".as_bytes()),
        "a C1 CSI reached the terminal: {text:?}"
    );
    assert!(text.contains("hello^[]0;pwned^G^[[2J"), "{text:?}");
    assert!(
        text.contains("line two\tend^Mfake"),
        "a lone CR is shown: {text:?}"
    );
    assert!(text.contains("<U+009B>31m"), "{text:?}");
    assert!(
        text.contains("invoice <U+202E>fdp.exe ^[[8mhidden"),
        "{text:?}"
    );
    assert!(text.contains("t^[[5mag"), "tags too: {text:?}");
    assert!(
        text.contains("\x1b[33mmessage "),
        "our colour survives: {text:?}"
    );

    let inbox = jules_on_a_pty(&r, &["mail", "inbox", "--persona", "bob"]);
    let text = String::from_utf8_lossy(&inbox);
    assert!(!contains(&inbox, "\u{202e}".as_bytes()), "{text:?}");
    assert!(
        !contains(&inbox, b"\x1b[8m") && !contains(&inbox, b"\x1b[5m"),
        "{text:?}"
    );
    assert!(text.contains("<U+202E>fdp.exe"), "{text:?}");
    assert!(text.contains("\x1b[33m"), "our colour survives: {text:?}");

    // A lease reason is another persona's text too.
    r.jules_ok([
        "lease",
        "acquire",
        "docs/",
        "--persona",
        "carol",
        "--reason",
        "fix \x1b]0;pwned\x07 \u{202e}",
    ]);
    let leases = jules_on_a_pty(&r, &["lease", "list"]);
    let text = String::from_utf8_lossy(&leases);
    assert!(
        !contains(&leases, b"\x1b]") && !contains(&leases, "\u{202e}".as_bytes()),
        "{text:?}"
    );
    assert!(text.contains("fix ^[]0;pwned^G <U+202E>"), "{text:?}");
    let piped = r.jules(["lease", "list"]);
    assert!(
        contains(&piped.stdout, b"fix \x1b]0;pwned\x07"),
        "{}",
        stdout(&piped)
    );

    // A pipe gets the bytes as they are.
    let piped = r.jules(["mail", "show", &id, "--persona", "bob"]);
    assert!(
        contains(&piped.stdout, body.as_bytes()),
        "{}",
        stdout(&piped)
    );
    assert!(
        contains(&piped.stdout, subject.as_bytes()),
        "{}",
        stdout(&piped)
    );
    // `--json` on a terminal is the same document as through a pipe, byte for byte.
    let json_tty = jules_on_a_pty(&r, &["mail", "show", &id, "--json"]);
    let json_pipe = r.jules(["mail", "show", &id, "--json"]);
    assert_eq!(
        String::from_utf8_lossy(&json_tty),
        String::from_utf8_lossy(&json_pipe.stdout)
    );
    assert!(
        contains(&json_tty, "\u{202e}".as_bytes()),
        "JSON keeps the text"
    );
}

/// Issue 40, finding 8: the sender was the one name no frontend checked: `mail send --from reviewers`
/// sent as a group and `--from nobodyy` said nothing. The library's persona policy now covers it for the
/// CLI, the MCP server and the web view alike: a group is refused (exit 2), an unknown name warned about
/// (and in the `--json` document), refused under `--strict`.
#[test]
fn the_sender_follows_the_persona_policy() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"alice\", \"bob\"]\n[groups]\nreviewers = [\"alice\", \"bob\"]\n",
    );
    let send = |extra: &[&str], from: &str| {
        let mut args = extra.to_vec();
        args.extend([
            "mail",
            "send",
            "--from",
            from,
            "--to",
            "bob",
            "--subject",
            "s",
            "--body",
            "b",
        ]);
        r.jules(args)
    };
    let group = send(&[], "reviewers");
    assert_eq!(group.status.code(), Some(2), "{}", stderr(&group));
    assert!(
        stderr(&group).contains("reviewers is a group"),
        "{}",
        stderr(&group)
    );
    let strict = send(&["--strict"], "alicee");
    assert_eq!(strict.status.code(), Some(2), "{}", stderr(&strict));
    let typo = send(&["--json"], "alicee");
    assert_eq!(typo.status.code(), Some(0), "{}", stderr(&typo));
    assert!(
        stderr(&typo).contains("warning: unknown persona alicee; did you mean alice?"),
        "{}",
        stderr(&typo)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&typo)).unwrap();
    assert_eq!(
        doc["warnings"],
        serde_json::json!([{"name": "alicee", "suggestion": "alice"}])
    );
}

/// Issue 40, finding 8 (warnings as data): `task done` released the task's leases and said so on stderr
/// only; the typed output skipped `released` and `release_error`, so the MCP server's `task_done` (which
/// serialises the same value) dropped them. They are in the document now.
#[test]
fn task_done_reports_the_leases_it_released_as_data() {
    let r = Repo::new();
    let id = r.jules_ok(["task", "add", "--actor", "alice", "tidy"]);
    let id = id.trim();
    r.jules_ok([
        "lease",
        "acquire",
        "src/",
        "--task",
        id,
        "--persona",
        "alice",
    ]);
    let done = r.jules_ok(["--json", "task", "done", "--actor", "alice", id]);
    let doc: serde_json::Value = serde_json::from_str(&done).unwrap();
    assert_eq!(doc["released"].as_array().map(Vec::len), Some(1), "{done}");
    assert!(doc.get("release_error").is_none(), "{done}");
}

/// An error from below keeps its source: the message says what git-jules was doing, then a numbered
/// `caused by:` line gives gix's own reason, and `--json` lists it in `causes`; the exit code stays 4.
/// Catches a library site that turns its source error into text (`Error::Other(format!("…: {e}"))`).
#[test]
fn an_error_from_below_prints_its_cause() {
    let r = Repo::new();
    std::fs::write(r.path().join(".git/index"), "DIRCnot an index").unwrap();
    let out = r.jules(["lease", "check", "--staged", "--persona", "a"]);
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "error: reading the index", "{err}");
    assert_eq!(lines[1], "caused by:", "{err}");
    assert!(lines[2].starts_with("  1: "), "{err}");
    let out = r.jules(["lease", "check", "--staged", "--persona", "a", "--json"]);
    assert_eq!(out.status.code(), Some(4));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["error"]["message"], "reading the index");
    assert_eq!(doc["error"]["kind"], "internal");
    assert!(
        !doc["error"]["causes"].as_array().unwrap().is_empty(),
        "{doc}"
    );
}
