//! Suites embedded in the binary. `fsbench suite show NAME` prints the TOML so users can copy it,
//! change it and run it with `--workload FILE`.

/// An embedded suite.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedSuite {
    /// Name used by `--suite`.
    pub name: &'static str,
    /// One line for `fsbench suite list`.
    pub summary: &'static str,
    /// The suite's TOML source.
    pub toml: &'static str,
}

/// All embedded suites.
pub const SUITES: &[EmbeddedSuite] = &[
    EmbeddedSuite {
        name: "unit14",
        summary:
            "the 14 data-intensive unit tests of the 2005 ZFS/UFS study (incl. uncached 5 and 13)",
        toml: include_str!("unit14.toml"),
    },
    EmbeddedSuite {
        name: "metadata",
        summary: "create, stat, read (random order), delete N files: deep tree and flat",
        toml: include_str!("metadata.toml"),
    },
    EmbeddedSuite {
        name: "images",
        summary:
            "image store: skewed 10K-150K files in a 100x100 tree, fill to 90%, purge 20%, refill",
        toml: include_str!("images.toml"),
    },
    EmbeddedSuite {
        name: "mail",
        summary: "varmail-like mail server: delete, create+fsync, read, append+fsync; 16 threads",
        toml: include_str!("mail.toml"),
    },
    EmbeddedSuite {
        name: "postmark",
        summary: "PostMark 1.51 defaults: 500 files, 500 transactions",
        toml: include_str!("postmark.toml"),
    },
    EmbeddedSuite {
        name: "untar",
        summary: "extract a kernel-source-shaped tree (~70k files, ~4.4k dirs), sync included",
        toml: concat!(include_str!("untar.toml"), "\n", include_str!("untar_tests.toml")),
    },
    EmbeddedSuite {
        name: "rmtree",
        summary: "rm -rf of a kernel-source-shaped tree, sync included",
        toml: concat!(include_str!("rmtree.toml"), "\n", include_str!("rmtree_tests.toml")),
    },
    EmbeddedSuite {
        name: "stream",
        summary: "seed 001: durable streaming write (dd conv=fsync), cold read, untar, rm -rf",
        toml: concat!(
            include_str!("stream.toml"),
            include_str!("untar_tests.toml"),
            "\n",
            include_str!("rmtree_tests.toml")
        ),
    },
    EmbeddedSuite {
        name: "rm65536",
        summary: "remove 65,536 files from one directory, then sync",
        toml: include_str!("rm65536.toml"),
    },
    EmbeddedSuite {
        name: "starve",
        summary: "a reader's latency (random 4K; whole file) beside a streaming writer with fsync",
        toml: include_str!("starve.toml"),
    },
    EmbeddedSuite {
        name: "bonnie",
        summary:
            "bonnie++ 2.00a: per-char and block write/rewrite/read, 5 seekers, create/stat/delete",
        toml: include_str!("bonnie.toml"),
    },
];

/// Look a suite up by name.
pub fn get(name: &str) -> Option<&'static EmbeddedSuite> {
    SUITES.iter().find(|s| s.name == name)
}

