//! A fileset's operations, one function each: [`create`], [`unlink`], [`stat`],
//! [`readwhole`], [`append`], [`replace`], [`rename`], [`readdir`], [`fsyncdir`], [`mkdir`],
//! [`rmdir`], and fio's file operations ([`opencreate`], [`lstat`], [`statx`], [`mkdirslot`],
//! [`rmdirslot`]: the calls of fio's `filecreate`, `filestat`, `dircreate` and `dirdelete`
//! engines, timed as fio times them). What they share is done once: picking a slot in the right state and naming its
//! file ([`file_slot`]), picking a directory ([`dir_index`]), timing ([`record`]), the optional
//! fsync of the parent ([`fsync_parent_if`]), whole-file writes and verified reads.
//!
//! Each op runs inside the worker's `issue` (hot path): no allocation, no lock, no formatting;
//! an error is a code ([`OpErr`]) that the caller turns into words once.

use super::slots::{Content, Permutation, SlotState};
use crate::engine::buffer::{AlignedBuf, WritePool};
use crate::engine::ioengine::IoEngine;
use crate::engine::layout::{Mapping, PathBuf0};
use crate::engine::worker::now_ns;
use crate::model::block::{self, BlockId, BLOCK_BYTES};
use crate::model::job::{FileSet, Layout, MetaOp, OpKind, Pick};
use crate::model::latency::OpHistograms;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::time::Instant;

/// The state of one worker's loop, borrowed by the op functions.
pub(super) struct Ctx<'a, E: IoEngine> {
    /// The engine every system call of an op goes through.
    pub eng: E,
    pub root: BorrowedFd<'a>,
    pub root_path: &'a Path,
    pub map: Mapping,
    pub fs: &'a FileSet,
    pub thread: u64,
    pub threads: u64,
    pub slots: &'a mut SlotState,
    pub path: PathBuf0,
    pub path2: PathBuf0,
    pub pool: WritePool,
    /// `--verify`: what checks reads.
    pub verify: Option<SetVerify>,
    pub rbuf: AlignedBuf,
    pub dirbuf: Vec<u8>,
    pub rng: fastrand::Rng,
    pub hist: OpHistograms,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub creates: u64,
    pub sync_nanos: u64,
    /// Time spent making and checking verified data (kept out of op latencies).
    pub verify_nanos: u64,
    pub verified_bytes: u64,
}

/// `--verify` in a fileset worker: buffers to check what is read against.
pub(super) struct SetVerify {
    pub seed: u64,
    /// The bytes a read should have returned.
    pub expected: AlignedBuf,
    /// A 4 KiB scratch cell.
    pub cell: Vec<u8>,
}

/// A read returned other bytes than were written.
pub(super) struct Corruption {
    /// Offset of the first bad byte's 4 KiB block (or of the end, for a wrong length).
    pub offset: u64,
    /// The block expected there, or the expected length.
    pub expected: Result<BlockId, u64>,
    /// What was found.
    pub found: String,
}

/// Why an op did not complete.
pub(super) enum OpErr {
    /// Nothing suitable to do; no system call was made.
    Skip,
    /// A system call failed.
    Fail(&'static str, Errno),
    /// `--verify`: a read returned other bytes than were written.
    Corrupt(Box<Corruption>),
}

pub(super) type OpResult = Result<(), OpErr>;

fn fail(what: &'static str) -> impl Fn(Errno) -> OpErr {
    move |e| OpErr::Fail(what, e)
}

const FILE_MODE: Mode = Mode::from_raw_mode(0o644);
const DIR_MODE: Mode = Mode::from_raw_mode(0o755);
const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// Where a slot-taking op's cursor is.
#[derive(Clone, Copy, Default)]
pub(super) struct Cursor {
    pub pos: u64,
}

/// Where one pattern entry's op picks from: its cursor, its permutation (`shuffle`), and
/// whether the phase is counted in passes (`next` and `shuffle` then visit every slot once,
/// skipping the unsuitable, rather than look for a suitable one).
pub(super) struct Picker<'p> {
    pub cur: &'p mut Cursor,
    pub perm: &'p Permutation,
    pub in_passes: bool,
}

