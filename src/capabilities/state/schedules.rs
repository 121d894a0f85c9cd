//! `.jules/schedules.toml`: the cycle order per track, cron schedules, the parallel policy and groups.
//!
//! ```toml
//! [cycle]                       # the default track
//! order = ["curator", "refactor", "visionary"]
//! [tracks.docs]
//! order = ["scribe", "curator"]
//! [parallel]
//! every = 5                     # or: sprints = [50, 55]  or: always = true, except = [60]
//! weaver = "weaver"             # who integrates a parallel batch (default "weaver")
//! [schedules.janitor]
//! cron = "0 3 * * *"            # 5 fields (or 6 with seconds), UTC
//! persona = "janitor"           # default: the table's name
//! [groups]
//! reviewers = ["curator", "refactor"]
//! [alerts]
//! group = "reviewers"           # who hears about personas that exhausted their retries
//! [[layers]]                    # seed-001 layers, in order; each runs its roles as a parallel batch
//! name = "observers"
//! roles = ["qa", "security"]
//! workstream = "generic"        # optional: handed to the runs (JULES_WORKSTREAM)
//! ```
//!
//! With `[[layers]]`, a sprint runs the layers in order instead of the cycle: each tick launches the roles
//! of the first layer not done yet (track = the layer's name, reason `layer`) and waits while any of them
//! runs.
//!
//! Errors name the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::kit::error::{Error, Result};
use crate::kit::names::validate_name;

/// The default track's name: the `[cycle]` table.
pub const DEFAULT_TRACK: &str = "default";

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Schedules {
    /// Track name → the personas in cycle order. `[cycle]` is the track `default`.
    pub tracks: BTreeMap<String, Vec<String>>,
    pub parallel: ParallelPolicy,
    pub weaver: String,
    pub schedules: BTreeMap<String, CronSchedule>,
    pub groups: BTreeMap<String, Vec<String>>,
    pub alert_group: Option<String>,
    /// `[[layers]]`: seed-001 layers run in order, each as a parallel batch of its roles.
    pub layers: Vec<Layer>,
}

/// One `[[layers]]` entry: its roles run in parallel; the next layer starts when they are all done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layer {
    pub name: String,
    pub roles: Vec<String>,
    pub workstream: Option<String>,
}

/// When a sprint runs as one parallel batch instead of the sequential cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "policy")]
pub enum ParallelPolicy {
    #[default]
    Never,
    Every {
        every: u64,
    },
    Sprints {
        sprints: Vec<u64>,
    },
    AlwaysExcept {
        except: Vec<u64>,
    },
}

