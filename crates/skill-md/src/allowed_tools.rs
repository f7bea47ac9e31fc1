//! The Agent Skills `allowed-tools` field as tool names. The format says it
//! is a space-separated list of the tools a skill may use; clients write
//! more: Claude Code separates entries with commas too, and scopes an entry
//! to some uses of a tool with a pattern in parentheses (`Bash(git:*)`,
//! `Bash(git status:*)`). A pattern narrows a permission the host grants; the
//! tool the skill carries is still the one before the parentheses, so
//! `Bash(git:*) Read, Grep` carries `Bash`, `Read` and `Grep`. Written as a
//! list, each item is one entry. An entry with no name before its
//! parentheses names no tool; a name holding `*` (`mcp__github__*`, Claude
//! Code's pattern for an MCP server's tools) is a pattern, kept apart from
//! the names; any other name is kept as written, and the check-up's
//! `unusable-tool-name` judges it.

/// The tool names `entries` gives, in order: entries are separated by white
/// space or commas outside parentheses, and each names the tool before its
/// first `(` (the whole entry when it has none). Repeats are kept; the
/// caller keeps each name once.
pub(super) fn tool_names(entries: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut entry = String::new();
    let mut depth = 0usize;
    for c in entries.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c.is_whitespace() || c == ',') => {
                names.extend(name_of(&entry));
                entry.clear();
                continue;
            }
            _ => {}
        }
        entry.push(c);
    }
    names.extend(name_of(&entry));
    names
}

/// The tool one entry names: the text before its first `(`, trimmed; `None`
/// when that is empty. A list item of `allowed-tools` is one entry.
pub(super) fn name_of(entry: &str) -> Option<String> {
    let name = entry.split('(').next().unwrap_or_default().trim();
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_names_separated_by_spaces_or_commas() {
        assert_eq!(tool_names("Read  lookup\tgrep"), ["Read", "lookup", "grep"]);
        assert_eq!(tool_names("Read, Grep,Glob"), ["Read", "Grep", "Glob"]);
        assert_eq!(tool_names(""), Vec::<String>::new());
        assert_eq!(tool_names(" , "), Vec::<String>::new());
    }

    #[test]
    fn a_scoped_entry_names_the_tool_before_its_pattern() {
        assert_eq!(
            tool_names("Bash(git status:*) Bash(jq:*), Read"),
            ["Bash", "Bash", "Read"]
        );
        // An unclosed pattern runs to the end; a stray `)` closes nothing.
        assert_eq!(tool_names("Bash(git log Read"), ["Bash"]);
        assert_eq!(tool_names("a) b"), ["a)", "b"]);
        // Parentheses with no name before them name no tool.
        assert_eq!(tool_names("(x y) Read"), ["Read"]);
        // One entry (a list item) is taken whole up to its pattern.
        assert_eq!(name_of(" Bash (git:*) ").as_deref(), Some("Bash"));
        assert_eq!(name_of("my tool").as_deref(), Some("my tool"));
        assert_eq!(name_of(" (x)"), None);
    }
}
