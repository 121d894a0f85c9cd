//! Personas' prompts: the mailbox preamble plus a Jinja template rendered with minijinja.
//!
//! Two layouts are understood (see `docs/roles.md`):
//! - seed 004: `.jules/personas/<id>/prompt.md.j2` (or a plain `prompt.md`);
//! - seed 001: `.jules/roles/<layer>/prompt_assembly.j2`, with the runtime variables `role`, `layer`,
//!   `workstream` and `phase`, and the helpers `section(title, body)`, `include_required(path)` and
//!   `include_optional(path)`. Paths are relative to the work tree.
//!
//! Every template also sees `persona`, `unread` (its unread mail headers), `sprint` (the current sprint
//! number), `tasks` (the open tasks of that sprint), `last_run` (the last run of its track) and the
//! caller's `vars`, each also as a top-level variable. Rendering never prints and never writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::capabilities::mail;
use crate::capabilities::state::State;
use crate::kit::error::{Error, Result};

/// What the caller chose: the seed-001 runtime variables and extra variables.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub layer: Option<String>,
    pub role: Option<String>,
    pub workstream: Option<String>,
    pub phase: Option<String>,
    pub vars: BTreeMap<String, String>,
    /// The time unread mail is judged at (default: now).
    pub now: Option<DateTime<Utc>>,
}

/// A rendered prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Rendered {
    pub persona: String,
    /// The preamble followed by the rendered template.
    pub text: String,
    /// The template rendered, relative to the work tree (none: the preamble alone).
    pub template: Option<String>,
    /// Files included by `include_required`/`include_optional` that existed, in order.
    pub included: Vec<String>,
    pub layer: Option<String>,
    pub role: Option<String>,
    pub workstream: Option<String>,
    pub phase: Option<String>,
    /// The unread mail headers listed in the preamble (the shape `prompt --json` had before templates).
    pub unread: Vec<mail::view::Header>,
}

/// The phases of the innovators' layer.
pub const PHASES: &[&str] = &["creation", "refinement"];

/// Where the template of `persona` lives given the options, relative to `workdir`.
pub fn template_path(workdir: &Path, persona: &str, o: &Options) -> Option<PathBuf> {
    if let Some(layer) = &o.layer {
        return Some(PathBuf::from(format!(
            ".jules/roles/{layer}/prompt_assembly.j2"
        )));
    }
    for name in ["prompt.md.j2", "prompt.md"] {
        let p = PathBuf::from(format!(".jules/personas/{persona}/{name}"));
        if workdir.join(&p).is_file() {
            return Some(p);
        }
    }
    None
}

/// Find the layer that declares `role` under `.jules/roles/<layer>/roles/<role>/role.yml`.
pub fn layer_of_role(workdir: &Path, role: &str) -> Option<String> {
    let dir = std::fs::read_dir(workdir.join(".jules/roles")).ok()?;
    let mut layers: Vec<String> = dir
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    layers.sort();
    layers.into_iter().find(|l| {
        workdir
            .join(format!(".jules/roles/{l}/roles/{role}/role.yml"))
            .is_file()
    })
}

fn check_name(what: &str, v: &str) -> Result<()> {
    if v.is_empty()
        || v.starts_with('.')
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(Error::usage(format!(
            "invalid {what} {v:?}: use letters, digits, '-', '_' and '.'"
        )));
    }
    Ok(())
}

