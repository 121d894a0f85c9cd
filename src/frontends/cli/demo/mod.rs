//! `git jules demo`: the whole mission, self-contained in a temporary directory, printing each step.
//!
//! 23 scripted personas work in parallel on one repository (three of them on the same lines), the scheduler
//! ticks, the weaver integrates what applies and mails each conflict to its author, the conflicted personas
//! read their mail, rebase and resubmit, the weaver integrates again and the sprint completes; then a 3-patch
//! staging series is verified (the broken patch is found), rerolled, verified again and finalized. Everything
//! goes through the real `git jules` commands, as a persona's sandbox would run them, and each is printed,
//! quoted, so that it can be run again in the directory `--keep` leaves.
//!
//! The script is split in its two acts: [`sprint`] (steps 1-6) and [`series`] (steps 7-8), each a list of
//! small step functions; this module holds the runner.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{ensure, Context as _};

use crate::frontends::context::Context;

mod agent;
mod series;
mod sprint;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the temporary directory and print its path
    #[arg(long)]
    pub keep: bool,
    /// Print every git jules command the demo runs (without it, a loop's repeats are summed up)
    #[arg(long, short)]
    pub verbose: bool,
}

pub(super) const PERSONAS: [&str; 23] = [
    "curator",
    "refactor",
    "visionary",
    "scribe",
    "janitor",
    "sentinel",
    "artisan",
    "builder",
    "shepherd",
    "sage",
    "forge",
    "bolt",
    "palette",
    "hawk",
    "oracle",
    "pilot",
    "tuner",
    "warden",
    "keeper",
    "lens",
    "quill",
    "mender",
    "scout",
];
/// The personas that edit the same lines of `src/config.txt`: the first applies, the others conflict.
pub(super) const OVERLAPPING: [&str; 3] = ["curator", "refactor", "visionary"];
pub(super) const SPRINT_BRANCH_SUFFIX: &str = "sprint-1";

pub(super) struct Demo<'a> {
    /// Where the demo prints: the command's output value.
    ui: &'a crate::frontends::ui::Ui,
    exe: PathBuf,
    pub(super) root: PathBuf,
    verbose: bool,
    started: Instant,
    /// While set, commands run without being printed (the repeats of a loop); see [`Demo::quietly`].
    muted: std::cell::Cell<bool>,
}

