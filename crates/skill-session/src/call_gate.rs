//! The call gate (SPEC §9.3): whether a call of a host tool is accepted
//! under the session's [`CallPolicy`], and the teaching answer of a refusal.
//! A refusal names the visible skills that carry the tool, each said to be
//! one a read can take from here or not, and never a hidden skill.

use crate::gate::Gate;
use crate::record::{CallPolicy, CallRefusal};

/// The call gate's verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallVerdict {
    /// The call may go ahead.
    Admitted,
    /// The call is refused: the skills the answer names, and its text.
    Refused {
        refusal: CallRefusal,
        named: Vec<String>,
        text: String,
    },
}

/// Judge a call of `tool` under `policy`, where `offered` says whether an
/// active skill carries it; `gate` judges the reads that would bring it. A
/// tool withheld from the session (SPEC §14.8) is refused under every
/// policy.
pub(crate) fn judge_call(
    gate: &Gate<'_>,
    policy: CallPolicy,
    tool: &str,
    offered: bool,
) -> CallVerdict {
    // A tool only withheld skills carry is refused under every policy,
    // naming no skill: no skill of the session's map carries it.
    let withheld = gate.graph.withholds_tool(tool);
    if !withheld && (offered || policy != CallPolicy::Strict) {
        return CallVerdict::Admitted;
    }
    let mut readable = Vec::new();
    let mut out_of_reach = Vec::new();
    for skill in &gate.graph.map().skills {
        let id = skill.id.as_str();
        if skill.tool(tool).is_none()
            || gate.hidden.iter().any(|hidden| hidden == id)
            || readable.contains(&id)
            || out_of_reach.contains(&id)
        {
            continue;
        }
        if gate.judge(id).refusal.is_none() {
            readable.push(id);
        } else {
            out_of_reach.push(id);
        }
    }
    let named: Vec<String> = readable
        .iter()
        .chain(&out_of_reach)
        .map(|id| (*id).to_owned())
        .collect();
    CallVerdict::Refused {
        refusal: CallRefusal::NotOffered,
        text: refusal_text(tool, &readable, &out_of_reach),
        named,
    }
}

/// The words of a `not-offered` refusal.
fn refusal_text(tool: &str, readable: &[&str], out_of_reach: &[&str]) -> String {
    let mut text = format!("{tool} is not offered from here, so this call was not made.");
    if readable.is_empty() && out_of_reach.is_empty() {
        text.push_str(" Call one of the tools listed now.");
        return text;
    }
    if !readable.is_empty() {
        text.push_str(&format!(
            " It comes with {}; read_skill can take {} from here, and the tool comes with it.",
            quoted(readable),
            if readable.len() == 1 {
                "it"
            } else {
                "any of them"
            }
        ));
    }
    if !out_of_reach.is_empty() {
        text.push_str(&format!(
            " {} {} it too, but read_skill cannot take {} from here.",
            capitalised(&quoted(out_of_reach)),
            if out_of_reach.len() == 1 {
                "carries"
            } else {
                "carry"
            },
            if out_of_reach.len() == 1 {
                "it"
            } else {
                "them"
            }
        ));
    }
    text
}

/// `skill 'a'` or `skills 'a', 'b'`.
fn quoted(ids: &[&str]) -> String {
    let listed: Vec<String> = ids.iter().map(|id| format!("'{id}'")).collect();
    if ids.len() == 1 {
        format!("skill {}", listed[0])
    } else {
        format!("skills {}", listed.join(", "))
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_which_read_brings_the_tool() {
        assert_eq!(
            refusal_text("refund", &["billing"], &["audit", "ops"]),
            "refund is not offered from here, so this call was not made. It comes with skill 'billing'; \
             read_skill can take it from here, and the tool comes with it. Skills 'audit', 'ops' carry it \
             too, but read_skill cannot take them from here."
        );
        assert_eq!(
            refusal_text("refund", &[], &[]),
            "refund is not offered from here, so this call was not made. Call one of the tools listed now."
        );
    }
}
