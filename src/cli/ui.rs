//! Output: data on stdout, status on stderr, colour only for a terminal and never with `NO_COLOR`.

use std::cell::RefCell;
use std::io::{IsTerminal, Write};

use clap::ValueEnum;

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
    pub color: bool,
    /// stderr is a terminal: progress lines are worth printing.
    pub interactive: bool,
}

impl Ui {
    pub fn new(json: bool, choice: ColorChoice) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color && std::io::stdout().is_terminal(),
        };
        Ui {
            json,
            color,
            interactive: std::io::stderr().is_terminal(),
        }
    }

    pub fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
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

/// What a command printed while its output was captured (see [`capture`]).
#[derive(Debug, Default)]
pub struct Captured {
    pub stdout: String,
    pub stderr: String,
}

thread_local! {
    /// Set while a command runs inside the MCP server: its stdout is the protocol's channel, so what the
    /// command prints is collected here instead and returned as the tool's result.
    static CAPTURE: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// Run `f` with everything it prints through this module collected instead of written.
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Captured) {
    CAPTURE.with(|c| *c.borrow_mut() = Some(Captured::default()));
    let value = f();
    let captured = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (value, captured)
}

/// Append to the capture buffer if one is active; `false` when output goes to the real streams.
fn captured(stdout: bool, line: &str) -> bool {
    CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(buf) => {
            let target = if stdout { &mut buf.stdout } else { &mut buf.stderr };
            target.push_str(line);
            target.push('\n');
            true
        }
        None => false,
    })
}

/// A line for stderr (status, warnings, errors), captured like stdout inside the MCP server.
pub fn err(line: impl AsRef<str>) {
    if !captured(false, line.as_ref()) {
        eprintln!("{}", line.as_ref());
    }
}

/// Print a line of data; a closed pipe (`git jules … | head`) ends the process quietly.
pub fn out(line: impl AsRef<str>) {
    if captured(true, line.as_ref()) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{}", line.as_ref()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// Print a JSON document on stdout.
pub fn json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => out(s),
        Err(e) => err(format!("error: encoding JSON: {e}")),
    }
}

/// A status line for people, on stderr.
pub fn status(line: impl AsRef<str>) {
    err(line);
}

pub fn warn(line: impl AsRef<str>) {
    err(format!("warning: {}", line.as_ref()));
}
