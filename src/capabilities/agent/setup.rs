//! `agent setup`, `agent remove` and `agent status`: the MCP registration (`git jules mcp`) and the three
//! hooks (pre-edit, session start, stop) merged into each harness's own files, in its own format.
//!
//! | harness | scope | MCP server | hooks |
//! |---|---|---|---|
//! | Claude Code | project | `.mcp.json` `mcpServers.jules` | `.claude/settings.json` `hooks` |
//! | Claude Code | user | `~/.claude.json` `mcpServers.jules` | `~/.claude/settings.json` `hooks` |
//! | Codex CLI | project | `.codex/config.toml` `[mcp_servers.jules]` | same file, `[[hooks.<Event>]]` |
//! | Codex CLI | user | `$CODEX_HOME/config.toml` (`~/.codex`) | same file |
//! | Gemini CLI | project | `.gemini/settings.json` `mcpServers.jules` | same file, `hooks` |
//! | Gemini CLI | user | `~/.gemini/settings.json` | same file |
//!
//! Files are parsed and merged, never overwritten: JSON through [`Doc`] (keys keep their order), TOML
//! through `toml_edit` (comments and layout kept). Every other key stays. What is ours is recognised by its
//! command, not by a key the harnesses might refuse: the MCP server `jules` running `git jules mcp`, and
//! hook entries whose command runs `jules agent hook`. So `remove` takes out exactly those (and the
//! containers it leaves empty), setup run twice changes nothing, and `status` compares what is installed
//! with what setup would write now.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::jsondoc::Doc;
use super::Harness;
use crate::kit::error::{Error, Result};

/// Where the entries go: the repository (checked in, or not, as the operator decides) or the user's home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Project,
    User,
}

/// The directories the files live in, handed in by the frontend (the library reads no environment).
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The top of the work tree (project scope).
    pub workdir: Option<PathBuf>,
    /// The user's home directory (user scope).
    pub home: Option<PathBuf>,
    /// Codex's home (`$CODEX_HOME`), else `~/.codex`.
    pub codex_home: Option<PathBuf>,
}

/// What a file holds of ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Mcp,
    Hooks,
    Both,
}

impl Role {
    fn mcp(self) -> bool {
        matches!(self, Role::Mcp | Role::Both)
    }
    fn hooks(self) -> bool {
        matches!(self, Role::Hooks | Role::Both)
    }
}

/// The files of `h` at `scope`, and what each holds.
fn files(h: Harness, scope: Scope, places: &Places) -> Result<Vec<(PathBuf, Role)>> {
    let need = |p: &Option<PathBuf>, what: &str| {
        p.clone()
            .ok_or_else(|| Error::usage(format!("no {what} to set the {h} harness up in")))
    };
    Ok(match (h, scope) {
        (Harness::Claude, Scope::Project) => {
            let w = need(&places.workdir, "work tree")?;
            vec![
                (w.join(".mcp.json"), Role::Mcp),
                (w.join(".claude/settings.json"), Role::Hooks),
            ]
        }
        (Harness::Claude, Scope::User) => {
            let home = need(&places.home, "home directory")?;
            vec![
                (home.join(".claude.json"), Role::Mcp),
                (home.join(".claude/settings.json"), Role::Hooks),
            ]
        }
        (Harness::Codex, Scope::Project) => {
            vec![(
                need(&places.workdir, "work tree")?.join(".codex/config.toml"),
                Role::Both,
            )]
        }
        (Harness::Codex, Scope::User) => {
            let dir = match &places.codex_home {
                Some(d) => d.clone(),
                None => need(&places.home, "home directory")?.join(".codex"),
            };
            vec![(dir.join("config.toml"), Role::Both)]
        }
        (Harness::Gemini, Scope::Project) => vec![(
            need(&places.workdir, "work tree")?.join(".gemini/settings.json"),
            Role::Both,
        )],
        (Harness::Gemini, Scope::User) => vec![(
            need(&places.home, "home directory")?.join(".gemini/settings.json"),
            Role::Both,
        )],
    })
}

