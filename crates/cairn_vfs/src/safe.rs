//! File access confined to one directory tree: every path is walked one component at a time
//! from an open directory, and no symbolic link is ever followed.
//!
//! A repository is untrusted input (docs/security.md): it may ship a symbolic link where the
//! toolchain expects a file, a staging name, the `.cairn/` directory or a journal entry. So the
//! toolchain never hands a path string to the kernel below a trusted root. It opens the root
//! once, then each directory under it with `openat(O_DIRECTORY | O_NOFOLLOW)`, and each file
//! with `O_NOFOLLOW` (and `O_EXCL` when it creates one); renames, links and removals are made
//! relative to those directory descriptors (`renameat2`, `linkat` without
//! `AT_SYMLINK_FOLLOW`, `unlinkat`, which all act on a link itself, never on its target).
//!
//! Invariants: a [`Dir`] is always a real directory reached without a symbolic link from the
//! [`Dir::root`] it came from; a name passed to a `Dir` method is one plain component (no `/`,
//! not `.` or `..`, no NUL); [`Dir::read_regular`] reads only regular files (a FIFO, device,
//! socket or directory is refused without blocking) and never more than its limit.
//!
//! Boundary: Linux only (`renameat2` with `RENAME_EXCHANGE`; where a file system lacks it,
//! [`Dir::exchange`] says so and the caller falls back to a plain rename).

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// An open directory, reached without following a symbolic link.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

/// What a name in a directory is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Special,
}

/// The identity and shape of a file, as `fstat` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub kind: Kind,
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mode: u32,
    /// How many names the file has.
    pub links: u64,
}

/// Why [`Dir::read_regular`] read nothing.
#[derive(Debug)]
pub enum ReadError {
    /// No such file.
    Missing,
    /// A symbolic link, FIFO, device, socket or directory stands at the name.
    NotRegular(Kind),
    /// Larger than the limit (its length).
    TooLarge(u64),
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Missing => f.write_str("no such file"),
            ReadError::NotRegular(Kind::Symlink) => f.write_str("it is a symbolic link, which is never followed"),
            ReadError::NotRegular(Kind::Dir) => f.write_str("it is a directory"),
            ReadError::NotRegular(Kind::File) => f.write_str("it is not a regular file"),
            ReadError::NotRegular(Kind::Special) => f.write_str("it is not a regular file (a FIFO, socket or device)"),
            ReadError::TooLarge(len) => write!(f, "it holds {len} bytes, more than allowed"),
            ReadError::Io(error) => write!(f, "{}", lower(error)),
        }
    }
}

