//! Broken pipes end quietly (issue 33: `mdp bound packing … | head -c 10` and
//! `mdp demo | head -1` panicked with exit 101). Rust ignores SIGPIPE, so a write to a
//! closed pipe returns an error and `println!` panics; the binaries restore the default
//! action, so a reader that stops early ends the writer silently, as with any Unix tool.

/// Restore SIGPIPE's default action (Unix; nothing elsewhere). Called first in `main`.
pub fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: signal() with SIG_DFL installs no handler; called before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
