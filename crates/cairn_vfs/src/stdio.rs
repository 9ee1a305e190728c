//! The protocol servers' standard descriptors (`cairn lsp`, `cairn mcp`; protocol §16.1, §17).
//!
//! A server speaks its protocol on descriptors 0 and 1, and nothing else may ever touch them: not
//! a stray `println!`, not a program the server starts. [`reserve_protocol_descriptors`] keeps
//! private duplicates of both for the wire, then points descriptor 1 at standard error and
//! descriptor 0 at the null device. The duplicates are close-on-exec, so no program the server
//! starts (a harness build, a linker, an agent's test) inherits the wire. It is the one place the
//! servers do this, and the only `unsafe` either needs.

use std::fs::File;
use std::os::fd::FromRawFd;

/// Takes descriptors 0 and 1 for the protocol: returns files for the wire's input and output,
/// after which descriptor 1 is standard error and descriptor 0 reads nothing. `Err` when the
/// descriptors could not be duplicated (nothing was moved then).
pub fn reserve_protocol_descriptors() -> std::io::Result<(File, File)> {
    // SAFETY: plain descriptor calls on this process's own standard descriptors; each result is
    // checked before use, and the duplicates are owned by the files made from them.
    unsafe {
        let wire_in = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
        if wire_in < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let wire_in = File::from_raw_fd(wire_in);
        let wire_out = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if wire_out < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let wire_out = File::from_raw_fd(wire_out);
        libc::dup2(2, 1);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::close(null);
        }
        Ok((wire_in, wire_out))
    }
}
