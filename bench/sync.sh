#!/usr/bin/env bash
# bench/sync.sh [N] -- 100 sandboxes sync at once through a smart-HTTP remote (docs/benchmarks-sync.md).
#
# A bare remote served by `git http-backend` behind lighttpd on 127.0.0.1, basic auth answered by a credential
# helper. N clones (default 100), each with 5 new messages, all run `git jules sync` at the same moment; then
# all sync once more at once (everyone has everything: converged). Side by side, in the same run, the floor:
# the same N clones each doing one plain `git push` of a branch of their own and one `git fetch`, all at once.
# Prints failures, p50/p95 of one sync and of one push+fetch pair, the ratio of the p95s for round 1 and for
# round 2 (issue 29's target: round 2 <= 1.2x), the pushes and fetches each round made (counted by the server:
# every request to git http-backend goes through a logging wrapper), a third, idle round (no push at all), and
# the time until all have converged. Round 2 is also compared with a catch-up floor: plain git fetching the same
# history (every clone pushed a branch of 5 commits, then all fetch at once).
#
# Then the push budget (BUDGET_CLONES clones, default 10, sharing BUDGET_RATE pushes a minute, default 6, for
# BUDGET_SECS seconds, default 300; BUDGET_SECS=0 skips it): each clone sets jules.sync.minPushInterval to
# clones*60/rate seconds, sends a message every 10-20 s and syncs after each; a watcher clone syncs every 5 s
# and notes when each message first shows up. Prints the pushes per minute the server saw (max and mean) and
# the delivery latency of a message (send until visible in another clone), p50/p95.
#
# Every command of a timed phase runs under a limit (SYNC_TIMEOUT seconds, default 1800: a run past it counts as
# a failure, "timeout"), and each phase prints a line as it ends, with `uptime` (the machine is shared: the
# load beside each figure), the server's view of the phase (requests by kind, the most CGI processes at once,
# request times p50/p95 and the longest) and, for syncs, the rounds each sync took (1 is no retry).
#
# FORGE=github: the server enforces a forge's limits (docs/scale.md, *The forge's limits*): a pre-receive
# hook refuses a push when the repository took FORGE_PUSHES (default 6) in the last 60 s, and the request
# wrapper answers HTTP 429 to a fetch (a GET of info/refs for upload-pack) past FORGE_READS (default 15) in
# one second. In that mode the simultaneous phases are skipped (N pushes at one moment is what no forge takes)
# and the run is one point of the model of docs/scale.md: N clones (default 20) on one repository with
# jules.sync.minPushInterval = N*60/FORGE_PUSHES s, each syncing every POINT_SYNC s (default 10) and sending
# an event at random, POINT_EVENTS_PER_H an hour on average (default 30), for POINT_SECS (default 1200); a
# watcher clone syncs every 5 s. Printed: pushes a minute (mean, most in any 60 s), refusals, fetches a
# second, 429s, delivery latency p50/p95, events delivered, writer refs on the remote, each beside the model's
# figure (bench/scale_model.py, single_repo).
#
# Needs bash, git, python3, lighttpd, flock. The binary is $GIT_JULES, else target/release/git-jules.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
FORGE=${FORGE:-}
case "$FORGE" in ""|github) ;; *) echo "FORGE must be empty or github" >&2; exit 2;; esac
if [ -n "$FORGE" ]; then N=${1:-20}; else N=${1:-100}; fi
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
# One fetch over http is several POSTs on one kept-alive connection; with hundreds of clients on two cores a
# client can take longer than lighttpd's default 5 s between two of them, and the server closes the connection
# as the client writes (curl 55 "Connection died"): 24 of 300 plain fetches failed so on 2026-12-05.
server.max-keep-alive-idle = 60
server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")
alias.url = ("/git" => "$WORK/www/backend.sh")
cgi.assign = ("" => "")
setenv.add-environment = ("GIT_PROJECT_ROOT" => "$WORK", "GIT_HTTP_EXPORT_ALL" => "1", "PATH" => "$PATH",
                          "GIT_CONFIG_NOSYSTEM" => "1", "HOME" => "$WORK")