/// One hook as setup installs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hook {
    event: &'static str,
    matcher: Option<&'static str>,
    command: String,
    /// Claude Code: seconds; Gemini CLI: milliseconds; Codex: not written.
    timeout: Option<u64>,
    /// Gemini CLI's `name`.
    name: Option<&'static str>,
}

/// The hook command line (the harness runs it through a shell; a persona name is letters, digits, `-`,
/// `_` and `.`, so it needs no quoting).
pub fn hook_command(what: &str, h: Harness, persona: Option<&str>) -> String {
    let mut c = format!("git jules agent hook {what} --harness {h}");
    if let Some(p) = persona {
        c.push_str(" --persona ");
        c.push_str(p);
    }
    c
}

fn hooks(h: Harness, persona: Option<&str>) -> Vec<Hook> {
    let cmd = |what| hook_command(what, h, persona);
    match h {
        Harness::Claude => vec![
            Hook {
                event: "PreToolUse",
                matcher: Some("Edit|Write|MultiEdit|NotebookEdit"),
                command: cmd("pre-edit"),
                timeout: Some(10),
                name: None,
            },
            Hook {
                event: "SessionStart",
                matcher: None,
                command: cmd("session-start"),
                timeout: Some(10),
                name: None,
            },
            Hook {
                event: "Stop",
                matcher: None,
                command: cmd("stop"),
                timeout: Some(30),
                name: None,
            },
        ],
        Harness::Codex => vec![
            Hook {
                event: "PreToolUse",
                matcher: Some("apply_patch|Edit|Write"),
                command: cmd("pre-edit"),
                timeout: None,
                name: None,
            },
            Hook {
                event: "SessionStart",
                matcher: None,
                command: cmd("session-start"),
                timeout: None,
                name: None,
            },
            Hook {
                event: "Stop",
                matcher: None,
                command: cmd("stop"),
                timeout: None,
                name: None,
            },
        ],
        Harness::Gemini => vec![
            Hook {
                event: "BeforeTool",
                matcher: Some("write_file|replace"),
                command: cmd("pre-edit"),
                timeout: Some(10_000),
                name: Some("git-jules-lease-guard"),
            },
            Hook {
                event: "SessionStart",
                matcher: None,
                command: cmd("session-start"),
                timeout: Some(10_000),
                name: Some("git-jules-mailbox"),
            },
            Hook {
                event: "AfterAgent",
                matcher: None,
                command: cmd("stop"),
                timeout: Some(30_000),
                name: Some("git-jules-sync"),
            },
        ],
    }
}

/// Whether a hook command is one of ours.
pub fn is_our_command(c: &str) -> bool {
    c.contains("jules agent hook ")
}

fn mcp_args(persona: Option<&str>) -> Vec<String> {
    let mut a = vec!["jules".to_owned(), "mcp".to_owned()];
    if let Some(p) = persona {
        a.push("--persona".into());
        a.push(p.into());
    }
    a
}

/// Whether an MCP server entry (command and args) is ours: `git jules mcp …` or `git-jules mcp …`.
fn is_our_server(command: Option<&str>, args: &[&str]) -> bool {
    match command {
        Some("git") => args.first() == Some(&"jules") && args.get(1) == Some(&"mcp"),
        Some(c) => c.ends_with("git-jules") && args.first() == Some(&"mcp"),
        None => false,
    }
}

/// The persona in `… --persona P …`.
fn persona_in<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<String> {
    while let Some(w) = words.next() {
        if w == "--persona" {
            return words.next().map(str::to_owned);
        }
    }
    None
}

/// A change to one file: its text before (none: absent) and after (none: removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What setup or remove does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Setup,
    Remove,
}