/// The workstreams present under `.jules/workstreams/`, sorted.
pub fn workstreams(workdir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(workdir.join(".jules/workstreams"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Fail fast when the workstream directory is missing (seed 001's rule), naming the existing ones.
pub fn require_workstream(workdir: &Path, ws: &str) -> Result<()> {
    check_name("workstream", ws)?;
    if workdir.join(".jules/workstreams").join(ws).is_dir() {
        return Ok(());
    }
    let have = workstreams(workdir);
    Err(Error::NotFound {
        what: crate::kit::error::Thing::Workstream,
        name: format!(
            "{ws} (no .jules/workstreams/{ws}/; existing: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ),
    })
}

/// The mailbox-check preamble, as `prompt` printed it before templates existed.
pub fn preamble(persona: &str, unread: &[mail::view::Header]) -> String {
    let p = persona;
    let mut text = format!(
        "## Mailbox Check (IMPORTANT)\n\n\
         Before starting your work, check your mailbox for messages:\n\n\
         ```bash\ngit jules mail inbox --persona {p}\n```\n\n"
    );
    if unread.is_empty() {
        text.push_str("You have no unread messages.\n\n");
    } else {
        text.push_str(&format!("You have {} unread message(s):\n\n", unread.len()));
        for h in unread {
            text.push_str(&format!(
                "- * {} | {} | {} | {}{}\n",
                &h.id[..12.min(h.id.len())],
                h.from,
                h.msg_type,
                h.subject,
                if h.priority == mail::message::Priority::Urgent {
                    " (urgent)"
                } else {
                    ""
                }
            ));
        }
        text.push('\n');
    }
    text.push_str(&format!(
        "If you have messages:\n\
         1. Read each message: `git jules mail read <message_id> --persona {p}`\n\
         2. Address the feedback (e.g., fix conflicts, rebase, etc.)\n\
         3. Mark as read: Messages are auto-marked read when you read them\n\
         4. Proceed with your work\n\n\
         Common message types:\n\
         - **Conflict Reports**: Your patch couldn't be woven due to conflicts\n\
         - **Feedback**: Requested changes or improvements\n\
         - **Coordination**: Other personas need your input\n\n\
         ## Your Work\n"
    ));
    text
}

/// Read a file of the work tree for an include helper; `None` when it does not exist.
fn read_include(
    workdir: &Path,
    rel: &str,
) -> std::result::Result<Option<String>, minijinja::Error> {
    let bad = || {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("include path {rel:?} must be relative and stay inside the work tree"),
        )
    };
    let p = Path::new(rel);
    if p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(bad());
    }
    match std::fs::read_to_string(workdir.join(p)) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("cannot read {rel}: {e}"),
        )),
    }
}

/// Render `source` (named `name`) with the seed-001 helpers and `ctx`; returns the text and the files
/// included. Errors name the template and its line.
pub fn render_template(
    workdir: &Path,
    name: &str,
    source: &str,
    ctx: minijinja::Value,
) -> Result<(String, Vec<String>)> {
    let included = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut env = minijinja::Environment::new();
    env.set_keep_trailing_newline(true);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.add_function("section", |title: String, body: String| -> String {
        if body.trim().is_empty() {
            String::new()
        } else {
            format!("## {title}\n\n{}\n", body.trim_end())
        }
    });
    {
        let (wd, inc) = (workdir.to_path_buf(), included.clone());
        env.add_function(
            "include_required",
            move |path: String| -> std::result::Result<String, minijinja::Error> {
                match read_include(&wd, &path)? {
                    Some(s) => {
                        inc.lock().unwrap().push(path);
                        Ok(s)
                    }
                    None => Err(minijinja::Error::new(
                        minijinja::ErrorKind::InvalidOperation,
                        format!("include_required: missing file {path}"),
                    )),
                }
            },
        );
    }
    {
        let (wd, inc) = (workdir.to_path_buf(), included.clone());
        env.add_function(
            "include_optional",
            move |path: String| -> std::result::Result<String, minijinja::Error> {
                match read_include(&wd, &path)? {
                    Some(s) => {
                        inc.lock().unwrap().push(path);
                        Ok(s)
                    }
                    None => Ok(String::new()),
                }
            },
        );
    }
    let fail = |e: minijinja::Error| {
        let line = e.line().map(|l| format!(" line {l}")).unwrap_or_default();
        let detail = e
            .detail()
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string());
        Error::usage(format!("{name}{line}: {detail}"))
    };
    let tmpl = env.template_from_named_str(name, source).map_err(fail)?;
    let text = tmpl.render(ctx).map_err(fail)?;
    let inc = included.lock().unwrap().clone();
    Ok((text, inc))
}