impl ParallelPolicy {
    pub fn is_parallel(&self, sprint: u64) -> bool {
        match self {
            ParallelPolicy::Never => false,
            ParallelPolicy::Every { every } => *every > 0 && sprint > 0 && sprint % every == 0,
            ParallelPolicy::Sprints { sprints } => sprints.contains(&sprint),
            ParallelPolicy::AlwaysExcept { except } => !except.contains(&sprint),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CronSchedule {
    pub persona: String,
    pub cron: String,
    #[serde(skip)]
    parsed: Option<croner::Cron>,
}

impl CronSchedule {
    /// Whether a fire time lies in `(after, until]`.
    pub fn fires_between(
        &self,
        after: chrono::DateTime<chrono::Utc>,
        until: chrono::DateTime<chrono::Utc>,
    ) -> bool {
        let Some(cron) = &self.parsed else {
            return false;
        };
        match cron.find_next_occurrence(&after, false) {
            Ok(next) => next <= until,
            Err(_) => false,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    cycle: Option<RawTrack>,
    #[serde(default)]
    tracks: BTreeMap<String, RawTrack>,
    parallel: Option<RawParallel>,
    #[serde(default)]
    schedules: BTreeMap<String, RawSchedule>,
    #[serde(default)]
    groups: BTreeMap<String, RawGroup>,
    alerts: Option<RawAlerts>,
    #[serde(default)]
    layers: Vec<RawLayer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    name: String,
    roles: Vec<String>,
    workstream: Option<String>,
}

/// `name = ["a", "b"]`, or `[groups.name]` with `members = […]` (both forms mail accepts too).
#[derive(Deserialize)]
#[serde(untagged)]
enum RawGroup {
    List(Vec<String>),
    Table { members: Vec<String> },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrack {
    order: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParallel {
    every: Option<u64>,
    sprints: Option<Vec<u64>>,
    always: Option<bool>,
    #[serde(default)]
    except: Vec<u64>,
    weaver: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchedule {
    cron: String,
    persona: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAlerts {
    group: String,
}

impl Schedules {
    /// The schedules file of a work tree, if there is one.
    pub fn default_path(workdir: &Path) -> PathBuf {
        workdir.join(".jules").join("schedules.toml")
    }

    pub fn load(path: &Path) -> Result<Schedules> {
        let text =
            std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        let text = String::from_utf8(text)
            .map_err(|_| Error::usage(format!("{}: not UTF-8", path.display())))?;
        Schedules::parse(&text, &path.display().to_string())
    }

    /// Parse and validate; `origin` names the source in errors (`file:line: …`).
    pub fn parse(text: &str, origin: &str) -> Result<Schedules> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(s.start)).unwrap_or(1);
            Error::usage(format!("{origin}:{line}: {}", e.message()))
        })?;
        // Validation errors point at the line where the offending value appears.
        let locate = |needle: &str| -> usize { text.find(needle).map(line_of).unwrap_or(1) };
        let check = |what: &str, name: &str| -> Result<()> {
            validate_name(what, name)
                .map_err(|e| Error::usage(format!("{origin}:{}: {e}", locate(name))))
        };
        let mut s = Schedules {
            weaver: "weaver".into(),
            ..Default::default()
        };
        let mut add_track = |name: String, track: RawTrack| -> Result<()> {
            let mut seen = Vec::new();
            for p in &track.order {
                check("persona", p)?;
                if seen.contains(p) {
                    return Err(Error::usage(format!(
                        "{origin}:{}: persona {p:?} appears twice in track {name:?}",
                        locate(&format!("\"{p}\""))
                    )));
                }
                seen.push(p.clone());
            }
            s.tracks.insert(name, track.order);
            Ok(())
        };
        if let Some(c) = raw.cycle {
            add_track(DEFAULT_TRACK.into(), c)?;
        }
        for (name, t) in raw.tracks {
            check("track", &name)?;
            if name == DEFAULT_TRACK {
                return Err(Error::usage(format!(
                    "{origin}:{}: the default track is [cycle], not [tracks.{DEFAULT_TRACK}]",
                    locate("[tracks.default]")
                )));
            }
            add_track(name, t)?;
        }
        if let Some(p) = raw.parallel {
            let chosen = [p.every.is_some(), p.sprints.is_some(), p.always.is_some()]
                .iter()
                .filter(|x| **x)
                .count();
            if chosen > 1 {
                return Err(Error::usage(format!(
                    "{origin}:{}: [parallel] takes one of `every`, `sprints` or `always`",
                    locate("[parallel]")
                )));
            }
            if !p.except.is_empty() && p.always != Some(true) {
                return Err(Error::usage(format!(
                    "{origin}:{}: `except` goes with `always = true`",
                    locate("except")
                )));
            }
            s.parallel = match (p.every, p.sprints, p.always) {
                (Some(0), _, _) => {
                    return Err(Error::usage(format!(
                        "{origin}:{}: `every` must be at least 1",
                        locate("every")
                    )))
                }
                (Some(every), _, _) => ParallelPolicy::Every { every },
                (_, Some(sprints), _) => ParallelPolicy::Sprints { sprints },
                (_, _, Some(true)) => ParallelPolicy::AlwaysExcept { except: p.except },
                _ => ParallelPolicy::Never,
            };
            if let Some(w) = p.weaver {
                check("persona", &w)?;
                s.weaver = w;
            }
        }
        for (name, sch) in raw.schedules {
            check("schedule", &name)?;
            let persona = sch.persona.unwrap_or_else(|| name.clone());
            check("persona", &persona)?;
            // croner accepts a 7th (year) field; cron lines here are 5 fields, or 6 with seconds.
            let fields = sch.cron.split_whitespace().count();
            if fields > 6 {
                return Err(Error::usage(format!(
                    "{origin}:{}: bad cron expression {:?} for [schedules.{name}]: {fields} fields; \
                     use 5 (minute hour day month weekday) or 6 (with seconds first)",
                    locate(&sch.cron),
                    sch.cron
                )));
            }
            let parsed = croner::Cron::from_str(&sch.cron).map_err(|e| {
                Error::usage(format!(
                    "{origin}:{}: bad cron expression {:?} for [schedules.{name}]: {e}",
                    locate(&sch.cron),
                    sch.cron
                ))
            })?;
            s.schedules.insert(
                name,
                CronSchedule {
                    persona,
                    cron: sch.cron,
                    parsed: Some(parsed),
                },
            );
        }
        for (name, group) in raw.groups {
            let members = match group {
                RawGroup::List(m) | RawGroup::Table { members: m } => m,
            };
            check("group", &name)?;
            for m in &members {
                check("persona", m)?;
            }
            s.groups.insert(name, members);
        }
        if let Some(a) = raw.alerts {
            if !s.groups.contains_key(&a.group) {
                return Err(Error::usage(format!(
                    "{origin}:{}: [alerts] group {:?} is not defined in [groups]",
                    locate(&a.group),
                    a.group
                )));
            }
            s.alert_group = Some(a.group);
        }
        for l in raw.layers {
            check("layer", &l.name)?;
            if s.layers.iter().any(|x| x.name == l.name) {
                return Err(Error::usage(format!(
                    "{origin}:{}: layer {:?} is declared twice",
                    locate(&format!("\"{}\"", l.name)),
                    l.name
                )));
            }
            if l.roles.is_empty() {
                return Err(Error::usage(format!(
                    "{origin}:{}: layer {:?} has no roles",
                    locate(&format!("\"{}\"", l.name)),
                    l.name
                )));
            }
            for r in &l.roles {
                check("persona", r)?;
            }
            if let Some(w) = &l.workstream {
                check("workstream", w)?;
            }
            s.layers.push(Layer {
                name: l.name,
                roles: l.roles,
                workstream: l.workstream,
            });
        }
        Ok(s)
    }

    /// Every persona that takes part in the cycle (all tracks), in first-seen order, weaver excluded.
    pub fn cycle_personas(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let default = self.tracks.get(DEFAULT_TRACK).into_iter();
        let others = self
            .tracks
            .iter()
            .filter(|(k, _)| k.as_str() != DEFAULT_TRACK)
            .map(|(_, v)| v);
        for order in default.chain(others) {
            for p in order {
                if !out.contains(p) && *p != self.weaver {
                    out.push(p.clone());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
[cycle]                       # the default track
order = ["curator", "refactor", "visionary"]
[tracks.docs]
order = ["scribe", "curator"]
[parallel]
every = 5
[schedules.janitor]
cron = "0 3 * * *"
[groups]
reviewers = ["curator", "refactor"]
"#;

    #[test]
    fn a_seven_field_cron_line_is_refused() {
        let text = "[schedules.janitor]\ncron = \"0 0 3 * * * 2027\"\n";
        let e = Schedules::parse(text, "s.toml").unwrap_err().to_string();
        assert!(e.contains("s.toml:2:") && e.contains("7 fields"), "{e}");
        let six = "[schedules.janitor]\ncron = \"0 0 3 * * *\"\n";
        assert!(Schedules::parse(six, "s.toml").is_ok());
    }

    #[test]
    fn parses_the_documented_shape() {
        let s = Schedules::parse(SAMPLE, "s.toml").unwrap();
        assert_eq!(s.tracks["default"], ["curator", "refactor", "visionary"]);
        assert_eq!(s.tracks["docs"], ["scribe", "curator"]);
        assert!(s.parallel.is_parallel(10) && !s.parallel.is_parallel(11));
        assert_eq!(s.schedules["janitor"].persona, "janitor");
        assert_eq!(s.groups["reviewers"], ["curator", "refactor"]);
        assert_eq!(
            s.cycle_personas(),
            ["curator", "refactor", "visionary", "scribe"]
        );
        let t = |h| {
            chrono::DateTime::parse_from_rfc3339(h)
                .unwrap()
                .with_timezone(&chrono::Utc)
        };
        let j = &s.schedules["janitor"];
        assert!(j.fires_between(t("2026-01-01T02:00:00Z"), t("2026-01-01T03:00:00Z")));
        assert!(!j.fires_between(t("2026-01-01T03:00:00Z"), t("2026-01-01T04:00:00Z")));
    }

    #[test]
    fn policies() {
        let p = |t: &str| {
            Schedules::parse(&format!("[parallel]\n{t}\n"), "x")
                .unwrap()
                .parallel
        };
        assert!(p("sprints = [50, 55]").is_parallel(55));
        assert!(!p("sprints = [50, 55]").is_parallel(56));
        assert!(p("always = true\nexcept = [60]").is_parallel(61));
        assert!(!p("always = true\nexcept = [60]").is_parallel(60));
    }

    #[test]
    fn errors_name_the_line() {
        let err = |t: &str| Schedules::parse(t, "s.toml").unwrap_err().to_string();
        let e = err("[cycle]\norder = [\"a\",\n\"b\"\n[groups]\n");
        assert!(e.starts_with("s.toml:"), "{e}");
        let e = err("[cycle]\norder = [\"curator\"]\n[schedules.j]\ncron = \"99 * * * *\"\n");
        assert!(e.starts_with("s.toml:4:"), "{e}");
        let e = err("[cycle]\norder = [\"ok\", \"bad name\"]\n");
        assert!(e.starts_with("s.toml:2:") && e.contains("bad name"), "{e}");
        let e = err("[cycle]\norder = [\"a\"]\ncolour = 1\n");
        assert!(e.starts_with("s.toml:3:") && e.contains("colour"), "{e}");
        let e = err("[parallel]\nevery = 5\nsprints = [1]\n");
        assert!(e.starts_with("s.toml:1:"), "{e}");
    }
}
