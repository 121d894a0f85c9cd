#!/usr/bin/env python3
"""bench/scale_model.py -- the fleet model of docs/scale.md: 1,000 to 10,000 sandboxes against one forge.

Prints the doc's tables as Markdown from the inputs below, so the numbers can be re-derived (and re-run with
other inputs: every input is a keyword of `main`, or edit INPUTS). No dependencies beyond the standard library;
it starts no clone and runs no git: it is arithmetic on what bench/sync.sh and one event commit measured.

    python3 bench/scale_model.py            # every table of docs/scale.md
    python3 bench/scale_model.py --rate 60  # the same fleet with ten times the events per sandbox

Each input carries where it came from. "measured" means a figure in docs/benchmarks-sync.md or
docs/benchmarks.md (date and run given); "assumed" means a choice of this model, to be replaced by a
measurement; "forge" means a forge's published guidance (docs/scale.md, *The forge's limits*).
"""
import argparse
import math

INPUTS = {
    # --- the forge (docs/scale.md, "The forge's limits") ---
    "push_budget_per_min": (6, "forge: pushes a minute per repository (issue 45; docs/cli.md, `init --remote`)"),
    "read_budget_per_s": (15, "forge: GitHub 'Repository limits', Git read operations, 15 a second per repository"),
    "refs_budget": (5000, "forge: GitHub 'Repository limits', number of branches, 5,000"),
    # --- one sync, measured with bench/sync.sh (100 clones, smart HTTP, docs/benchmarks-sync.md) ---
    "fetches_per_sync": (1.00, "measured: 100 fetches per 100 syncs, every round, 2026-11-25..27 runs"),
    "upload_pack_requests_catchup": (3, "measured: upload-pack requests per round-2 fetch, 2026-11-27 02:10"),
    "upload_pack_requests_idle": (1, "measured: upload-pack requests per idle fetch, 2026-11-27 02:10"),
    "cpu_round1_ms": (179, "measured: round 1 machine CPU 17.9 s / 100 clones, 2026-11-27 02:10"),
    "cpu_round2_ms": (214, "measured: round 2 machine CPU 21.4 s / 100 clones, 2026-11-27 02:10"),
    "cpu_idle_ms": (57, "measured: idle round machine CPU 5.7 s / 100 clones, 2026-11-27 02:10"),
    "cpu_floor_ms": (132, "measured: push+fetch floor machine CPU 13.2 s / 100 clones, 2026-11-27 02:10"),
    "objects_round2_per_clone_at_100": (566, "measured: objects one round-2 fetch brings at 100 clones (495 events)"),
    "server_pack_ms_per_object": (0.19, "measured: perf of one round-2 sync, pack-objects 54% of 188 ms for 545 objects"),
    "cores": (2, "the bench machine: 2 cores"),
    # --- one event commit (mail send of a one-line status into a fresh repository, 2026-11-28, this doc) ---
    "event_raw_bytes": (546, "measured: mean size of 100 `mail send` event commits (git cat-file)"),
    "event_packed_bytes": (276, "measured: pack of those 100 events with the empty tree, 27,602 bytes / 100"),
    "objects_per_event": (566 / 495, "measured: 566 objects for 495 events fetched in round 2 (joins, trees)"),
    "ref_adv_bytes": (95, "derived: pkt-line length 4 + 40 hex + space + ~45-byte ref name + LF, per ref"),
    # --- the push budget, measured (10 clones sharing 6 pushes/min, minPushInterval 100 s, watcher every 5 s) ---
    "delivery_p50_s": (136, "measured: delivery latency p50 with the budget, 2026-11-26 23:33"),
    "delivery_p95_s": (232, "measured: delivery latency p95 with the budget, 2026-11-26 23:33"),
    "budget_interval_s": (100, "measured run's minPushInterval: 10 clones x 60 / 6"),
    "budget_watcher_s": (5, "measured run's watcher sync period"),
    # --- assumptions of this model ---
    "events_per_sandbox_per_h": (6, "assumed: one event (mail, state, lease) every 10 minutes per sandbox"),
    "series_refs_per_sandbox": (1, "assumed: one series with recorded versions per sandbox"),
    "relay_sync_s": (2.0, "assumed: one relay sync against a forge (fetch + push), seconds"),
    "relay_push_reserve_per_min": (1, "assumed: pushes a minute a shard keeps for its relay"),
    "clones_per_shard": (25, "assumed: sandboxes per coordination repository when sharded"),
}


