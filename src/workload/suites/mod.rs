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
        summary: "bonnie++ phases: block write/rewrite/read, seeks, seq/random create/stat/delete",
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
}
