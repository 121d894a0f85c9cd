//! Who a message goes to: personas, groups and `__broadcast`.
//!
//! A group is a name several personas share. Groups come from two places, and a group named in both has the
//! members of both:
//!
//! - `.jules/schedules.toml` in the work tree (in `HEAD` for a bare repository), table `[groups]`:
//!   `workers = ["worker-a", "worker-b"]`, or `[groups.workers]` with `members = [...]`;
//! - git config, multi-valued: `git config --add jules.group.workers.member worker-a`.
//!
//! A recipient that is neither a group nor `__broadcast` is a persona, as seed 003 delivers to a mailbox
//! that may not exist yet. Groups are expanded when a message is sent and the members are stored in the
//! event, so that every replica delivers it to the same personas whatever its own configuration says.

use std::collections::{BTreeMap, BTreeSet};

use gix::bstr::ByteSlice;

use super::message::{BROADCAST, MAX_RECIPIENTS};
use crate::kit::error::{Error, Result};
use crate::kit::names;

/// The path of the schedules file in the repository.
pub const SCHEDULES_PATH: &str = ".jules/schedules.toml";

/// Group name to members.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Groups {
    pub groups: BTreeMap<String, BTreeSet<String>>,
}

/// The recipients of a message as the send event records them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub to: Vec<String>,
    pub groups: BTreeMap<String, Vec<String>>,
}

impl Groups {
    /// The groups configured for `repo`, from the schedules file and git config.
    pub fn load(repo: &gix::Repository) -> Result<Groups> {
        let mut g = Groups::default();
        if let Some(text) = schedules_text(repo)? {
            g.merge(Groups::from_toml(&text)?);
        }
        let snap = repo.config_snapshot();
        if let Some(sections) = snap.plumbing().sections_by_name("jules") {
            for section in sections {
                let Some(sub) = section.header().subsection_name() else {
                    continue;
                };
                let Some(group) = sub.to_str().ok().and_then(|s| s.strip_prefix("group.")) else {
                    continue;
                };
                for m in section.values("member") {
                    let m = m.to_str().map_err(|_| {
                        Error::usage(format!("jules.group.{group}.member is not UTF-8"))
                    })?;
                    g.add(group, m.trim(), "git config")?;
                }
            }
        }
        Ok(g)
    }

    /// The `[groups]` table of a schedules file.
    pub fn from_toml(text: &str) -> Result<Groups> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| Error::usage(format!("{SCHEDULES_PATH}: {e}")))?;
        let mut g = Groups::default();
        let Some(groups) = table.get("groups") else {
            return Ok(g);
        };
        let groups = groups
            .as_table()
            .ok_or_else(|| Error::usage(format!("{SCHEDULES_PATH}: [groups] must be a table")))?;
        for (name, value) in groups {
            let list = match value {
                toml::Value::Array(a) => a,
                toml::Value::Table(t) => match t.get("members") {
                    Some(toml::Value::Array(a)) => a,
                    _ => {
                        return Err(Error::usage(format!(
                            "{SCHEDULES_PATH}: [groups.{name}] needs members = [\"persona\", …]"
                        )))
                    }
                },
                _ => {
                    return Err(Error::usage(format!(
                        "{SCHEDULES_PATH}: groups.{name} must be a list of personas"
                    )))
                }
            };
            for m in list {
                let m = m.as_str().ok_or_else(|| {
                    Error::usage(format!(
                        "{SCHEDULES_PATH}: groups.{name} must list persona names as strings"
                    ))
                })?;
                g.add(name, m, SCHEDULES_PATH)?;
            }
        }
        Ok(g)
    }

    fn add(&mut self, group: &str, member: &str, origin: &str) -> Result<()> {
        names::validate_name("group", group).map_err(|e| Error::usage(format!("{origin}: {e}")))?;
        super::message::validate_persona(member)
            .map_err(|e| Error::usage(format!("{origin}: group {group}: {e}")))?;
        self.groups
            .entry(group.to_owned())
            .or_default()
            .insert(member.to_owned());
        Ok(())
    }

    fn merge(&mut self, other: Groups) {
        for (k, v) in other.groups {
            self.groups.entry(k).or_default().extend(v);
        }
    }

    /// Check the recipients and expand the groups among them. Duplicates are dropped, order is kept.
    pub fn resolve(&self, to: &[String]) -> Result<Resolved> {
        if to.is_empty() {
            return Err(Error::usage("no recipient: a message needs at least one"));
        }
        let mut out = Resolved::default();
        for r in to {
            names::validate_name("recipient", r)?;
            if out.to.contains(r) {
                continue;
            }
            if let Some(members) = self.groups.get(r) {
                if members.is_empty() {
                    return Err(Error::usage(format!("group {r} has no members")));
                }
                out.groups
                    .insert(r.clone(), members.iter().cloned().collect());
            }
            out.to.push(r.clone());
        }
        if out.to.len() > MAX_RECIPIENTS {
            return Err(Error::usage(format!(
                "{} recipients, over the limit of {MAX_RECIPIENTS}",
                out.to.len()
            )));
        }
        Ok(out)
    }
}

/// The personas a message reaches, apart from a broadcast: direct recipients and group members.
pub fn personas(to: &[String], groups: &BTreeMap<String, Vec<String>>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for r in to {
        match groups.get(r) {
            Some(members) => out.extend(members.iter().cloned()),
            None if r == BROADCAST => {}
            None => {
                out.insert(r.clone());
            }
        }
    }
    out
}

