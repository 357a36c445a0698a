#!/usr/bin/env python3
"""How `fsbench diff` does on pairs of identical runs made at different times, and what it finds.

Usage: bench/diff-power.py OUTDIR FSBENCH [DIFF_ARGS...]

OUTDIR is a bench/flips.sh output (pairN/results.sqlite: two identical compares each). For each
pair, `FSBENCH diff 1 2` with DIFF_ARGS (for example `--run-spread 0`):
  - alone: the pair's own database (no other runs of the tests: the assumed --run-spread);
  - with history: every pair's runs merged into one database, so each diff measures each test's
    run-to-run spread from the 18 runs of the other pairs.
Then the same diffs with one figure of the second run scaled down by 20%, 30% and 50% (six
figures: ext4 tests 1, 4, 9 and xfs tests 2, 7, 12, in every pair): how often that figure is
flagged as a regression. Copies are made in a temp directory; OUTDIR is only read.
"""
import glob, json, os, sqlite3, subprocess, sys, tempfile

out, fsbench, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
pairs = sorted(glob.glob(os.path.join(out, "pair*", "results.sqlite")),
               key=lambda p: int(os.path.basename(os.path.dirname(p))[4:]))
tmp = tempfile.mkdtemp(prefix="diff-power-")
FIGURES = [("ext4", "1"), ("ext4", "4"), ("ext4", "9"), ("xfs", "2"), ("xfs", "7"), ("xfs", "12")]


def copy(src, dst):
    """A consistent copy (the source may have a write-ahead log), in rollback-journal mode."""
    for f in (dst, dst + "-wal", dst + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    s, d = sqlite3.connect(src), sqlite3.connect(dst)
    s.backup(d)
    d.execute("pragma journal_mode=delete")
    d.close()
    s.close()


def merged(dst):
    """Every pair's runs in one database: pair k's runs become runs 2k-1 and 2k."""
    copy(pairs[0], dst)
    o = sqlite3.connect(dst)
    for t in ("reps", "tests", "configs", "runs"):
        o.execute(f"delete from {t}")
    cols = lambda c, t: [r[1] for r in c.execute(f"pragma table_info({t})")]
    ins = lambda t, cs, vals: o.execute(
        f"insert into {t} ({','.join(cs)}) values ({','.join('?' * len(cs))})", vals)
    rid = 0
    for db in pairs:
        c = sqlite3.connect(db)
        for run in c.execute("select * from runs order by id").fetchall():
            rid += 1
            ins("runs", cols(c, "runs"), (rid,) + tuple(run[1:]))
            cc = cols(c, "configs")
            for cf in c.execute("select * from configs where run_id = ?", (run[0],)).fetchall():
                cid = ins("configs", cc[1:], (rid,) + tuple(cf[2:])).lastrowid
                tc = cols(c, "tests")
                for t in c.execute("select * from tests where config_id = ?", (cf[0],)).fetchall():
                    tid = ins("tests", tc[1:], (cid,) + tuple(t[2:])).lastrowid
                    rc = cols(c, "reps")
                    for r in c.execute("select * from reps where test_row_id = ?", (t[0],)).fetchall():
                        ins("reps", rc[1:], (tid,) + tuple(r[2:]))
    o.commit()
    o.close()


def scale(db, run, label, test, f):
    c = sqlite3.connect(db)
    rows = c.execute(
        "select r.id, r.rep_json from reps r join tests t on r.test_row_id = t.id join configs c"
        " on t.config_id = c.id where c.run_id = ? and c.label like ? and t.test_id = ?",
        (run, label + "%", test)).fetchall()
    for i, j in rows:
        j = json.loads(j)
        j["mib_per_s"] *= f
        j["ops_per_s"] *= f
        c.execute("update reps set mib_per_s = mib_per_s * ?, ops_per_s = ops_per_s * ?,"
                  " rep_json = ? where id = ?", (f, f, json.dumps(j), i))
    c.commit()
    c.close()


def diff(db, a, b):
    return subprocess.run([fsbench, "diff", str(a), str(b), "--db", db] + extra,
                          capture_output=True, text=True).stdout


def flagged(text, label, test):
    for line in text.splitlines():
        cells = [x.strip(" │") for x in line.split("┆")]
        if len(cells) >= 7 and cells[0] == test and cells[2].startswith(label):
            return cells[-1].startswith("REGRESSION")
    return False


def counts(text):
    import re
    m = re.search(r"(\d+) compared: (\d+) regressed significantly, (\d+) improved", text)
    return (int(m.group(2)), int(m.group(3)), int(m.group(1))) if m else (0, 0, 0)


hist = os.path.join(tmp, "all.sqlite")
merged(hist)
one = os.path.join(tmp, "one.sqlite")
print(f"| setting | A/A: regressed, improved (of compared) | 20% drop found | 30% | 50% |")
print("|---|---|---|---|---|")
for name in ("alone", "with history"):
    reg = imp = comp = 0
    for k, db in enumerate(pairs, 1):
        if name == "alone":
            copy(db, one)
            r = counts(diff(one, 1, 2))
        else:
            r = counts(diff(hist, 2 * k - 1, 2 * k))
        reg, imp, comp = reg + r[0], imp + r[1], comp + r[2]
    found = []
    for f in (0.8, 0.7, 0.5):
        hit = n = 0
        for k, db in enumerate(pairs, 1):
            for label, test in FIGURES:
                if name == "alone":
                    copy(db, one)
                    scale(one, 2, label, test, f)
                    hit += flagged(diff(one, 1, 2), label, test)
                else:
                    copy(hist, one)
                    scale(one, 2 * k, label, test, f)
                    hit += flagged(diff(one, 2 * k - 1, 2 * k), label, test)
                n += 1
        found.append(f"{hit}/{n}")
    print(f"| {name} {' '.join(extra)} | {reg}, {imp} (of {comp}) | " + " | ".join(found) + " |",
          flush=True)
for f in glob.glob(os.path.join(tmp, "*")):
    os.remove(f)
os.rmdir(tmp)