/// Do one op of a fileset pattern.
#[inline]
pub(super) fn do_op<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    match op.kind {
        OpKind::Create => create(cx, op, pk),
        OpKind::Unlink => unlink(cx, op, pk),
        OpKind::Stat => stat(cx, op, pk),
        OpKind::Readwhole => readwhole(cx, op, pk),
        OpKind::Append => append(cx, op, pk),
        OpKind::Replace => replace(cx, op, pk),
        OpKind::Rename => rename(cx, op, pk),
        OpKind::Readdir => readdir(cx, op, pk),
        OpKind::Fsyncdir => fsyncdir(cx, op, pk),
        OpKind::Mkdir => mkdir(cx, op, pk),
        OpKind::Rmdir => rmdir(cx, op, pk),
        OpKind::Opencreate => opencreate(cx, op, pk),
        OpKind::Lstat => lstat(cx, op, pk),
        OpKind::Statx => statx(cx, op, pk),
        OpKind::Mkdirslot => mkdirslot(cx, op, pk),
        OpKind::Rmdirslot => rmdirslot(cx, op, pk),
        _ => unreachable!("validation admits only fileset ops in a fileset pattern"),
    }
}

/// `create`: a free slot's file, made with the fileset's size (missing directories made).
fn create<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, g) = file_slot(cx, op, pk, false)?;
    let size = cx.fs.size.sample(&mut cx.rng);
    create_file(cx, op, size, g)?;
    cx.slots.set(s, true);
    cx.slots.set_content(s, Content { file: g, size });
    cx.creates += 1;
    fsync_parent_if(cx, op)
}

/// `unlink`: a slot's file removed.
fn unlink<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, _) = file_slot(cx, op, pk, true)?;
    let t0 = Instant::now();
    cx.eng.unlinkat(cx.root, cx.path.c_str(), AtFlags::empty()).map_err(fail("unlink"))?;
    record(cx, OpKind::Unlink, t0, 0);
    cx.slots.set(s, false);
    fsync_parent_if(cx, op)
}

/// `stat`: a slot's file's metadata.
fn stat<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    file_slot(cx, op, pk, true)?;
    let t0 = Instant::now();
    let st = cx.eng.statat(cx.root, cx.path.c_str()).map_err(fail("stat"))?;
    record(cx, OpKind::Stat, t0, 0);
    std::hint::black_box(st);
    Ok(())
}

/// `readwhole`: open a slot's file, read it to its end (checked under `--verify`), close.
fn readwhole<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, _) = file_slot(cx, op, pk, true)?;
    let content = cx.slots.content(s);
    let v0 = cx.verify_nanos;
    let t0 = Instant::now();
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    let fd = cx.eng.openat(cx.root, cx.path.c_str(), flags, Mode::empty()).map_err(fail("open"))?;
    let mut pos = 0u64;
    loop {
        let n = cx.eng.read(fd.as_fd(), cx.rbuf.as_mut_slice()).map_err(fail("read"))?;
        if n == 0 {
            break;
        }
        if cx.verify.is_some() {
            check_read(cx, fd.as_fd(), content.file, pos, n)?;
        }
        pos += n as u64;
        cx.bytes_read += n as u64;
    }
    if cx.verify.is_some() && pos != content.size {
        let found = format!("{pos} bytes");
        let c = Corruption { offset: pos.min(content.size), expected: Err(content.size), found };
        return Err(OpErr::Corrupt(Box::new(c)));
    }
    cx.eng.close(fd).map_err(fail("close"))?;
    let verify = cx.verify_nanos - v0;
    record(cx, OpKind::Readwhole, t0, verify);
    Ok(())
}

