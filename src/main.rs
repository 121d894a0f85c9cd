//! The `git-jules` binary: everything lives in the library; `cli` parses, calls and prints.

mod cli;

fn main() {
    std::process::exit(cli::run());
}
