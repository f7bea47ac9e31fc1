//! The reference's runbook keys in a `SKILL.md` front matter: `tools` (the
//! skill's tools) and `routes` (where the cursor may go from the skill). A
//! file picks tool names and skill ids; it never defines a condition: a route
//! fires on one of the file's own tools returning, on a result status from
//! the closed set, or both, or is a bare edge the model may take.

use skill_core::{ResultStatus, Route};

use super::yaml::Yaml;

/// Every route item form, quoted by each refusal.
const GRAMMAR: &str = "a route item is `- TARGET` (the model may move there), `- TARGET: on TOOL` \
     (after this skill's tool TOOL returns), `- TARGET: status=a,b` (when a tool result declares \
     one of these statuses) or `- TARGET: on TOOL status=a,b`, where TARGET is a skill of this \
     folder and the statuses are success, failure, denied, invalid, partial, pending, absent";

/// A route a `SKILL.md` declares, with the item as written (for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct FileRoute {
    /// The route, `from` being the skill's folder name.
    pub route: Route,
    /// The item as written, `TARGET` or `TARGET: GUARD`.
    pub item: String,
}

/// The names the `tools` key gives: a list, or names separated by commas.
pub(super) fn read_tools(value: &Yaml) -> Result<Vec<String>, String> {
    let names: Vec<String> = match value {
        Yaml::Str(text) => text.split(',').map(str::trim).map(str::to_owned).collect(),
        Yaml::Seq(items) => items
            .iter()
            .map(|item| match item {
                Yaml::Str(name) => Ok(name.trim().to_owned()),
                other => Err(format!(
                    "item `{}` is not a tool name; write one name per `- ` line",
                    shown(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        Yaml::Map(_) => {
            return Err("it must be a list of tool names, or names separated by commas".to_owned());
        }
    };
    let names: Vec<String> = names.into_iter().filter(|n| !n.is_empty()).collect();
    if names.is_empty() {
        return Err("it names no tool; name the skill's tools, or remove the key".to_owned());
    }
    Ok(names)
}

/// The routes the `routes` key declares out of `from`, and a message for
/// each item that breaks the grammar. `tools` are the file's own tools, the
/// only ones a route may fire on.
pub(super) fn read_routes(
    from: &str,
    value: &Yaml,
    tools: &[String],
) -> (Vec<FileRoute>, Vec<String>) {
    let items = match value {
        Yaml::Seq(items) if !items.is_empty() => items,
        Yaml::Str(text) if text.trim().is_empty() => {
            let message = format!("it lists no route; remove the key, or list routes: {GRAMMAR}");
            return (Vec::new(), vec![message]);
        }
        _ => {
            let message = format!("it must be a list, one route per `- ` line: {GRAMMAR}");
            return (Vec::new(), vec![message]);
        }
    };
    let mut routes: Vec<FileRoute> = Vec::new();
    let mut broken = Vec::new();
    for item in items {
        match read_route(from, item, tools) {
            Ok(found) if routes.iter().any(|r| r.route.to == found.route.to) => {
                broken.push(format!(
                    "item `{}` is a second route to `{}`; keep one route per target",
                    found.item, found.route.to
                ));
            }
            Ok(found) => routes.push(found),
            Err(message) => broken.push(message),
        }
    }
    (routes, broken)
}

/// One route item: `TARGET`, or a mapping `TARGET: GUARD`.
fn read_route(from: &str, item: &Yaml, tools: &[String]) -> Result<FileRoute, String> {
    let written = shown(item);
    let (target, guard) = match item {
        Yaml::Str(target) => (target.trim(), ""),
        Yaml::Map(fields) => match fields.as_slice() {
            [(target, Yaml::Str(guard))] => (target.trim(), guard.trim()),
            _ => return Err(format!("item `{written}` is not a route: {GRAMMAR}")),
        },
        Yaml::Seq(_) => return Err(format!("item `{written}` is not a route: {GRAMMAR}")),
    };
    if target.is_empty() {
        return Err(format!("item `{written}` names no target skill: {GRAMMAR}"));
    }
    let mut route = Route::new(from, target);
    let (tool, statuses) = parse_guard(guard).ok_or_else(|| {
        format!("item `{written}` has a guard this grammar does not know: {GRAMMAR}")
    })?;
    if let Some(tool) = tool {
        if !tools.iter().any(|own| own == tool) {
            let own = if tools.is_empty() {
                "the file names none".to_owned()
            } else {
                format!("they are: {}", tools.join(", "))
            };
            return Err(format!(
                "item `{written}` fires on `{tool}`, which is not one of this file's tools ({own}); add it to `tools`, or fix the name"
            ));
        }
        route.on_tool_return = Some(tool.to_owned());
    }
    if let Some(statuses) = statuses {
        if let Some(unknown) = statuses.iter().find(|s| !ResultStatus::is_status(s)) {
            return Err(format!(
                "item `{written}` names the status `{unknown}`, which is not one of: {}",
                ResultStatus::listed()
            ));
        }
        route.on_tool_status = Some(statuses.into_iter().map(str::to_owned).collect());
    }
    Ok(FileRoute {
        route,
        item: written,
    })
}

/// `on TOOL`, `status=a,b`, both in that order, or nothing: the tool and the
/// statuses; `None` for anything else.
fn parse_guard(guard: &str) -> Option<(Option<&str>, Option<Vec<&str>>)> {
    let on = guard
        .strip_prefix("on")
        .filter(|after| after.starts_with(char::is_whitespace));
    let (tool, rest) = match on {
        Some(after) => {
            let after = after.trim_start();
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            (Some(&after[..end]), after[end..].trim_start())
        }
        None => (None, guard),
    };
    if rest.is_empty() {
        return Some((tool, None));
    }
    let list = rest.strip_prefix("status=")?;
    let spelled = list
        .chars()
        .all(|c| c.is_ascii_alphabetic() || c == ',' || c.is_whitespace());
    let statuses: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    (spelled && !statuses.is_empty()).then_some((tool, Some(statuses)))
}

/// An item as the author wrote it, for messages.
fn shown(item: &Yaml) -> String {
    match item {
        Yaml::Str(text) => text.clone(),
        Yaml::Seq(items) => format!(
            "- {}",
            items.iter().map(shown).collect::<Vec<_>>().join(", ")
        ),
        Yaml::Map(fields) => fields
            .iter()
            .map(|(key, value)| match value {
                Yaml::Str(text) if text.is_empty() => format!("{key}:"),
                value => format!("{key}: {}", shown(value)),
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}