/// `append`: open a slot's file O_APPEND, write the op's size, fsync if asked, close.
fn append<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, _) = file_slot(cx, op, pk, true)?;
    let size = op.size.unwrap_or(cx.fs.size).sample(&mut cx.rng);
    let content = cx.slots.content(s);
    let v0 = cx.verify_nanos;
    let t0 = Instant::now();
    let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CLOEXEC;
    let fd = cx.eng.openat(cx.root, cx.path.c_str(), flags, Mode::empty()).map_err(fail("open"))?;
    write_all(cx, &fd, size, content.file, content.size)?;
    cx.slots.set_content(s, Content { size: content.size + size, ..content });
    let fsync_ns = if op.fsync { fsync_fd(cx, &fd)? } else { 0 };
    cx.eng.close(fd).map_err(fail("close"))?;
    let excluded = fsync_ns + (cx.verify_nanos - v0);
    record(cx, OpKind::Append, t0, excluded);
    Ok(())
}

/// `replace`: the durable replace idiom: write `fN.tmp`, fsync it, close, rename it over `fN`.
fn replace<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, g) = file_slot(cx, op, pk, true)?;
    cx.map.file(&mut cx.path2, g);
    cx.path2.push_tmp();
    let size = cx.fs.size.sample(&mut cx.rng);
    let v0 = cx.verify_nanos;
    let t0 = Instant::now();
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC;
    let fd = cx
        .eng
        .openat(cx.root, cx.path2.c_str(), flags, FILE_MODE)
        .map_err(fail("open temporary"))?;
    write_all(cx, &fd, size, g, 0)?;
    cx.eng.fsync(fd.as_fd()).map_err(fail("fsync temporary"))?;
    cx.eng.close(fd).map_err(fail("close"))?;
    cx.eng.renameat(cx.root, cx.path2.c_str(), cx.path.c_str()).map_err(fail("rename over"))?;
    cx.slots.set_content(s, Content { file: g, size });
    let verify = cx.verify_nanos - v0;
    record(cx, OpKind::Replace, t0, verify);
    fsync_parent_if(cx, op)
}

/// `rename`: a slot's file moved to the next free slot (both parents fsynced if asked).
fn rename<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let s = pick_slot(cx, op.pick, pk, true)?;
    let d = cx.slots.find_from(s + 1, false).ok_or(OpErr::Skip)?;
    let (gs, gd) = (global(cx, s), global(cx, d));
    cx.map.file(&mut cx.path2, gs);
    cx.map.file(&mut cx.path, gd);
    let t0 = Instant::now();
    cx.eng.renameat(cx.root, cx.path2.c_str(), cx.path.c_str()).map_err(fail("rename to"))?;
    record(cx, OpKind::Rename, t0, 0);
    cx.slots.set(s, false);
    cx.slots.set(d, true);
    let moved = cx.slots.content(s);
    cx.slots.set_content(d, moved);
    if op.fsync_dir {
        let same = cx.path.same_parent(&cx.path2);
        fsync_parent(cx)?;
        if !same {
            std::mem::swap(&mut cx.path, &mut cx.path2);
            fsync_parent(cx)?;
        }
    }
    Ok(())
}

/// `readdir`: open a leaf directory, read every entry, close.
fn readdir<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let l = dir_index(cx, op, pk);
    cx.map.leaf(&mut cx.path, l);
    let t0 = Instant::now();
    let fd = match cx.eng.openat(cx.root, cx.path.c_str(), DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(OpErr::Skip),
        Err(e) => return Err(OpErr::Fail("open directory", e)),
    };
    let entries = cx.eng.readdir(fd.as_fd(), &mut cx.dirbuf).map_err(fail("getdents64"))?;
    std::hint::black_box(entries);
    cx.eng.close(fd).map_err(fail("close directory"))?;
    record(cx, OpKind::Readdir, t0, 0);
    Ok(())
}

/// `fsyncdir`: fsync a leaf directory.
fn fsyncdir<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let l = dir_index(cx, op, pk);
    cx.map.leaf(&mut cx.path, l);
    fsync_dir(cx, false)
}

