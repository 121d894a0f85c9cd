#!/usr/bin/env bash
# bench/sync.sh [N] -- 100 sandboxes sync at once through a smart-HTTP remote (docs/benchmarks-sync.md).
#
# A bare remote served by `git http-backend` behind lighttpd on 127.0.0.1, basic auth answered by a credential
# helper. N clones (default 100), each with 5 new messages, all run `git jules sync` at the same moment; then
# all sync once more at once (everyone has everything: converged). Side by side, in the same run, the floor:
# the same N clones each doing one plain `git push` of a branch of their own and one `git fetch`, all at once.
# Prints failures, p50/p95 of one sync and of one push+fetch pair, the ratio of the p95s (target <= 2x), and
# the time until all have converged.
#
# Needs bash, git, python3, lighttpd. The binary is $GIT_JULES, else target/release/git-jules.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-100}
if [ -z "${GIT_JULES:-}" ]; then
  target=${CARGO_TARGET_DIR:-$here/target}
  [ -x "$target/release/git-jules" ] || (cd "$here" && cargo build --release)
  GIT_JULES=$target/release/git-jules
fi
LIGHTTPD=$(command -v lighttpd || echo /usr/sbin/lighttpd)
[ -x "$LIGHTTPD" ] || { echo "lighttpd is needed: bash .ci/setup.d/remotes.sh" >&2; exit 2; }
SCRATCH_BASE=/dev/shm
[ -w "$SCRATCH_BASE" ] || SCRATCH_BASE=${TMPDIR:-/tmp}
WORK=$(mktemp -d "$SCRATCH_BASE/jules-bench-sync.XXXXXX")
cleanup() { [ -n "${SERVER:-}" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/bin" "$WORK/www"
cp "$GIT_JULES" "$WORK/bin/git-jules"
export PATH="$WORK/bin:$PATH" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$WORK/gitconfig" TZ=UTC LC_ALL=C
unset JULES_PERSONA
git config --file "$GIT_CONFIG_GLOBAL" user.name bench
git config --file "$GIT_CONFIG_GLOBAL" user.email bench@example.com
git config --file "$GIT_CONFIG_GLOBAL" init.defaultBranch main
git config --file "$GIT_CONFIG_GLOBAL" credential.helper \
  '!f() { test "$1" = get && echo username=bench && echo password=secret; }; f'

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "bench:secret" > "$WORK/www/users"
cat > "$WORK/www/lighttpd.conf" <<CONF
server.document-root = "$WORK/www"
server.bind = "127.0.0.1"
server.port = $PORT
server.errorlog = "$WORK/www/error.log"
server.max-connections = 1024
server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")
alias.url = ("/git" => "$(git --exec-path)/git-http-backend")
cgi.assign = ("" => "")
setenv.add-environment = ("GIT_PROJECT_ROOT" => "$WORK", "GIT_HTTP_EXPORT_ALL" => "1", "PATH" => "$PATH",
                          "GIT_CONFIG_NOSYSTEM" => "1", "HOME" => "$WORK")
auth.backend = "plain"
auth.backend.plain.userfile = "$WORK/www/users"
auth.require = ("/git" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
CONF
"$LIGHTTPD" -D -f "$WORK/www/lighttpd.conf" & SERVER=$!
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT))" 2>/dev/null && break; sleep 0.05; done

git init -q "$WORK/seed" && git -C "$WORK/seed" commit -q --allow-empty -m seed
git init -q --bare "$WORK/remote.git"
git -C "$WORK/seed" push -q "$WORK/remote.git" main
URL="http://127.0.0.1:$PORT/git/remote.git"
echo "== $N clones of $URL"
for i in $(seq 1 "$N"); do
  git clone -q "$URL" "$WORK/c$i"
  for m in 1 2 3 4 5; do
    JULES_PERSONA="p$i" git -C "$WORK/c$i" jules mail send --to "p$(( i % N + 1 ))" \
      --subject "m$m from $i" --body "hello" >/dev/null
  done
  git -C "$WORK/c$i" commit -q --allow-empty -m "work of $i"
done

python3 - "$WORK" "$N" <<'PY'
import subprocess, sys, time, threading, statistics
work, n = sys.argv[1], int(sys.argv[2])
def at_once(cmds):
    """Run one command list per clone, all started together; return (durations, failures, wall)."""
    durs, fails = [None] * len(cmds), []
    barrier = threading.Barrier(len(cmds))
    def run(i, steps):
        barrier.wait()
        t = time.monotonic()
        for s in steps:
            p = subprocess.run(s, capture_output=True, text=True)
            if p.returncode != 0:
                fails.append((i, s, p.stderr.strip()[-300:]))
        durs[i] = time.monotonic() - t
    start = time.monotonic()
    ts = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(cmds)]
    [t.start() for t in ts]; [t.join() for t in ts]
    return durs, fails, time.monotonic() - start
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]
c = lambda i: f"{work}/c{i}"
floor, ffails, fwall = at_once([[["git", "-C", c(i), "push", "-q", "origin", f"HEAD:refs/heads/sb-{i}"],
                                 ["git", "-C", c(i), "fetch", "-q", "origin"]] for i in range(1, n + 1)])
sync1, sfails, swall = at_once([[["git", "-C", c(i), "jules", "sync"]] for i in range(1, n + 1)])
sync2, s2fails, s2wall = at_once([[["git", "-C", c(i), "jules", "sync"]] for i in range(1, n + 1)])
tips = {subprocess.run(["git", "-C", c(i), "jules", "log", "show", "mail", "--json"], capture_output=True,
                       text=True).stdout.count('"id"') for i in range(1, n + 1)}
remote_refs = subprocess.run(["git", "-C", f"{work}/remote.git", "for-each-ref", "refs/jules/"],
                             capture_output=True, text=True).stdout.count("\n")
ms = lambda s: f"{s * 1000:.0f} ms"
print(f"floor (push + fetch, {n} at once): p50 {ms(pct(floor, 50))}  p95 {ms(pct(floor, 95))}  "
      f"wall {fwall:.2f} s  failures {len(ffails)}")
print(f"sync round 1 ({n} at once):        p50 {ms(pct(sync1, 50))}  p95 {ms(pct(sync1, 95))}  "
      f"wall {swall:.2f} s  failures {len(sfails)}")
print(f"sync round 2 ({n} at once):        p50 {ms(pct(sync2, 50))}  p95 {ms(pct(sync2, 95))}  "
      f"wall {s2wall:.2f} s  failures {len(s2fails)}")
print(f"converged after {swall + s2wall:.2f} s: events per clone {sorted(tips)} (want [{5 * n}]), "
      f"refs under refs/jules/ on the remote: {remote_refs}")
print(f"ratio p95 sync / p95 push+fetch: {pct(sync1, 95) / pct(floor, 95):.2f}x (target <= 2x)")
for f in (ffails + sfails + s2fails)[:3]:
    print("failure:", f)
PY
