//! The completion bookkeeping against a fake ring that completes requests short, out of order,
//! with EAGAIN and with errors; and the real ring on a file.

use super::*;
use std::collections::VecDeque;

/// What the fake does with each pushed request, in push order.
#[derive(Clone, Copy, Debug)]
enum Script {
    /// Complete fully.
    Full,
    /// Complete with this many bytes.
    Short(usize),
    /// Complete with this result (`-errno`).
    Res(i32),
}

#[derive(Default)]
struct FakeRing {
    /// Pushed, not submitted.
    sq: Vec<Io>,
    /// Submitted, completing in the order of `order` (indices into `submitted`).
    submitted: Vec<Io>,
    cq: VecDeque<(u64, i32)>,
    script: VecDeque<Script>,
    /// Every request as pushed (to check resubmissions).
    log: Vec<Io>,
    /// Complete the newest submitted request first (out of order).
    lifo: bool,
    enters: usize,
    /// Buffers handed to `register_buffers`.
    registered: Vec<(*mut u8, usize)>,
    /// When `Some(n)`: a submission queue of `n` entries whose entries are released only by
    /// `wait_for_room` (one each), as an SQ poller that lags behind its completions.
    sq_cap: Option<usize>,
    /// Entries released so far (with `sq_cap`).
    room: usize,
    waits: usize,
}

// SAFETY: test-only; the fake is used in the thread that made it.
unsafe impl Send for FakeRing {}

thread_local! {
    static SETUP: std::cell::RefCell<Option<(Vec<Script>, bool)>> = const { std::cell::RefCell::new(None) };
}

impl Ring for FakeRing {
    fn new(_entries: u32, _opts: &UringOpts) -> io::Result<Self> {
        let (script, lifo) = SETUP.with(|s| s.borrow_mut().take()).unwrap_or_default();
        Ok(FakeRing { script: script.into(), lifo, ..Default::default() })
    }
    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        self.registered.extend_from_slice(bufs);
        Ok(())
    }
    unsafe fn push(&mut self, io: &Io) -> io::Result<bool> {
        if let Some(cap) = self.sq_cap {
            // Entries in use: every push so far minus the ones released.
            if self.log.len() >= cap + self.room {
                return Ok(false);
            }
        }
        self.sq.push(*io);
        self.log.push(*io);
        Ok(true)
    }
    fn submit_and_wait(&mut self, want: usize) -> io::Result<()> {
        self.enters += 1;
        self.submitted.append(&mut self.sq);
        // Complete everything submitted (the kernel may complete more than asked).
        let _ = want;
        while !self.submitted.is_empty() {
            let io = if self.lifo { self.submitted.pop() } else { Some(self.submitted.remove(0)) };
            let Some(io) = io else { break };
            let res = match self.script.pop_front().unwrap_or(Script::Full) {
                Script::Full => io.len as i32,
                Script::Short(n) => n as i32,
                Script::Res(r) => r,
            };
            self.cq.push_back((u64::from(io.tag), res));
        }
        Ok(())
    }
    fn wait_for_room(&mut self) -> io::Result<()> {
        self.waits += 1;
        self.room += 1;
        Ok(())
    }
    fn pop(&mut self) -> Option<(u64, i32)> {
        self.cq.pop_front()
    }
}

fn engine(script: &[Script], lifo: bool, depth: u32) -> Uring<FakeRing> {
    engine_with(script, lifo, depth, &UringOpts::default())
}

fn engine_with(script: &[Script], lifo: bool, depth: u32, o: &UringOpts) -> Uring<FakeRing> {
    SETUP.with(|s| *s.borrow_mut() = Some((script.to_vec(), lifo)));
    Uring::<FakeRing>::setup(depth, o).unwrap()
}

fn read(tag: u32, buf: &mut [u8], offset: u64) -> Io {
    Io { kind: IoKind::Read, fd: 3, buf: buf.as_mut_ptr(), len: buf.len(), offset, tag }
}

