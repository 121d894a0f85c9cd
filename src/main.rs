//! The `git-jules` binary: everything lives in the library; the frontends translate, call and present.

#![forbid(unsafe_code)]

mod frontends;

fn main() {
    std::process::exit(frontends::run());
}