/// Names of all embedded suites.
pub fn names() -> Vec<&'static str> {
    SUITES.iter().map(|s| s.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::*;
    use crate::model::scale::Scale;
    use crate::workload::{ResolveCtx, SuiteSource};

    fn unit14(scale: Scale) -> Suite {
        let ctx = ResolveCtx { scale, free_memory: 8 << 30 };
        crate::workload::load(&SuiteSource::Embedded("unit14".into()), &ctx).unwrap()
    }

    #[test]
    fn every_embedded_suite_resolves() {
        for s in SUITES {
            let ctx = ResolveCtx { scale: Scale::Quick, free_memory: 1 << 30 };
            crate::workload::load(&SuiteSource::Embedded(s.name.into()), &ctx)
                .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
    }

    #[test]
    fn unit14_matches_the_paper() {
        let s = unit14(Scale::Paper);
        assert_eq!(s.tests.len(), 14);
        let t = |id: &str| s.tests.iter().find(|t| t.id == id).unwrap().clone();
        const M: u64 = 1 << 20;

        let t1 = t("1");
        assert_eq!(t1.files.size_bytes(), 128 * M);
        assert!(!t1.files.prefill);
        assert_eq!(t1.phases[0].pattern.data()[0].size, SizeDist::Fixed(M));
        assert!(t1.phases[0].open.create);

        let t2 = t("2");
        assert!(t2.phases[0].open.dsync);
        assert_eq!(t2.files.size_bytes(), 5 * M);
        assert_eq!(t2.phases[0].pattern.data()[0].size, SizeDist::Fixed(128 << 10));

        let t3 = t("3");
        assert_eq!(t3.phases[0].pattern.data()[0].size, SizeDist::Uniform(1024, 8192));
        assert_eq!(t3.phases[0].sync.every_bytes, Some(10 * M));
        assert_eq!(t3.phases[0].sync.call, Some(SyncCall::Fsync));

        assert_eq!(t("4").phases[0].cache, CacheReq::Cached);
        assert_eq!(t("5").phases[0].cache, CacheReq::Uncached);
        assert_eq!(t("5").files.size_bytes(), 1 << 30);

        let t6 = t("6");
        assert!(t6.phases[0].open.dsync && !t6.phases[0].open.create);
        assert_eq!(t6.phases[0].cache, CacheReq::Uncached);

        assert_eq!(t("7").files.size_bytes(), 1000 * M);

        let t8 = t("8");
        assert_eq!(t8.files.size_bytes(), 4 << 30, "half of the 8 GiB free memory");
        assert_eq!(t8.phases.len(), 2);
        assert_eq!(t8.phases[1].amount, Amount::Passes(2));
        assert!(t8.phases.iter().all(|p| p.timed));

        let t9 = t("9");
        assert_eq!(t9.phases[0].amount, Amount::Bytes(128 * M));
        assert_eq!(t9.phases[0].pattern.data()[0].align, 8192);
        assert_eq!(t9.phases[0].sync.at_end, Some(SyncCall::Fsync));

        let t10 = t("10");
        assert_eq!(t10.threads, 1);
        assert_eq!(t10.phases[0].pattern.data()[0].align, 1, "unaligned");
        let t11 = t("11");
        assert_eq!(t11.threads, 4);
        assert!(t11.files.shared);
        assert_eq!(t11.phases[0].cache, CacheReq::Uncached);

        let t12 = t("12");
        let kinds: Vec<_> =
            t12.phases[0].pattern.data().iter().map(|o| (o.kind, o.offset)).collect();
        assert_eq!(
            kinds,
            vec![
                (OpKind::Read, OffsetMode::Random),
                (OpKind::Read, OffsetMode::Random),
                (OpKind::Read, OffsetMode::Random),
                (OpKind::Write, OffsetMode::Last),
            ]
        );

        for id in ["13", "14"] {
            let x = t(id);
            assert_eq!(x.threads, 4);
            assert_eq!(x.phases[0].amount, Amount::Bytes(5 * M));
            assert_eq!(x.phases[0].pattern.data()[0].size, SizeDist::Fixed(2048));
        }
        assert_eq!(t("13").phases[0].cache, CacheReq::Uncached);
        assert_eq!(t("14").phases[0].cache, CacheReq::Cached);
    }

    #[test]
    fn quick_scale_shrinks_files_not_ops() {
        let s = unit14(Scale::Quick);
        let t4 = s.tests.iter().find(|t| t.id == "4").unwrap();
        assert_eq!(t4.files.size_bytes(), 256 << 20);
        assert_eq!(t4.phases[0].pattern.data()[0].size, SizeDist::Fixed(32 << 10));
        let t10 = s.tests.iter().find(|t| t.id == "10").unwrap();
        assert_eq!(t10.phases[0].amount, Amount::Bytes(1 << 20), "small amounts kept");
    }

    /// The `bonnie` suite does what bonnie++ 2.00a does with its defaults (its source, and strace
    /// of a run: bench/results/*-vs-bonnie.md), at every scale: 8 KiB chunks; 3 MiB written and
    /// read one byte per call; every writing phase ending in fsync; rewrite and read uncached
    /// (bonnie++'s file of twice the RAM); 5 seekers sharing 8,192 seeks, a tenth written back,
    /// each fsyncing at its end; -n 16 (4 at quick) files, created and deleted with a sync
    /// inside the timing, named with bonnie++'s mean name length.
    #[test]
    fn bonnie_matches_bonnie_2_00a() {
        const K: u64 = 1 << 10;
        const M: u64 = 1 << 20;
        for (scale, file, files) in
            [(Scale::Paper, 1 << 30, 16 * 1024), (Scale::Quick, 256 * M, 4 * 1024)]
        {
            let ctx = ResolveCtx { scale, free_memory: 8 << 30 };
            let s = crate::workload::load(&SuiteSource::Embedded("bonnie".into()), &ctx).unwrap();
            let t = |id: &str| s.tests.iter().find(|t| t.id == id).unwrap().clone();
            let ids: Vec<&str> = s.tests.iter().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, ["char", "block", "seeks", "files-seq", "files-rand"]);
            // One pass of each phase, as bonnie++: --min-time never lengthens them.
            assert!(s.tests.iter().all(|t| !t.min_time), "bonnie's tests say min_time = false");
            let data = |p: &PhaseDef| {
                p.pattern.data().iter().map(|o| (o.kind, o.size, o.offset)).collect::<Vec<_>>()
            };

            // Per Chr: 3 MiB at every scale, one byte per write(2)/read(2), fsync, then uncached.
            let c = t("char");
            assert_eq!((c.files.size_bytes(), c.threads), (3 * M, 1), "{scale:?}");
            assert_eq!(
                data(&c.phases[0]),
                [(OpKind::Write, SizeDist::Fixed(1), OffsetMode::Sequential)]
            );
            assert_eq!(c.phases[0].sync.at_end, Some(SyncCall::Fsync));
            assert!(c.phases[0].open.create && c.phases[0].open.trunc);
            assert_eq!(
                data(&c.phases[1]),
                [(OpKind::Read, SizeDist::Fixed(1), OffsetMode::Sequential)]
            );
            assert_eq!(c.phases[1].cache, CacheReq::Uncached);

            // Block: bonnie++ -s (1 GiB, 256 MiB at quick) in 8 KiB chunks, one pass each.
            let b = t("block");
            assert_eq!((b.files.size_bytes(), b.threads), (file, 1), "{scale:?}");
            let names: Vec<&str> = b.phases.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names, ["write", "rewrite", "read"]);
            assert!(b.phases.iter().all(|p| p.amount == Amount::Passes(1) && p.timed));
            assert_eq!(
                data(&b.phases[0]),
                [(OpKind::Write, SizeDist::Fixed(8 * K), OffsetMode::Sequential)]
            );
            assert_eq!(
                data(&b.phases[1]),
                [
                    (OpKind::Read, SizeDist::Fixed(8 * K), OffsetMode::Sequential),
                    (OpKind::Write, SizeDist::Fixed(8 * K), OffsetMode::Last)
                ]
            );
            let syncs: Vec<_> = b.phases.iter().map(|p| p.sync.at_end).collect();
            assert_eq!(syncs, [Some(SyncCall::Fsync), Some(SyncCall::Fsync), None]);
            let caches: Vec<_> = b.phases.iter().map(|p| p.cache).collect();
            assert_eq!(caches, [CacheReq::Any, CacheReq::Uncached, CacheReq::Uncached]);

            // Seeks: 5 threads on the shared file; per thread 1,802 ops = 163 cycles of 10
            // random 8K-aligned reads and a write back, and 9 reads: 5 x 1,639 = 8,195 seeks.
            let k = t("seeks");
            assert_eq!((k.threads, k.files.shared, k.files.size_bytes()), (5, true, file));
            let p = &k.phases[0];
            assert_eq!(
                (p.cache, p.amount, p.sync.at_end),
                (CacheReq::Uncached, Amount::Ops(1802), Some(SyncCall::Fsync))
            );
            let ops = p.pattern.data();
            assert_eq!(ops.len(), 11);
            assert!(ops[..10].iter().all(|o| o.kind == OpKind::Read
                && o.offset == OffsetMode::Random
                && o.align == 8 * K
                && o.size == SizeDist::Fixed(8 * K)));
            assert_eq!((ops[10].kind, ops[10].offset), (OpKind::Write, OffsetMode::Last));
            let reads = 163 * 10 + 9;
            assert_eq!(163 * 11 + 9, 1802);
            assert_eq!(5 * reads, 8195, "bonnie++: 8,192");

            // Files: -n 16 (quick: -n 4), empty, one directory; create and delete end with a
            // sync; names as long as bonnie++'s on average (10 hex digits + 0..12 characters).
            for (id, pick) in [("files-seq", Pick::Next), ("files-rand", Pick::Shuffle)] {
                let f = t(id);
                assert_eq!(
                    (f.files.count, f.files.size.max(), f.files.layout),
                    (files, 0, Layout::Flat),
                    "{id} {scale:?}"
                );
                let mean_digits =
                    (0..files).map(|i| i.to_string().len() as f64).sum::<f64>() / files as f64;
                let mean_name = f.files.name_prefix.len() as f64 + mean_digits;
                assert!((mean_name - 16.0).abs() < 0.5, "{id}: mean name length {mean_name}");
                let kinds: Vec<_> = f
                    .phases
                    .iter()
                    .map(|p| match &p.pattern {
                        Pattern::Files(e) => (e[0].choices[0].1.kind, e[0].choices[0].1.pick),
                        Pattern::Data(_) => panic!("{id}: a fileset test"),
                    })
                    .collect();
                assert_eq!(
                    kinds,
                    [(OpKind::Create, pick), (OpKind::Stat, pick), (OpKind::Unlink, pick)]
                );
                let syncs: Vec<_> = f.phases.iter().map(|p| p.sync.at_end).collect();
                assert_eq!(syncs, [Some(SyncCall::Syncfs), None, Some(SyncCall::Syncfs)], "{id}");
            }
        }
    }
}
