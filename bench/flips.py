#!/usr/bin/env python3
"""Summarise bench/flips.sh OUTDIR [FSBENCH]: per pair, verdicts that differ between the two
identical runs (flips), tests `fsbench diff` flags as regressed (A/A false positives), wall time
and load of each run; over all runs, first repetition / median of the others per test and
configuration. With FSBENCH, verdicts and diffs are decided again from the recorded repetitions
by that binary (`fsbench show N --format json`, `fsbench diff 1 2`): a newer decision rule on
the same measurements.
"""
import json, re, statistics, subprocess, sys, os

out = sys.argv[1]
redecide = sys.argv[2] if len(sys.argv) > 2 else None
log = open(os.path.join(out, "log")).read().splitlines()
walls, loads = {}, {}
for l in log:
    m = re.match(r"pair (\d+) run (\d) (start|end) \S+ (?:rc (\d+) wall (\S+) load )?(\S+) (\S+) (\S+)", l)
    if m:
        key = (int(m[1]), int(m[2]))
        loads.setdefault(key, []).append(m[6])
        if m[3] == "end":
            walls[key] = (float(m[5]), int(m[4]))


def verdict(v):
    if v is None:
        return None
    if v["outcome"] == "win":
        return ("win", v["winner"], v["tested"])
    return (v["outcome"],)


ratios = {}  # (label, test) -> list of first/median(others)
later = []  # any later repetition / median of the others
stops = {}  # (repetitions, what stopped --repeat auto) -> tests
flips_total, pairs_done, fp_total = 0, 0, 0
settled_contradicted, pairs_settled_agree, unsettled_wins, settled_wins = 0, 0, 0, 0
pairs_all_agree, pairs_agree_but_marked = 0, 0
print("| pair | flips (of 14; of them compared↔not) | flipped tests | diff: regressed (of 28) | wall run 1 / run 2 (s) | load 1-min before→after run 1; run 2 |")
print("|---|---|---|---|---|---|")
for p in range(1, 100):
    d = os.path.join(out, f"pair{p}")
    if not os.path.isdir(d):
        break
    runs = []
    db = os.path.join(d, "results.sqlite")
    for k in (1, 2):
        try:
            if redecide:
                j = subprocess.run([redecide, "show", str(k), "--format", "json", "--db", db],
                                   capture_output=True, check=True).stdout
                runs.append(json.loads(j))
            else:
                runs.append(json.load(open(os.path.join(d, f"run{k}.json"))))
        except Exception:
            runs.append(None)
    for r in runs:
        if not r:
            continue
        for c in r["configs"]:
            for t in c["run"]["tests"]:
                xs = [rep["mib_per_s"] if t.get("figure", "mib_per_s") == "mib_per_s" else rep["ops_per_s"]
                      for rep in t["reps"] if rep["complete"]]
                if len(xs) >= 3 and xs[0] > 0:
                    ratios.setdefault((c["label"], t["id"]), []).append(xs[0] / statistics.median(xs[1:]))
                    for k in range(1, len(xs)):
                        later.append(xs[k] / statistics.median(xs[:k] + xs[k + 1:]))
                for w in t.get("warnings", []):
                    if w.get("kind") == "repetitions":
                        stops[(w["count"], w["stopped_by"])] = stops.get((w["count"], w["stopped_by"]), 0) + 1
    if None in runs:
        print(f"| {p} | (incomplete) | | | | |")
        continue
    v1 = {t["id"]: verdict(t["vs_baseline"][1]) for t in runs[0]["tests"]}
    v2 = {t["id"]: verdict(t["vs_baseline"][1]) for t in runs[1]["tests"]}
    flipped = [i for i in v1 if v1[i] != v2.get(i)]
    # Wins the run marked unsettled (significant, not beyond the minimum effect at the strict
    # level at which --repeat auto stops a test): an identical run may call them a draw.
    u1 = {t["id"]: bool(t.get("unsettled", [False, False])[1]) for t in runs[0]["tests"]}
    u2 = {t["id"]: bool(t.get("unsettled", [False, False])[1]) for t in runs[1]["tests"]}
    def settled_win(v, u):
        return v is not None and v[0] == "win" and not u
    contra = [i for i in flipped if settled_win(v1[i], u1[i]) or settled_win(v2.get(i), u2.get(i))]
    settled_contradicted += len(contra)
    pairs_settled_agree += not contra
    pairs_all_agree += not flipped
    # Agreement up to what the outputs mark: an unsettled win against a draw of the same test
    # is what the mark says may happen.
    def compatible(i):
        a, b = v1[i], v2.get(i)
        marked = lambda v, u: v is not None and v[0] == "win" and u
        draw = lambda v: v is not None and v[0] == "draw"
        return (marked(a, u1[i]) and draw(b)) or (marked(b, u2.get(i)) and draw(a))
    pairs_agree_but_marked += all(compatible(i) for i in flipped)
    for vv, uu in ((v1, u1), (v2, u2)):
        for i in vv:
            if vv[i] is not None and vv[i][0] == "win":
                if uu[i]:
                    unsettled_wins += 1
                else:
                    settled_wins += 1
    nc = sum(1 for i in flipped if "not_compared" in (v1[i] or ("",))[0] + (v2.get(i) or ("",))[0])
    if redecide:
        diff = subprocess.run([redecide, "diff", "1", "2", "--db", db], capture_output=True, text=True).stdout
    else:
        diff = open(os.path.join(d, "diff.txt")).read() if os.path.exists(os.path.join(d, "diff.txt")) else ""
    m = re.search(r"(\d+) compared: (\d+) regressed significantly, (\d+) improved", diff)
    reg = f"{m[2]} (improved {m[3]}, of {m[1]})" if m else "?"
    if m:
        fp_total += int(m[2])
    flips_total += len(flipped)
    pairs_done += 1
    w = " / ".join(f"{walls.get((p, k), ('?',))[0]:.0f}" for k in (1, 2))
    ld = "; ".join("→".join(loads.get((p, k), [])) for k in (1, 2))
    marked = lambda i: i + ("*" if i in contra else "")
    print(f"| {p} | {len(flipped)} ({nc} compared↔not compared) | {', '.join(map(marked, flipped))} | {reg} | {w} | {ld} |")
