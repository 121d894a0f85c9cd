//! Output: data on stdout, status on stderr; colour decided per stream (a terminal, `NO_COLOR`,
//! `TERM=dumb`, git's `color.ui`), `-q` silences status, one live progress line on a terminal.
//!
//! Untrusted text (mail, names, tags, reasons, patches) reaches a terminal only through the one rule of
//! `git_jules::text`: controls in caret notation (`^[`), C1 controls and bidirectional overrides as
//! `<U+202E>`. Commands escape the fields they print ([`Ui::text`], [`Ui::lines`]); [`out`] escapes
//! whatever else a line holds, keeping only our own colour codes. A pipe and `--json` get the bytes as
//! they are.
//!
//! Every `--json` document goes through [`json`], which adds `"version"` (the contract in docs/json.md).
//! A closed stdout (`git jules … | head`) is recorded here and turned into the broken-pipe error kind in
//! one place ([`super::run`]); nothing exits from here.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::ValueEnum;

/// The version of every JSON document the CLI prints (docs/json.md).
pub const JSON_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How the command should print, decided once from the global flags and the environment.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    pub json: bool,
    /// Colour on stdout.
    pub color: bool,
    /// Colour on stderr (error:, warning:, hint:).
    pub err_color: bool,
    /// stderr is a terminal and status is wanted: progress lines are worth printing.
    pub interactive: bool,
    /// `-q`: a command whose stdout only reports what it did (sync's ref lines, like `git push -q`) prints
    /// nothing on success; data a command was asked for (and `--json`) still prints.
    pub quiet: bool,
    /// stdout is a terminal and the output is for a person (not `--json`): untrusted text is escaped.
    pub escape: bool,
}

static QUIET: AtomicBool = AtomicBool::new(false);
/// [`Ui::escape`], for the free functions that print.
static ESCAPE: AtomicBool = AtomicBool::new(false);
/// stderr is a terminal: warnings and errors are escaped the same way.
static ESCAPE_ERR: AtomicBool = AtomicBool::new(false);
static BROKEN_PIPE: AtomicBool = AtomicBool::new(false);

impl Ui {
    pub fn new(json: bool, choice: ColorChoice, quiet: bool, dir: &Path) -> Self {
        QUIET.store(quiet, Ordering::Relaxed);
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        let (color, err_color) = match choice {
            ColorChoice::Always => (true, true),
            ColorChoice::Never => (false, false),
            ColorChoice::Auto if !stdout_tty && !stderr_tty => (false, false),
            ColorChoice::Auto => {
                let env_off = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
                    || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
                match if env_off { None } else { git_color_ui(dir) } {
                    _ if env_off => (false, false),
                    Some(GitColor::Never) => (false, false),
                    Some(GitColor::Always) => (true, true),
                    Some(GitColor::Auto) | None => (stdout_tty, stderr_tty),
                }
            }
        };
        let escape = stdout_tty && !json;
        ESCAPE.store(escape, Ordering::Relaxed);
        ESCAPE_ERR.store(stderr_tty, Ordering::Relaxed);
        Ui {
            json,
            color,
            err_color,
            interactive: stderr_tty && !quiet && !json,
            quiet,
            escape,
        }
    }

    /// An untrusted one-line field (a subject, a name, a tag, a reason, a file name) as a terminal may
    /// show it: every control and bidirectional override escaped; as it is on a pipe.
    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.escape {
            git_jules::text::visible(s)
        } else {
            Cow::Borrowed(s)
        }
    }

    /// An untrusted multi-line text (a body, a cover letter, a patch, a conflict): as [`Ui::text`], with
    /// newlines, tabs and CRLF line ends kept.
    pub fn lines<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.escape {
            git_jules::text::visible_lines(s)
        } else {
            Cow::Borrowed(s)
        }
    }

    pub fn paint(&self, code: &str, text: &str) -> String {
        paint(self.color, code, text)
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }
    pub fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }
    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
    pub fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }
    /// A label for stderr (`error:`, `hint:`), coloured by stderr's own decision.
    pub fn err_label(&self, code: &str, text: &str) -> String {
        paint(self.err_color, code, text)
    }
}

/// The colour codes [`paint`] writes: on a terminal, [`out`] lets these through and escapes every other
/// control. (A field printed through [`Ui::text`] shows even these escaped.)
const OUR_CODES: &[&str] = &["0", "1", "2", "31", "32", "33"];