impl Demo<'_> {
    /// Run `git-jules ARGS` in `dir` as `persona`; return stdout, fail with stderr.
    pub(super) fn jules(&self, dir: &Path, persona: &str, args: &[&str]) -> anyhow::Result<String> {
        let (code, out, err) = self.jules_status(dir, persona, args)?;
        ensure!(
            code == 0,
            "`git jules {}` failed ({code}): {err}",
            args.join(" ")
        );
        Ok(out)
    }

    pub(super) fn jules_status(
        &self,
        dir: &Path,
        persona: &str,
        args: &[&str],
    ) -> anyhow::Result<(i32, String, String)> {
        if self.verbose || !self.muted.get() {
            // The real command, quoted so that it can be pasted in the kept directory.
            self.ui.out(format!("    $ {}", quoted(persona, args)));
        }
        let out = Command::new(&self.exe)
            .args(args)
            .current_dir(dir)
            .env("JULES_PERSONA", persona)
            .env("NO_COLOR", "1")
            .output()
            .with_context(|| format!("running git jules {}", args.join(" ")))?;
        Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    /// A line of the demo's own, indented under its step.
    pub(super) fn line(&self, text: impl AsRef<str>) {
        self.ui.out(format!("    {}", text.as_ref()));
    }

    pub(super) fn git(&self, dir: &Path, args: &[&str]) -> anyhow::Result<String> {
        let out = git_jules::kit::gitcli::run(dir, args)?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Run `f` (the repeats of a loop) without printing its commands, unless `--verbose`; then say how
    /// many ran.
    pub(super) fn quietly<T>(
        &self,
        what: &str,
        f: impl FnOnce() -> anyhow::Result<(T, usize)>,
    ) -> anyhow::Result<T> {
        let was = self.muted.replace(true);
        let result = f();
        self.muted.set(was);
        let (value, n) = result?;
        if n > 0 && !self.verbose {
            self.line(format!(
                "(and the same for {n} more {what}; --verbose prints every command)"
            ));
        }
        Ok(value)
    }

    pub(super) fn json(
        &self,
        dir: &Path,
        persona: &str,
        args: &[&str],
    ) -> anyhow::Result<serde_json::Value> {
        let mut all = args.to_vec();
        all.push("--json");
        let text = self.jules(dir, persona, &all)?;
        serde_json::from_str(&text)
            .with_context(|| format!("parsing the JSON of git jules {}", args.join(" ")))
    }
}

pub(super) fn step(ctx: &Context, n: u32, text: &str) {
    ctx.ui
        .out(format!("{} {text}", ctx.ui.bold(&format!("[{n}]"))));
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let tmp = tempfile::Builder::new()
        .prefix("git-jules-demo-")
        .tempdir()?;
    let demo = Demo {
        ui: &ctx.ui,
        exe: std::env::current_exe().context("locating the git-jules binary")?,
        root: tmp.path().to_owned(),
        verbose: args.verbose,
        started: Instant::now(),
        muted: std::cell::Cell::new(false),
    };
    let result = sprint::sprint(ctx, &demo).and_then(|ticks| {
        series::series(ctx, &demo)
            .and_then(|_| agent::guard(ctx, &demo))
            .map(|_| ticks)
    });
    let ticks = match result {
        Ok(t) => t,
        Err(e) => {
            if args.keep {
                let kept = tmp.keep();
                ctx.ui.status(format!("kept {}", kept.display()));
            }
            return Err(e);
        }
    };
    ctx.ui.out(format!(
        "{} the sprint took {ticks} ticks for {} personas, against {} for a sequential cycle; all done in {:.1} s",
        ctx.ui.bold("[done]"),
        PERSONAS.len(),
        PERSONAS.len(),
        demo.started.elapsed().as_secs_f64()
    ));
    if args.keep {
        let kept = tmp.keep();
        let project = kept.join("project");
        ctx.ui.out(format!(
            "kept {}; three commands to try next:",
            kept.display()
        ));
        for c in [
            format!("cd {}", quote(&project.display().to_string())),
            "git jules mail inbox --persona refactor --all".to_owned(),
            "git jules sprint status && git jules sprint stats".to_owned(),
            "git jules log show mail --limit 5".to_owned(),
        ] {
            ctx.ui.out(format!("    $ {c}"));
        }
    }
    Ok(0)
}

/// `JULES_PERSONA=P git jules ARGS`, each word quoted for a POSIX shell where it needs it.
pub(super) fn quoted(persona: &str, args: &[&str]) -> String {
    let words: Vec<String> = args.iter().map(|a| quote(a)).collect();
    format!(
        "JULES_PERSONA={} git jules {}",
        quote(persona),
        words.join(" ")
    )
}

fn quote(word: &str) -> String {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| format!("{word:?}"))
}

/// Write `path` in `dir` and commit it on the current branch as `persona`.
pub(super) fn commit_file(
    demo: &Demo,
    dir: &Path,
    persona: &str,
    path: &str,
    content: &str,
    msg: &str,
) -> anyhow::Result<()> {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().expect("a file in a directory"))?;
    std::fs::write(full, content)?;
    demo.git(dir, &["add", "-A"])?;
    let author = format!("user.name={persona}");
    let email = format!("user.email={persona}@jules.invalid");
    demo.git(dir, &["-c", &author, "-c", &email, "commit", "-qm", msg])?;
    Ok(())
}

pub(super) fn config_file(line10: &str) -> String {
    (1..=30)
        .map(|i| {
            if i == 10 {
                format!("{line10}\n")
            } else {
                format!("setting{i} = default\n")
            }
        })
        .collect()
}