/// Reap until `n` completions have come back.
fn reap_all<R: Ring + Send>(e: &mut Uring<R>, n: usize) -> Vec<Completion> {
    let mut out = [Completion::default(); 8];
    let mut got = Vec::new();
    while got.len() < n {
        let k = e.reap(1, &mut out).unwrap();
        assert!(k > 0, "reap returned nothing with requests in flight");
        got.extend_from_slice(&out[..k]);
    }
    got
}

#[test]
fn short_transfers_are_resubmitted_for_the_rest_and_complete_once() {
    let mut buf = vec![0u8; 4096];
    // 4096 bytes arrive as 1000 + 96 + 3000.
    let mut e = engine(&[Script::Short(1000), Script::Short(96), Script::Short(3000)], false, 1);
    unsafe { e.queue(read(0, &mut buf, 8192)).unwrap() };
    let got = reap_all(&mut e, 1);
    assert_eq!(got, [Completion { tag: 0, res: 4096 }]);
    let log = &e.ring.log;
    assert_eq!(log.len(), 3, "the request and two resubmissions");
    let base = buf.as_ptr() as usize;
    let parts: Vec<(usize, usize, u64)> =
        log.iter().map(|io| (io.buf as usize - base, io.len, io.offset)).collect();
    assert_eq!(parts, [(0, 4096, 8192), (1000, 3096, 9192), (1096, 3000, 9288)]);
    assert_eq!(e.in_ring, 0);
}

#[test]
fn out_of_order_completions_are_matched_by_tag() {
    let mut bufs = vec![[0u8; 512]; 4];
    // Completed newest first; the second request (tag 1) comes back short first.
    let mut e = engine(
        &[Script::Full, Script::Full, Script::Short(12), Script::Full, Script::Full],
        true,
        4,
    );
    for (k, b) in bufs.iter_mut().enumerate() {
        unsafe { e.queue(read(k as u32, b, k as u64 * 512)).unwrap() };
    }
    let mut got = reap_all(&mut e, 4);
    // Every tag once, each with its full length.
    got.sort_by_key(|c| c.tag);
    assert_eq!(got, (0..4).map(|t| Completion { tag: t, res: 512 }).collect::<Vec<_>>());
    let resub: Vec<&Io> = e.ring.log.iter().skip(4).collect();
    assert_eq!(resub.len(), 1);
    assert_eq!((resub[0].tag, resub[0].len, resub[0].offset), (1, 500, 512 + 12));
}

#[test]
fn eagain_is_retried_and_errors_and_eof_complete_with_their_result() {
    let mut b = [[0u8; 512]; 3];
    let mut e = engine(
        &[
            Script::Res(-libc::EAGAIN),
            Script::Res(-libc::EIO),
            Script::Short(100),
            Script::Full,
            Script::Short(0),
        ],
        false,
        3,
    );
    let [b0, b1, b2] = &mut b;
    unsafe {
        e.queue(read(0, b0, 0)).unwrap();
        e.queue(read(1, b1, 512)).unwrap();
        e.queue(read(2, b2, 1024)).unwrap();
    }
    let mut got = reap_all(&mut e, 3);
    got.sort_by_key(|c| c.tag);
    // tag 0: EAGAIN, then retried in full (Full... after the others' scripts in push order).
    // tag 1: EIO. tag 2: 100 bytes, then end of file (0): completes with the 100 it got.
    assert_eq!(got[1], Completion { tag: 1, res: -i64::from(libc::EIO) });
    assert_eq!(got[2], Completion { tag: 2, res: 100 });
    assert_eq!(got[0], Completion { tag: 0, res: 512 });
}

#[test]
fn one_enter_per_reap_when_completions_are_waited_for() {
    let mut bufs = vec![[0u8; 512]; 8];
    let mut e = engine(&[], false, 8);
    for (k, b) in bufs.iter_mut().enumerate() {
        unsafe { e.queue(read(k as u32, b, 0)).unwrap() };
    }
    let mut out = [Completion::default(); 8];
    let n = e.reap(1, &mut out).unwrap();
    assert_eq!(n, 8);
    assert_eq!(e.ring.enters, 1, "submit and wait are one io_uring_enter");
}

