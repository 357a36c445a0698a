//! The environment record of a testbed: what was created, with which tool, and the mount
//! options actually in effect (the tool's version is its plug-in's,
//! [`super::fs::Filesystem::tool_version`]; here are the zfs properties in effect).

/// Effective values of `names` on zfs dataset `dataset` (`zfs get -H -o property,value`).
pub fn zfs_properties(dataset: &str, names: &[String]) -> Vec<(String, String)> {
    if names.is_empty() {
        return Vec::new();
    }
    let get = super::zfs_watch::zcmd("zfs").args([
        "get",
        "-H",
        "-o",
        "property,value",
        &names.join(","),
        dataset,
    ]);
    let out = super::zfs_watch::run(get, Some(dataset.split('/').next().unwrap_or(dataset)));
    out.map(|o| {
        o.lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use crate::model::testbed::{FsName, TestbedEnv};

    #[test]
    fn summary_line_shows_requested_and_effective_options() {
        let e = TestbedEnv {
            kind: FsName("ext4".into()),
            label: "wb".into(),
            config: "ext4:mount=data=writeback".into(),
            mkfs_cmdline: Some("mkfs.ext4 -F -q /dev/loop3".into()),
            post_create_cmdlines: vec![],
            tool_version: Some("mke2fs 1.47.0".into()),
            fstype: "ext4".into(),
            mount_source: "/dev/loop3".into(),
            mount_options: "rw,relatime".into(),
            super_options: "rw,data=writeback".into(),
            zfs_properties: vec![],
            device_size_bytes: 1 << 30,
            devices: 1,
            backing: "1 fallocated image(s)".into(),
            block_devices: vec!["loop3".into()],
            io_scheduler: Some("mq-deadline".into()),
        };
        let l = e.summary_line();
        assert!(l.starts_with("requested ext4:mount=data=writeback; mkfs.ext4"), "{l}");
        assert!(l.contains("in effect: ext4 rw,relatime (superblock: rw,data=writeback)"), "{l}");
        assert!(l.ends_with("; I/O scheduler mq-deadline"), "{l}");
        let z = TestbedEnv {
            zfs_properties: vec![("compression".into(), "on".into())],
            super_options: String::new(),
            io_scheduler: None,
            ..e
        };
        assert!(z.summary_line().ends_with("; zfs compression=on"), "{}", z.summary_line());
    }
}
