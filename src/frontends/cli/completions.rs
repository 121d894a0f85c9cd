//! `git jules completions bash|zsh|fish`: shell completion scripts generated from the clap tree
//! (clap_complete). The bash script also defines `_git_jules`, the function git's own bash completion
//! calls for `git jules <TAB>`, so both `git-jules <TAB>` and `git jules <TAB>` complete.

use clap_complete::Shell;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Install (bash): git jules completions bash > ~/.local/share/bash-completion/completions/git-jules\n\
zsh: git jules completions zsh > \"${fpath[1]}/_git-jules\"; fish: git jules completions fish > ~/.config/fish/completions/git-jules.fish\n\
Example: source <(git jules completions bash); then `git jules ma<TAB>` completes `mail`."
)]
pub struct Args {
    /// The shell: bash, zsh or fish
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// The glue between git's completion (`git jules …`) and clap's `_git-jules` function: present the
/// words after `jules` as a `git-jules` command line.
const GIT_BASH_GLUE: &str = r#"
# git's bash completion calls _git_jules for `git jules ...`.
_git_jules() {
    local i idx=-1
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        if [[ ${COMP_WORDS[i]} == jules ]]; then idx=$i; break; fi
    done
    ((idx < 0)) && return
    local -a COMP_WORDS=(git-jules "${COMP_WORDS[@]:idx+1}")
    local COMP_CWORD=$((COMP_CWORD - idx))
    local COMP_LINE="${COMP_WORDS[*]}"
    local COMP_POINT=${#COMP_LINE}
    _git__jules git-jules "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

pub fn run(ctx: &crate::frontends::context::Context, a: Args) -> anyhow::Result<i32> {
    let text = script(&a.shell)?;
    ctx.ui.out_raw(&text);
    Ok(0)
}

/// The completion script for `shell`.
pub fn script(shell: &str) -> anyhow::Result<String> {
    let shell: Shell = shell.parse().map_err(|e: String| {
        crate::frontends::error::usage(format!("unknown shell {shell:?}: {e}"))
    })?;
    let mut cmd = crate::frontends::context::unbuilt_command()
        .bin_name("git-jules")
        .name("git-jules");
    // clap builds the root's `help` tree (`git jules help mail <TAB>`) from the subcommands as they are
    // before its own build step, when the deferred command groups have no commands yet. Put each top-level
    // command in fully built first, so that the help tree lists every group's commands.
    let mut built = cmd.clone();
    built.build();
    for sub in built.get_subcommands().filter(|s| s.get_name() != "help") {
        cmd = cmd.mut_subcommand(sub.get_name(), |_| sub.clone());
    }
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "git-jules", &mut buf);
    // Subcommands keep the `git jules` bin name of the clap tree; name their completion functions like
    // the root's so that clap's own dispatch (`git__jules,mail` -> `git__jules__subcmd__mail`) finds them.
    let mut text =
        String::from_utf8(buf)?.replace("git__subcmd__jules__subcmd__", "git__jules__subcmd__");
    if shell == Shell::Bash {
        text.push_str(GIT_BASH_GLUE);
    }
    Ok(text)
}
