//! The process's heap policy for the `mdp` command (issue 56).
//!
//! A localized LP at city scale allocates vectors of n·K entries (43 160 × 1 000: 345 MB
//! each) in every interior-point iteration. glibc serves each from a fresh `mmap` and
//! returns it on `free`, so every allocation pays its page faults, the kernel's zeroing of
//! every page and the TLB shootdown of the `munmap` (28.6 % of a city iteration's samples
//! in `clear_page_erms` alone, perf). With mmap off and the heap never trimmed, freed
//! blocks are reused: on 10⁴ Rome road nodes (K = 500, `mdp build pmo --container`) the
//! whole command's median wall time is 50.3 s against 62.7 s (3 paired runs, ratio 0.80;
//! system time 1.7 s against 23.6 s), its peak 1 082 MiB against 1 034 MiB (spec/lp.md
//! §4.10).

/// Serve every allocation from the heap and keep freed memory for reuse (glibc on Linux;
/// nothing elsewhere): `M_MMAP_MAX` 0, and `M_TRIM_THRESHOLD` −1, which disables trimming
/// (mallopt(3); `INT_MAX`, 2 GiB, let the whole city's freed vectors be trimmed and
/// faulted in again: its interior point took 342 s against 163–174 s). Called first in
/// `main`, before any thread starts.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; no allocation is in flight
    // on another thread (none has started).
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
    }
}
