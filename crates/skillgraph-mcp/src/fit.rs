//! The fit of a map to the upstream servers that serve it (SPEC §9.5, §9.7,
//! §9.10): what `serve` adds to the one preparation of a map. Each skill's
//! `allowed-tools` patterns are expanded against the upstreams' tools, and
//! every way the two do not fit is a [`Misfit`] with a stable code
//! (`docs/errors.md`), all of them said at once, each with its fix.

use std::fmt;

use skillgraph::skill_core::{SkillMap, ToolDecl, tool_pattern_matches};

use crate::upstream::{Clash, Upstreams};
use crate::warn;

/// One way a map and its upstream servers do not fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Misfit {
    /// A skill declares a tool that no upstream server offers.
    ToolNotUpstream {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
    },
    /// Two upstream servers offer one tool name, prompt name or resource
    /// URI, so a request for it could go to either.
    OfferedTwice {
        /// `tool`, `prompt` or `resource`.
        what: &'static str,
        /// The name or URI.
        name: String,
        /// The two servers.
        servers: [String; 2],
    },
    /// An upstream server offers a tool named `read_skill`,
    /// `list_skills` or (on a map with steps) `skip_step`, which serve
    /// answers itself.
    ReservedToolName {
        /// The server.
        server: String,
        /// The tool.
        tool: &'static str,
    },
    /// An upstream tool has an argument named `skillgraph_run`, which
    /// `serve --http` uses for run handles.
    RunArgumentTaken {
        /// The tool.
        tool: String,
    },
    /// A tool serve lists itself could not be put in MCP's shape.
    Unlistable {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
}

impl Misfit {
    /// The stable code of the misfit.
    pub fn code(&self) -> &'static str {
        match self {
            Misfit::ToolNotUpstream { .. } => "tool-not-upstream",
            Misfit::OfferedTwice { .. } => "offered-twice",
            Misfit::ReservedToolName { .. } => "reserved-tool-name",
            Misfit::RunArgumentTaken { .. } => "run-argument-taken",
            Misfit::Unlistable { .. } => "tool-unlistable",
        }
    }
}

impl fmt::Display for Misfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Misfit::ToolNotUpstream { skill, tool } => write!(
                f,
                "skill \"{skill}\" declares tool \"{tool}\", which no upstream server offers; add the server that has it under `mcpServers` in skillmap.json, or remove the tool from the skill"
            ),
            Misfit::OfferedTwice {
                what,
                name,
                servers,
            } => write!(
                f,
                "{what} \"{}\" is offered by two upstream servers, \"{}\" and \"{}\"; a request for it could go to either: remove it from one of them",
                name.escape_debug(),
                servers[0],
                servers[1]
            ),
            Misfit::ReservedToolName { server, tool } => write!(
                f,
                "upstream server \"{server}\" offers a tool named \"{tool}\", which skillgraph serve answers itself, so it could never be called; rename it in that server"
            ),
            Misfit::RunArgumentTaken { tool } => write!(
                f,
                "upstream tool \"{tool}\" has an argument named \"skillgraph_run\", which skillgraph serve --http uses for run handles, so it could never reach that tool; rename it in its server"
            ),
            Misfit::Unlistable { tool, reason } => write!(
                f,
                "tool \"{tool}\" cannot be listed in MCP's shape: {reason}; report this as a bug of skillgraph serve"
            ),
        }
    }
}

/// Every misfit of a map to its upstreams, and the tools the upstreams
/// offer, said together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfits {
    /// Each misfit, in the order found.
    pub misfits: Vec<Misfit>,
    /// The tools the upstream servers offer, when what is misfit is the
    /// map's tools against theirs.
    pub offered: Option<Vec<String>>,
}

impl fmt::Display for Misfits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the map and its upstream servers do not fit together ({} problem(s)):",
            self.misfits.len()
        )?;
        for misfit in &self.misfits {
            write!(f, "\n  error[{}]: {misfit}", misfit.code())?;
        }
        if self.offered.is_some() {
            write!(f, "\n  ")?;
        }
        match self.offered.as_deref() {
            None => Ok(()),
            Some([]) => write!(f, "(the upstream servers offer: no tools)"),
            Some(offered) => write!(f, "(the upstream servers offer: {})", offered.join(", ")),
        }
    }
}

