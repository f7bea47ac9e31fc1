//! Tool-name patterns: `allowed-tools` entries with a `*` wildcard, such as
//! Claude Code's `mcp__github__*` (every tool of the MCP server `github`).
//! A pattern is not a tool name; a server that knows its tools expands it
//! into the tools it matches (`skillgraph serve` does, at start-up), and
//! anywhere else it carries nothing.

/// Whether `pattern` matches the tool `tool` of the MCP server `server`.
///
/// `*` matches any run of characters (none included) and every other
/// character matches itself. The pattern is tried on the tool's own name
/// and on the name Claude Code gives an MCP tool, `mcp__SERVER__TOOL`, so
/// that a skill written for Claude Code carries the same tools here.
///
/// ```
/// use skill_core::tool_pattern_matches;
///
/// assert!(tool_pattern_matches("mcp__github__*", "github", "create_issue"));
/// assert!(!tool_pattern_matches("mcp__github__*", "gitlab", "create_issue"));
/// assert!(tool_pattern_matches("get_*", "time", "get_current_time"));
/// assert!(!tool_pattern_matches("get_*", "time", "convert_time"));
/// ```
pub fn tool_pattern_matches(pattern: &str, server: &str, tool: &str) -> bool {
    glob(pattern.as_bytes(), tool.as_bytes())
        || glob(
            pattern.as_bytes(),
            format!("mcp__{server}__{tool}").as_bytes(),
        )
}

/// Whether an `allowed-tools` entry is a pattern rather than a tool name:
/// it holds a `*`.
pub fn is_tool_pattern(entry: &str) -> bool {
    entry.contains('*')
}

/// `*`-only glob matching, linear in the text with one point to return to
/// (the last `*`), so that no pattern can make it slow.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(c) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_any_run_and_the_rest_matches_itself() {
        for (pattern, text, expected) in [
            ("*", "", true),
            ("*", "anything", true),
            ("a*c", "abc", true),
            ("a*c", "ac", true),
            ("a*c", "abd", false),
            ("a**c", "abbbc", true),
            ("*x*y*", "axbxcy", true),
            ("*x*y*", "ayx", false),
            ("read", "read", true),
            ("read", "reads", false),
            ("", "", true),
            ("", "a", false),
        ] {
            assert_eq!(
                glob(pattern.as_bytes(), text.as_bytes()),
                expected,
                "{pattern} on {text}"
            );
        }
    }

    #[test]
    fn the_claude_code_name_of_a_tool_is_tried_too() {
        assert!(tool_pattern_matches("mcp__*__read", "fs", "read"));
        assert!(tool_pattern_matches("mcp__fs__*", "fs", "write_file"));
        assert!(!tool_pattern_matches("mcp__fs__*", "fsx", "write_file"));
        assert!(is_tool_pattern("mcp__github__*"));
        assert!(!is_tool_pattern("Bash"));
    }
}
