//! The dependency order of `docs/architecture.md` ("Layering"), checked against the source: every path a
//! file of `src/` names (`use crate::…`, `use super::…`, inline `crate::x::y`, `git_jules::…`) becomes an edge
//! between modules, and
//!
//! 1. a library module only uses modules of a lower layer of the table in `docs/architecture.md`, and of its
//!    own room or an earlier one (`kit`, then `store`, then `capabilities`);
//! 2. no two sibling modules (at any depth, library and binary) use each other, directly or through others;
//! 3. the library never prints, exits or reads the environment (`println!`, `process::exit`, `env::var`, …);
//! 4. the frontends (`src/frontends/`: the CLI, the MCP server, the web view) reach the library only through
//!    the modules its "Use-case API" table lists;
//! 5. a command reaches the dispatcher (`frontends/mod.rs`) only through `frontends::context`.
//!
//! The tables are read from the document itself, so the document and the check cannot drift apart, and
//! every rule has a planted violation that fails it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A source file: its crate (`lib` or `bin`), its module path, and its text without comments.
struct File {
    krate: &'static str,
    module: Vec<String>,
    rel: String,
    code: String,
}

/// Code without `//` comments and without the unit-test module at the end of a file.
fn strip(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn load() -> Vec<File> {
    crate::sources::files()
        .into_iter()
        .map(|(path, text)| {
            let rel = path.strip_prefix("src/").unwrap_or(&path).to_owned();
            let mut parts: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            if parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            let krate = if parts
                .first()
                .is_some_and(|f| f == "frontends" || f == "main")
            {
                "bin"
            } else {
                "lib"
            };
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            }
            let code = strip(&text);
            File {
                krate,
                module: parts,
                rel: format!("src/{rel}"),
                code,
            }
        })
        .collect()
}

/// Expand `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// Every path a file names: the trees of its `use` items and inline `crate::`/`super::`/`git_jules::` paths.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        let tree = &rest[..end];
        if tree.contains('(') || tree.contains('"') {
            continue; // not a use item
        }
        // `a as b` keeps its words apart through `expand`, which drops whitespace.
        for p in expand(&tree.replace(" as ", "@")) {
            out.push(p.split('@').next().unwrap_or(&p).to_owned());
        }
    }
    for start in ["crate::", "super::", "git_jules::"] {
        let mut rest = code;
        while let Some(i) = rest.find(start) {
            let before = rest[..i].chars().last();
            let tail = &rest[i..];
            let len = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            // `crate::x::{a, b}` names `a` and `b` (the use tree above), not `x`.
            let tree = tail[len..].starts_with('{');
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && !tree {
                out.push(tail[..len].trim_end_matches(':').to_owned());
            }
            rest = &rest[i + start.len()..];
        }
    }
    out
}

/// The module a path names, as the longest known module prefix (`None` for other crates and `std`).
fn resolve(
    path: &str,
    from: &[String],
    krate: &str,
    modules: &BTreeSet<(String, Vec<String>)>,
) -> Option<(String, Vec<String>)> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (target_crate, mut abs): (&str, Vec<String>) = match segs.first()? {
        &"crate" => (krate, Vec::new()),
        &"git_jules" => ("lib", Vec::new()),
        &"self" => (krate, from.to_vec()),
        &"super" => (krate, from.to_vec()),
        first => {
            // A child module named without a prefix (2018 paths), else another crate.
            let mut m = from.to_vec();
            m.push(first.to_string());
            if modules.contains(&(krate.to_owned(), m)) {
                (krate, from.to_vec())
            } else {
                return None;
            }
        }
    };
    let mut it = segs.iter().peekable();
    if matches!(
        it.peek(),
        Some(&&"crate") | Some(&&"git_jules") | Some(&&"self")
    ) {
        it.next();
    }
    for s in it {
        if *s == "super" {
            abs.pop();
        } else {
            abs.push(s.to_string());
        }
    }
    while !abs.is_empty() && !modules.contains(&(target_crate.to_owned(), abs.clone())) {
        abs.pop();
    }
    Some((target_crate.to_owned(), abs))
}

/// `(from module, to module)` edges, per crate.
fn edges(files: &[File]) -> BTreeSet<(String, Vec<String>, Vec<String>)> {
    let modules: BTreeSet<(String, Vec<String>)> = files
        .iter()
        .flat_map(|f| (0..=f.module.len()).map(|n| (f.krate.to_owned(), f.module[..n].to_vec())))
        .collect();
    let mut out = BTreeSet::new();
    for f in files {
        for p in paths(&f.code) {
            if let Some((k, to)) = resolve(&p, &f.module, f.krate, &modules) {
                if k == f.krate && to != f.module {
                    out.insert((k, f.module.clone(), to));
                }
            }
        }
    }
    out
}