#[test]
fn batch_submit_and_batch_complete() {
    let mut bufs = vec![[0u8; 512]; 8];
    let o = UringOpts { batch_submit: 4, batch_complete: 8, ..UringOpts::default() };
    let mut e = engine_with(&[], false, 8, &o);
    for (k, b) in bufs.iter_mut().enumerate().take(3) {
        unsafe { e.queue(read(k as u32, b, 0)).unwrap() };
    }
    assert_eq!(e.ring.enters, 0, "3 queued, batch of 4: nothing submitted yet");
    let b3 = &mut bufs[3];
    unsafe { e.queue(read(3, b3, 0)).unwrap() };
    assert_eq!((e.ring.enters, e.ring.sq.len()), (1, 0), "the 4th request submits the batch");
    // batch_complete = 8 with 4 in flight: the reap waits for the 4, not for 8.
    let mut out = [Completion::default(); 8];
    assert_eq!(e.reap(1, &mut out).unwrap(), 4);
}

#[test]
fn unavailable_names_the_cause() {
    let eperm = io::Error::from_raw_os_error(libc::EPERM);
    let enosys = io::Error::from_raw_os_error(libc::ENOSYS);
    assert!(unavailable_reason(&eperm, Some("2")).contains("kernel.io_uring_disabled = 2"));
    assert!(unavailable_reason(&eperm, Some("1")).contains("io_uring_group"));
    assert!(unavailable_reason(&eperm, Some("0")).contains("seccomp"));
    assert!(unavailable_reason(&enosys, Some("0")).contains("older than 5.1"));
    assert!(unavailable_reason(&enosys, None).contains("engine = \"psync\""));
}

#[test]
fn the_kernel_ring_reads_a_file_at_depth() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let mut f = tempfile::tempfile().unwrap();
    let data: Vec<u8> = (0..1 << 16).map(|i| (i % 251) as u8).collect();
    f.write_all(&data).unwrap();
    let mut e = match Uring::<KernelRing>::setup(16, &UringOpts::default()) {
        Ok(e) => e,
        Err(err) => {
            eprintln!("skipped: io_uring unavailable here: {err}");
            return;
        }
    };
    let mut bufs = vec![[0u8; 4096]; 16];
    for (k, b) in bufs.iter_mut().enumerate() {
        let io = Io {
            kind: IoKind::Read,
            fd: f.as_raw_fd(),
            buf: b.as_mut_ptr(),
            len: 4096,
            offset: k as u64 * 4096,
            tag: k as u32,
        };
        unsafe { e.queue(io).unwrap() };
    }
    e.commit().unwrap();
    let got = reap_all(&mut e, 16);
    assert_eq!(got.len(), 16);
    for c in &got {
        assert_eq!(c.res, 4096);
        let k = c.tag as usize;
        assert_eq!(&bufs[k][..], &data[k * 4096..(k + 1) * 4096]);
    }
    // A read past the end completes with 0 (end of file), an fsync with 0.
    let mut b = [0u8; 512];
    let io = Io {
        kind: IoKind::Read,
        fd: f.as_raw_fd(),
        buf: b.as_mut_ptr(),
        len: 512,
        offset: 1 << 20,
        tag: 0,
    };
    unsafe { e.queue(io).unwrap() };
    assert_eq!(reap_all(&mut e, 1), [Completion { tag: 0, res: 0 }]);
    let io = Io {
        kind: IoKind::Fsync,
        fd: f.as_raw_fd(),
        buf: std::ptr::null_mut(),
        len: 0,
        offset: 0,
        tag: 3,
    };
    unsafe { e.queue(io).unwrap() };
    assert_eq!(reap_all(&mut e, 1), [Completion { tag: 3, res: 0 }]);
}