auth.backend = "plain"
auth.backend.plain.userfile = "$WORK/www/users"
auth.require = ("/git" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
CONF
# Every request to git http-backend goes through this wrapper: one line a request, appended atomically when it
# ends (start and end time, git's exit status, method, path and query), so the script can count pushes and
# fetches per phase and see how long the server took over each and how many ran at once. With FORGE set it
# also answers 429 to a fetch past the read budget (the count is per calendar second, one file a second).
cat > "$WORK/www/backend.sh" <<SH
#!/bin/sh
t0=\$(date +%s.%N)
if [ -n "$FORGE" ] && [ "\$REQUEST_METHOD" = GET ]; then
  case "\$QUERY_STRING" in *git-upload-pack*)
    sec=\${t0%.*}
    echo x >> "$WORK/www/reads-\$sec"
    if [ "\$(wc -l < "$WORK/www/reads-\$sec")" -gt "${FORGE_READS:-15}" ]; then
      printf 'Status: 429 Too Many Requests\\r\\nRetry-After: 1\\r\\nContent-Type: text/plain\\r\\n\\r\\nrate limited\\n'
      echo "\$t0 \$(date +%s.%N) 429 \$REQUEST_METHOD \$PATH_INFO?\$QUERY_STRING" >> "$WORK/www/requests.log"
      exit 0
    fi;;
  esac
fi
"$(git --exec-path)/git-http-backend"
rc=\$?
echo "\$t0 \$(date +%s.%N) \$rc \$REQUEST_METHOD \$PATH_INFO?\$QUERY_STRING" >> "$WORK/www/requests.log"
exit \$rc
SH
chmod +x "$WORK/www/backend.sh"
"$LIGHTTPD" -D -f "$WORK/www/lighttpd.conf" & SERVER=$!
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT))" 2>/dev/null && break; sleep 0.05; done

git init -q "$WORK/seed" && git -C "$WORK/seed" commit -q --allow-empty -m seed
git init -q --bare "$WORK/remote.git"
git -C "$WORK/seed" push -q "$WORK/remote.git" main
if [ -n "$FORGE" ]; then
  # The forge's push budget, once the run has set up (the file forge-on): at most FORGE_PUSHES pushes in
  # any 60 s, counted under a lock; a push past it is refused before any ref moves, as a forge's rate limit.
  cat > "$WORK/remote.git/hooks/pre-receive" <<SH
#!/bin/sh
[ -e "$WORK/www/forge-on" ] || exit 0
exec 9>"$WORK/www/pushes.lock"
flock 9
now=\$(date +%s.%N)
recent=\$(awk -v now="\$now" '\$1 > now - 60' "$WORK/www/pushes.log" 2>/dev/null | wc -l)
if [ "\$recent" -ge ${FORGE_PUSHES:-6} ]; then
  echo "\$now" >> "$WORK/www/refusals.log"
  echo "rate limited: \$recent pushes to this repository in the last 60 s, at most ${FORGE_PUSHES:-6}" >&2
  exit 1
fi
echo "\$now" >> "$WORK/www/pushes.log"
SH
  chmod +x "$WORK/remote.git/hooks/pre-receive"
fi
URL="http://127.0.0.1:$PORT/git/remote.git"
CLONES=$N
[ -n "$FORGE" ] && CLONES=$((N + 1))   # and a watcher
echo "== $N clones of $URL (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for i in $(seq 1 "$CLONES"); do
  git clone -q "$URL" "$WORK/c$i"
  for m in 1 2 3 4 5; do
    JULES_PERSONA="p$i" git -C "$WORK/c$i" jules mail send --to "p$(( i % N + 1 ))" \
      --subject "m$m from $i" --body "hello" >/dev/null
  done
  git -C "$WORK/c$i" commit -q --allow-empty -m "work of $i"
done
echo "== set up at $(date -u +%H:%M:%S) UTC (load: $(cut -d' ' -f1-3 /proc/loadavg))"

