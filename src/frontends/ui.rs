//! Output: data on stdout, status on stderr; colour decided per stream (a terminal, `NO_COLOR`,
//! `TERM=dumb`, git's `color.ui`), `-q` silences status, one live progress line on a terminal.
//!
//! The CLI's output is one value, [`Ui`], held by the command's `Context`: the decisions (JSON, colour,
//! escaping, quiet) and the two writers (stdout and stderr, or two buffers in a test) are its fields, and
//! so is the record of a closed stdout. Nothing here is process-wide: two `Ui`s in one process (a test
//! beside the real one) share no switch.
//!
//! A command's output is a typed value that implements [`Print`]: its human form is written over a
//! `&mut dyn Write` with a [`Style`], its JSON form is its one serde serialisation, versioned in one place
//! ([`versioned`]), and its warnings are data that [`Ui::print`] shows on stderr. The command computes the
//! value and hands it over; it holds no `if json` branch (ripgrep's `crates/printer` has the same split).
//!
//! Untrusted text (mail, names, tags, reasons, patches) reaches a terminal only through the one rule of
//! `git_jules::kit::text`: controls in caret notation (`^[`), C1 controls and bidirectional overrides as
//! `<U+202E>`. Printers escape the fields they print ([`Style::text`], [`Style::lines`]); [`Ui::out`] and
//! [`Ui::print`] escape whatever else a line holds, keeping only our own colour codes. A pipe and `--json`
//! get the bytes as they are.
//!
//! Every `--json` document goes through [`Ui::json`], which adds `"version"` (the contract in
//! docs/json.md, the number is the library's [`git_jules::JSON_VERSION`]). A closed stdout
//! (`git jules … | head`) is recorded on the `Ui` and turned into the broken-pipe error kind in one place
//! (`super::run`); nothing exits from here.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use clap::ValueEnum;

pub use git_jules::JSON_VERSION;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How a printer styles its human output: colour and the escaping of untrusted fields, decided once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// Colour on stdout.
    pub color: bool,
    /// stdout is a terminal and the output is for a person (not `--json`): untrusted text is escaped.
    pub escape: bool,
}

impl Style {
    /// An untrusted one-line field (a subject, a name, a tag, a reason, a file name) as a terminal may
    /// show it: every control and bidirectional override escaped; as it is on a pipe.
    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.escape {
            git_jules::kit::text::visible(s)
        } else {
            Cow::Borrowed(s)
        }
    }

    /// An untrusted multi-line text (a body, a cover letter, a patch, a conflict): as [`Style::text`],
    /// with newlines, tabs and CRLF line ends kept.
    pub fn lines<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.escape {
            git_jules::kit::text::visible_lines(s)
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
}

/// A command's output value: the human form over a writer, the JSON form its serde serialisation (made a
/// document with `"version"` by [`Ui::print`], in one place), and the warnings both forms carry.
pub trait Print: serde::Serialize {
    /// The lines a person reads, written to `out` (stdout, or a `Vec<u8>` in a test). Untrusted fields go
    /// through `style.text`/`style.lines`; [`Ui::print`] escapes the rest of each line on a terminal.
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let _ = (out, style);
        Ok(())
    }

    /// What went wrong without stopping the command: shown on stderr as `warning: …` in both forms (a JSON
    /// document carries them only where docs/json.md says so, as a field of its own).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Warnings the JSON document carries as a field of its own (`keys check`'s `problems`): shown as
    /// `warning: …` on stderr in the human form only, after the data; `-q` does not silence them.
    fn human_warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The human stdout only reports what was done (sync's ref lines, like `git push -q`): `-q` drops it,
    /// as it drops status. Data a command was asked for, and the JSON document, print whatever `-q` says.
    fn report_only(&self) -> bool {
        false
    }

    /// Status lines for people on stderr in both forms (`-q` silences them): what was done on the way.
    fn status(&self, style: &Style) -> Vec<String> {
        let _ = style;
        Vec::new()
    }

    /// Status lines on stderr in the human form only: what the JSON document says on stdout instead
    /// (`task 1a2b3c4 done`).
    fn human_status(&self, style: &Style) -> Vec<String> {
        let _ = style;
        Vec::new()
    }

    /// Status lines on stderr in the human form only, after the data (`backup: …` under a rewrite's
    /// table): on a terminal a person reads them in that order.
    fn human_status_after(&self, style: &Style) -> Vec<String> {
        let _ = style;
        Vec::new()
    }
}

