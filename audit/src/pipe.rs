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

/// Parse the command line like `clap::Parser::parse`, but a usage error is one line on
/// standard error (the error and clap's tip, if any) with exit 2, instead of clap's
/// multi-line message (issue 33: `--epsilon -1`); help and version print as usual.
pub fn parse_or_exit<P: clap::Parser>(program: &str) -> P {
    use clap::error::ErrorKind;
    match P::try_parse() {
        Ok(p) => p,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                eprintln!("{program}: {}", one_line(&e.to_string()));
                std::process::exit(2)
            }
        },
    }
}

/// clap's error text on one line: its first paragraph (the error and what it lists)
/// without `error: `, then its tip.
fn one_line(text: &str) -> String {
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let first = first.join(" ");
    let first = first.trim_start_matches("error: ");
    let first = if first.is_empty() {
        "invalid arguments"
    } else {
        first
    };
    let tip = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("tip:"))
        .map(|t| format!("; {}", t.trim_start_matches("tip: ")))
        .unwrap_or_default();
    format!("{first}{tip} (see --help)")
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_errors_become_one_line() {
        let text = "error: unexpected argument '-1' found\n\n  tip: to pass '-1' as a value, use '-- -1'\n\nUsage: mdp build exponential --epsilon <EPSILON>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::one_line(text),
            "unexpected argument '-1' found; to pass '-1' as a value, use '-- -1' (see --help)"
        );
    }
}
