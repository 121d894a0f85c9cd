#!/usr/bin/env bash
# A web server for the smart-HTTP remote tests (tests/it/remotes.rs): lighttpd runs `git http-backend` as CGI
# on 127.0.0.1. `git daemon` and `git http-backend` come with git itself.
set -euo pipefail
if ! command -v lighttpd >/dev/null && [ ! -x /usr/sbin/lighttpd ]; then
    "$(dirname "$0")/../apt-install" lighttpd
    # The package starts a system instance on port 80; the tests run their own.
    (service lighttpd stop || systemctl stop lighttpd || true) >/dev/null 2>&1
fi
[ -x /usr/sbin/lighttpd ] || command -v lighttpd >/dev/null
git_exec=$(git --exec-path)
[ -x "$git_exec/git-http-backend" ] || { echo "git http-backend is missing from $git_exec" >&2; exit 1; }
[ -x "$git_exec/git-daemon" ] || { echo "git daemon is missing from $git_exec" >&2; exit 1; }