/// `mkdir`: one directory of the tree, in pre-order (parents first).
fn mkdir<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let d = dir_index(cx, op, pk);
    cx.map.dir(&mut cx.path, d);
    let t0 = Instant::now();
    match cx.eng.mkdirat(cx.root, cx.path.c_str(), DIR_MODE) {
        Ok(()) => {}
        Err(Errno::EXIST) | Err(Errno::NOENT) => return Err(OpErr::Skip),
        Err(e) => return Err(OpErr::Fail("mkdir", e)),
    }
    record(cx, OpKind::Mkdir, t0, 0);
    fsync_parent_if(cx, op)
}

/// `rmdir`: one directory of the tree, in reverse pre-order (every child before its parent).
fn rmdir<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let n = space(cx, OpKind::Rmdir);
    let d = n - 1 - dir_index(cx, op, pk);
    cx.map.dir(&mut cx.path, d);
    let t0 = Instant::now();
    match cx.eng.unlinkat(cx.root, cx.path.c_str(), AtFlags::REMOVEDIR) {
        Ok(()) => {}
        Err(Errno::NOENT) => return Err(OpErr::Skip),
        Err(e) => return Err(OpErr::Fail("rmdir", e)),
    }
    record(cx, OpKind::Rmdir, t0, 0);
    fsync_parent_if(cx, op)
}

/// fio's `filecreate` open: `O_CREAT|O_RDWR`, mode 0600 (no `O_EXCL`, no `O_TRUNC`).
const FIO_CREATE_FLAGS: OFlags = OFlags::CREATE.union(OFlags::RDWR);
const FIO_CREATE_MODE: Mode = Mode::from_raw_mode(0o600);
/// fio's `dircreate` passes `S_IFDIR` as the mode, of which mkdir(2) keeps no bit: the
/// directory's mode is 0, as with this.
const FIO_DIR_MODE: Mode = Mode::empty();

/// `opencreate` (fio's `filecreate`): open a free slot's file `O_CREAT|O_RDWR` (0600), close
/// it; only the open is timed, as fio records the open alone and closes the file afterwards.
fn opencreate<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, g) = file_slot(cx, op, pk, false)?;
    let t0 = Instant::now();
    let fd = cx
        .eng
        .openat(cx.root, cx.path.c_str(), FIO_CREATE_FLAGS, FIO_CREATE_MODE)
        .map_err(fail("create"))?;
    record(cx, OpKind::Opencreate, t0, 0);
    cx.eng.close(fd).map_err(fail("close"))?;
    cx.slots.set(s, true);
    cx.slots.set_content(s, Content { file: g, size: 0 });
    cx.creates += 1;
    fsync_parent_if(cx, op)
}

/// `lstat`: a slot's metadata without following a symbolic link (fio's `stat_type=lstat`).
fn lstat<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    file_slot(cx, op, pk, true)?;
    let t0 = Instant::now();
    let st = cx.eng.lstatat(cx.root, cx.path.c_str()).map_err(fail("lstat"))?;
    record(cx, OpKind::Lstat, t0, 0);
    std::hint::black_box(st);
    Ok(())
}

/// `statx`: a slot's metadata, every field asked for (fio's `stat_type=statx`).
fn statx<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    file_slot(cx, op, pk, true)?;
    let t0 = Instant::now();
    let st = cx.eng.statxat(cx.root, cx.path.c_str()).map_err(fail("statx"))?;
    record(cx, OpKind::Statx, t0, 0);
    std::hint::black_box(st);
    Ok(())
}

/// `mkdirslot` (fio's `dircreate`): a free slot made a directory, with fio's mode.
fn mkdirslot<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, g) = file_slot(cx, op, pk, false)?;
    let t0 = Instant::now();
    cx.eng.mkdirat(cx.root, cx.path.c_str(), FIO_DIR_MODE).map_err(fail("mkdir"))?;
    record(cx, OpKind::Mkdirslot, t0, 0);
    cx.slots.set(s, true);
    cx.slots.set_content(s, Content { file: g, size: 0 });
    cx.creates += 1;
    fsync_parent_if(cx, op)
}

