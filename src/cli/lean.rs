//! Parsing a command line with only the commands it names.
//!
//! clap copies every global option (`-C`, `--json`, `-q`, `--strict`, `--color`, `--full`) into every
//! subcommand of each command it builds on the way to the one that runs: 20 top-level commands, then the 19
//! of `mail`, about 240 option clones and their allocations, which was the largest cost of a `mail send`
//! left in our own code once the process was statically linked (docs/benchmarks.md, "Start-up"). Subcommands
//! are already deferred (their own options are built only when they run); this goes one step further: while
//! [`parse`] runs, the command enums wrapped in [`Lean`] add only the subcommand the command line names at
//! that level.
//!
//! The lean tree holds every command on the path, with the same definitions, so what it accepts it parses
//! exactly as the whole tree does (a test compares the two on every command). Anything else — help,
//! `--version`, a typo, a missing argument, a name this scan does not find — is parsed again with the whole
//! tree, so help text, suggestions and errors are clap's as always.

use std::cell::{Cell, RefCell};
use std::ffi::OsString;

use clap::{ArgMatches, FromArgMatches, Subcommand};

thread_local! {
    /// During a lean parse: (parent command, the subcommand name the command line gives it).
    static PATH: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
    /// Whether the running parse left any subcommand out.
    static PRUNED: Cell<bool> = const { Cell::new(false) };
}

/// A command enum whose subcommands are added lean during [`parse`]; everywhere else it is `T` itself.
#[derive(Debug)]
pub struct Lean<T>(pub T);

impl<T: FromArgMatches> FromArgMatches for Lean<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lean)
    }
    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lean)
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

impl<T: Subcommand> Subcommand for Lean<T> {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        let wanted = PATH.with(|path| {
            path.borrow()
                .iter()
                .find(|(parent, _)| parent == cmd.get_name())
                .map(|(_, name)| name.clone())
        });
        let Some(name) = wanted else {
            return T::augment_subcommands(cmd);
        };
        let all = T::augment_subcommands(clap::Command::new(cmd.get_name().to_owned()));
        let named = all
            .get_subcommands()
            .find(|sub| sub.get_name() == name || sub.get_all_aliases().any(|alias| alias == name));
        match named {
            Some(sub) => {
                PRUNED.with(|pruned| pruned.set(true));
                cmd.subcommand(sub.clone())
            }
            None => T::augment_subcommands(cmd),
        }
    }
    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        T::augment_subcommands_for_update(cmd)
    }
    fn has_subcommand(name: &str) -> bool {
        T::has_subcommand(name)
    }
}

/// `P::try_parse_from(args)`, building only the commands `args` names (see the module's doc). A process
/// leaves clap's command tree and matches to its exit rather than freeing them one allocation at a time;
/// a caller that parses many lines in one process (the tests) drops them (`keep`).
/// `root` is the name of `P`'s command.
pub fn parse<P: clap::Parser>(root: &str, args: &[OsString], keep: bool) -> Result<P, clap::Error> {
    PATH.with(|path| *path.borrow_mut() = command_path(root, args));
    PRUNED.with(|pruned| pruned.set(false));
    let lean = try_parse::<P>(args, keep);
    PATH.with(|path| path.borrow_mut().clear());
    match lean {
        Err(_) if PRUNED.with(Cell::get) => try_parse::<P>(args, keep),
        // Nothing was left out (`--version`, `help`, an unknown name): that was the whole tree.
        result => result,
    }
}

fn try_parse<P: clap::Parser>(args: &[OsString], keep: bool) -> Result<P, clap::Error> {
    let mut cmd = P::command();
    let parsed = cmd.try_get_matches_from_mut(args).and_then(|mut matches| {
        let parsed = P::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd));
        if !keep {
            std::mem::forget(matches);
        }
        parsed
    });
    if !keep {
        std::mem::forget(cmd);
    }
    parsed
}

