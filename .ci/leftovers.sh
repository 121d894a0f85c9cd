#!/usr/bin/env bash
# Fails when a process the test suite started is still running after it (a server a test did not stop).
#
#   MARK=$(.ci/leftovers.sh mark)        before the suite: prints a marker to export as GIT_JULES_CI_RUN
#   .ci/leftovers.sh check               after it: lists what is left, exits 1 if anything is
#
# Two nets. Every process the suite starts inherits GIT_JULES_CI_RUN (unless a server rebuilt its
# environment, as lighttpd does for CGI, whose parent is then still there): any live process carrying the
# marker is left over. And the helpers by name (git daemon, git-daemon, lighttpd, git-jules, git
# http-backend) that were not running before the suite: left over on CI (CI=true, a machine of its own),
# only reported elsewhere, where other people's processes may carry those names.
set -euo pipefail
helpers='^(git-daemon|git daemon|lighttpd|git-jules|git-http-backend|git http-backend)( |$)|/(git-daemon|lighttpd|git-jules|git-http-backend)( |$)'

helper_pids() {
    local d args
    for d in /proc/[0-9]*; do
        args=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline") || continue
        if [[ $args =~ $helpers ]]; then echo "${d#/proc/}"; fi
    done
}

case ${1:-} in
    mark)
        mark="ci-$$-$(date +%s%N)"
        helper_pids >"${TMPDIR:-/tmp}/git-jules-helpers-before-$mark"
        echo "$mark" ;;
    check)
        mark=${GIT_JULES_CI_RUN:?export the marker of `leftovers.sh mark` before the suite}
        before=$(cat "${TMPDIR:-/tmp}/git-jules-helpers-before-$mark" 2>/dev/null || true)
        left=0
        for d in /proc/[0-9]*; do
            pid=${d#/proc/}
            # This script and the shell that runs it carry the marker too.
            [ "$pid" = $$ ] || [ "$pid" = "$PPID" ] || [ "$pid" = "$BASHPID" ] && continue
            if grep -qzx "GIT_JULES_CI_RUN=$mark" "$d/environ" 2>/dev/null; then
                echo "left running by the tests: $pid $(tr '\0' ' ' 2>/dev/null <"$d/cmdline" || true)" >&2
                left=1
            fi
        done
        for pid in $(helper_pids); do
            grep -qx "$pid" <<<"$before" && continue
            line="helper not running before the suite: $pid $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" || true)"
            if [ "${CI:-}" = true ]; then
                echo "left running: $line" >&2
                left=1
            else
                echo "note (not CI, may be someone else's): $line" >&2
            fi
        done
        [ $left = 1 ] || echo "leftovers: none"
        exit $left ;;
    *) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
