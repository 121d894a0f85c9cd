//! `git jules install-man`: git turns `git jules --help` into `man git-jules`, so we ship man pages.

use std::path::PathBuf;

use anyhow::Context as _;

use super::{ui, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the pages (default: `<prefix>/share/man/man1` beside the binary's `bin/`, which man
    /// finds through PATH)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(_ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let dir = match args.dir {
        Some(d) => d,
        None => {
            let exe = std::env::current_exe().context("locating the git-jules binary")?;
            let prefix = exe
                .parent()
                .and_then(|bin| bin.parent())
                .context("the binary has no parent directory")?;
            prefix.join("share/man/man1")
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let written = write_pages(&dir)?;
    for p in &written {
        ui::out(p.display().to_string());
    }
    Ok(0)
}

/// Render `git-jules.1` and `git-jules-<sub>.1` for every subcommand (nested ones joined with `-`).
pub fn write_pages(dir: &std::path::Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let root = super::command().name("git-jules");
    render(&root, "git-jules", dir, &mut written)?;
    Ok(written)
}

fn render(
    cmd: &clap::Command,
    name: &str,
    dir: &std::path::Path,
    out: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let named = cmd.clone().name(name.to_owned());
    let mut buf = Vec::new();
    clap_mangen::Man::new(named).render(&mut buf)?;
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, buf).with_context(|| format!("writing {}", path.display()))?;
    out.push(path);
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        render(sub, &format!("{name}-{}", sub.get_name()), dir, out)?;
    }
    Ok(())
}