#[test]
fn uring_options_are_checked_at_validation() {
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let load = |keys: &str| {
        let text = format!("[[test]]\nid = \"u\"\nname = \"u\"\n{keys}\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }}]\namount = {{ ops = 1 }}\n");
        let spec = crate::workload::spec::parse(&text, "t").unwrap();
        crate::workload::validate::resolve(&spec, "t", &ctx)
            .map(|s| crate::workload::engines::uring::uring_opts(&s.tests[0].engine_options))
            .map_err(|e| e.to_string())
    };
    let o = load("engine = \"io_uring\"\niodepth = 32\niodepth_batch = 8\niodepth_batch_complete = 4\nsqpoll = true").unwrap();
    assert_eq!((o.batch_submit, o.batch_complete, o.sqpoll, o.iopoll), (8, 4, true, false));
    // Unset: fio's default above depth 1 (submit each request as it is queued); at depth 1
    // the request goes in with the wait (0).
    assert_eq!(load("engine = \"io_uring\"\niodepth = 16").unwrap().batch_submit, 1);
    assert_eq!(load("engine = \"io_uring\"").unwrap().batch_submit, 0);
    let e = load("iodepth_batch = 8").unwrap_err();
    assert!(e.contains("iodepth_batch is an option of the io_uring engine"), "{e}");
    let e = load("engine = \"io_uring\"\niodepth = 4\niodepth_batch_complete = 8").unwrap_err();
    assert!(e.contains("more than iodepth = 4"), "{e}");
    let e = load("engine = \"io_uring\"\niopoll = true").unwrap_err();
    assert!(e.contains("set direct = true"), "{e}");
    let e = load("iodepth = 16").unwrap_err();
    assert!(e.contains("engine = \"io_uring\""), "{e}");
    let o = load("engine = \"io_uring\"").unwrap();
    assert_eq!((o.fixedbufs, o.registerfiles), (false, true), "the defaults");
    let o = load("engine = \"io_uring\"\nfixedbufs = true\nregisterfiles = false").unwrap();
    assert_eq!((o.fixedbufs, o.registerfiles), (true, false));
    for k in ["fixedbufs = true", "registerfiles = false"] {
        let e = load(k).unwrap_err();
        let name = k.split(' ').next().unwrap();
        assert!(e.contains(&format!("{name} is an option of the io_uring engine")), "{e}");
    }
}

#[test]
fn buffers_reach_the_ring_only_with_fixedbufs() {
    let mut buf = vec![0u8; 8192];
    let region = [(buf.as_mut_ptr(), buf.len())];
    let mut e = engine(&[], false, 2);
    e.register_buffers(&region).unwrap();
    assert!(e.ring.registered.is_empty(), "fixedbufs is off by default");
    let mut e = engine_with(&[], false, 2, &UringOpts { fixedbufs: true, ..UringOpts::default() });
    e.register_buffers(&region).unwrap();
    assert_eq!(e.ring.registered, region);
}

/// A kernel ring with `opts`, or None (and a printed reason) where io_uring is unavailable.
fn kernel_ring(depth: u32, opts: &UringOpts) -> Option<Uring<KernelRing>> {
    let e = Uring::<KernelRing>::setup(depth, opts);
    match e {
        Ok(e) => Some(e),
        Err(err) => {
            eprintln!("skipped: io_uring unavailable here: {err}");
            None
        }
    }
}