def inp(name, over):
    return over.get(name, INPUTS[name][0])


def delivery_factors(v):
    """How many push intervals a message waits before it is on the remote (p50, p95), from the budget run:
    latency = wait + the reader's sync period (half of it at p50, all of it at p95)."""
    i, t = v("budget_interval_s"), v("budget_watcher_s")
    return (v("delivery_p50_s") - t / 2) / i, (v("delivery_p95_s") - t) / i


def one_machine(n, v):
    """bench/sync.sh on one machine: n clones at once, CPU-bound, so a round's p95 is about its total CPU over
    the cores (every process runs to the end of the round). Round 2 grows with what each clone fetches: the
    others' events, 5.66 objects per other clone at 100."""
    per_other = v("objects_round2_per_clone_at_100") / 99
    per_object = (v("cpu_round2_ms") - v("cpu_idle_ms")) / v("objects_round2_per_clone_at_100")
    r1 = n * v("cpu_round1_ms") / 1000 / v("cores")
    r2 = n * (v("cpu_idle_ms") + per_object * per_other * (n - 1)) / 1000 / v("cores")
    idle = n * v("cpu_idle_ms") / 1000 / v("cores")
    floor = n * v("cpu_floor_ms") / 1000 / v("cores")
    # Round 1 starts with no writer refs on the remote, so each sync sends its fold and its own writer ref in
    # one push (sync::publish::publish_in_one_push, since 2026-12-05; 2N - 1 pushes before): N pushes, and up
    # to N writer refs (the winner's lands too), fewer when a clone that fetched after the first fold folds
    # the writer refs it saw.
    return {"floor": floor, "r1": r1, "r2": r2, "idle": idle, "pushes_r1": n, "writer_refs": n,
            "objects_r2": per_other * (n - 1)}


def single_repo(n, v):
    """Every sandbox on one coordination repository, within the forge's budgets."""
    lam = v("events_per_sandbox_per_h") / 3600
    interval = n * 60 / v("push_budget_per_min")          # minPushInterval so that n clones fit the budget
    cadence = n / v("read_budget_per_s")                   # seconds between two syncs of one clone
    f50, f95 = delivery_factors(v)
    with_news = 1 - math.exp(-lam * interval)             # chance a clone has news when its interval is up
    pushes_min = n * 60 / interval * with_news
    fetch_s = n * v("fetches_per_sync") / cadence
    ev_per_fetch = n * lam * cadence                      # every event of the fleet reaches every clone
    refs_steady = 5 + v("series_refs_per_sandbox") * n + 1
    refs_burst = 5 + v("series_refs_per_sandbox") * n + n
    return {
        "interval": interval, "cadence": cadence, "pushes_min": pushes_min, "fetch_s": fetch_s,
        "ev_per_push": lam * interval / with_news, "ev_per_fetch": ev_per_fetch,
        "bytes_per_fetch": ev_per_fetch * v("event_packed_bytes") + refs_steady * v("ref_adv_bytes"),
        "adv_bytes": refs_steady * v("ref_adv_bytes"), "adv_burst": refs_burst * v("ref_adv_bytes"),
        "refs_steady": refs_steady, "refs_burst": refs_burst,
        "reach_p50": f50 * interval + cadence / 2, "reach_all": f95 * interval + cadence,
        "egress": fetch_s * ev_per_fetch * v("event_packed_bytes"),
        "server_cpu": fetch_s * ev_per_fetch * v("objects_per_event") * v("server_pack_ms_per_object") / 1000,
    }