/// Render the prompt of `persona`: preamble, then its template (if any). Nothing is printed or written.
pub fn render(repo: &gix::Repository, persona: &str, o: &Options) -> Result<Rendered> {
    mail::message::validate_persona(persona)?;
    let now = o.now.unwrap_or_else(Utc::now);
    let unread = mail::api::unread_headers(repo, persona, now)?;
    let mut text = preamble(persona, &unread);
    let mut out = Rendered {
        persona: persona.to_string(),
        text: String::new(),
        template: None,
        included: Vec::new(),
        layer: o.layer.clone(),
        role: o.role.clone(),
        workstream: o.workstream.clone(),
        phase: o.phase.clone(),
        unread: unread.clone(),
    };
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        out.text = text.trim_end().to_string();
        return Ok(out);
    };
    // A seed-001 role named like the persona gives its layer when no layer was asked for.
    let mut o = o.clone();
    if o.layer.is_none() && template_path(&workdir, persona, &o).is_none() {
        let role = o.role.clone().unwrap_or_else(|| persona.to_string());
        if let Some(l) = layer_of_role(&workdir, &role) {
            o.layer = Some(l);
            o.role = Some(role);
        }
    }
    if let (Some(l), None) = (&o.layer, &o.role) {
        if workdir
            .join(format!(".jules/roles/{l}/roles/{persona}/role.yml"))
            .is_file()
        {
            o.role = Some(persona.to_string());
        }
    }
    if let Some(l) = &o.layer {
        check_name("layer", l)?;
        if !workdir.join(".jules/roles").join(l).is_dir() {
            return Err(Error::NotFound {
                what: crate::kit::error::Thing::Layer,
                name: format!("{l} (no .jules/roles/{l}/)"),
            });
        }
    }
    if let Some(r) = &o.role {
        check_name("role", r)?;
    }
    if let Some(ph) = &o.phase {
        if o.layer.as_deref() == Some("innovators") && !PHASES.contains(&ph.as_str()) {
            return Err(Error::usage(format!(
                "unknown phase {ph:?} for innovators: use creation or refinement"
            )));
        }
    }
    if let Some(ws) = &o.workstream {
        require_workstream(&workdir, ws)?;
    }
    out.layer = o.layer.clone();
    out.role = o.role.clone();
    let Some(tpath) = template_path(&workdir, persona, &o) else {
        out.text = text.trim_end().to_string();
        return Ok(out);
    };
    let name = tpath.to_string_lossy().replace('\\', "/");
    let source = std::fs::read_to_string(workdir.join(&tpath)).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound {
                what: crate::kit::error::Thing::Template,
                name: name.clone(),
            }
        } else {
            Error::io(format!("reading {name}"), e)
        }
    })?;
    let (sprint, tasks, last_run) = state_context(repo, persona)?;
    let mut map: BTreeMap<String, minijinja::Value> = BTreeMap::new();
    for (k, v) in &o.vars {
        map.insert(k.clone(), minijinja::Value::from(v.clone()));
    }
    let opt = |v: &Option<String>| minijinja::Value::from_serialize(v);
    map.insert("persona".into(), persona.into());
    map.insert("role".into(), opt(&o.role));
    map.insert("layer".into(), opt(&o.layer));
    map.insert("workstream".into(), opt(&o.workstream));
    map.insert("phase".into(), opt(&o.phase));
    map.insert("unread".into(), minijinja::Value::from_serialize(&unread));
    map.insert("sprint".into(), minijinja::Value::from_serialize(sprint));
    map.insert("tasks".into(), minijinja::Value::from_serialize(&tasks));
    map.insert(
        "last_run".into(),
        minijinja::Value::from_serialize(&last_run),
    );
    map.insert("vars".into(), minijinja::Value::from_serialize(&o.vars));
    let (body, included) = render_template(
        &workdir,
        &name,
        &source,
        minijinja::Value::from_serialize(&map),
    )?;
    text.push('\n');
    text.push_str(&body);
    out.text = text.trim_end().to_string();
    out.template = Some(name);
    out.included = included;
    Ok(out)
}

type StateContext = (
    Option<u64>,
    Vec<crate::capabilities::state::view::Task>,
    Option<crate::capabilities::state::view::Run>,
);

/// The current sprint, its open tasks and the last run of the persona's track.
fn state_context(repo: &gix::Repository, persona: &str) -> Result<StateContext> {
    let st = State::open(repo)?;
    let v = st.view()?.view;
    let sprint = v.current_sprint;
    let tasks = v
        .tasks
        .iter()
        .filter(|t| t.state == "todo" && (sprint.is_none() || t.sprint == sprint))
        .cloned()
        .collect();
    let last = v
        .runs
        .iter()
        .rev()
        .find(|r| r.persona_id == persona)
        .cloned();
    Ok((sprint, tasks, last))
}

#[cfg(test)]
mod tests {
    use super::render_template;

    #[test]
    fn includes_stay_inside_the_work_tree_and_errors_carry_the_line() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.yml"), "A\n").unwrap();
        let ctx = minijinja::Value::from(());
        let (text, inc) = render_template(
            d.path(),
            "t.j2",
            "{{ section(\"S\", include_required(\"a.yml\")) }}{{ include_optional(\"b.yml\") }}",
            ctx.clone(),
        )
        .unwrap();
        assert_eq!(text, "## S\n\nA\n");
        assert_eq!(inc, ["a.yml"]);
        for bad in ["../x", "/etc/passwd"] {
            let e = render_template(
                d.path(),
                "t.j2",
                &format!("\n{{{{ include_optional({bad:?}) }}}}"),
                ctx.clone(),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("t.j2 line 2") && e.contains("inside the work tree"),
                "{e}"
            );
        }
    }
}