impl Dir {
    /// Opens a trusted directory by path (the root the user named; the links above it are the
    /// user's own choice). The directory itself must not be a symbolic link.
    pub fn root(path: &Path) -> io::Result<Dir> {
        let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| invalid("a path holds a NUL byte"))?;
        // SAFETY: a valid NUL-terminated path; the result is checked before use.
        let fd = unsafe {
            libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        };
        owned(fd).map(|fd| Dir { fd })
    }

    /// The subdirectory `name`, created (mode 0o755) when `create` and missing. A symbolic
    /// link or a file there is refused (`ELOOP`/`ENOTDIR`, reported as such).
    pub fn subdir(&self, name: &str, create: bool) -> io::Result<Dir> {
        let c_name = component(name)?;
        loop {
            // SAFETY: a valid descriptor and NUL-terminated name.
            let fd = unsafe {
                libc::openat(
                    self.fd.as_raw_fd(),
                    c_name.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            match owned(fd) {
                Ok(fd) => return Ok(Dir { fd }),
                Err(error) if create && error.kind() == io::ErrorKind::NotFound => {
                    // SAFETY: as above.
                    let made = unsafe { libc::mkdirat(self.fd.as_raw_fd(), c_name.as_ptr(), 0o755) };
                    if made != 0 {
                        let error = io::Error::last_os_error();
                        if error.kind() != io::ErrorKind::AlreadyExists {
                            return Err(error);
                        }
                    }
                }
                Err(error) => {
                    // O_DIRECTORY with O_NOFOLLOW answers ENOTDIR for a link: say which it is.
                    if let Ok(Some(stat)) = self.stat(name)
                        && stat.kind == Kind::Symlink
                    {
                        return Err(not_followed(io::Error::from_raw_os_error(libc::ELOOP), name));
                    }
                    return Err(not_followed(error, name));
                }
            }
        }
    }

    /// Walks a `/`-separated relative path of directories (each component plain).
    pub fn walk(&self, relative: &str, create: bool) -> io::Result<Dir> {
        let mut dir = self.subdir_self()?;
        for segment in relative.split('/').filter(|s| !s.is_empty()) {
            dir = dir.subdir(segment, create)?;
        }
        Ok(dir)
    }

    fn subdir_self(&self) -> io::Result<Dir> {
        self.fd.try_clone().map(|fd| Dir { fd })
    }

    /// What stands at `name`, without following it; `None` when nothing does.
    pub fn stat(&self, name: &str) -> io::Result<Option<Stat>> {
        let c_name = component(name)?;
        let mut raw = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a valid descriptor, name and output buffer.
        let result =
            unsafe { libc::fstatat(self.fd.as_raw_fd(), c_name.as_ptr(), raw.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
        if result != 0 {
            let error = io::Error::last_os_error();
            return if error.kind() == io::ErrorKind::NotFound { Ok(None) } else { Err(error) };
        }
        // SAFETY: fstatat succeeded, so the buffer is initialised.
        Ok(Some(stat_of(&unsafe { raw.assume_init() })))
    }

    /// Opens the regular file `name` for reading without following a link and without
    /// blocking on a FIFO; anything but a regular file is refused.
    pub fn open_regular(&self, name: &str) -> Result<(File, Stat), ReadError> {
        let c_name = component(name).map_err(ReadError::Io)?;
        // SAFETY: a valid descriptor and name.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c_name.as_ptr(),
                libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
            )
        };
        let fd = match owned(fd) {
            Ok(fd) => fd,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
            Err(error) if error.raw_os_error() == Some(libc::ELOOP) => {
                return Err(ReadError::NotRegular(Kind::Symlink));
            }
            Err(error) => {
                // A FIFO without a writer still opens with O_NONBLOCK; a device may refuse.
                return match self.stat(name) {
                    Ok(Some(stat)) if stat.kind != Kind::File => Err(ReadError::NotRegular(stat.kind)),
                    _ => Err(ReadError::Io(error)),
                };
            }
        };
        let file = File::from(fd);
        let stat = fstat(&file).map_err(ReadError::Io)?;
        if stat.kind != Kind::File {
            return Err(ReadError::NotRegular(stat.kind));
        }
        Ok((file, stat))
    }

    /// Reads the regular file `name`, at most `limit` bytes (see [`Dir::open_regular`]).
    pub fn read_regular(&self, name: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        self.read_regular_stat(name, limit).map(|(bytes, _)| bytes)
    }

    /// [`Dir::read_regular`], with the file's identity as it was read.
    pub fn read_regular_stat(&self, name: &str, limit: u64) -> Result<(Vec<u8>, Stat), ReadError> {
        let (file, stat) = self.open_regular(name)?;
        if stat.len > limit {
            return Err(ReadError::TooLarge(stat.len));
        }
        // The length may grow between fstat and read: read at most one byte past the limit.
        let mut bytes = Vec::with_capacity(stat.len as usize);
        (&file).take(limit + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
        if bytes.len() as u64 > limit {
            return Err(ReadError::TooLarge(bytes.len() as u64));
        }
        Ok((bytes, stat))
    }

    /// Whether the regular file `name` holds exactly `expected`, with the file's identity as it
    /// was read. Read in blocks and compared as it goes: no buffer of the file's size is made
    /// (a write-back compares a whole source file several times, and fresh file-sized buffers
    /// cost more in page faults than the reads themselves).
    pub fn regular_holds(&self, name: &str, expected: &[u8]) -> Result<(bool, Stat), ReadError> {
        self.regular_holds_parts(name, &[expected])
    }

    /// [`Dir::regular_holds`] of the concatenation of `parts` (a byte-order mark and a text),
    /// without making it.
    pub fn regular_holds_parts(&self, name: &str, parts: &[&[u8]]) -> Result<(bool, Stat), ReadError> {
        let (file, stat) = self.open_regular(name)?;
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if stat.len != total as u64 {
            return Ok((false, stat));
        }
        let mut block = vec![0u8; 64 << 10];
        let mut expected = parts.iter().flat_map(|p| p.chunks(64 << 10)).filter(|c| !c.is_empty());
        // `pending`: what is left of the expected chunk being compared.
        let mut pending: &[u8] = &[];
        let mut at = 0usize;
        loop {
            let n = match (&file).read(&mut block) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::Io(e)),
            };
            if n == 0 {
                return Ok((at == total && pending.is_empty(), stat));
            }
            if at + n > total {
                return Ok((false, stat));
            }
            let mut read = &block[..n];
            while !read.is_empty() {
                if pending.is_empty() {
                    match expected.next() {
                        Some(chunk) => pending = chunk,
                        None => return Ok((false, stat)),
                    }
                }
                let k = read.len().min(pending.len());
                if read[..k] != pending[..k] {
                    return Ok((false, stat));
                }
                read = &read[k..];
                pending = &pending[k..];
            }
            at += n;
        }
    }

    /// Creates `name` exclusively (it must not exist, not even as a dangling link) for writing.
    pub fn create_new(&self, name: &str, mode: u32) -> io::Result<File> {
        let c_name = component(name)?;
        // SAFETY: a valid descriptor and name.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c_name.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        owned(fd).map(File::from)
    }

    /// Opens (creating when missing) a regular file for locking; never follows a link.
    pub fn open_lock(&self, name: &str, create: bool) -> io::Result<File> {
        let c_name = component(name)?;
        // Non-blocking: a FIFO planted at the name must not hang the open (it is then refused).
        let flags = if create { libc::O_RDWR | libc::O_CREAT } else { libc::O_RDONLY } | libc::O_NONBLOCK;
        // SAFETY: a valid descriptor and name.
        let fd = unsafe {
            libc::openat(self.fd.as_raw_fd(), c_name.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0o644)
        };
        let file = owned(fd).map(File::from).map_err(|e| not_followed(e, name))?;
        if fstat(&file)?.kind != Kind::File {
            return Err(invalid(&format!("{name} is not a regular file")));
        }
        Ok(file)
    }

    /// Opens (creating when missing, mode 0600) a regular file for appending; never follows a
    /// link and never blocks on a FIFO (anything but a regular file is refused).
    pub fn open_append(&self, name: &str) -> io::Result<File> {
        let c_name = component(name)?;
        let flags =
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid descriptor and name.
        let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c_name.as_ptr(), flags, 0o600) };
        let file = owned(fd).map(File::from).map_err(|e| not_followed(e, name))?;
        if fstat(&file)?.kind != Kind::File {
            return Err(invalid(&format!("{name} is not a regular file")));
        }
        Ok(file)
    }

    /// Replaces `name` with `bytes` atomically: written under a staging name created
    /// exclusively, fsynced, renamed over `name`, and the directory fsynced. `during` runs
    /// between the staging and the rename (a fault point).
    pub fn replace(&self, name: &str, bytes: &[u8], during: impl FnOnce()) -> io::Result<()> {
        self.replace_with(name, bytes, true, during)
    }

    /// [`Dir::replace`] without the two fsyncs: still atomic for every reader and against the
    /// death of the process (the rename is the page cache's), but an OS crash may leave the old
    /// content, or a file a reader must be able to refuse (a sealed one).
    pub fn replace_unsynced(&self, name: &str, bytes: &[u8], during: impl FnOnce()) -> io::Result<()> {
        self.replace_with(name, bytes, false, during)
    }

    fn replace_with(&self, name: &str, bytes: &[u8], synced: bool, during: impl FnOnce()) -> io::Result<()> {
        use std::io::Write;
        let staging = format!("{name}.new");
        self.remove(&staging)?;
        let result = (|| -> io::Result<()> {
            let mut file = self.create_new(&staging, 0o600)?;
            file.write_all(bytes)?;
            if synced {
                file.sync_all()?;
            }
            during();
            self.rename(&staging, self, name)?;
            if synced { self.sync() } else { Ok(()) }
        })();
        if result.is_err() {
            let _ = self.remove(&staging);
        }
        result
    }

    /// [`Dir::replace`] (`synced`, which it is) or [`Dir::replace_unsynced`] for a file whose
    /// readers ignore trailing whitespace (JSON), unsynced without freeing a block: the staged
    /// name `name.new` keeps the
    /// content replaced last time, is overwritten in place (padded with spaces where the old
    /// content was longer, cut only where it was more than twice as long) and exchanged with
    /// `name`. On a file system mounted with `discard`, freeing the replaced inode waited for
    /// the device (about 0.35 ms on the project's machines) in every checkpoint of a session
    /// table. A staged name that is not a plain file of one link is removed and made afresh; on
    /// a file system without an exchange (and for the first content) the staged file is renamed.
    pub fn replace_reusing(&self, name: &str, bytes: &[u8], synced: bool, during: impl FnOnce()) -> io::Result<()> {
        use std::io::{Seek, Write};
        // A synced replacement takes a fresh inode (and leaves no staged file): reused, the
        // staged file would hold the content before this one, which a later unsynced
        // replacement could show again after an OS crash in place of this synced one.
        if synced {
            return self.replace_with(name, bytes, true, during);
        }
        let staging = format!("{name}.new");
        let mut file = self.open_reusable(&staging)?;
        let result = (|| -> io::Result<bool> {
            let old = file.metadata()?.len();
            file.seek(io::SeekFrom::Start(0))?;
            file.write_all(bytes)?;
            let len = bytes.len() as u64;
            if old > 2 * len.max(1) {
                file.set_len(len)?;
            } else if old > len {
                file.write_all(&vec![b' '; (old - len) as usize])?;
            }
            if synced {
                file.sync_all()?;
            }
            during();
            match self.exchange(&staging, name) {
                Ok(true) => Ok(true),
                Ok(false) => Ok(false),
                Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
                Err(error) => Err(error),
            }
        })();
        match result {
            Ok(true) => {
                if synced {
                    self.sync()?;
                }
                Ok(())
            }
            // No exchange here (or no file to exchange with yet): a rename of what was staged.
            Ok(false) => {
                self.rename(&staging, self, name)?;
                if synced { self.sync() } else { Ok(()) }
            }
            Err(error) => {
                let _ = self.remove(&staging);
                Err(error)
            }
        }
    }

    /// Opens `name` for writing in place when it is a regular file with one link (never
    /// following a link); when it is missing or anything else (then removed), creates it.
    fn open_reusable(&self, name: &str) -> io::Result<File> {
        match self.open_single(name)? {
            Some((file, _)) => Ok(file),
            None => {
                self.remove(name)?;
                self.create_new(name, 0o600)
            }
        }
    }

    /// `name` opened for writing, with its length, when it is a regular file of one link
    /// (never following a link); `None` otherwise (missing, or anything else).
    fn open_single(&self, name: &str) -> io::Result<Option<(File, u64)>> {
        let c_name = component(name)?;
        // SAFETY: a valid descriptor and name.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c_name.as_ptr(),
                libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
            )
        };
        let Ok(fd) = owned(fd) else { return Ok(None) };
        let file = File::from(fd);
        let stat = fstat(&file)?;
        Ok((stat.kind == Kind::File && stat.links == 1).then_some((file, stat.len)))
    }

    /// Keeps an empty file under the name `spare` (made now when missing), for
    /// [`Dir::create_from_spare`] to take: made after an answer, it spares the next write the
    /// allocation of an inode, which costs about 0.3 ms on a file system that has freed many
    /// lately (ext4 looks past each recently deleted inode).
    pub fn keep_spare(&self, spare: &str) -> io::Result<()> {
        match self.open_single(spare)? {
            Some((_, 0)) => Ok(()),
            _ => {
                self.remove(spare)?;
                self.create_new(spare, 0o600).map(|_| ())
            }
        }
    }

    /// [`Dir::create_new`] of `name` (mode 0600), taking the empty file `spare` when there is
    /// one (renamed, never over an existing name); otherwise made afresh.
    pub fn create_from_spare(&self, spare: &str, name: &str) -> io::Result<File> {
        let (c_from, c_to) = (component(spare)?, component(name)?);
        // SAFETY: valid descriptors and names.
        let renamed = unsafe {
            libc::renameat2(
                self.fd.as_raw_fd(),
                c_from.as_ptr(),
                self.fd.as_raw_fd(),
                c_to.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        } == 0;
        if renamed {
            match self.open_single(name)? {
                Some((file, 0)) => return Ok(file),
                _ => self.remove(name)?,
            }
        }
        self.create_new(name, 0o600)
    }

    /// Removes the name `name` (a link is removed itself, never its target). Missing is fine.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        let c_name = component(name)?;
        // SAFETY: a valid descriptor and name.
        if unsafe { libc::unlinkat(self.fd.as_raw_fd(), c_name.as_ptr(), 0) } != 0 {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::NotFound {
                return Err(error);
            }
        }
        Ok(())
    }

    /// Renames `from` in this directory to `to` in `target`, replacing what stands there.
    pub fn rename(&self, from: &str, target: &Dir, to: &str) -> io::Result<()> {
        let (c_from, c_to) = (component(from)?, component(to)?);
        // SAFETY: valid descriptors and names.
        let result =
            unsafe { libc::renameat(self.fd.as_raw_fd(), c_from.as_ptr(), target.fd.as_raw_fd(), c_to.as_ptr()) };
        if result != 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// Swaps the names `a` and `b` of this directory atomically. `Ok(false)` when the file
    /// system cannot (the caller then renames).
    pub fn exchange(&self, a: &str, b: &str) -> io::Result<bool> {
        let (c_a, c_b) = (component(a)?, component(b)?);
        // SAFETY: valid descriptors and names.
        let result = unsafe {
            libc::renameat2(self.fd.as_raw_fd(), c_a.as_ptr(), self.fd.as_raw_fd(), c_b.as_ptr(), libc::RENAME_EXCHANGE)
        };
        if result == 0 {
            return Ok(true);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => Ok(false),
            _ => Err(error),
        }
    }

    /// Makes `to` in `target` a second name of the file `from` here (a link itself is linked,
    /// never followed).
    pub fn link(&self, from: &str, target: &Dir, to: &str) -> io::Result<()> {
        let (c_from, c_to) = (component(from)?, component(to)?);
        // SAFETY: valid descriptors and names; flags 0 means a symbolic link is not followed.
        let result =
            unsafe { libc::linkat(self.fd.as_raw_fd(), c_from.as_ptr(), target.fd.as_raw_fd(), c_to.as_ptr(), 0) };
        if result != 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// Makes the directory's entries durable.
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: a valid descriptor.
        if unsafe { libc::fsync(self.fd.as_raw_fd()) } != 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// The names in this directory (not `.` and `..`), in no particular order.
    pub fn names(&self) -> io::Result<Vec<String>> {
        let fd = self.fd.try_clone()?;
        // SAFETY: fdopendir takes ownership of the duplicated descriptor on success.
        let stream = unsafe { libc::fdopendir(fd.as_raw_fd()) };
        if stream.is_null() {
            return Err(io::Error::last_os_error());
        }
        std::mem::forget(fd);
        // SAFETY: a directory stream of our own, rewound because the duplicate shares the offset.
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        loop {
            // SAFETY: a valid stream; the entry is read before the next call.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated.
            let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
            let name = name.to_string_lossy();
            if name != "." && name != ".." {
                names.push(name.into_owned());
            }
        }
        // SAFETY: closes the stream and its descriptor once.
        unsafe { libc::closedir(stream) };
        Ok(names)
    }
}

/// `fstat` of an open file.
pub fn fstat(file: &File) -> io::Result<Stat> {
    let mut raw = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: a valid descriptor and buffer.
    if unsafe { libc::fstat(file.as_raw_fd(), raw.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded.
    Ok(stat_of(&unsafe { raw.assume_init() }))
}

/// True when `name` is one plain path component.
pub fn is_component(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('\0')
}

/// Splits a canonical relative path (`a/b/c.cairn`) into its directories and its file name.
pub fn split(relative: &str) -> (&str, &str) {
    match relative.rsplit_once('/') {
        Some((dirs, name)) => (dirs, name),
        None => ("", relative),
    }
}

fn component(name: &str) -> io::Result<CString> {
    if !is_component(name) {
        return Err(invalid(&format!("{name:?} is not a plain file name")));
    }
    CString::new(name).map_err(|_| invalid("a name holds a NUL byte"))
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn stat_of(raw: &libc::stat) -> Stat {
    let kind = match raw.st_mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Symlink,
        _ => Kind::Special,
    };
    Stat {
        kind,
        dev: raw.st_dev,
        ino: raw.st_ino,
        len: raw.st_size.max(0) as u64,
        mode: raw.st_mode & 0o7777,
        links: raw.st_nlink as u64,
    }
}

/// `ELOOP`/`ENOTDIR` from an `O_NOFOLLOW` open said "a link (or a file) stands here".
fn not_followed(error: io::Error, name: &str) -> io::Error {
    match error.raw_os_error() {
        Some(libc::ELOOP) => invalid(&format!("{name} is a symbolic link, which is never followed")),
        Some(libc::ENOTDIR) => invalid(&format!("{name} is not a directory")),
        _ => error,
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.to_string())
}

fn lower(error: &io::Error) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
#[path = "safe_tests.rs"]
mod tests;