/// `rmdirslot` (fio's `dirdelete`): a slot's directory removed.
fn rmdirslot<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> OpResult {
    let (s, _) = file_slot(cx, op, pk, true)?;
    let t0 = Instant::now();
    cx.eng.unlinkat(cx.root, cx.path.c_str(), AtFlags::REMOVEDIR).map_err(fail("rmdir"))?;
    record(cx, OpKind::Rmdirslot, t0, 0);
    cx.slots.set(s, false);
    fsync_parent_if(cx, op)
}

/// Record an op of `kind` that started at `t0`, less `excluded` nanoseconds (an fsync recorded
/// on its own, verify time).
#[inline]
fn record<E: IoEngine>(cx: &mut Ctx<'_, E>, kind: OpKind, t0: Instant, excluded: u64) {
    let d = (t0.elapsed().as_nanos() as u64).saturating_sub(excluded);
    cx.hist.record(kind, d);
}

/// Pick a local slot whose state is `want` (file present or not) for `op`, and name its file in
/// `cx.path`; returns the local and global slot.
#[inline]
fn file_slot<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    op: &MetaOp,
    pk: Picker<'_>,
    want: bool,
) -> Result<(u64, u64), OpErr> {
    let s = pick_slot(cx, op.pick, pk, want)?;
    let g = global(cx, s);
    cx.map.file(&mut cx.path, g);
    Ok((s, g))
}

/// Pick an index in the space of `op`'s kind (directories, leaves), which has no state.
#[inline]
fn dir_index<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, pk: Picker<'_>) -> u64 {
    let n = space(cx, op.kind);
    pick_index(cx, op.pick, pk, n)
}

/// fsync the parent directory of `cx.path` when the op asks for it (`fsync_dir = true`).
#[inline]
fn fsync_parent_if<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp) -> OpResult {
    if op.fsync_dir {
        fsync_parent(cx)?;
    }
    Ok(())
}

/// Size of the slot space an op kind works on, for this thread.
pub(super) fn space<E: IoEngine>(cx: &Ctx<'_, E>, kind: OpKind) -> u64 {
    match kind {
        OpKind::Mkdir | OpKind::Rmdir => cx.fs.layout.dirs(),
        OpKind::Readdir | OpKind::Fsyncdir => cx.fs.layout.leaves(),
        _ => cx.slots.len(),
    }
}

/// Global slot of this thread's local slot `s`.
#[inline]
fn global<E: IoEngine>(cx: &Ctx<'_, E>, s: u64) -> u64 {
    cx.thread + s * cx.threads
}

/// Choose a local slot whose state is `want` (file present or not), or skip.
fn pick_slot<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    pick: Pick,
    pk: Picker<'_>,
    want: bool,
) -> Result<u64, OpErr> {
    let n = cx.slots.len();
    let Picker { cur, perm, in_passes } = pk;
    match pick {
        Pick::Next if in_passes => {
            let s = cur.pos % n;
            cur.pos = s + 1;
            if cx.slots.get(s) == want {
                Ok(s)
            } else {
                Err(OpErr::Skip)
            }
        }
        Pick::Next => {
            let s = cx.slots.find_from(cur.pos, want).ok_or(OpErr::Skip)?;
            cur.pos = s + 1;
            Ok(s)
        }
        Pick::Shuffle if in_passes => {
            let s = perm.get(cur.pos % n);
            cur.pos = (cur.pos + 1) % n;
            if cx.slots.get(s) == want {
                Ok(s)
            } else {
                Err(OpErr::Skip)
            }
        }
        Pick::Shuffle => {
            if (want && cx.slots.live() == 0) || (!want && cx.slots.live() == n) {
                return Err(OpErr::Skip);
            }
            for _ in 0..n {
                let s = perm.get(cur.pos % n);
                cur.pos = (cur.pos + 1) % n;
                if cx.slots.get(s) == want {
                    return Ok(s);
                }
            }
            Err(OpErr::Skip)
        }
        Pick::Random => {
            let r = cx.rng.u64(0..n);
            cx.slots.find_from(r, want).ok_or(OpErr::Skip)
        }
    }
}

