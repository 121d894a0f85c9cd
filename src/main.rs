//! The `git-jules` binary: everything lives in the library; `cli` parses, calls and prints.

#![forbid(unsafe_code)]

mod cli;

fn main() {
    std::process::exit(cli::run());
}