/// A document as some commands always printed theirs: the value's fields and `"version"` in one object
/// with its keys sorted (and its nested objects'), the bytes docs/json.md shows for them. A new document
/// is the value itself, `"version"` first.
pub struct SortedDoc<T>(pub T);

impl<T: serde::Serialize> serde::Serialize for SortedDoc<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = serde_json::to_value(&self.0).map_err(serde::ser::Error::custom)?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("version".into(), JSON_VERSION.into());
        }
        v.serialize(s)
    }
}

/// A writer the [`Ui`] writes through: the process's stdout or stderr, or a buffer in a test.
type Sink = Mutex<Box<dyn Write + Send>>;

/// A buffer a test hands to [`Ui::with_writers`] and reads back after printing.
#[cfg(test)]
#[derive(Clone, Default)]
pub struct Buffer(std::sync::Arc<Mutex<Vec<u8>>>);

#[cfg(test)]
impl Buffer {
    /// What was written so far, as text (printers write UTF-8).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }
}

#[cfg(test)]
impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How the command prints, decided once from the global flags and the environment, and where: the CLI's
/// output value (see the module doc).
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
    /// stderr is a terminal: warnings and errors are escaped the same way.
    pub escape_err: bool,
    stdout: Sink,
    stderr: Sink,
    /// stdout's reader went away: later data is dropped and the command ends with the broken-pipe kind.
    broken_pipe: AtomicBool,
}

impl Ui {
    pub fn new(json: bool, choice: ColorChoice, quiet: bool, dir: &Path) -> Self {
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
        let mut ui = Ui::with_writers(
            json,
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
        );
        ui.color = color;
        ui.err_color = err_color;
        ui.interactive = stderr_tty && !quiet && !json;
        ui.quiet = quiet;
        ui.escape = stdout_tty && !json;
        ui.escape_err = stderr_tty;
        ui
    }

    /// A `Ui` over two writers, as on a pipe (no colour, no escaping, status shown); a test sets the
    /// public fields it needs (`escape`, `quiet`, …) and reads the writers back ([`Buffer`]).
    pub fn with_writers(
        json: bool,
        stdout: Box<dyn Write + Send>,
        stderr: Box<dyn Write + Send>,
    ) -> Self {
        Ui {
            json,
            color: false,
            err_color: false,
            interactive: false,
            quiet: false,
            escape: false,
            escape_err: false,
            stdout: Mutex::new(stdout),
            stderr: Mutex::new(stderr),
            broken_pipe: AtomicBool::new(false),
        }
    }

