//! The seed-001 scaffold under `.jules/`: its layers, their roles, the seed-004 personas, and a check that
//! the scaffold is complete (every layer has its assembly template and contracts, every role its
//! `role.yml`, every schema a contract references exists, every template renders).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::capabilities::prompt;

#[derive(Debug, Clone, Serialize)]
pub struct Layer {
    pub name: String,
    /// Roles (or innovator personas) under `roles/<name>/`.
    pub roles: Vec<String>,
    /// Schema names under `schemas/` (without `.yml`).
    pub schemas: Vec<String>,
    /// Contract files present (`contracts.yml`, `contracts_<phase>.yml`).
    pub contracts: Vec<String>,
    pub has_assembly: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scaffold {
    pub layers: Vec<Layer>,
    /// Seed-004 personas: `.jules/personas/<id>/` holding `prompt.md.j2` or `prompt.md`.
    pub personas: Vec<String>,
    pub workstreams: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Problem {
    /// The path (relative to the work tree) the problem is about.
    pub path: String,
    pub message: String,
}

fn entries(dir: &Path, dirs: bool) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir() == dirs)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The layer order of seed 001's data flow; other layers sort after, by name.
pub const ORDER: &[&str] = &[
    "narrator",
    "observers",
    "deciders",
    "planners",
    "implementers",
    "innovators",
];

/// Read the scaffold under `workdir/.jules`.
pub fn scan(workdir: &Path) -> Scaffold {
    let roles_dir = workdir.join(".jules/roles");
    let mut names = entries(&roles_dir, true);
    names.sort_by_key(|n| {
        (
            ORDER.iter().position(|o| o == n).unwrap_or(ORDER.len()),
            n.clone(),
        )
    });
    let layers = names
        .into_iter()
        .map(|name| {
            let d = roles_dir.join(&name);
            Layer {
                roles: entries(&d.join("roles"), true),
                schemas: entries(&d.join("schemas"), false)
                    .into_iter()
                    .filter_map(|f| f.strip_suffix(".yml").map(str::to_string))
                    .collect(),
                contracts: entries(&d, false)
                    .into_iter()
                    .filter(|f| f.starts_with("contracts") && f.ends_with(".yml"))
                    .collect(),
                has_assembly: d.join("prompt_assembly.j2").is_file(),
                name,
            }
        })
        .collect();
    let personas = entries(&workdir.join(".jules/personas"), true)
        .into_iter()
        .filter(|p| {
            let d = workdir.join(".jules/personas").join(p);
            d.join("prompt.md.j2").is_file() || d.join("prompt.md").is_file()
        })
        .collect();
    Scaffold {
        layers,
        personas,
        workstreams: prompt::workstreams(workdir),
    }
}

fn yaml_ok(workdir: &Path, rel: &str, out: &mut Vec<Problem>) -> Option<String> {
    match std::fs::read_to_string(workdir.join(rel)) {
        Ok(s) => {
            if let Err(e) = serde_norway::from_str::<serde_norway::Value>(&s) {
                out.push(Problem {
                    path: rel.into(),
                    message: format!("not valid YAML: {e}"),
                });
            }
            Some(s)
        }
        Err(_) => None,
    }
}

/// Every `schemas/NAME.yml` a contract mentions.
fn referenced_schemas(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for (i, _) in text.match_indices("schemas/") {
        let rest = &text[i + "schemas/".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect();
        if let Some(n) = name.strip_suffix(".yml") {
            v.push(n.to_string());
        }
    }
    v
}

/// Check the scaffold; an empty list means it is complete.
pub fn check(workdir: &Path) -> Vec<Problem> {
    let s = scan(workdir);
    let mut out = Vec::new();
    let ws = s.workstreams.first().cloned();
    for l in &s.layers {
        let base = format!(".jules/roles/{}", l.name);
        if !l.has_assembly {
            out.push(Problem {
                path: format!("{base}/prompt_assembly.j2"),
                message: "missing: every layer has its prompt_assembly.j2".into(),
            });
        }
        let phased = l.contracts.iter().any(|c| c.starts_with("contracts_"));
        if !l.contracts.iter().any(|c| c == "contracts.yml") && !phased {
            out.push(Problem {
                path: format!("{base}/contracts.yml"),
                message: "missing: every layer has its contracts.yml".into(),
            });
        }
        for c in &l.contracts {
            let rel = format!("{base}/{c}");
            if let Some(text) = yaml_ok(workdir, &rel, &mut out) {
                for schema in referenced_schemas(&text) {
                    if !l.schemas.contains(&schema) {
                        out.push(Problem {
                            path: rel.clone(),
                            message: format!(
                                "references schemas/{schema}.yml, which does not exist in {base}/schemas/"
                            ),
                        });
                    }
                }
            }
        }
        for sc in &l.schemas {
            yaml_ok(workdir, &format!("{base}/schemas/{sc}.yml"), &mut out);
        }
        for r in &l.roles {
            let rel = format!("{base}/roles/{r}/role.yml");
            if yaml_ok(workdir, &rel, &mut out).is_none() {
                out.push(Problem {
                    path: rel,
                    message: "missing: every role has its role.yml".into(),
                });
            }
        }
        if !l.has_assembly {
            continue;
        }
        // Render the assembly once per role (or once without), per phase for phased layers.
        let phases: Vec<Option<String>> = if phased {
            l.contracts
                .iter()
                .filter_map(|c| c.strip_prefix("contracts_")?.strip_suffix(".yml"))
                .map(|p| Some(p.to_string()))
                .collect()
        } else {
            vec![None]
        };
        let roles: Vec<Option<String>> = if l.roles.is_empty() {
            vec![None]
        } else {
            l.roles.iter().cloned().map(Some).collect()
        };
        let name = format!("{base}/prompt_assembly.j2");
        let Ok(source) = std::fs::read_to_string(workdir.join(&name)) else {
            continue;
        };
        'render: for role in &roles {
            for phase in &phases {
                let mut ctx = BTreeMap::new();
                ctx.insert("persona", role.clone().unwrap_or_else(|| "check".into()));
                ctx.insert("layer", l.name.clone());
                if let Some(r) = role {
                    ctx.insert("role", r.clone());
                }
                if let Some(p) = phase {
                    ctx.insert("phase", p.clone());
                }
                if let Some(w) = &ws {
                    ctx.insert("workstream", w.clone());
                }
                let ctx = minijinja::Value::from_serialize(&ctx);
                if let Err(e) = prompt::render_template(workdir, &name, &source, ctx) {
                    out.push(Problem {
                        path: name.clone(),
                        message: format!(
                            "does not render (role {}, phase {}): {e}",
                            role.as_deref().unwrap_or("-"),
                            phase.as_deref().unwrap_or("-")
                        ),
                    });
                    break 'render;
                }
            }
        }
    }
    for p in &s.personas {
        let d = format!(".jules/personas/{p}");
        let name = if workdir.join(&d).join("prompt.md.j2").is_file() {
            format!("{d}/prompt.md.j2")
        } else {
            format!("{d}/prompt.md")
        };
        let Ok(source) = std::fs::read_to_string(workdir.join(&name)) else {
            continue;
        };
        let ctx = minijinja::Value::from_serialize(BTreeMap::from([("persona", p.clone())]));
        if let Err(e) = prompt::render_template(workdir, &name, &source, ctx) {
            out.push(Problem {
                path: name,
                message: format!("does not render: {e}"),
            });
        }
    }
    out
}