/// Choose an index in a space of `n` (directories, leaves) that has no state.
fn pick_index<E: IoEngine>(cx: &mut Ctx<'_, E>, pick: Pick, pk: Picker<'_>, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let cur = pk.cur;
    match pick {
        Pick::Next => {
            let s = cur.pos % n;
            cur.pos = s + 1;
            s
        }
        Pick::Shuffle => {
            let s = pk.perm.get(cur.pos % n);
            cur.pos = (cur.pos + 1) % n;
            s
        }
        Pick::Random => cx.rng.u64(0..n),
    }
}

/// open(O_CREAT|O_EXCL) the file at `cx.path`, making missing parent directories, write
/// `size` bytes, fsync if asked, close.
fn create_file<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, size: u64, file: u64) -> OpResult {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
    let t0 = Instant::now();
    let fd = match cx.eng.openat(cx.root, cx.path.c_str(), flags, FILE_MODE) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if matches!(cx.fs.layout, Layout::Tree { .. }) => {
            let t_mk = Instant::now();
            make_parents(cx)?;
            let mk = t_mk.elapsed().as_nanos() as u64;
            let fd = cx
                .eng
                .openat(cx.root, cx.path.c_str(), flags, FILE_MODE)
                .map_err(fail("create"))?;
            // The directories are recorded as mkdir; the create keeps its own time.
            return finish_create(cx, op, fd, (size, file), t0, mk);
        }
        Err(e) => return Err(OpErr::Fail("create", e)),
    };
    finish_create(cx, op, fd, (size, file), t0, 0)
}

fn finish_create<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    op: &MetaOp,
    fd: OwnedFd,
    (size, file): (u64, u64),
    t0: Instant,
    excluded: u64,
) -> OpResult {
    let v0 = cx.verify_nanos;
    write_all(cx, &fd, size, file, 0)?;
    let fsync_ns = if op.fsync { fsync_fd(cx, &fd)? } else { 0 };
    cx.eng.close(fd).map_err(fail("close"))?;
    let excluded = fsync_ns + excluded + (cx.verify_nanos - v0);
    record(cx, OpKind::Create, t0, excluded);
    Ok(())
}

/// mkdir every missing directory on the way to `cx.path` (another thread may make one first:
/// EEXIST is fine).
fn make_parents<E: IoEngine>(cx: &mut Ctx<'_, E>) -> OpResult {
    let mut ends = [0usize; 16];
    let mut k = 0;
    for e in cx.path.dir_prefix_ends() {
        if k < ends.len() {
            ends[k] = e;
            k += 1;
        }
    }
    for &end in &ends[..k] {
        let t0 = Instant::now();
        let r = cx.eng.mkdirat(cx.root, cx.path.cut(end), DIR_MODE);
        cx.path.restore(end);
        match r {
            Ok(()) => cx.hist.record(OpKind::Mkdir, t0.elapsed().as_nanos() as u64),
            Err(Errno::EXIST) => {}
            Err(e) => return Err(OpErr::Fail("mkdir", e)),
        }
    }
    Ok(())
}