/// The layer table of `docs/architecture.md`: module name to layer number.
fn layers() -> BTreeMap<String, u32> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Layering"))
        .expect("docs/architecture.md has a \"## Layering\" section");
    let mut out = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 3 {
            continue;
        }
        let Ok(layer) = cells[1].parse::<u32>() else {
            continue;
        };
        for m in cells[2].split(',') {
            out.insert(m.trim().trim_matches('`').to_owned(), layer);
        }
    }
    assert!(out.len() > 10, "the layer table is empty or unreadable");
    out
}

/// The library's rooms, in the order they may use each other.
const ROOMS: [&str; 3] = ["kit", "store", "capabilities"];

/// A library module's room (its index in [`ROOMS`]; `None` at the crate root) and its unit: the module the
/// layer table names (`store::eventlog::walk` is the unit `eventlog` of the room `store`).
fn unit(module: &[String]) -> Option<(Option<usize>, &str)> {
    let first = module.first()?;
    match ROOMS.iter().position(|r| r == first) {
        Some(room) => Some((Some(room), module.get(1)?.as_str())),
        None => Some((None, first.as_str())),
    }
}

/// Every edge of the library that goes up or across the layers, or back to an earlier room; and every
/// library module missing from the table.
fn layer_violations(files: &[File], layers: &BTreeMap<String, u32>) -> Vec<String> {
    let mut errors = Vec::new();
    for f in files.iter().filter(|f| f.krate == "lib") {
        if let Some((_, name)) = unit(&f.module) {
            if !layers.contains_key(name) {
                errors.push(format!(
                    "{}: module `{name}` is not in the layer table of docs/architecture.md",
                    f.rel
                ));
            }
        }
    }
    for (k, from, to) in edges(files) {
        let (Some((room_a, a)), Some((room_b, b))) = (unit(&from), unit(&to)) else {
            continue;
        };
        if k != "lib" || a == b {
            continue;
        }
        if let (Some(ra), Some(rb)) = (room_a, room_b) {
            if rb > ra {
                errors.push(format!(
                    "{} (room {}) uses {} (room {}): a room may only use itself and the rooms before it",
                    from.join("::"),
                    ROOMS[ra],
                    to.join("::"),
                    ROOMS[rb]
                ));
            }
        }
        let (Some(la), Some(lb)) = (layers.get(a), layers.get(b)) else {
            continue;
        };
        if lb >= la {
            errors.push(format!(
                "{} (layer {la}) uses {} (layer {lb}): a module may only use lower layers",
                from.join("::"),
                to.join("::")
            ));
        }
    }
    errors
}