/// The changes `action` makes for `h` at `scope` (only the files that change). `persona` is written into
/// the MCP registration and the hook commands (none: they read `JULES_PERSONA` when they run).
pub fn plan(
    h: Harness,
    scope: Scope,
    persona: Option<&str>,
    places: &Places,
    action: Action,
) -> Result<Vec<FileChange>> {
    if let Some(p) = persona {
        crate::capabilities::mail::message::validate_persona(p)?;
    }
    let mut out = Vec::new();
    for (path, role) in files(h, scope, places)? {
        let before = read(&path)?;
        let after = if path.extension().is_some_and(|e| e == "toml") {
            edit_toml(before.as_deref(), &path, role, h, persona, action)?
        } else {
            edit_json(before.as_deref(), &path, role, h, persona, action)?
        };
        if after != before {
            out.push(FileChange {
                path,
                before,
                after,
            });
        }
    }
    Ok(out)
}

/// Write the changes (each file replaced atomically; a file left with nothing removed).
pub fn apply(changes: &[FileChange]) -> Result<()> {
    for c in changes {
        let io = |what: &str, e: std::io::Error| Error::Io {
            context: format!("{what} {}", c.path.display()),
            source: e,
        };
        match &c.after {
            None => std::fs::remove_file(&c.path).or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(io("removing", e)),
            })?,
            Some(text) => {
                let dir = c.path.parent().unwrap_or(Path::new("."));
                std::fs::create_dir_all(dir).map_err(|e| io("creating the directory of", e))?;
                let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io("writing", e))?;
                std::io::Write::write_all(&mut tmp, text.as_bytes())
                    .map_err(|e| io("writing", e))?;
                tmp.persist(&c.path).map_err(|e| io("replacing", e.error))?;
            }
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io {
            context: format!("reading {}", path.display()),
            source: e,
        }),
    }
}