#[test]
fn fixed_buffers_write_and_read_through_the_registered_regions() {
    use crate::engine::buffer::AlignedBuf;
    use std::os::fd::AsRawFd;
    let f = tempfile::tempfile().unwrap();
    let opts = UringOpts { fixedbufs: true, ..UringOpts::default() };
    let Some(mut e) = kernel_ring(8, &opts) else { return };
    // As the worker: one region of read buffers, one write pool.
    let mut rbuf = AlignedBuf::new(8 * 4096);
    let mut wbuf = AlignedBuf::new(8 * 4096);
    for (i, b) in wbuf.as_mut_slice().iter_mut().enumerate() {
        *b = (i % 253) as u8;
    }
    let (rp, wp) = (rbuf.as_mut_slice().as_mut_ptr(), wbuf.as_mut_slice().as_mut_ptr());
    e.register_buffers(&[(rp, 8 * 4096), (wp, 8 * 4096)]).unwrap();
    assert_eq!(e.ring.nbufs, 2);
    let io = |kind, buf: *mut u8, k: usize| Io {
        kind,
        fd: f.as_raw_fd(),
        buf: unsafe { buf.add(k * 4096) },
        len: 4096,
        offset: (k * 4096) as u64,
        tag: k as u32,
    };
    for k in 0..8 {
        unsafe { e.queue(io(IoKind::Write, wp, k)).unwrap() };
    }
    let got = reap_all(&mut e, 8);
    assert!(got.iter().all(|c| c.res == 4096), "{got:?}");
    for k in 0..8 {
        unsafe { e.queue(io(IoKind::Read, rp, k)).unwrap() };
    }
    let got = reap_all(&mut e, 8);
    assert!(got.iter().all(|c| c.res == 4096), "{got:?}");
    assert_eq!(rbuf.as_slice(), wbuf.as_slice(), "read back what was written");
    // A buffer outside the registered regions is refused before it reaches the kernel.
    let mut stray = [0u8; 4096];
    let e2 = unsafe { e.queue(io(IoKind::Read, stray.as_mut_ptr(), 0)) }.unwrap_err();
    assert!(e2.to_string().contains("outside the registered buffers"), "{e2}");
}

#[test]
fn unregistered_file_reads_by_descriptor() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&[7u8; 8192]).unwrap();
    let opts = UringOpts { registerfiles: false, ..UringOpts::default() };
    let Some(mut e) = kernel_ring(2, &opts) else { return };
    let mut b = [0u8; 4096];
    let io = Io {
        kind: IoKind::Read,
        fd: f.as_raw_fd(),
        buf: b.as_mut_ptr(),
        len: 4096,
        offset: 4096,
        tag: 1,
    };
    unsafe { e.queue(io).unwrap() };
    let got = reap_all(&mut e, 1);
    assert_eq!(got, [Completion { tag: 1, res: 4096 }]);
    assert_eq!(e.ring.registered, -1, "no file was registered");
    assert_eq!(b, [7u8; 4096]);
}

#[test]
fn a_lagging_sq_poller_is_waited_for_not_an_error() {
    // Four entries, released only when waited for: the fifth request must wait, not fail.
    let mut bufs = vec![[0u8; 512]; 8];
    let mut e = engine(&[], false, 8);
    e.ring.sq_cap = Some(4);
    for (k, b) in bufs.iter_mut().enumerate() {
        unsafe { e.queue(read(k as u32, b, 0)).unwrap() };
    }
    assert_eq!(e.ring.waits, 4, "one wait per request beyond the four entries");
    assert_eq!(reap_all(&mut e, 8).len(), 8);
}

