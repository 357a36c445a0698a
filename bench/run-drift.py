#!/usr/bin/env python3
"""How far each test's ratio moves between identical compares, beyond what one run's rounds show.

Usage: bench/run-drift.py OUTDIR [ROUNDS_FILE]

OUTDIR is a bench/flips.sh output (pairN/results.sqlite, two compares of two configurations
each). Per test, over every run: the ratio (second configuration / first, geometric mean over
runs), the standard deviation of the runs' mean log ratios ("between"), the mean standard error
of a run's mean log ratio from its own rounds ("within"), and the per-run shift beyond it,
sqrt(between^2 - within^2) ("drift"). The decision rule's settled win leaves room for this drift
(Rule::run_drift in src/model/verdict.rs).

With ROUNDS_FILE, also writes every run's paired rounds (one line per run and test: run, test id,
first configuration's figures, second's) for the re-decision probe:
    FSBENCH_ROUNDS=ROUNDS_FILE cargo test --lib the_flipped_settled -- --nocapture
"""
import glob, math, os, sqlite3, statistics as st, sys

out = sys.argv[1]
rounds_file = open(sys.argv[2], "w") if len(sys.argv) > 2 else None
per_test = {}
for db in sorted(glob.glob(os.path.join(out, "pair*", "results.sqlite"))):
    c = sqlite3.connect(db)
    pair = os.path.basename(os.path.dirname(db))
    for (rid,) in c.execute("select id from runs where kind = 'compare' order by id").fetchall():
        cfg = c.execute("select id from configs where run_id = ? order by position", (rid,)).fetchall()
        if len(cfg) != 2:
            continue
        tests = c.execute("select test_id, figure from tests where config_id = ? order by position",
                          (cfg[0][0],)).fetchall()
        for tid, fig in tests:
            side = []
            for (ci,) in cfg:
                rows = c.execute(
                    "select r.rep_index, r.mib_per_s, r.ops_per_s from reps r join tests t"
                    " on r.test_row_id = t.id where t.config_id = ? and t.test_id = ? and r.complete",
                    (ci, tid)).fetchall()
                side.append({i: (o if fig == "ops_per_s" else m) for i, m, o in rows})
            both = [i for i in sorted(side[0]) if i in side[1] and side[0][i] > 0 and side[1][i] > 0]
            if len(both) < 2:
                continue
            lr = [math.log(side[1][i] / side[0][i]) for i in both]
            per_test.setdefault(tid, []).append(lr)
            if rounds_file:
                a = ",".join(repr(side[0][i]) for i in both)
                b = ",".join(repr(side[1][i]) for i in both)
                rounds_file.write(f"{pair}-{rid} {tid} {a} {b}\n")

print("| test | runs | ratio | between | within | drift |")
print("|---|---|---|---|---|---|")
for tid in sorted(per_test, key=lambda t: (len(t), t)):
    runs = per_test[tid]
    means = [st.mean(r) for r in runs]
    within = st.mean([st.stdev(r) / math.sqrt(len(r)) for r in runs])
    between = st.stdev(means) if len(means) > 1 else float("nan")
    drift = math.sqrt(max(0.0, between ** 2 - within ** 2))
    print(f"| {tid} | {len(runs)} | {math.exp(st.mean(means)):.3f} | {between:.3f} | {within:.3f} | {drift:.3f} |")