/// `line` as a terminal may show it: [`git_jules::text::visible_lines`], except our own colour codes.
fn terminal_safe(line: &str) -> Cow<'_, str> {
    if !line
        .chars()
        .any(|c| c != '\n' && c != '\t' && git_jules::text::needs_escape(c))
    {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(esc) = rest.find('\x1b') {
        out.push_str(&git_jules::text::visible_lines(&rest[..esc]));
        let after = &rest[esc + 1..];
        let ours = after.strip_prefix('[').and_then(|a| {
            let (code, _) = a.split_once('m')?;
            OUR_CODES.contains(&code).then_some(code.len() + 2)
        });
        match ours {
            Some(len) => {
                out.push_str(&rest[esc..esc + 1 + len]);
                rest = &after[len..];
            }
            None => {
                out.push_str("^[");
                rest = after;
            }
        }
    }
    out.push_str(&git_jules::text::visible_lines(rest));
    Cow::Owned(out)
}

/// [`Ui::text`] for a printer that has no `Ui` at hand (the decision is the same, made once in [`Ui::new`]).
pub fn text(s: &str) -> Cow<'_, str> {
    if ESCAPE.load(Ordering::Relaxed) {
        git_jules::text::visible(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// What [`out`] writes: escaped on a terminal (see [`terminal_safe`]), as it is elsewhere.
fn for_stdout(line: &str) -> Cow<'_, str> {
    if ESCAPE.load(Ordering::Relaxed) {
        terminal_safe(line)
    } else {
        Cow::Borrowed(line)
    }
}

fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

enum GitColor {
    Never,
    Auto,
    Always,
}

/// git's `color.ui`: `git -c color.ui=…` (GIT_CONFIG_PARAMETERS, read by the library's one parser of it)
/// first, then the repository's and the user's configuration. Only asked when a terminal is involved, so
/// piped runs pay nothing for it.
fn git_color_ui(dir: &Path) -> Option<GitColor> {
    let value = std::env::var("GIT_CONFIG_PARAMETERS")
        .ok()
        .and_then(|text| git_jules::settings::git_c_value(&text, "color.ui"))
        .or_else(|| {
            let repo = gix::discover(dir).ok()?;
            let v = repo.config_snapshot().string("color.ui")?.to_string();
            Some(v)
        })?;
    Some(match value.trim().to_ascii_lowercase().as_str() {
        "never" | "false" | "no" | "off" | "0" => GitColor::Never,
        "always" => GitColor::Always,
        _ => GitColor::Auto,
    })
}

/// A line for stderr (errors, causes, hints), escaped like [`out`] when stderr is a terminal: a message
/// may quote a name or a reason from the logs.
pub fn err(line: impl AsRef<str>) {
    let line = line.as_ref();
    if ESCAPE_ERR.load(Ordering::Relaxed) {
        eprintln!("{}", terminal_safe(line));
    } else {
        eprintln!("{line}");
    }
}

/// Print a line of data. A closed pipe is remembered (see [`broken_pipe`]) and later lines are dropped.
pub fn out(line: impl AsRef<str>) {
    let _ = try_out(line);
}

/// Print a line of data, reporting a closed pipe to the caller.
pub fn try_out(line: impl AsRef<str>) -> std::io::Result<()> {
    if BROKEN_PIPE.load(Ordering::Relaxed) {
        return Err(std::io::ErrorKind::BrokenPipe.into());
    }
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{}", for_stdout(line.as_ref())) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            BROKEN_PIPE.store(true, Ordering::Relaxed);
            Err(e)
        }
        other => other,
    }
}

/// Data on stdout (no newline added), escaped on a terminal like [`out`].
pub fn out_raw(text: &str) {
    write_stdout(&for_stdout(text));
}

/// Bytes on stdout exactly as they are, terminal or not: JSON documents, whose strings JSON escapes itself
/// and which a program on a terminal (`script`, an editor's shell) must read as written.
pub fn out_exact(text: &str) {
    write_stdout(text);
}