/// An EIO completion, driven through the real worker: the phase fails with the op, its offset
/// and the reason (the runner makes that the test's failure; the ENOSPC CLI test shows it end to
/// end), and nothing after the failure is counted.
#[test]
fn an_eio_completion_fails_the_workers_phase_with_the_reason() {
    use crate::engine::worker::{self, FileWork, PaddedCounter, StopFlags, Work, WorkerPlan};
    use std::sync::atomic::AtomicBool;
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let text = "[[test]]\nid = \"e\"\nname = \"e\"\nengine = \"io_uring\"\niodepth = 4\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { ops = 64 }\n";
    let spec = crate::workload::spec::parse(text, "t").unwrap();
    let suite = crate::workload::validate::resolve(&spec, "t", &ctx).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![1u8; 1 << 20]).unwrap();
    // The fake ring completes requests in order; the third one fails with EIO.
    SETUP.with(|s| {
        *s.borrow_mut() = Some((vec![Script::Full, Script::Full, Script::Res(-libc::EIO)], false))
    });
    let stop_phase = AtomicBool::new(false);
    let stop = StopFlags { phase: &stop_phase, signal: &AtomicBool::new(false) };
    let work = FileWork {
        path: &path,
        file_size: 1 << 20,
        region_start: 0,
        region_len: 1 << 20,
        verify: None,
        nofollow: false,
        random_in_region: false,
        more: None,
    };
    let mut plan = WorkerPlan {
        phase: &suite.tests[0].phases[0],
        seed: 1,
        compress_percent: 0,
        iodepth: 4,
        work: Work::File(work),
        over_time: Default::default(),
        thread_index: 0,
    };
    let ctr = PaddedCounter::default();
    let opts = UringOpts::default();
    let barrier = std::sync::Barrier::new(1);
    let out = worker::run::<Uring<FakeRing>>(&mut plan, &opts, &barrier, &stop, &ctr.0);
    let e = out.error.expect("the EIO completion fails the phase");
    assert_eq!(e.errno(), Some(libc::EIO));
    assert!(matches!(e, crate::model::failure::EngineError::Io { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("read") && msg.contains("offset 8192"), "{msg}");
    assert!(msg.contains("Input/output error"), "{msg}");
    assert!(out.data_ops < 64, "ops after the failure were counted: {}", out.data_ops);
}

/// The kernel's (major, minor) version, from uname.
fn kernel_version() -> (u32, u32) {
    let u = rustix::system::uname();
    let r = u.release().to_string_lossy();
    let mut it = r.split(|c: char| !c.is_ascii_digit()).filter_map(|p| p.parse().ok());
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

#[test]
fn a_workers_ring_takes_completions_when_it_waits_as_fios_does() {
    // 6.1 has DEFER_TASKRUN (with SINGLE_ISSUER): completions are posted when the worker waits
    // for them instead of interrupting it. Older kernels fall back a level at a time.
    let Some(e) = kernel_ring(8, &UringOpts::default()) else { return };
    let v = kernel_version();
    if v >= (6, 1) {
        assert!(e.ring.ring.params().is_setup_single_issuer(), "kernel {v:?}");
    }
    // SQ polling posts completions from the poller's thread: no DEFER_TASKRUN with it.
    if rustix::process::geteuid().is_root() {
        let opts = UringOpts { sqpoll: true, ..UringOpts::default() };
        if let Some(e) = kernel_ring(8, &opts) {
            assert!(e.ring.ring.params().is_setup_sqpoll());
            assert!(!e.ring.ring.params().is_setup_single_issuer());
        }
    }
}

/// What the worker reads to time submission apart: the requests pushed and not yet submitted,
/// and whether a reap submitted them in the call that waited (then their submission's return
/// is not known apart from a completion's).
#[test]
fn the_engine_says_what_is_unsubmitted_and_when_a_reap_submitted_with_its_wait() {
    let mut bufs = vec![[0u8; 512]; 4];
    // Depth 1, fio's defaults here: the request goes in with the wait for it.
    let mut e = engine_with(&[], false, 1, &UringOpts::default());
    unsafe { e.queue(read(0, &mut bufs[0], 0)).unwrap() };
    assert_eq!(e.unsubmitted(), 1);
    let mut out = [Completion::default(); 4];
    assert_eq!(e.reap(1, &mut out).unwrap(), 1);
    assert_eq!(e.unsubmitted(), 0);
    assert!(e.submitted_with_wait(), "submitted in the waiting enter");
    assert!(!e.submitted_with_wait(), "the mark is cleared when read");
    // Each request submitted as it is queued: nothing goes in with a wait.
    let o = UringOpts { batch_submit: 1, ..UringOpts::default() };
    let mut e = engine_with(&[], false, 4, &o);
    for (k, b) in bufs.iter_mut().enumerate() {
        unsafe { e.queue(read(k as u32, b, 0)).unwrap() };
        assert_eq!(e.unsubmitted(), 0, "submitted by its queue");
    }
    assert_eq!(e.reap(4, &mut out).unwrap(), 4);
    assert!(!e.submitted_with_wait());
    // A batch of 2 with 3 queued: the third waits for the reap.
    let o = UringOpts { batch_submit: 2, ..UringOpts::default() };
    let mut e = engine_with(&[], false, 4, &o);
    for (k, b) in bufs.iter_mut().enumerate().take(3) {
        unsafe { e.queue(read(k as u32, b, 0)).unwrap() };
    }
    assert_eq!(e.unsubmitted(), 1);
}