python3 -u - "$WORK" "$N" "${BUDGET_CLONES:-10}" "${BUDGET_RATE:-6}" "${BUDGET_SECS:-300}" "$here" <<'PY'
import subprocess, sys, time, threading, random, os, re, math, signal, importlib.util
work, n = sys.argv[1], int(sys.argv[2])
budget_clones, budget_rate, budget_secs = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
here = sys.argv[6]
forge = os.environ.get("FORGE", "")
limit = float(os.environ.get("SYNC_TIMEOUT", "1800"))
log = f"{work}/www/requests.log"
def requests():
    """The server's requests so far: (start, end, status, method, path?query), one per git http-backend run."""
    try:
        lines = open(log).read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for l in lines:
        f = l.split(maxsplit=4)
        if len(f) == 5:
            out.append((float(f[0]), float(f[1]), f[2], f[3], f[4]))
    return out
def ops(reqs):
    """(push attempts, fetches, upload-pack requests): each push or fetch asks for the ref advertisement once;
    each negotiation round of a fetch over http is one more POST (one more upload-pack on the server)."""
    pushes = sum(1 for r in reqs if "info/refs" in r[4] and "service=git-receive-pack" in r[4])
    fetches = sum(1 for r in reqs if "info/refs" in r[4] and "service=git-upload-pack" in r[4])
    rounds = sum(1 for r in reqs if r[3] == "POST" and "git-upload-pack" in r[4])
    return pushes, fetches, rounds
def server(reqs):
    """What the server saw in a phase: the most requests running at once, and the time of the requests that
    do the work (POSTs to receive-pack and upload-pack), p50 / p95 / longest; failed requests."""
    if not reqs:
        return "no request"
    ev = sorted([(r[0], 1) for r in reqs] + [(r[1], -1) for r in reqs])
    cur = most = 0
    for _, d in ev:
        cur += d; most = max(most, cur)
    parts = [f"{len(reqs)} requests, at most {most} at once"]
    for kind in ("git-receive-pack", "git-upload-pack"):
        ts = [r[1] - r[0] for r in reqs if r[3] == "POST" and kind in r[4]]
        if ts:
            parts.append(f"POST {kind[4:]} {len(ts)}: {pct(ts, 50):.2f} / {pct(ts, 95):.2f} / {max(ts):.2f} s")
    bad = [r for r in reqs if r[2] != "0"]
    if bad:
        parts.append(f"{len(bad)} not answered by git ({', '.join(sorted(set(r[2] for r in bad)))})")
    return "; ".join(parts)
def busy():
    """CPU seconds the whole machine spent busy so far (all processes: clients, server, git-jules)."""
    f = open("/proc/stat").readline().split()[1:]
    ticks = [int(x) for x in f]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
def load():
    avail = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemAvailable:")), 0)
    return " ".join(open("/proc/loadavg").read().split()[:3]) + f" (memory available {avail / 2**20:.1f} GiB)"
