//! Bring up a testbed through the testbed layer, print its mount point, and keep it until
//! stdin reaches end of file (then tear it down). For measuring by hand, e.g. the profile
//! recipe of GUIDE.md:
//!
//! ```text
//! mkfifo /tmp/hold; sleep infinity > /tmp/hold & HOLDER=$!
//! cargo run --release --example testbed_hold -- ext4 /var/tmp/demo 2G < /tmp/hold &
//! ... use the mount point printed ...
//! kill $HOLDER    # end of file: the testbed is removed
//! ```
use fsbench::testbed::{FsConfig, Testbed, TestbedOptions};
use std::io::Read;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (spec, workdir, size) = match args.as_slice() {
        [_, s, w, z] => (s, w, z),
        _ => anyhow::bail!("usage: testbed_hold FSCONFIG WORKDIR SIZE"),
    };
    let size = parse_size::parse_size(size)?;
    std::fs::create_dir_all(workdir)?;
    let opts = TestbedOptions { workdir: workdir.into(), size_bytes: size, ..Default::default() };
    let tb = Testbed::up(&FsConfig::parse(spec)?, &opts)?;
    println!("{}", tb.mountpoint().display());
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    tb.teardown()?;
    Ok(())
}