fn corrupt(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Corrupt {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

fn not_ours(path: &Path) -> Error {
    Error::Conflict(format!(
        "{}: an MCP server named \"jules\" is already there and does not run `git jules mcp`; \
         rename or remove it first",
        path.display()
    ))
}

// ---------------------------------------------------------------------------------------------------------
// JSON (Claude Code, Gemini CLI)

fn json_server(h: Harness, persona: Option<&str>) -> Doc {
    let mut server = Doc::object();
    if h == Harness::Claude {
        server.set("type", Doc::str("stdio"));
    }
    server.set("command", Doc::str("git"));
    server.set(
        "args",
        Doc::Array(mcp_args(persona).iter().map(|a| Doc::str(a)).collect()),
    );
    server
}

fn json_server_is_ours(d: &Doc) -> bool {
    let args: Vec<&str> = match d.get("args") {
        Some(Doc::Array(a)) => a.iter().filter_map(Doc::as_str).collect(),
        _ => Vec::new(),
    };
    is_our_server(d.get("command").and_then(Doc::as_str), &args)
}

fn json_group(hook: &Hook) -> Doc {
    let mut entry = Doc::object();
    if let Some(n) = hook.name {
        entry.set("name", Doc::str(n));
    }
    entry.set("type", Doc::str("command"));
    entry.set("command", Doc::String(hook.command.clone()));
    if let Some(t) = hook.timeout {
        entry.set("timeout", Doc::Number(t.into()));
    }
    let mut group = Doc::object();
    if let Some(m) = hook.matcher {
        group.set("matcher", Doc::str(m));
    }
    group.set("hooks", Doc::Array(vec![entry]));
    group
}

fn json_entry_is_ours(e: &Doc) -> bool {
    e.get("command")
        .and_then(Doc::as_str)
        .is_some_and(is_our_command)
}

/// Our groups, per event, in file order: groups holding at least one of our hook entries.
fn json_our_groups(doc: &Doc) -> Vec<(String, Doc)> {
    let mut out = Vec::new();
    if let Some(Doc::Object(events)) = doc.get("hooks") {
        for (event, groups) in events {
            if let Doc::Array(groups) = groups {
                for g in groups {
                    if let Some(Doc::Array(entries)) = g.get("hooks") {
                        if entries.iter().any(json_entry_is_ours) {
                            out.push((event.clone(), g.clone()));
                        }
                    }
                }
            }
        }
    }
    out
}

/// Take our hook entries out, and the groups, event lists and `hooks` object that leaves empty.
fn json_remove_hooks(doc: &mut Doc) {
    let Some(Doc::Object(events)) = doc.get_mut("hooks") else {
        return;
    };
    for (_, groups) in events.iter_mut() {
        if let Doc::Array(groups) = groups {
            groups.retain_mut(|g| {
                let Some(Doc::Array(entries)) = g.get_mut("hooks") else {
                    return true;
                };
                let had = entries.len();
                entries.retain(|e| !json_entry_is_ours(e));
                !(entries.is_empty() && had > 0)
            });
        }
    }
    events.retain(|(_, g)| !matches!(g, Doc::Array(a) if a.is_empty()));
    if events.is_empty() {
        doc.remove("hooks");
    }
}

fn edit_json(
    before: Option<&str>,
    path: &Path,
    role: Role,
    h: Harness,
    persona: Option<&str>,
    action: Action,
) -> Result<Option<String>> {
    let mut doc = Doc::parse(before.unwrap_or("")).map_err(|e| corrupt(path, e))?;
    if !matches!(doc, Doc::Object(_)) {
        return Err(corrupt(path, "not a JSON object"));
    }
    let original = doc.clone();
    if role.mcp() {
        let servers_ours = doc
            .get("mcpServers")
            .and_then(|s| s.get("jules"))
            .map(json_server_is_ours);
        match (action, servers_ours) {
            (_, Some(false)) if action == Action::Setup => return Err(not_ours(path)),
            (Action::Setup, _) => {
                if doc.get("mcpServers").is_none() {
                    doc.set("mcpServers", Doc::object());
                }
                let servers = doc.get_mut("mcpServers").expect("just set");
                if !servers.set("jules", json_server(h, persona)) {
                    return Err(corrupt(path, "mcpServers is not an object"));
                }
            }
            (Action::Remove, Some(true)) => {
                let servers = doc.get_mut("mcpServers").expect("present");
                servers.remove("jules");
                if servers.is_empty_container() {
                    doc.remove("mcpServers");
                }
            }
            (Action::Remove, _) => {}
        }
    }
    if role.hooks() {
        let want: Vec<(String, Doc)> = hooks(h, persona)
            .iter()
            .map(|k| (k.event.to_owned(), json_group(k)))
            .collect();
        let current = json_our_groups(&doc);
        match action {
            Action::Setup if current == want => {}
            Action::Setup => {
                json_remove_hooks(&mut doc);
                if doc.get("hooks").is_none() {
                    doc.set("hooks", Doc::object());
                }
                let events = doc.get_mut("hooks").expect("just set");
                if !matches!(events, Doc::Object(_)) {
                    return Err(corrupt(path, "hooks is not an object"));
                }
                for (event, group) in want {
                    if events.get(&event).is_none() {
                        events.set(&event, Doc::Array(Vec::new()));
                    }
                    match events.get_mut(&event) {
                        Some(Doc::Array(groups)) => groups.push(group),
                        _ => return Err(corrupt(path, format!("hooks.{event} is not a list"))),
                    }
                }
            }
            Action::Remove => json_remove_hooks(&mut doc),
        }
    }
    if doc == original {
        return Ok(before.map(str::to_owned));
    }
    if doc.is_empty_container() {
        return Ok(None);
    }
    Ok(Some(doc.to_pretty()))
}

// ---------------------------------------------------------------------------------------------------------
// TOML (Codex CLI)

use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value};

fn toml_strs(v: Option<&Item>) -> Vec<String> {
    v.and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn toml_server_is_ours(t: &dyn toml_edit::TableLike) -> bool {
    let args = toml_strs(t.get("args"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    is_our_server(t.get("command").and_then(Item::as_str), &args)
}

/// The commands of a group's `hooks`, inline (`hooks = [{…}]`) or as tables (`[[….hooks]]`).
fn toml_group_commands(g: &Table) -> Vec<String> {
    match g.get("hooks") {
        Some(Item::Value(Value::Array(a))) => a
            .iter()
            .filter_map(|v| v.as_inline_table())
            .filter_map(|t| t.get("command").and_then(|c| c.as_str()).map(str::to_owned))
            .collect(),
        Some(Item::ArrayOfTables(a)) => a
            .iter()
            .filter_map(|t| t.get("command").and_then(Item::as_str).map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Our groups as (event, matcher, commands), in file order.
type TomlGroup = (String, Option<String>, Vec<String>);

fn toml_our_groups(doc: &DocumentMut) -> Vec<TomlGroup> {
    let mut out = Vec::new();
    let Some(events) = doc.get("hooks").and_then(Item::as_table_like) else {
        return out;
    };
    for (event, groups) in events.iter() {
        let Some(groups) = groups.as_array_of_tables() else {
            continue;
        };
        for g in groups.iter() {
            let commands = toml_group_commands(g);
            if commands.iter().any(|c| is_our_command(c)) {
                let matcher = g.get("matcher").and_then(Item::as_str).map(str::to_owned);
                out.push((event.to_owned(), matcher, commands));
            }
        }
    }
    out
}

fn toml_remove_hooks(doc: &mut DocumentMut) {
    let Some(events) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return;
    };
    let names: Vec<String> = events.iter().map(|(k, _)| k.to_owned()).collect();
    for name in names {
        let Some(groups) = events.get_mut(&name).and_then(Item::as_array_of_tables_mut) else {
            continue;
        };
        let mut i = 0;
        while i < groups.len() {
            let g = groups.get_mut(i).expect("in range");
            let emptied = match g.get_mut("hooks") {
                Some(Item::Value(Value::Array(a))) => {
                    let had = a.len();
                    a.retain(|v| {
                        !v.as_inline_table()
                            .and_then(|t| t.get("command"))
                            .and_then(|c| c.as_str())
                            .is_some_and(is_our_command)
                    });
                    had > 0 && a.is_empty()
                }
                Some(Item::ArrayOfTables(a)) => {
                    let had = a.len();
                    a.retain(|t| {
                        !t.get("command")
                            .and_then(Item::as_str)
                            .is_some_and(is_our_command)
                    });
                    had > 0 && a.is_empty()
                }
                _ => false,
            };
            if emptied {
                groups.remove(i);
            } else {
                i += 1;
            }
        }
        if groups.is_empty() {
            events.remove(&name);
        }
    }
    if events.is_empty() {
        doc.remove("hooks");
    }
}

fn edit_toml(
    before: Option<&str>,
    path: &Path,
    role: Role,
    h: Harness,
    persona: Option<&str>,
    action: Action,
) -> Result<Option<String>> {
    let mut doc: DocumentMut = before.unwrap_or("").parse().map_err(|e| corrupt(path, e))?;
    let original = doc.to_string();
    if role.mcp() {
        let ours = doc
            .get("mcp_servers")
            .and_then(Item::as_table_like)
            .and_then(|s| s.get("jules"))
            .and_then(Item::as_table_like)
            .map(toml_server_is_ours);
        match action {
            Action::Setup if ours == Some(false) => return Err(not_ours(path)),
            Action::Setup => {
                if doc.get("mcp_servers").is_none() {
                    let mut t = Table::new();
                    t.set_implicit(true);
                    doc.insert("mcp_servers", Item::Table(t));
                }
                let servers = doc["mcp_servers"]
                    .as_table_like_mut()
                    .ok_or_else(|| corrupt(path, "mcp_servers is not a table"))?;
                let mut t = Table::new();
                t.insert("command", toml_edit::value("git"));
                let mut args = Array::new();
                for a in mcp_args(persona) {
                    args.push(a);
                }
                t.insert("args", toml_edit::value(args));
                let same = servers
                    .get("jules")
                    .and_then(Item::as_table_like)
                    .is_some_and(|old| {
                        old.get("command").and_then(Item::as_str) == Some("git")
                            && toml_strs(old.get("args")) == mcp_args(persona)
                    });
                if !same {
                    servers.insert("jules", Item::Table(t));
                }
            }
            Action::Remove if ours == Some(true) => {
                let servers = doc["mcp_servers"].as_table_like_mut().expect("present");
                servers.remove("jules");
                if servers.is_empty() {
                    doc.remove("mcp_servers");
                }
            }
            Action::Remove => {}
        }
    }
    if role.hooks() {
        let want = hooks(h, persona);
        let want_groups: Vec<TomlGroup> = want
            .iter()
            .map(|k| {
                (
                    k.event.to_owned(),
                    k.matcher.map(str::to_owned),
                    vec![k.command.clone()],
                )
            })
            .collect();
        match action {
            Action::Setup if toml_our_groups(&doc) == want_groups => {}
            Action::Setup => {
                toml_remove_hooks(&mut doc);
                if doc.get("hooks").is_none() {
                    let mut t = Table::new();
                    t.set_implicit(true);
                    doc.insert("hooks", Item::Table(t));
                }
                let events = doc["hooks"]
                    .as_table_like_mut()
                    .ok_or_else(|| corrupt(path, "hooks is not a table"))?;
                for k in &want {
                    if events.get(k.event).is_none() {
                        events.insert(k.event, Item::ArrayOfTables(ArrayOfTables::new()));
                    }
                    let groups = events
                        .get_mut(k.event)
                        .and_then(Item::as_array_of_tables_mut)
                        .ok_or_else(|| {
                            corrupt(path, format!("hooks.{} is not an array of tables", k.event))
                        })?;
                    let mut g = Table::new();
                    if let Some(m) = k.matcher {
                        g.insert("matcher", toml_edit::value(m));
                    }
                    let mut entry = InlineTable::new();
                    entry.insert("type", "command".into());
                    entry.insert("command", k.command.as_str().into());
                    let mut list = Array::new();
                    list.push(entry);
                    g.insert("hooks", toml_edit::value(list));
                    groups.push(g);
                }
            }
            Action::Remove => toml_remove_hooks(&mut doc),
        }
    }
    let text = doc.to_string();
    if text == original {
        return Ok(before.map(str::to_owned));
    }
    if text.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(text))
}

// ---------------------------------------------------------------------------------------------------------
// Status

/// Where a harness stands at a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Nothing of ours.
    Absent,
    /// What setup would write now, for the persona installed.
    Current,
    /// Some of ours, but not what setup would write now (an older layout, a part missing or changed).
    Stale,
}

/// `agent status` for one harness at one scope.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub harness: Harness,
    pub scope: Scope,
    pub state: State,
    /// The persona the installed entries name (none: they read `JULES_PERSONA`).
    pub persona: Option<String>,
    pub mcp: bool,
    /// The events of the hooks installed.
    pub hooks: Vec<String>,
    pub files: Vec<PathBuf>,
}

/// What is installed for `h` at `scope`, and whether it is what setup would write now.
pub fn status(h: Harness, scope: Scope, places: &Places) -> Result<Status> {
    let files = files(h, scope, places)?;
    let mut mcp = false;
    let mut persona = None;
    let mut events = Vec::new();
    for (path, role) in &files {
        let Some(text) = read(path)? else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "toml") {
            let doc: DocumentMut = text.parse().map_err(|e| corrupt(path, e))?;
            if let Some(s) = doc
                .get("mcp_servers")
                .and_then(Item::as_table_like)
                .and_then(|s| s.get("jules"))
                .and_then(Item::as_table_like)
                .filter(|s| role.mcp() && toml_server_is_ours(*s))
            {
                mcp = true;
                let args = toml_strs(s.get("args"));
                persona = persona.or(persona_in(args.iter().map(String::as_str)));
            }
            for (event, _, commands) in toml_our_groups(&doc) {
                events.push(event);
                for c in commands.iter().filter(|c| is_our_command(c)) {
                    persona = persona.or(persona_in(c.split_whitespace()));
                }
            }
        } else {
            let doc = Doc::parse(&text).map_err(|e| corrupt(path, e))?;
            if let Some(s) = doc
                .get("mcpServers")
                .and_then(|s| s.get("jules"))
                .filter(|s| role.mcp() && json_server_is_ours(s))
            {
                mcp = true;
                if let Some(Doc::Array(a)) = s.get("args") {
                    persona = persona.or(persona_in(a.iter().filter_map(Doc::as_str)));
                }
            }
            for (event, g) in json_our_groups(&doc) {
                events.push(event);
                if let Some(Doc::Array(entries)) = g.get("hooks") {
                    for c in entries
                        .iter()
                        .filter_map(|e| e.get("command").and_then(Doc::as_str))
                    {
                        if is_our_command(c) {
                            persona = persona.or(persona_in(c.split_whitespace()));
                        }
                    }
                }
            }
        }
    }
    let state = if !mcp && events.is_empty() {
        State::Absent
    } else if plan(h, scope, persona.as_deref(), places, Action::Setup)?.is_empty() {
        State::Current
    } else {
        State::Stale
    };
    Ok(Status {
        harness: h,
        scope,
        state,
        persona,
        mcp,
        hooks: events,
        files: files.into_iter().map(|(p, _)| p).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(dir: &Path) -> Places {
        Places {
            workdir: Some(dir.join("repo")),
            home: Some(dir.join("home")),
            codex_home: None,
        }
    }

    /// Catches: a second setup rewriting files, remove leaving our entries or taking the user's, comments
    /// and other keys of a Codex config lost.
    #[test]
    fn codex_toml_setup_is_idempotent_and_remove_restores_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        let cfg = dir.path().join("home/.codex/config.toml");
        std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
        let original = "# my settings\nmodel = \"o3\" # keep\n\n[mcp_servers.other]\ncommand = \"x\"\n\n\
                        [[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"mine\" }]\n";
        std::fs::write(&cfg, original).unwrap();
        let c = plan(Harness::Codex, Scope::User, Some("ann"), &p, Action::Setup).unwrap();
        assert_eq!(c.len(), 1);
        apply(&c).unwrap();
        let text = std::fs::read_to_string(&cfg).unwrap();
        assert!(
            text.starts_with("# my settings\nmodel = \"o3\" # keep\n"),
            "{text}"
        );
        assert!(text.contains("command = \"mine\""), "{text}");
        assert!(text.contains("[mcp_servers.jules]"), "{text}");
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert!(
            plan(Harness::Codex, Scope::User, Some("ann"), &p, Action::Setup)
                .unwrap()
                .is_empty()
        );
        let s = status(Harness::Codex, Scope::User, &p).unwrap();
        assert_eq!(
            (s.state, s.persona.as_deref()),
            (State::Current, Some("ann"))
        );
        apply(&plan(Harness::Codex, Scope::User, None, &p, Action::Remove).unwrap()).unwrap();
        let back = std::fs::read_to_string(&cfg).unwrap();
        let a: toml::Table = toml::from_str(&back).unwrap();
        let b: toml::Table = toml::from_str(original).unwrap();
        assert_eq!(a, b, "{back}");
        assert!(back.starts_with("# my settings\nmodel = \"o3\" # keep\n"));
        assert_eq!(
            status(Harness::Codex, Scope::User, &p).unwrap().state,
            State::Absent
        );
    }
}