fn write_stdout(text: &str) {
    if BROKEN_PIPE.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            BROKEN_PIPE.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether stdout's reader went away during this command.
pub fn broken_pipe() -> bool {
    BROKEN_PIPE.load(Ordering::Relaxed) || std::io::stdout().flush().is_err()
}

/// Print a JSON document on stdout, with `"version"` first. A list becomes `{"version": 1, "items": [...]}`.
pub fn json<T: serde::Serialize>(value: &T) {
    match versioned(value) {
        // Byte-exact on a terminal too: serde_json escapes C0 controls, and what a program reads must be
        // what was written.
        Ok(s) => out_exact(&(s + "\n")),
        Err(e) => err(format!("error: encoding JSON: {e}")),
    }
}

/// The document [`json`] prints, as a value (for the MCP server's structured results): `"version"` added
/// to an object that lacks it, a list as `{"version", "items"}`, anything else as `{"version", "value"}`.
pub fn versioned_value<T: serde::Serialize>(value: &T) -> serde_json::Result<serde_json::Value> {
    Ok(match serde_json::to_value(value)? {
        serde_json::Value::Object(mut m) => {
            m.entry("version").or_insert(JSON_VERSION.into());
            serde_json::Value::Object(m)
        }
        serde_json::Value::Array(items) => {
            serde_json::json!({ "version": JSON_VERSION, "items": items })
        }
        other => serde_json::json!({ "version": JSON_VERSION, "value": other }),
    })
}

/// The document [`json`] prints, pretty and in each struct's own field order: `"version"` is kept where a
/// document declares it, put first in an object that lacks it, and a list or a scalar is wrapped as
/// `{"version", "items"}` / `{"version", "value"}`.
///
/// Written straight from the value, never through a `serde_json::Value` tree: a long listing spent about a
/// third of its time building, sorting and freeing that tree. Every map the documents hold is ordered
/// (`BTreeMap`, or `Value`'s sorted map), so the output is as deterministic as before.
pub fn versioned<T: serde::Serialize>(value: &T) -> serde_json::Result<String> {
    let body = serde_json::to_string_pretty(value)?;
    // Pretty JSON puts each top-level key of an object on its own line, indented by exactly two spaces;
    // deeper keys are indented further and strings hold no raw newline, so this finds top-level keys only.
    if let Some(rest) = body.strip_prefix('{') {
        if body.contains("\n  \"version\": ") {
            return Ok(body);
        }
        if rest == "}" {
            return Ok(format!("{{\n  \"version\": {JSON_VERSION}\n}}"));
        }
        return Ok(format!("{{\n  \"version\": {JSON_VERSION},{rest}"));
    }
    let key = if body.starts_with('[') {
        "items"
    } else {
        "value"
    };
    let nested = body.replace('\n', "\n  ");
    Ok(format!(
        "{{\n  \"version\": {JSON_VERSION},\n  \"{key}\": {nested}\n}}"
    ))
}

/// A status line for people, on stderr; `-q` silences it.
pub fn status(line: impl AsRef<str>) {
    if !QUIET.load(Ordering::Relaxed) {
        err(line);
    }
}

/// A warning, on stderr (not silenced by `-q`).
pub fn warn(line: impl AsRef<str>) {
    err(format!("warning: {}", line.as_ref()));
}

/// A hint for people, on stderr, in the one style `hint: ...`.
pub fn hint(line: impl AsRef<str>) {
    if !QUIET.load(Ordering::Relaxed) {
        err(format!("hint: {}", line.as_ref()));
    }
}

/// One live line on stderr for long work (`[12/30] verifying, 2 running`), redrawn in place and erased
/// before the final output; nothing at all unless stderr is a terminal and status is wanted.
pub struct Progress {
    on: bool,
    drawn: bool,
}

impl Progress {
    pub fn new(ui: &Ui) -> Self {
        Progress {
            on: ui.interactive,
            drawn: false,
        }
    }

    pub fn set(&mut self, text: &str) {
        if !self.on {
            return;
        }
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r{text}\x1b[K");
        let _ = e.flush();
        self.drawn = true;
    }

    pub fn clear(&mut self) {
        if self.drawn {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[K");
            let _ = e.flush();
            self.drawn = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_line_keeps_our_colours_and_escapes_the_rest() {
        let ours = paint(true, "33", "id");
        let line = format!("{ours} \x1b]0;t\x07 \x1b[8mx\x1b[0m \u{202e}\x1b");
        assert_eq!(
            terminal_safe(&line),
            "\x1b[33mid\x1b[0m ^[]0;t^G ^[[8mx\x1b[0m <U+202E>^["
        );
        assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
        assert_eq!(terminal_safe("a\r\nb\rc"), "a\r\nb^Mc");
    }

    #[test]
    fn every_document_gets_a_version() {
        #[derive(serde::Serialize)]
        struct S {
            b: u8,
            a: u8,
        }
        let s = versioned(&S { b: 1, a: 2 }).unwrap();
        assert!(s.starts_with("{\n  \"version\": 1,\n  \"b\": 1"), "{s}");
        let v: serde_json::Value = serde_json::from_str(&versioned(&vec![1, 2]).unwrap()).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["items"][1], 2);
        let v: serde_json::Value = serde_json::from_str(&versioned(&"x").unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"version": 1, "value": "x"}));
        assert_eq!(
            versioned(&serde_json::json!({})).unwrap(),
            "{\n  \"version\": 1\n}"
        );
        // A document that declares its version keeps it, once, where it declares it; a nested
        // "version" is not the document's.
        #[derive(serde::Serialize)]
        struct D {
            persona: &'static str,
            version: u32,
        }
        let s = versioned(&D {
            persona: "p",
            version: 1,
        })
        .unwrap();
        assert_eq!(s.matches("\"version\"").count(), 1, "{s}");
        let s = versioned(&serde_json::json!({"inner": {"version": 2}})).unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["version"], 1, "{s}");
        assert_eq!(v["inner"]["version"], 2);
    }
}