    /// The style human printers write with.
    pub fn style(&self) -> Style {
        Style {
            color: self.color,
            escape: self.escape,
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.style().bold(text)
    }
    /// A label for stderr (`error:`, `hint:`), coloured by stderr's own decision.
    pub fn err_label(&self, code: &str, text: &str) -> String {
        paint(self.err_color, code, text)
    }

    /// A command's output value, in the form this command was asked for: the JSON document (with
    /// `"version"`) or the human lines, escaped on a terminal like [`Ui::out`]; its warnings on stderr.
    pub fn print<P: Print + ?Sized>(&self, value: &P) {
        let style = self.style();
        for w in value.warnings() {
            self.warn(w);
        }
        for line in value.status(&style) {
            self.status(line);
        }
        if self.json {
            self.json(value);
            return;
        }
        for line in value.human_status(&style) {
            self.status(line);
        }
        if !(self.quiet && value.report_only()) {
            let mut buf = Vec::new();
            // Writing into a Vec fails only if the printer itself fails; what it wrote so far is shown.
            let done = value.human(&mut buf, &style);
            if !buf.is_empty() {
                self.out_bytes(&buf);
            }
            if let Err(e) = done {
                self.err(format!("error: printing: {e}"));
            }
        }
        for w in value.human_warnings() {
            self.warn(w);
        }
        for line in value.human_status_after(&style) {
            self.status(line);
        }
    }

    /// A line for stderr (errors, causes, hints), escaped like [`Ui::out`] when stderr is a terminal: a
    /// message may quote a name or a reason from the logs.
    pub fn err(&self, line: impl AsRef<str>) {
        let line = line.as_ref();
        let line = if self.escape_err {
            terminal_safe(line)
        } else {
            Cow::Borrowed(line)
        };
        let mut e = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        // stderr gone too: there is nobody left to tell.
        let _ = writeln!(e, "{line}");
    }

    /// Print a line of data. A closed pipe is remembered (see [`Ui::broken_pipe`]) and later lines are
    /// dropped.
    pub fn out(&self, line: impl AsRef<str>) {
        let _ = self.try_out(line);
    }

    /// Print a line of data, reporting a closed pipe to the caller.
    pub fn try_out(&self, line: impl AsRef<str>) -> std::io::Result<()> {
        self.write_stdout(&[self.for_stdout(line.as_ref()).as_bytes(), b"\n"])
    }

    /// Data on stdout (no newline added), escaped on a terminal like [`Ui::out`].
    pub fn out_raw(&self, text: &str) {
        let _ = self.write_stdout(&[self.for_stdout(text).as_bytes()]);
    }

    /// A printer's bytes on stdout: on a terminal read as UTF-8 (lossily) and escaped like [`Ui::out`]; on a
    /// pipe exactly as written, so a printer may write bytes that are no text (`series format --mbox`
    /// copies each patch as git made it).
    pub fn out_bytes(&self, bytes: &[u8]) {
        if self.escape {
            self.out_raw(&String::from_utf8_lossy(bytes));
        } else {
            let _ = self.write_stdout(&[bytes]);
        }
    }

    /// Bytes on stdout exactly as they are, terminal or not: JSON documents, whose strings JSON escapes
    /// itself and which a program on a terminal (`script`, an editor's shell) must read as written.
    pub fn out_exact(&self, text: &str) {
        let _ = self.write_stdout(&[text.as_bytes()]);
    }

    /// What [`Ui::out`] writes: escaped on a terminal (see [`terminal_safe`]), as it is elsewhere.
    fn for_stdout<'a>(&self, line: &'a str) -> Cow<'a, str> {
        if self.escape {
            terminal_safe(line)
        } else {
            Cow::Borrowed(line)
        }
    }

    /// `parts` written in one hold of stdout (a line and its newline, without joining them first).
    fn write_stdout(&self, parts: &[&[u8]]) -> std::io::Result<()> {
        if self.broken_pipe.load(Ordering::Relaxed) {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let mut stdout = self.stdout.lock().unwrap_or_else(|p| p.into_inner());
        let written = parts.iter().try_for_each(|p| stdout.write_all(p));
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.broken_pipe.store(true, Ordering::Relaxed);
                Err(e)
            }
            other => other,
        }
    }

    /// Whether stdout's reader went away during this command.
    pub fn broken_pipe(&self) -> bool {
        self.broken_pipe.load(Ordering::Relaxed)
            || self
                .stdout
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .flush()
                .is_err()
    }

    /// Print a JSON document on stdout, with `"version"` first. A list becomes
    /// `{"version": 1, "items": [...]}`.
    pub fn json<T: serde::Serialize + ?Sized>(&self, value: &T) {
        match versioned(value) {
            // Byte-exact on a terminal too: serde_json escapes C0 controls, and what a program reads must
            // be what was written.
            Ok(s) => self.out_exact(&(s + "\n")),
            Err(e) => self.err(format!("error: encoding JSON: {e}")),
        }
    }

    /// A status line for people, on stderr; `-q` silences it.
    pub fn status(&self, line: impl AsRef<str>) {
        if !self.quiet {
            self.err(line);
        }
    }

    /// A status line for people that the JSON form leaves out, said while the command runs, before its
    /// value exists (`finished the interrupted … first`): [`Print::human_status`] for lines of a value.
    /// `-q` silences it too.
    pub fn human_status(&self, line: impl AsRef<str>) {
        if !self.json {
            self.status(line);
        }
    }

    /// A warning, on stderr (not silenced by `-q`).
    pub fn warn(&self, line: impl AsRef<str>) {
        self.err(format!("warning: {}", line.as_ref()));
    }

    /// A hint for people, on stderr, in the one style `hint: ...`.
    pub fn hint(&self, line: impl AsRef<str>) {
        if !self.quiet {
            self.err(format!("hint: {}", line.as_ref()));
        }
    }
}

/// The colour codes [`paint`] writes: on a terminal, [`Ui::out`] lets these through and escapes every
/// other control. (A field printed through [`Style::text`] shows even these escaped.)
const OUR_CODES: &[&str] = &["0", "1", "2", "31", "32", "33"];

