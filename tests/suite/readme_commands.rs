//! Issue 33: the README's command list and the parsers say the same thing. For every
//! command in the README's `## Commands` block, every flag the README names is one the
//! command's `--help` lists, and every flag `--help` lists (but `--help`, `--version`) is
//! named in the README.

use crate::common;
use std::collections::BTreeSet;

/// The commands of the README's first code block after `## Commands`: each entry is its
/// first line (starting with `mdp`) and its indented continuation lines, comments dropped.
fn readme_commands() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let after = readme
        .split("## Commands")
        .nth(1)
        .expect("a ## Commands section");
    let block = after.split("```").nth(1).expect("a code block");
    let mut entries: Vec<String> = vec![];
    for line in block.lines().skip(1) {
        let line = line.split('#').next().unwrap_or("");
        if line.starts_with("mdp") {
            entries.push(line.to_string());
        } else if line.starts_with(' ') && !line.trim().is_empty() {
            if let Some(e) = entries.last_mut() {
                e.push(' ');
                e.push_str(line.trim());
            }
        }
    }
    entries
}

/// The long flags in a text (`--name`), with `-o` counted as `--output`.
fn flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices("--") {
        let before = if i == 0 { b' ' } else { bytes[i - 1] };
        if before.is_ascii_alphanumeric() || before == b'-' {
            continue;
        }
        let name: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            out.insert(format!("--{name}"));
        }
    }
    if text
        .split_whitespace()
        .any(|w| w.trim_start_matches('[') == "-o")
    {
        out.insert("--output".into());
    }
    out
}

#[test]
fn readme_and_help_name_the_same_flags() {
    let entries = readme_commands();
    assert!(entries.len() >= 20, "{} commands found", entries.len());
    let mut problems = vec![];
    // `mdp`'s global flags (`mdp --help`): listed once, on the README's `mdp [...] <command>`
    // line, not on every subcommand's.
    let mut global = flags(&common::mdp(&["--help"]).1);
    global.remove("--help");
    global.remove("--version");
    for e in &entries {
        let words: Vec<&str> = e.split_whitespace().collect();
        let bin = words[0];
        // The subcommand path: plain words after the binary; of `a|b|c`, the first.
        let sub: Vec<&str> = words[1..]
            .iter()
            .map(|w| w.split('|').next().unwrap())
            .take_while(|w| {
                !w.is_empty()
                    && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    && !w.starts_with('-')
            })
            .filter(|w| !w.is_empty())
            .collect();
        // `calibrate`'s and `experiment`'s family is a positional value, not a subcommand.
        let sub: Vec<&str> = match sub.first() {
            Some(&"calibrate") => sub[..1].to_vec(),
            _ => sub,
        };
        let mut args: Vec<&str> = sub.clone();
        args.push("--help");
        let (_, help, err) = match bin {
            "mdp" => common::mdp(&args),
            _ => common::mdp_audit(&args),
        };
        assert!(!help.is_empty(), "{bin} {args:?}: {err}");
        let mut documented = flags(&help);
        documented.remove("--help");
        documented.remove("--version");
        if bin == "mdp" && !sub.is_empty() {
            documented.retain(|f| !global.contains(f));
        }
        let named = flags(e);
        if e.contains("[...]") {
            // Group commands whose README line lists only the common flags.
            for f in named.difference(&documented) {
                problems.push(format!(
                    "{bin} {}: README names {f}, --help does not",
                    sub.join(" ")
                ));
            }
            continue;
        }
        for f in named.difference(&documented) {
            problems.push(format!(
                "{bin} {}: README names {f}, --help does not",
                sub.join(" ")
            ));
        }
        for f in documented.difference(&named) {
            problems.push(format!(
                "{bin} {}: --help lists {f}, the README does not",
                sub.join(" ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