/// What a name given where a persona is expected turns out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PersonaCheck {
    /// Listed in the schedules file or a group, or seen on the mail log.
    Known,
    /// A group name: an error where one persona is expected.
    Group,
    /// Nobody knows it; the closest known name, if one is close.
    Unknown { suggestion: Option<String> },
}

/// The personas this repository knows: the schedules file (tracks, the weaver, cron personas, group
/// members), git-config groups, and `seen` (the personas on the mail log).
#[derive(Debug, Clone, Default)]
pub struct Known {
    pub personas: BTreeSet<String>,
    pub groups: BTreeSet<String>,
}

impl Known {
    pub fn load(
        repo: &gix::Repository,
        groups: &Groups,
        seen: impl IntoIterator<Item = String>,
    ) -> Result<Known> {
        let mut k = Known::default();
        if let Some(text) = schedules_text(repo)? {
            k.personas.extend(schedule_personas(&text));
        }
        for (g, members) in &groups.groups {
            k.groups.insert(g.clone());
            k.personas.extend(members.iter().cloned());
        }
        k.personas.extend(seen);
        k.personas.remove(BROADCAST);
        Ok(k)
    }

    /// Whether `name` is a persona this repository knows, a group, or neither (with a suggestion).
    pub fn check(&self, name: &str) -> PersonaCheck {
        if self.groups.contains(name) {
            return PersonaCheck::Group;
        }
        if self.personas.contains(name) || name == BROADCAST {
            return PersonaCheck::Known;
        }
        let suggestion = self
            .personas
            .iter()
            .map(|p| (strsim::damerau_levenshtein(name, p), p))
            .filter(|(d, p)| *d <= 2.max(p.len() / 4) && *d < p.len())
            .min()
            .map(|(_, p)| p.clone());
        PersonaCheck::Unknown { suggestion }
    }
}

/// Every persona a schedules file names (read leniently: a file the scheduler rejects is its business).
fn schedule_personas(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return out;
    };
    let strings = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(c) = table.get("cycle").and_then(|c| c.as_table()) {
        out.extend(strings(c.get("order")));
    }
    if let Some(tracks) = table.get("tracks").and_then(|t| t.as_table()) {
        for t in tracks.values().filter_map(|t| t.as_table()) {
            out.extend(strings(t.get("order")));
        }
    }
    if let Some(w) = table
        .get("parallel")
        .and_then(|p| p.get("weaver"))
        .and_then(|w| w.as_str())
    {
        out.insert(w.to_owned());
    } else if table.contains_key("parallel") {
        out.insert("weaver".to_owned());
    }
    if let Some(sch) = table.get("schedules").and_then(|s| s.as_table()) {
        for (name, v) in sch {
            match v.get("persona").and_then(|p| p.as_str()) {
                Some(p) => out.insert(p.to_owned()),
                None => out.insert(name.clone()),
            };
        }
    }
    out
}

fn schedules_text(repo: &gix::Repository) -> Result<Option<String>> {
    if let Some(wd) = repo.workdir() {
        let path = wd.join(SCHEDULES_PATH);
        return match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(super::message::utf8(bytes, SCHEDULES_PATH)?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
        };
    }
    let Ok(tree) = repo.head_tree() else {
        return Ok(None);
    };
    match tree.lookup_entry_by_path(SCHEDULES_PATH)? {
        Some(entry) => {
            let blob = entry.object()?;
            Ok(Some(super::message::utf8(
                blob.data.clone(),
                SCHEDULES_PATH,
            )?))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_personas_get_a_suggestion_and_groups_are_named() {
        let text = "[cycle]\norder = [\"refactor\", \"curator\"]\n[schedules.janitor]\ncron = \"0 3 * * *\"\n";
        let mut k = Known {
            personas: schedule_personas(text),
            groups: BTreeSet::new(),
        };
        k.groups.insert("reviewers".into());
        assert_eq!(k.check("refactor"), PersonaCheck::Known);
        assert_eq!(k.check("janitor"), PersonaCheck::Known);
        assert_eq!(k.check("reviewers"), PersonaCheck::Group);
        assert_eq!(
            k.check("refactr"),
            PersonaCheck::Unknown {
                suggestion: Some("refactor".into())
            }
        );
        assert_eq!(
            k.check("zzzzzzzz"),
            PersonaCheck::Unknown { suggestion: None }
        );
    }

    #[test]
    fn toml_forms_and_resolution() {
        let g = Groups::from_toml(
            "[cycle]\norder = [\"a\"]\n[groups]\nworkers = [\"w1\", \"w2\"]\n[groups.review]\nmembers = [\"r1\"]\n",
        )
        .unwrap();
        assert_eq!(g.groups["workers"].len(), 2);
        assert_eq!(g.groups["review"].len(), 1);
        let r = g
            .resolve(&[
                "workers".into(),
                "curator".into(),
                "workers".into(),
                BROADCAST.into(),
            ])
            .unwrap();
        assert_eq!(r.to, vec!["workers", "curator", BROADCAST]);
        assert_eq!(r.groups["workers"], vec!["w1", "w2"]);
        assert_eq!(
            personas(&r.to, &r.groups).into_iter().collect::<Vec<_>>(),
            vec!["curator", "w1", "w2"]
        );
        assert!(g.resolve(&[]).is_err());
        assert!(g.resolve(&["bad name".into()]).is_err());
        assert!(Groups::from_toml("[groups]\nx = [1]\n").is_err());
        assert!(Groups::from_toml("[groups]\nx = [\"a b\"]\n").is_err());
    }
}