/// Write `size` bytes to `fd` in `write_size` pieces; with `--verify`, the verified content of
/// file `file` from offset `off` (where the file's end is), timed as verify time.
fn write_all<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    fd: &OwnedFd,
    size: u64,
    file: u64,
    off: u64,
) -> OpResult {
    let ws = cx.fs.write_size;
    let mut left = size;
    while left > 0 {
        let n = left.min(ws) as usize;
        let buf = if cx.verify.is_some() {
            let a = now_ns();
            let at = off + (size - left);
            let buf = cx.pool.window_of(file, at, n);
            cx.verify_nanos += now_ns() - a;
            buf
        } else {
            cx.pool.window(n)
        };
        let w = cx.eng.write(fd.as_fd(), buf).map_err(fail("write"))?;
        if w == 0 {
            return Err(OpErr::Fail("write", Errno::NOSPC));
        }
        left -= w as u64;
        cx.bytes_written += w as u64;
    }
    Ok(())
}

/// `--verify`: check the `n` bytes just read into `cx.rbuf` at offset `pos` of file `file`
/// against the verified content; timed as verify time. On a mismatch, the 4 KiB block holding
/// the first bad byte is read again (`pread`, once) to say what it holds.
fn check_read<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    fd: BorrowedFd<'_>,
    file: u64,
    pos: u64,
    n: usize,
) -> OpResult {
    let a = now_ns();
    let Some(v) = cx.verify.as_mut() else { return Ok(()) };
    let expected = &mut v.expected.as_mut_slice()[..n];
    crate::engine::verify::fill_range(expected, &mut v.cell, v.seed, file, pos);
    let got = &cx.rbuf.as_slice()[..n];
    let bad = if got == &*expected {
        None
    } else {
        got.iter().zip(expected.iter()).position(|(x, y)| x != y)
    };
    cx.verify_nanos += now_ns() - a;
    cx.verified_bytes += n as u64;
    let Some(k) = bad else { return Ok(()) };
    let at = (pos + k as u64) / BLOCK_BYTES as u64 * BLOCK_BYTES as u64;
    let id = crate::engine::verify::cell_id(v.seed, file, at);
    let mut cell = vec![0u8; BLOCK_BYTES];
    let found = match rustix::io::pread(fd, &mut cell, at) {
        Ok(m) if m == BLOCK_BYTES => block::check(id, &cell).to_string(),
        Ok(m) if cell[..m].iter().all(|b| *b == 0) => "zeroes".to_string(),
        Ok(m) => format!("other bytes in the file's last {m} bytes"),
        Err(e) => format!("a block that could not be read again ({e})"),
    };
    Err(OpErr::Corrupt(Box::new(Corruption { offset: at, expected: Ok(id), found })))
}

/// fsync an open file; returns the nanoseconds it took (recorded as `fsync`).
fn fsync_fd<E: IoEngine>(cx: &mut Ctx<'_, E>, fd: &OwnedFd) -> Result<u64, OpErr> {
    let t0 = Instant::now();
    cx.eng.fsync(fd.as_fd()).map_err(fail("fsync"))?;
    let d = t0.elapsed().as_nanos() as u64;
    cx.hist.record(OpKind::Fsync, d);
    cx.sync_nanos += d;
    Ok(d)
}

/// fsync the parent directory of `cx.path` (which is consumed).
fn fsync_parent<E: IoEngine>(cx: &mut Ctx<'_, E>) -> OpResult {
    let _ = cx.path.parent_c_str();
    fsync_dir(cx, true)
}

/// fsync the directory at `cx.path` (after [`PathBuf0::parent_c_str`] when `parent`).
fn fsync_dir<E: IoEngine>(cx: &mut Ctx<'_, E>, parent: bool) -> OpResult {
    let p: &CStr = cx.path.c_str();
    let p = if parent && p.is_empty() { c"." } else { p };
    let t0 = Instant::now();
    let fd = match cx.eng.openat(cx.root, p, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if !parent => return Err(OpErr::Skip),
        Err(e) => return Err(OpErr::Fail("open directory", e)),
    };
    cx.eng.fsync(fd.as_fd()).map_err(fail("fsync directory"))?;
    cx.eng.close(fd).map_err(fail("close directory"))?;
    let d = t0.elapsed().as_nanos() as u64;
    cx.hist.record(OpKind::Fsyncdir, d);
    cx.sync_nanos += d;
    Ok(())
}