#[test]
fn library_modules_use_only_lower_layers() {
    let errors = layer_violations(&load(), &layers());
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// A planted file for the checks' own tests.
fn plant(krate: &'static str, module: &[&str], code: &str) -> File {
    File {
        krate,
        module: module.iter().map(|s| s.to_string()).collect(),
        rel: format!("src/{}.rs", module.join("/")),
        code: code.to_owned(),
    }
}

/// The layer rule fails on planted edges: up the layers inside a room (the event log naming mail's view),
/// across rooms (the kit naming the store), and a module the table does not know.
#[test]
fn an_edge_up_the_layers_or_back_a_room_is_caught() {
    let mut files = load();
    let layers = layers();
    assert!(layer_violations(&files, &layers).is_empty());
    files.push(plant(
        "lib",
        &["store", "eventlog", "planted"],
        "use crate::capabilities::mail::view::Mailbox;\n",
    ));
    files.push(plant(
        "lib",
        &["kit", "names", "planted"],
        "fn f() { crate::store::refs::cas(); }\n",
    ));
    files.push(plant(
        "lib",
        &["capabilities", "planted"],
        "use crate::kit::id::Id32;\n",
    ));
    let found = layer_violations(&files, &layers);
    let has = |needle: &str| found.iter().any(|e| e.contains(needle));
    assert!(
        has("store::eventlog::planted (room store) uses capabilities::mail"),
        "{found:?}"
    );
    assert!(
        has("store::eventlog::planted (layer 5) uses capabilities::mail"),
        "{found:?}"
    );
    assert!(
        has("kit::names::planted (room kit) uses store::refs"),
        "{found:?}"
    );
    assert!(
        has("module `planted` is not in the layer table"),
        "{found:?}"
    );
    assert_eq!(found.len(), 5, "{found:?}");
}

type Graphs = BTreeMap<(String, Vec<String>), BTreeMap<String, BTreeSet<String>>>;

/// Every cycle among siblings, as `crate parent: a -> b -> a`.
fn cycles(graphs: &Graphs) -> Vec<String> {
    let mut cycles = Vec::new();
    for ((k, parent), g) in graphs {
        for start in g.keys() {
            // A path from `start` back to itself.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for next in g.get(&node).into_iter().flatten() {
                    if next == start {
                        let mut c = path.clone();
                        c.push(start.clone());
                        cycles.push(format!("{k} {}: {}", parent.join("::"), c.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
            }
        }
    }
    cycles
}

#[test]
fn no_two_sibling_modules_use_each_other() {
    let files = load();
    // For each parent module: child -> children it uses.
    let mut graphs = Graphs::new();
    for (k, from, to) in edges(&files) {
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue; // a parent and its own descendant
        }
        graphs
            .entry((k, from[..common].to_vec()))
            .or_default()
            .entry(from[common].clone())
            .or_default()
            .insert(to[common].clone());
    }
    let mut cycles = cycles(&graphs);
    cycles.sort();
    cycles.dedup();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// Library files that print, exit or read the environment: `file: word` each.
fn prints(files: &[File]) -> Vec<String> {
    let forbidden = [
        "println!",
        "print!(",
        "eprintln!",
        "eprint!(",
        "process::exit",
        "env::var",
        "env::temp_dir",
        "env::args",
    ];
    let mut errors = Vec::new();
    // Test-only files (`#[cfg(test)] mod …_tests;`, named `…tests.rs`) are not part of the library as
    // shipped: a test may read the environment (a temp dir, a fuzzing seed) and print what it found.
    let test_only = |rel: &str| rel.ends_with("tests.rs");
    for f in files
        .iter()
        .filter(|f| f.krate == "lib" && !test_only(&f.rel))
    {
        for word in forbidden {
            if f.code.contains(word) {
                errors.push(format!("{}: {word}", f.rel));
            }
        }
    }
    errors
}

#[test]
fn the_library_never_prints_exits_or_reads_the_environment() {
    let errors = prints(&load());
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The rule fails on a planted library file that prints and reads the environment, and not on the same
/// code in a frontend or a test-only file.
#[test]
fn a_library_file_that_prints_is_caught() {
    let mut files = load();
    let code = "fn f() { let v = std::env::var(\"X\"); std::process::exit(v.is_ok() as i32) }\n";
    files.push(plant("lib", &["capabilities", "mail", "planted"], code));
    files.push(plant("bin", &["frontends", "cli", "planted"], code));
    files.push(plant("lib", &["store", "sync", "planted_tests"], code));
    assert_eq!(
        prints(&files),
        [
            "src/capabilities/mail/planted.rs: process::exit",
            "src/capabilities/mail/planted.rs: env::var"
        ]
    );
}

/// The "Use-case API" table of `docs/architecture.md`: the library modules a frontend may name.
fn use_case_api() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Use-case API"))
        .expect("docs/architecture.md has a \"## Use-case API\" section");
    let mut out = BTreeSet::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let Some(cell) = cells.get(2) {
            for m in cell.split(',').map(|m| m.trim().trim_matches('`')) {
                if m.contains("::") {
                    out.insert(m.to_owned());
                }
            }
        }
    }
    assert!(
        out.len() > 10,
        "the use-case API table is empty or unreadable"
    );
    out
}

/// Library modules a frontend names that the use-case API does not list: `file -> module` each. A module
/// is listed itself or through an ancestor listed with `::*`.
fn off_api(files: &[File], api: &BTreeSet<String>) -> Vec<String> {
    let lib: BTreeSet<(String, Vec<String>)> = files
        .iter()
        .filter(|f| f.krate == "lib")
        .flat_map(|f| (0..=f.module.len()).map(|n| ("lib".to_owned(), f.module[..n].to_vec())))
        .collect();
    let mut out = Vec::new();
    for f in files.iter().filter(|f| f.krate == "bin") {
        for p in paths(&f.code)
            .into_iter()
            .filter(|p| p.starts_with("git_jules::"))
        {
            let Some((_, to)) = resolve(&p, &f.module, "bin", &lib) else {
                continue;
            };
            if to.is_empty() {
                continue; // the crate root's re-exports: `Error`, `Result`, `Workspace`
            }
            let name = to.join("::");
            let listed = api.contains(&name)
                || (1..=to.len()).any(|n| api.contains(&format!("{}::*", to[..n].join("::"))));
            if !listed {
                out.push(format!("{} -> {name}", f.rel));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn frontends_reach_the_library_only_through_the_use_case_api() {
    let found = off_api(&load(), &use_case_api());
    assert!(
        found.is_empty(),
        "frontends naming library modules outside the \"Use-case API\" table of docs/architecture.md:\n{}",
        found.join("\n")
    );
}

/// The rule fails on a planted frontend reaching past the use cases into the store's primitives.
#[test]
fn a_frontend_reaching_into_the_store_is_caught() {
    let mut files = load();
    files.push(plant(
        "bin",
        &["frontends", "mcp", "planted"],
        "use git_jules::store::refs;\nfn f() { git_jules::store::loose::write(); }\n",
    ));
    assert_eq!(
        off_api(&files, &use_case_api()),
        [
            "src/frontends/mcp/planted.rs -> store::loose",
            "src/frontends/mcp/planted.rs -> store::refs"
        ]
    );
}

/// The checker itself finds what it must: a cycle between siblings and an edge up the layers.
#[test]
fn the_checker_sees_use_trees_and_inline_paths() {
    assert_eq!(
        expand("super::{a, b::{c, d}}"),
        ["super::a", "super::b::c", "super::b::d"]
    );
    let code = "use super::import::State;\nfn f() { crate::series::patches(); }\n";
    let p = paths(code);
    assert!(p.contains(&"super::import::State".to_owned()), "{p:?}");
    assert!(p.contains(&"crate::series::patches".to_owned()), "{p:?}");
    let modules: BTreeSet<(String, Vec<String>)> = [
        vec![],
        vec!["mail".to_owned()],
        vec!["mail".to_owned(), "import".to_owned()],
        vec!["mail".to_owned(), "export".to_owned()],
    ]
    .into_iter()
    .map(|m| ("lib".to_owned(), m))
    .collect();
    let from = vec!["mail".to_owned(), "export".to_owned()];
    assert_eq!(
        resolve("super::import::State", &from, "lib", &modules),
        Some((
            "lib".to_owned(),
            vec!["mail".to_owned(), "import".to_owned()]
        ))
    );
    // The cycle issue 12 found: cli::series::finalize -> cli::verify -> cli::series.
    let mut g = Graphs::new();
    let cli = g
        .entry(("bin".to_owned(), vec!["cli".to_owned()]))
        .or_default();
    cli.entry("series".into())
        .or_default()
        .insert("verify".into());
    cli.entry("verify".into())
        .or_default()
        .insert("series".into());
    cli.entry("mail".into()).or_default().insert("ui".into());
    let found = cycles(&g);
    assert!(
        found
            .iter()
            .any(|c| c == "bin cli: series -> verify -> series"),
        "{found:?}"
    );
    assert!(!found.iter().any(|c| c.contains("ui")), "{found:?}");
}

/// Paths by which a frontend module (under `frontends`, other than `frontends::context`) names an item of
/// `frontends/mod.rs` itself, the parser and dispatcher, rather than a module: `file: path` each.
fn climbs_to_the_dispatcher(files: &[File]) -> Vec<String> {
    let modules: BTreeSet<(String, Vec<String>)> = files
        .iter()
        .flat_map(|f| (0..=f.module.len()).map(|n| (f.krate.to_owned(), f.module[..n].to_vec())))
        .collect();
    let cli = vec!["frontends".to_owned()];
    let context = vec!["frontends".to_owned(), "context".to_owned()];
    let mut out = Vec::new();
    for f in files {
        let is_command = f.krate == "bin" && f.module.len() >= 2 && f.module[0] == "frontends";
        if !is_command || f.module == context {
            continue;
        }
        // `super` alone (a module naming its parent, as in `super::{ui, verify}`) names no item.
        for p in paths(&f.code).into_iter().filter(|p| !p.ends_with("super")) {
            if resolve(&p, &f.module, f.krate, &modules) == Some(("bin".to_owned(), cli.clone())) {
                out.push(format!("{}: {p}", f.rel));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Commands take the context, exit codes and the clap tree from `frontends::context`; nothing climbs back
/// to `frontends/mod.rs` (the issue found 18 imports that did).
#[test]
fn commands_reach_the_cli_only_through_its_context_module() {
    let found = climbs_to_the_dispatcher(&load());
    assert!(
        found.is_empty(),
        "commands naming items of frontends/mod.rs (import them from crate::frontends::context):\n{}",
        found.join("\n")
    );
}

/// The rule above fails on a planted back-edge: a command importing `Context` from its parent, and one
/// naming an exit code inline through `crate::cli`.
#[test]
fn a_command_that_climbs_back_to_the_dispatcher_is_caught() {
    let mut files = load();
    files.push(plant(
        "bin",
        &["frontends", "cli", "planted"],
        "use super::super::{ui, Context};\nfn f() -> i32 { crate::frontends::EXIT_OK }\n",
    ));
    files.push(plant(
        "bin",
        &["frontends", "cli", "mail", "planted"],
        "use crate::frontends::context::Context;\nuse super::super::super::Context as C;\n",
    ));
    let found = climbs_to_the_dispatcher(&files);
    assert_eq!(
        found,
        [
            "src/frontends/cli/mail/planted.rs: super::super::super::Context",
            "src/frontends/cli/planted.rs: crate::frontends::EXIT_OK",
            "src/frontends/cli/planted.rs: super::super::Context",
        ],
        "{found:?}"
    );
}