/// The command names `args` gives, paired with their parents: `git-jules mail -q send --to x` gives
/// `[(git-jules, mail), (mail, send)]`. Only the global options can come before them (`-C DIR` and
/// `--color WHEN` take a value); any other option is skipped, and a wrong guess only costs the whole tree.
fn command_path(root: &str, args: &[OsString]) -> Vec<(String, String)> {
    let mut names: Vec<String> = Vec::new();
    let mut tokens = args.iter().skip(1);
    while names.len() < 2 {
        let Some(token) = tokens.next().and_then(|t| t.to_str()) else {
            break;
        };
        if token == "--" || token == "-" {
            break;
        }
        if let Some(long) = token.strip_prefix("--") {
            if long == "color" {
                tokens.next();
            }
            continue;
        }
        if let Some(shorts) = token.strip_prefix('-') {
            if shorts.ends_with('C') {
                tokens.next();
            }
            continue;
        }
        names.push(token.to_owned());
    }
    let mut parent = root.to_owned();
    names
        .into_iter()
        .map(|name| (std::mem::replace(&mut parent, name.clone()), name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::context::command;
    use crate::cli::{Cli, ROOT};

    /// A command line for `path` with a value for each of its required arguments, with `extra` after it.
    fn line_for(leaf: &clap::Command, path: &[&str], extra: &[&str]) -> Vec<OsString> {
        let mut line: Vec<String> = vec![ROOT.into()];
        line.extend(path.iter().map(|p| p.to_string()));
        for arg in leaf.get_arguments().filter(|a| a.is_required_set()) {
            let value = arg
                .get_possible_values()
                .first()
                .map(|v| v.get_name().to_owned())
                .unwrap_or_else(|| "1".to_owned());
            match arg.get_long() {
                Some(long) if arg.get_action().takes_values() => {
                    line.extend([format!("--{long}"), value])
                }
                Some(long) => line.push(format!("--{long}")),
                None => line.push(value),
            }
        }
        line.extend(extra.iter().map(|e| e.to_string()));
        line.into_iter().map(OsString::from).collect()
    }

    fn outcome(result: Result<Cli, clap::Error>) -> String {
        match result {
            Ok(cli) => format!("{cli:?}"),
            Err(e) => format!("error {:?}: {}", e.kind(), e.render()),
        }
    }

    /// Every command, with its required arguments, with global options after it, with `--help` and with a
    /// bad option: the lean parse gives what the whole tree gives, and it did leave commands out.
    #[test]
    fn a_lean_parse_is_the_whole_tree_s_parse() {
        let tree = command();
        let mut leaves = Vec::new();
        for top in tree.get_subcommands() {
            let subs: Vec<_> = top
                .get_subcommands()
                .filter(|s| s.get_name() != "help")
                .collect();
            if subs.is_empty() {
                leaves.push((vec![top.get_name()], top.clone()));
            }
            for sub in subs {
                leaves.push((vec![top.get_name(), sub.get_name()], sub.clone()));
            }
        }
        assert!(leaves.len() > 60, "{} commands", leaves.len());
        let mut pruned_successes = 0;
        for (path, leaf) in &leaves {
            for extra in [
                &[][..],
                &["--json", "-q", "--color", "never"][..],
                &["--help"][..],
                &["--no-such-option"][..],
            ] {
                let line = line_for(leaf, path, extra);
                let lean = parse::<Cli>(ROOT, &line, true);
                let pruned = PRUNED.with(Cell::get);
                if lean.is_ok() && pruned {
                    pruned_successes += 1;
                }
                let whole = try_parse::<Cli>(&line, true);
                assert_eq!(outcome(lean), outcome(whole), "{line:?}");
            }
        }
        assert!(
            pruned_successes > 40,
            "only {pruned_successes} lean parses succeeded"
        );
    }

    fn args(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_path_skips_global_options_and_their_values() {
        let path = |line| command_path("git-jules", &args(line));
        let pairs = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            path("git-jules mail send --to x"),
            pairs(&[("git-jules", "mail"), ("mail", "send")])
        );
        assert_eq!(
            path("git-jules -C mail --color never -q mail --json send"),
            pairs(&[("git-jules", "mail"), ("mail", "send")])
        );
        assert_eq!(
            path("git-jules -qC dir --color=always verify --cmd x"),
            pairs(&[("git-jules", "verify"), ("verify", "x")])
        );
        assert_eq!(path("git-jules --json"), pairs(&[]));
        assert_eq!(path("git-jules -- mail"), pairs(&[]));
    }
}