def sharded(n, v):
    """Sandboxes in shards of `clones_per_shard` coordination repositories, joined by relay clones: a relay
    runs `git jules sync <shard>` for each of its shards in turn, with --now, so a shard keeps
    `relay_push_reserve_per_min` of its budget for it. With more shards than one relay can visit in a minute,
    relays meet in a hub repository (relays are the hub's clones, under the same budget)."""
    lam = v("events_per_sandbox_per_h") / 3600
    k = v("clones_per_shard")
    shards = math.ceil(n / k)
    clone_budget = v("push_budget_per_min") - v("relay_push_reserve_per_min")
    interval = k * 60 / clone_budget
    cadence = max(k / (v("read_budget_per_s") - 1), 10)   # reads are not binding in a shard; sync every 10 s
    # A relay visits each of its shards once a cycle and pushes there (--now): one cycle is the least time
    # between two relay pushes to a shard, and one relay can visit as many shards as syncs fit in it.
    cycle = 60 / v("relay_push_reserve_per_min")
    per_relay = max(1, int(cycle / v("relay_sync_s")))
    relays = math.ceil(shards / per_relay)
    hub_interval = relays * 60 / v("push_budget_per_min") if relays > 1 else 0
    f50, f95 = delivery_factors(v)
    # sender's push wait, relay pickup and push to its own shards (one cycle each), the hub hop when there are
    # several relays (a relay's hub push wait, then another relay's cycle to take it and push it on), the
    # reader's sync.
    hub_hop95 = (f95 * hub_interval + cycle) if relays > 1 else 0
    hub_hop50 = (f50 * hub_interval + cycle / 2) if relays > 1 else 0
    reach_all = f95 * interval + 2 * cycle + hub_hop95 + cadence
    reach_p50 = f50 * interval + cycle + hub_hop50 + cadence / 2
    ev_per_fetch = n * lam * cadence
    refs = 5 + v("series_refs_per_sandbox") * k + 1
    return {
        "shards": shards, "relays": relays, "interval": interval, "cadence": cadence, "cycle": cycle,
        "hub_interval": hub_interval,
        "pushes_min": k * 60 / interval * (1 - math.exp(-lam * interval)) + v("relay_push_reserve_per_min"),
        "fetch_s": k / cadence + 1 / cycle,
        "ev_per_fetch": ev_per_fetch, "bytes_per_fetch": ev_per_fetch * v("event_packed_bytes") + refs * v(
            "ref_adv_bytes"), "refs": refs, "reach_p50": reach_p50, "reach_all": reach_all,
        "egress_total": n / cadence * ev_per_fetch * v("event_packed_bytes"),
        "server_cpu": n / cadence * ev_per_fetch * v("objects_per_event") * v("server_pack_ms_per_object") / 1000,
        "events_per_clone_day": n * lam * 86400,
    }


def refused_share(n, factor, v, hours=2, trials=20):
    """The share of push attempts a forge refuses when n clones on one repository push at their phase points:
    minPushInterval = factor x n x 60 / budget, each phase point drawn at random (a writer id's hash), a push
    at a phase point only when the clone has news (chance 1 - e^-(rate x interval)), the forge refusing a
    push when it took `push_budget_per_min` in the last 60 s. No retries (a refused push waits for the next
    interval). Returns (share refused, pushes a minute offered). Measured beside it: bench/sync.sh
    FORGE=github, 15 clones, factor 1, 30 events an hour: 11% refused (docs/benchmarks-sync.md)."""
    import random
    budget = v("push_budget_per_min")
    interval = factor * n * 60 / budget
    p = 1 - math.exp(-v("events_per_sandbox_per_h") / 3600 * interval)
    secs = hours * 3600
    refused = total = 0
    for t in range(trials):
        rng = random.Random(t)
        phases = [rng.uniform(0, interval) for _ in range(n)]
        times = sorted(ph + k * interval for ph in phases for k in range(int(secs / interval) + 1)
                       if rng.random() < p and ph + k * interval < secs)
        taken = []
        for x in times:
            total += 1
            if sum(1 for a in taken[-budget:] if a > x - 60) >= budget:
                refused += 1
            else:
                taken.append(x)
    return refused / max(total, 1), total / trials / (secs / 60)