print(f"\npairs complete: {pairs_done}; flips in total: {flips_total}; diff regressions in total: {fp_total}")
print(f"wins: {settled_wins} settled, {unsettled_wins} marked unsettled; flips of a settled win (* above): "
      f"{settled_contradicted}; pairs with no settled win contradicted: {pairs_settled_agree} of {pairs_done}")
print(f"pairs agreeing on every verdict: {pairs_all_agree} of {pairs_done}; on every verdict but "
      f"unsettled wins that were draws in the other run: {pairs_agree_but_marked} of {pairs_done}")
print("\nfirst repetition / median of the others (per run; runs with >= 3 repetitions):")
allr = []
for (label, tid), rs in sorted(ratios.items(), key=lambda x: (x[0][0], int(x[0][1]) if x[0][1].isdigit() else 0)):
    allr += rs
    print(f"  {label:5} test {tid:>2}: " + " ".join(f"{r:.2f}" for r in rs))
if allr:
    allr.sort()
    q = lambda f: allr[min(len(allr) - 1, int(f * len(allr)))]
    print(f"  all {len(allr)}: median {statistics.median(allr):.2f}, 10th pct {q(0.1):.2f}, 90th pct {q(0.9):.2f}, "
          f"below 0.8: {sum(r < 0.8 for r in allr)}, above 1.25: {sum(r > 1.25 for r in allr)}")
if later:
    later.sort()
    q = lambda f: later[min(len(later) - 1, int(f * len(later)))]
    print(f"  any later repetition / median of the others, {len(later)}: median {statistics.median(later):.2f}, "
          f"10th pct {q(0.1):.2f}, 90th pct {q(0.9):.2f}")
if stops:
    print("\n--repeat auto: tests by (repetitions, what stopped them), over every run and configuration:")
    for (n, why), c in sorted(stops.items()):
        print(f"  {n} repetitions, stopped by {why}: {c}")
