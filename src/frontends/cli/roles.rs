//! `git jules roles [--check]`: list the `.jules/` scaffold's layers, roles and personas, or validate it.

use std::io::Write;

use git_jules::capabilities::roles;
use git_jules::Error;
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, SortedDoc, Style};

#[derive(Debug, clap::Args)]
pub struct RolesArgs {
    /// Validate the scaffold instead of listing it (exit 1 when a problem is found)
    #[arg(long)]
    pub check: bool,
}

pub fn run(ctx: &Context, a: RolesArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let wd = repo
        .workdir()
        .ok_or_else(|| Error::usage("a bare repository has no .jules/ scaffold"))?
        .to_path_buf();
    if a.check {
        let problems = roles::check(&wd);
        let ok = problems.is_empty();
        ctx.ui.print(&Checked {
            ok,
            problems,
            version: git_jules::JSON_VERSION,
        });
        return Ok(if ok { 0 } else { 1 });
    }
    ctx.ui.print(&SortedDoc(roles::scan(&wd)));
    Ok(0)
}

/// `roles --check`: `scaffold ok` or one line a problem; `{"ok", "problems", "version"}` in JSON, every
/// key sorted (through a JSON map, as it always was).
struct Checked {
    ok: bool,
    problems: Vec<roles::Problem>,
    version: u32,
}

impl Serialize for Checked {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({"version": self.version, "ok": self.ok, "problems": self.problems})
            .serialize(s)
    }
}

impl Print for Checked {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        if self.problems.is_empty() {
            return writeln!(out, "scaffold ok");
        }
        for p in &self.problems {
            writeln!(out, "{}: {}", p.path, p.message)?;
        }
        Ok(())
    }
}

/// `roles`: layers, personas and workstreams; the scan with `"version"` among its sorted keys in JSON.
type Scanned = SortedDoc<roles::Scaffold>;

impl Print for Scanned {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let s = &self.0;
        for l in &s.layers {
            writeln!(
                out,
                "layer {:<13} roles: {}",
                l.name,
                if l.roles.is_empty() {
                    "-".to_string()
                } else {
                    l.roles.join(", ")
                }
            )?;
        }
        if !s.personas.is_empty() {
            writeln!(out, "personas: {}", s.personas.join(", "))?;
        }
        if !s.workstreams.is_empty() {
            writeln!(out, "workstreams: {}", s.workstreams.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::ui::{Buffer, Ui};

    /// `roles --check` from one value: the lines a person reads and the document a program reads, byte for
    /// byte as before printers (`"version"` among the sorted keys).
    #[test]
    fn roles_check_prints_the_same_value_two_ways() {
        let checked = Checked {
            ok: false,
            problems: vec![roles::Problem {
                path: ".jules/roles/x.md".into(),
                message: "no layer".into(),
            }],
            version: 1,
        };
        let out = Buffer::default();
        Ui::with_writers(false, Box::new(out.clone()), Box::new(Buffer::default())).print(&checked);
        assert_eq!(out.text(), ".jules/roles/x.md: no layer\n");
        let out = Buffer::default();
        Ui::with_writers(true, Box::new(out.clone()), Box::new(Buffer::default())).print(&checked);
        assert_eq!(
            out.text(),
            "{\n  \"ok\": false,\n  \"problems\": [\n    {\n      \"message\": \"no layer\",\n      \"path\": \".jules/roles/x.md\"\n    }\n  ],\n  \"version\": 1\n}\n"
        );
        let out = Buffer::default();
        let ok = Checked {
            ok: true,
            problems: Vec::new(),
            version: 1,
        };
        Ui::with_writers(false, Box::new(out.clone()), Box::new(Buffer::default())).print(&ok);
        assert_eq!(out.text(), "scaffold ok\n");
    }
}