impl Misfits {
    /// `misfits` beside the tools `upstreams` offer; `None` when there are
    /// none.
    pub(crate) fn of(misfits: Vec<Misfit>, upstreams: &Upstreams) -> Option<Self> {
        (!misfits.is_empty()).then(|| Misfits {
            misfits,
            offered: Some(
                upstreams
                    .tools()
                    .map(|tool| tool.name.to_string())
                    .collect(),
            ),
        })
    }
}

/// Give each skill the upstream tools its `allowed-tools` patterns match
/// (`mcp__github__*`; SPEC §7.4), in tool-name order after the tools it
/// names; a pattern that matches no upstream tool is said on standard error.
pub(crate) fn expand_tool_patterns(map: &mut SkillMap, upstreams: &Upstreams) {
    for skill in &mut map.skills {
        for pattern in &skill.tool_patterns {
            let mut matched = false;
            for tool in upstreams.tools() {
                let name = tool.name.as_ref();
                let server = upstreams.server_of(name).unwrap_or_default();
                if tool_pattern_matches(pattern, server, name) {
                    matched = true;
                    if skill.tool(name).is_none() {
                        skill.tools.push(ToolDecl::new(name));
                    }
                }
            }
            if !matched {
                warn(&format!(
                    "skill \"{}\" allows the tools `{pattern}`, which match no upstream tool, so the pattern carries none",
                    skill.id
                ));
            }
        }
    }
}

/// The misfits of `map` to `upstreams`: a tool a skill declares that no
/// upstream offers, and upstreams that offer one tool name (`clashes`), one
/// prompt name or one resource URI (`passthrough`) twice, or a tool serve
/// answers itself. A tool a skill's own `SKILL.md` names (`allowed-tools`,
/// written for whatever host runs the skill: `Read`, `Bash`) is no misfit:
/// it is said on standard error, and never offered.
pub(crate) fn misfits(
    map: &SkillMap,
    tools_from_files: &[String],
    upstreams: &Upstreams,
    clashes: &[Clash],
    passthrough: &[(&'static str, String, [String; 2])],
) -> Vec<Misfit> {
    let mut found: Vec<Misfit> = passthrough
        .iter()
        .map(|(what, name, servers)| Misfit::OfferedTwice {
            what,
            name: name.clone(),
            servers: servers.clone(),
        })
        .collect();
    // `skip_step` is the session's own on a map with steps (SPEC §15.7).
    let stepped = map
        .skills
        .iter()
        .any(|skill| skill.steps.as_ref().is_some_and(|steps| !steps.is_empty()));
    let reserved: &[&'static str] = if stepped {
        &["read_skill", "list_skills", "skip_step"]
    } else {
        &["read_skill", "list_skills"]
    };
    for &tool in reserved {
        if let Some(server) = upstreams.server_of(tool) {
            found.push(Misfit::ReservedToolName {
                server: server.to_owned(),
                tool,
            });
        }
    }
    found.extend(clashes.iter().map(|clash| Misfit::OfferedTwice {
        what: "tool",
        name: clash.tool.clone(),
        servers: clash.servers.clone(),
    }));
    for skill in &map.skills {
        let from_file = tools_from_files.contains(&skill.id);
        for tool in &skill.tools {
            if upstreams.server_of(&tool.name).is_some() {
                continue;
            }
            if from_file {
                warn(&format!(
                    "skill \"{}\" allows tool \"{}\" in its SKILL.md, which no upstream server offers, so it is not offered here",
                    skill.id, tool.name
                ));
            } else {
                found.push(Misfit::ToolNotUpstream {
                    skill: skill.id.clone(),
                    tool: tool.name.clone(),
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_misfit_is_said_with_its_code_and_the_offered_tools_close_the_list() {
        let misfits = Misfits {
            misfits: vec![
                Misfit::ToolNotUpstream {
                    skill: "refunds".into(),
                    tool: "issue_refund".into(),
                },
                Misfit::OfferedTwice {
                    what: "prompt",
                    name: "greet".into(),
                    servers: ["a".into(), "b".into()],
                },
            ],
            offered: Some(vec!["lookup_order".into()]),
        };
        let text = misfits.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "the map and its upstream servers do not fit together (2 problem(s)):"
        );
        assert!(
            lines[1].starts_with(
                "  error[tool-not-upstream]: skill \"refunds\" declares tool \"issue_refund\""
            ),
            "{text}"
        );
        assert!(lines[2].starts_with("  error[offered-twice]: prompt \"greet\" is offered by two upstream servers, \"a\" and \"b\""), "{text}");
        assert_eq!(lines[3], "  (the upstream servers offer: lookup_order)");
    }
}