def run(cmd, timeout=None):
    """Run one command in its own process group; past `timeout` the whole group is killed (git-jules's own
    git children too) and the result says "timeout". Returns (returncode, stdout, stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return "timeout", out, err
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]
cpu, syncs_rounds = {}, {}
def at_once(cmds, name):
    """Run one command list per clone, all started together (a barrier), each command under the time limit;
    print a progress line every 30 s and a line when the phase ends; return (durations, failures, wall,
    (pushes, fetches, upload-pack requests))."""
    durs, fails, rounds = [None] * len(cmds), [], []
    barrier = threading.Barrier(len(cmds) + 1)
    def one(i, steps):
        barrier.wait()
        t = time.monotonic()
        for s in steps:
            rc, out, err = run(s, limit)
            if rc != 0:
                fails.append((i, " ".join(s[3:]), "timeout" if rc == "timeout" else err.strip()[-300:]))
            elif "--json" in s:
                found = re.search(r'"rounds":\s*(\d+)', out)
                if found:
                    rounds.append(int(found.group(1)))
        durs[i] = time.monotonic() - t
    before = len(requests())
    load0 = load()
    ts = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(cmds)]
    [t.start() for t in ts]
    barrier.wait()
    start, cpu0 = time.monotonic(), busy()
    said = start
    while any(t.is_alive() for t in ts):
        time.sleep(0.2)
        if time.monotonic() - said >= 30:
            said = time.monotonic()
            print(f"  [{name}] {sum(not t.is_alive() for t in ts)}/{len(cmds)} done after {said - start:.0f} s, "
                  f"failures {len(fails)}, load {load()}", flush=True)
    [t.join() for t in ts]
    wall = time.monotonic() - start
    cpu[name] = busy() - cpu0
    reqs = requests()[before:]
    syncs_rounds[name] = rounds
    extra = ""
    if rounds:
        hist = {r: rounds.count(r) for r in sorted(set(rounds))}
        extra = "  rounds per sync " + ", ".join(f"{k}: {v}" for k, v in hist.items())
    print(f"[{name}] p50 {pct(durs, 50):.2f} s  p95 {pct(durs, 95):.2f} s  wall {wall:.1f} s  failures {len(fails)}  "
          f"machine CPU {cpu[name]:.1f} s  load {load0} -> {load()}{extra}\n  server: {server(reqs)}", flush=True)
    return durs, fails, wall, ops(reqs)
c = lambda i: f"{work}/c{i}"
ms = lambda s: f"{s * 1000:.0f} ms"

def simultaneous():
    floor, ffails, fwall, fops = at_once([[["git", "-C", c(i), "push", "-q", "origin", f"HEAD:refs/heads/sb-{i}"],
                                           ["git", "-C", c(i), "fetch", "-q", "origin"]] for i in range(1, n + 1)],
                                         "floor")
    # The catch-up floor: plain git moving the history round 2 moves. Every clone pushes (untimed, one after
    # the other) a branch of 5 commits, its 5 messages' worth, then all fetch everyone's at once (timed): what
    # each clone must take in round 2, the others' news, with plain git.
    for i in range(1, n + 1):
        for m in range(1, 6):
            subprocess.run(["git", "-C", c(i), "commit", "-q", "--allow-empty", "-m",
                            f"m{m} from {i}: about the size of an event's line, with a subject and some words"],
                           check=True)
        subprocess.run(["git", "-C", c(i), "push", "-q", "origin", f"HEAD:refs/heads/five-{i}"], check=True)
    catchup, cfails, cwall, cops = at_once([[["git", "-C", c(i), "fetch", "-q", "origin",
                                              "+refs/heads/five-*:refs/remotes/origin/five-*"]]
                                            for i in range(1, n + 1)], "catch-up")
    rounds = [at_once([[["git", "-C", c(i), "jules", "--json", "sync"]] for i in range(1, n + 1)], f"round {k}")
              for k in (1, 2, 3)]
    tips = {subprocess.run(["git", "-C", c(i), "jules", "log", "show", "mail", "--json"], capture_output=True,
                           text=True).stdout.count('"id"') for i in range(1, n + 1)}
    remote_refs = subprocess.run(["git", "-C", f"{work}/remote.git", "for-each-ref", "refs/jules/"],
                                 capture_output=True, text=True).stdout.count("\n")
    print(f"floor (push + fetch, {n} at once): p50 {ms(pct(floor, 50))}  p95 {ms(pct(floor, 95))}  "
          f"wall {fwall:.2f} s  failures {len(ffails)}  pushes {fops[0]} fetches {fops[1]}")
    print(f"catch-up floor (plain fetch of everyone's 5 commits, {n} at once): p50 {ms(pct(catchup, 50))}  "
          f"p95 {ms(pct(catchup, 95))}  wall {cwall:.2f} s  failures {len(cfails)}  fetches {cops[1]}  upload-pack requests {cops[2]}")
    for k, (durs, fails, wall, (pushes, fetches, posts)) in enumerate(rounds, 1):
        what = {1: "news", 2: "catch up", 3: "idle"}[k]
        print(f"sync round {k} ({what}, {n} at once): p50 {ms(pct(durs, 50))}  p95 {ms(pct(durs, 95))}  "
              f"wall {wall:.2f} s  failures {len(fails)}  pushes {pushes} ({pushes / n:.2f}/sync)  "
              f"fetches {fetches} ({fetches / n:.2f}/sync, {posts / max(fetches, 1):.2f} upload-pack requests each)  ratio p95/floor p95 {pct(durs, 95) / pct(floor, 95):.2f}x")
    print(f"converged after {rounds[0][2] + rounds[1][2]:.2f} s: events per clone {sorted(tips)} (want [{5 * n}]), "
          f"refs under refs/jules/ on the remote: {remote_refs}; pushes per event in round 1: "
          f"{rounds[0][3][0] / (5 * n):.2f}")
    r1, r2 = pct(rounds[0][0], 95), pct(rounds[1][0], 95)
    print(f"targets (issue 45, 1.2x): round 1 p95 / push+fetch floor p95 {r1 / pct(floor, 95):.2f}x, "
          f"round 2 p95 / catch-up floor p95 {r2 / pct(catchup, 95):.2f}x (/ push+fetch floor {r2 / pct(floor, 95):.2f}x), "
          f"failures {sum(len(r[1]) for r in rounds)}, idle round pushes {rounds[2][3][0]}")
    # The machine's busy CPU time per phase (every process: clients, the http server, git-jules): on a shared
    # 2-core machine the p95 of many processes at once is mostly queueing, and this is the work itself.
    print("machine CPU per phase: " + ", ".join(f"{k} {v:.1f} s" for k, v in cpu.items()) +
          f"; round 1 / floor {cpu['round 1'] / cpu['floor']:.2f}x, round 2 / catch-up floor "
          f"{cpu['round 2'] / cpu['catch-up']:.2f}x")
    for f in (ffails + cfails + [x for r in rounds for x in r[1]])[:3]:
        print("failure:", f)

def budget():
    """BUDGET_CLONES clones sharing BUDGET_RATE pushes a minute (no forge limits): pushes a minute and delivery."""
    m = min(budget_clones, n - 1)
    interval = int(m * 60 / budget_rate)
    for i in range(1, m + 2):
        subprocess.run(["git", "-C", c(i), "config", "jules.sync.minPushInterval", f"{interval}s"], check=True)
    watcher = c(m + 1)
    sent, seen, stop = {}, {}, time.monotonic() + budget_secs
    before = len(requests())
    def persona(i):
        # A persona syncs every 10-20 s, as its loop would, and sends a message before each sync until the
        # end of the run; it keeps syncing one interval longer, so that its batched news goes out.
        k = 0
        while time.monotonic() < stop + interval + 5:
            time.sleep(random.uniform(10, 20))
            if time.monotonic() < stop:
                k += 1
                subject = f"budget {i}.{k}"
                subprocess.run(["git", "-C", c(i), "jules", "mail", "send", "--from", f"p{i}", "--to", "watch",
                                "--subject", subject, "--body", "x"], capture_output=True, check=True)
                sent[subject] = time.monotonic()
            subprocess.run(["git", "-C", c(i), "jules", "sync"], capture_output=True)
    def watch():
        while time.monotonic() < stop + 2 * interval + 60:
            subprocess.run(["git", "-C", watcher, "jules", "sync"], capture_output=True)
            out = subprocess.run(["git", "-C", watcher, "jules", "mail", "inbox", "--persona", "watch", "--json"],
                                 capture_output=True, text=True).stdout
            now = time.monotonic()
            for subject in list(sent):
                if subject not in seen and f'"{subject}"' in out:
                    seen[subject] = now
            if time.monotonic() > stop and len(seen) == len(sent):
                break
            time.sleep(5)
    ts = [threading.Thread(target=persona, args=(i,)) for i in range(1, m + 1)] + [threading.Thread(target=watch)]
    [t.start() for t in ts]; [t.join() for t in ts]
    reqs = requests()[before:]
    push_times = [r[0] for r in reqs if "info/refs" in r[4] and "service=git-receive-pack" in r[4]]
    per_minute = {}
    for t in push_times:
        per_minute[int(t) // 60] = per_minute.get(int(t) // 60, 0) + 1
    lat = [seen[s] - sent[s] for s in seen]
    print(f"budget: {m} clones, {budget_rate:g} pushes/min for the fleet -> minPushInterval {interval} s each; "
          f"{len(sent)} messages in {budget_secs} s; pushes {len(push_times)}, per minute max "
          f"{max(per_minute.values(), default=0)} mean {len(push_times) / (budget_secs / 60):.1f}; "
          f"delivery latency p50 {pct(lat, 50):.0f} s p95 {pct(lat, 95):.0f} s "
          f"({len(seen)} of {len(sent)} delivered)" if lat else "budget: no message delivered")

def most_in_window(times, width):
    """The most of `times` in any window of `width` seconds."""
    times, best, j = sorted(times), 0, 0
    for i, t in enumerate(times):
        while times[j] <= t - width:
            j += 1
        best = max(best, i - j + 1)
    return best

def point():
    """One point of docs/scale.md's model against the simulated forge: n clones on one repository, each with
    minPushInterval = n*60/FORGE_PUSHES, syncing every POINT_SYNC s and sending events at random
    (POINT_EVENTS_PER_H an hour each); a watcher clone syncs every 5 s and notes when each event shows up."""
    spec = importlib.util.spec_from_file_location("scale_model", f"{here}/bench/scale_model.py")
    model = importlib.util.module_from_spec(spec); spec.loader.exec_module(model)
    v = lambda name: model.INPUTS[name][0]
    push_budget, read_budget = int(os.environ.get("FORGE_PUSHES", "6")), int(os.environ.get("FORGE_READS", "15"))
    every = float(os.environ.get("POINT_SYNC", "10"))
    rate = float(os.environ.get("POINT_EVENTS_PER_H", "30"))
    secs = float(os.environ.get("POINT_SECS", "1200"))
    watch_every = 5.0
    interval = math.ceil(n * 60 / push_budget)
    watcher = c(n + 1)
    # Warm-up, before the forge's limits are on: every clone publishes its setup messages and takes in the
    # others' (one after the other), so the run starts from a converged fleet, not from a burst.
    for k in range(2):
        for i in range(1, n + 2):
            subprocess.run(["git", "-C", c(i), "jules", "sync", "--now"], capture_output=True, check=True)
    for i in range(1, n + 2):
        subprocess.run(["git", "-C", c(i), "config", "jules.sync.minPushInterval", f"{interval}s"], check=True)
    open(f"{work}/www/forge-on", "w").close()
    lam = rate / 3600
    with_news = 1 - math.exp(-lam * interval)
    f50, f95 = model.delivery_factors(v)
    want = {"pushes/min": n * 60 / interval * with_news, "fetches/s": n / every + 1 / watch_every,
            "delivery p50 s": f50 * interval + watch_every / 2, "delivery p95 s": f95 * interval + watch_every}
    print(f"== forge point ({forge}): {n} clones, {push_budget} pushes/min and {read_budget} reads/s for the "
          f"repository, minPushInterval {interval} s, a sync every {every:g} s, {rate:g} events an hour each, "
          f"{secs:.0f} s of events, then {2 * interval + 30} s to drain; started {time.strftime('%H:%M:%S', time.gmtime())} "
          f"UTC, load {load()}", flush=True)
    sent, seen, fails = {}, {}, []
    t0 = time.monotonic()
    stop, drain = t0 + secs, t0 + secs + 2 * interval + 30
    before = len(requests())
    wall0 = time.time()
    def persona(i):
        rng = random.Random(i)
        times, t = [], rng.expovariate(lam)
        while t < secs:
            times.append(t0 + t); t += rng.expovariate(lam)
        k, tick = 0, t0 + rng.uniform(0, every)
        while tick < drain:
            time.sleep(max(0, tick - time.monotonic()))
            while times and times[0] <= time.monotonic():
                times.pop(0); k += 1
                subject = f"point {i}.{k}"
                subprocess.run(["git", "-C", c(i), "jules", "mail", "send", "--from", f"p{i}", "--to", "watch",
                                "--subject", subject, "--body", "x"], capture_output=True, check=True)
                sent[subject] = time.monotonic()
            rc, out, err = run(["git", "-C", c(i), "jules", "sync"], limit)
            if rc != 0:
                fails.append((i, "timeout" if rc == "timeout" else err.strip()[-200:]))
            tick += every
    def watch():
        while time.monotonic() < drain + interval:
            run(["git", "-C", watcher, "jules", "sync"], limit)
            out = subprocess.run(["git", "-C", watcher, "jules", "mail", "inbox", "--persona", "watch", "--json"],
                                 capture_output=True, text=True).stdout
            now = time.monotonic()
            for subject in list(sent):
                if subject not in seen and f'"{subject}"' in out:
                    seen[subject] = now
            if now > drain and len(seen) == len(sent):
                break
            time.sleep(watch_every)
    def progress():
        while any(t.is_alive() for t in ts[:-1]):
            time.sleep(60)
            print(f"  [point] {time.monotonic() - t0:.0f} s: {len(sent)} sent, {len(seen)} seen, "
                  f"{len(fails)} failed syncs, load {load()}", flush=True)
    ts = [threading.Thread(target=persona, args=(i,)) for i in range(1, n + 1)] + [threading.Thread(target=watch)]
    ts.append(threading.Thread(target=progress, daemon=True))
    [t.start() for t in ts]; [t.join() for t in ts[:-1]]
    os.remove(f"{work}/www/forge-on")
    elapsed = time.time() - wall0
    reqs = requests()[before:]
    def lines(name):
        try:
            return [float(x) for x in open(f"{work}/www/{name}").read().split()]
        except FileNotFoundError:
            return []
    accepted = [t for t in lines("pushes.log") if t >= wall0]
    refused = [t for t in lines("refusals.log") if t >= wall0]
    fetch_times = [r[0] for r in reqs if "info/refs" in r[4] and "service=git-upload-pack" in r[4]]
    too_many = sum(1 for r in reqs if r[2] == "429")
    attempts = sum(1 for r in reqs if "info/refs" in r[4] and "service=git-receive-pack" in r[4])
    # The steady part: from the first interval on (the ledgers' first phase points) to the end of the events.
    steady = [t for t in accepted if wall0 + interval <= t <= wall0 + secs]
    steady_min = (secs - interval) / 60
    lat = [seen[s] - sent[s] for s in seen]
    counts = sorted({subprocess.run(["git", "-C", c(i), "jules", "log", "show", "mail", "--json"], capture_output=True,
                                    text=True).stdout.count('"id"') for i in range(1, n + 2)})
    writer_refs = subprocess.run(["git", "-C", f"{work}/remote.git", "for-each-ref", "refs/jules/writers/"],
                                 capture_output=True, text=True).stdout.count("\n")
    got = {"pushes/min": len(steady) / steady_min if steady_min > 0 else float("nan"),
           "fetches/s": len(fetch_times) / elapsed,
           "delivery p50 s": pct(lat, 50) if lat else float("nan"),
           "delivery p95 s": pct(lat, 95) if lat else float("nan")}
    print("| measure | model | measured | measured / model |\n|---|---|---|---|")
    for k in want:
        print(f"| {k} | {want[k]:.2f} | {got[k]:.2f} | {got[k] / want[k]:.2f}x |")
    print(f"| most pushes in any 60 s | <= {push_budget} | {most_in_window(accepted + refused, 60)} | |")
    print(f"| pushes refused by the forge (rate) | 0 | {len(refused)} | |")
    print(f"| fetches answered 429 | 0 | {too_many} | |")
    print(f"| events delivered to the watcher | {len(sent)} | {len(seen)} | |")
    print(f"pushes accepted {len(accepted)} (of {attempts} push attempts, {len(refused)} refused) in {elapsed:.0f} s; "
          f"fetches {len(fetch_times)}, most in one second {most_in_window(fetch_times, 1)}; failed syncs {len(fails)}; "
          f"events per clone at the end {counts}; writer refs on the remote {writer_refs}; load {load()}")
    for f in fails[:3]:
        print("failed sync:", f)

if forge:
    point()
else:
    simultaneous()
    if budget_secs > 0:
        budget()
PY