def dur(s):
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def size(b):
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b:.0f} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, help="events per sandbox per hour (default: INPUTS)")
    ap.add_argument("--shard", type=int, help="sandboxes per shard (default: INPUTS)")
    a = ap.parse_args()
    over = {}
    if a.rate is not None:
        over["events_per_sandbox_per_h"] = a.rate
    if a.shard is not None:
        over["clones_per_shard"] = a.shard
    v = lambda name: inp(name, over)
    sizes = (1000, 2000, 5000, 10000)

    print("### Inputs\n")
    print("| input | value | source |\n|---|---|---|")
    for name, (value, src) in INPUTS.items():
        shown = over.get(name, value)
        print(f"| `{name}` | {shown:.3g} | {src} |" if isinstance(shown, float) else f"| `{name}` | {shown} | {src} |")

    print("\n### Calibration: one machine, every clone at once (bench/sync.sh)\n")
    print("| clones | floor p95 | round 1 p95 | round 2 p95 | idle p95 | round-1 pushes | writer refs after round 1 |")
    print("|---|---|---|---|---|---|---|")
    for n in (60, 100, 300):
        m = one_machine(n, v)
        print(f"| {n} (model) | {m['floor']:.1f} s | {m['r1']:.1f} s | {m['r2']:.1f} s | {m['idle']:.1f} s | "
              f"{m['pushes_r1']} | {m['writer_refs']} |")

    print(f"\n### One coordination repository for the whole fleet ({v('events_per_sandbox_per_h'):g} events "
          "per sandbox per hour)\n")
    print("| sandboxes | `minPushInterval` | sync (fetch) every | pushes/min | fetches/s | events per push | "
          "events per fetch | bytes per fetch | refs on the remote (steady / burst) | ref advertisement "
          "(steady / burst) | reach one clone p50 | reach every clone (p95) | forge egress | forge pack CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (100, 300) + sizes:
        r = single_repo(n, v)
        print(f"| {n:,} | {dur(r['interval'])} | {dur(r['cadence'])} | {r['pushes_min']:.1f} | {r['fetch_s']:.0f} | "
              f"{r['ev_per_push']:.0f} | {r['ev_per_fetch']:.0f} | {size(r['bytes_per_fetch'])} | "
              f"{r['refs_steady']:,} / {r['refs_burst']:,} | {size(r['adv_bytes'])} / {size(r['adv_burst'])} | "
              f"{dur(r['reach_p50'])} | {dur(r['reach_all'])} | {size(r['egress'])}/s | "
              f"{r['server_cpu']:.2f} cores |")

    print(f"\n### Push refusals with random phase points ({v('events_per_sandbox_per_h'):g} events per sandbox "
          "per hour; share of push attempts the forge refuses, pushes a minute offered)\n")
    factors = (1, 1.5, 2, 3)
    print("| clones on one repository | " + " | ".join(f"interval {f:g} x N x 60 / budget" for f in factors) + " |")
    print("|---|" + "---|" * len(factors))
    for n in (15, 25, 100):
        cells = []
        for f in factors:
            share, rate = refused_share(n, f, v)
            cells.append(f"{100 * share:.1f}% ({rate:.1f}/min)")
        print(f"| {n} | " + " | ".join(cells) + " |")

    print(f"\n### Sharded: {v('clones_per_shard')} sandboxes per coordination repository, relays between them "
          f"({v('events_per_sandbox_per_h'):g} events per sandbox per hour)\n")
    print("| sandboxes | shards | relays (hub?) | `minPushInterval` (sandbox) | sync every | relay cycle | "
          "pushes/min per shard | fetches/s per shard | events per fetch | bytes per fetch | refs per shard | "
          "reach one clone p50 | reach every clone (p95) | events each clone holds after a day | forge egress, all shards | "
          "forge pack CPU, all shards |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        s = sharded(n, v)
        hub = f"{s['relays']} (hub, interval {dur(s['hub_interval'])})" if s["relays"] > 1 else "1 (no hub)"
        print(f"| {n:,} | {s['shards']} | {hub} | {dur(s['interval'])} | {dur(s['cadence'])} | {dur(s['cycle'])} | "
              f"{s['pushes_min']:.1f} | {s['fetch_s']:.1f} | {s['ev_per_fetch']:.0f} | {size(s['bytes_per_fetch'])} | "
              f"{s['refs']} | {dur(s['reach_p50'])} | {dur(s['reach_all'])} | {s['events_per_clone_day']:,.0f} | "
              f"{size(s['egress_total'])}/s | {s['server_cpu']:.2f} cores |")


if __name__ == "__main__":
    main()