/// `line` as a terminal may show it: [`git_jules::kit::text::visible_lines`], except our own colour codes.
fn terminal_safe(line: &str) -> Cow<'_, str> {
    if !line
        .chars()
        .any(|c| c != '\n' && c != '\t' && git_jules::kit::text::needs_escape(c))
    {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(esc) = rest.find('\x1b') {
        out.push_str(&git_jules::kit::text::visible_lines(&rest[..esc]));
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
    out.push_str(&git_jules::kit::text::visible_lines(rest));
    Cow::Owned(out)
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
        .and_then(|text| git_jules::kit::settings::git_c_value(&text, "color.ui"))
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

/// The document [`Ui::json`] prints, as a value (for the MCP server's structured results): `"version"`
/// added to an object that lacks it, a list as `{"version", "items"}`, anything else as
/// `{"version", "value"}`.
pub fn versioned_value<T: serde::Serialize + ?Sized>(
    value: &T,
) -> serde_json::Result<serde_json::Value> {
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

/// The document [`Ui::json`] prints, pretty and in each struct's own field order: `"version"` is kept
/// where a document declares it, put first in an object that lacks it, and a list or a scalar is wrapped
/// as `{"version", "items"}` / `{"version", "value"}`.
///
/// Written straight from the value, never through a `serde_json::Value` tree: a long listing spent about a
/// third of its time building, sorting and freeing that tree. Every map the documents hold is ordered
/// (`BTreeMap`, or `Value`'s sorted map), so the output is as deterministic as before.
pub fn versioned<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
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

    /// A value with an untrusted field, as a printer writes it.
    #[derive(serde::Serialize)]
    struct Subject(&'static str);

    impl Print for Subject {
        fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
            writeln!(out, "{} {}", style.yellow("id"), style.text(self.0))?;
            // A careless printer that forgets `style.text`: the Ui escapes the line all the same.
            writeln!(out, "raw {}", self.0)
        }
        fn warnings(&self) -> Vec<String> {
            vec![format!("about {}", self.0)]
        }
    }

    /// On a terminal, untrusted text reaching a printer is escaped, whether the printer escaped the field
    /// or not, our colour codes kept; the same on stderr for a warning. On a pipe and in JSON the bytes are
    /// as they are (JSON escapes controls itself). (Catches a printer's output that skips the Ui's rule.)
    #[test]
    fn a_printer_on_a_terminal_escapes_untrusted_text() {
        let hostile = Subject("t\x1b]0;owned\x07 \u{202e}x");
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut ui = Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone()));
        (ui.color, ui.escape, ui.escape_err) = (true, true, true);
        ui.print(&hostile);
        assert_eq!(
            out.text(),
            "\x1b[33mid\x1b[0m t^[]0;owned^G <U+202E>x\nraw t^[]0;owned^G <U+202E>x\n"
        );
        assert_eq!(err.text(), "warning: about t^[]0;owned^G <U+202E>x\n");

        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone())).print(&hostile);
        assert_eq!(
            out.text(),
            "id t\x1b]0;owned\x07 \u{202e}x\nraw t\x1b]0;owned\x07 \u{202e}x\n"
        );

        let out = Buffer::default();
        let mut ui = Ui::with_writers(true, Box::new(out.clone()), Box::new(err.clone()));
        ui.escape_err = true;
        ui.print(&hostile);
        assert_eq!(
            out.text(),
            "{\n  \"version\": 1,\n  \"value\": \"t\\u001b]0;owned\\u0007 \u{202e}x\"\n}\n"
        );
    }

    /// A closed stdout is recorded on this Ui, and only this one: later data is dropped, and a second Ui in
    /// the same process is untouched. (Catches the process-wide BROKEN_PIPE switch.)
    #[test]
    fn a_broken_pipe_is_this_ui_s_alone() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let closed = Ui::with_writers(false, Box::new(Closed), Box::new(Buffer::default()));
        closed.out("a");
        assert!(closed.broken_pipe());
        assert!(closed.try_out("b").is_err());
        let out = Buffer::default();
        let other = Ui::with_writers(false, Box::new(out.clone()), Box::new(Buffer::default()));
        other.out("c");
        assert!(!other.broken_pipe());
        assert_eq!(out.text(), "c\n");
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
