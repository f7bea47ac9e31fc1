//! The check-up's claims about routes, each shown by a tool result or a
//! sound proof (SPEC §10): conditions that never decide their guard
//! (`redundant-condition`), two routes that one result fires together
//! (`ambiguous-routes`), and skills every way into which is dead
//! (`dead-skill`).

use skill_core::{IdHashMap, IdHashSet, Route, SkillMap};
use skill_guard::{
    Condition, Examination, NearMiss, Preconditions, Redundancy, Setting, Witness,
    condition_caption, examine, witness,
};

use crate::code::ProblemCode;
use crate::graph::Compiled;
use crate::problem::Problem;

/// Each route of a map as the witness checks see it.
pub(crate) struct Routes<'m> {
    map: &'m SkillMap,
    /// Per route: its guard's conditions (`None` when refused), its setting
    /// and its examination.
    judged: Vec<Judged>,
}

struct Judged {
    conditions: Option<Vec<Condition>>,
    setting: Setting,
    examination: Examination,
}

impl<'m> Routes<'m> {
    /// Every route's guard, `compiled` once by the caller, examined once.
    pub(crate) fn new(map: &'m SkillMap, compiled: &[Compiled<'_>]) -> Routes<'m> {
        let judged = map
            .routes
            .iter()
            .zip(compiled)
            .map(|(route, guard)| {
                let pre = Preconditions {
                    on_tool_statuses: route.on_tool_status.as_deref(),
                    on_tool_return_exact: route.on_tool_return.as_deref(),
                };
                let setting = Setting::new(&pre, Some(&route.from));
                let conditions = match guard {
                    None => Some(Vec::new()),
                    Some(guard) => guard.ok().map(|g| g.data().conditions().to_vec()),
                };
                let examination = match &conditions {
                    Some(conditions) if route.is_deterministic() => examine(conditions, &setting),
                    _ => Examination {
                        witness: Witness::Unknown,
                        near_misses: Vec::new(),
                    },
                };
                Judged {
                    conditions,
                    setting,
                    examination,
                }
            })
            .collect();
        Routes { map, judged }
    }

    /// Whether route `index` can never move the cursor: its guard is refused
    /// or provably never passes.
    fn is_dead(&self, index: usize) -> bool {
        let judged = &self.judged[index];
        judged.conditions.is_none() || matches!(judged.examination.witness, Witness::Never(_))
    }
}

/// A condition as captions print it: `key OP value`.
fn caption(condition: &Condition) -> String {
    condition_caption(&condition.key, condition.op, &condition.value)
}

/// `redundant-condition`: every condition of a guard with a witness that no
/// near miss exists for, naming what makes it redundant.
pub(crate) fn redundant_conditions(routes: &Routes<'_>) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (route, judged) in routes.map.routes.iter().zip(&routes.judged) {
        let Some(conditions) = &judged.conditions else {
            continue;
        };
        for (index, near) in judged.examination.near_misses.iter().enumerate() {
            let NearMiss::Redundant(why) = near else {
                continue;
            };
            let because = match why {
                Redundancy::By(other) => format!(
                    "whatever passes `{}` passes it too",
                    caption(&conditions[*other])
                ),
                Redundancy::ByAll(others) => format!(
                    "whatever passes {} passes it too",
                    others
                        .iter()
                        .map(|at| format!("`{}`", caption(&conditions[*at])))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                Redundancy::ByItsKey => format!(
                    "every value {} can take when this route is judged passes it (the route's own \
                     preconditions, its source or the closed set of statuses fix it)",
                    conditions[index].key
                ),
            };
            let message = format!(
                "Route {}'s condition `{}` can never decide its guard: {because}, so no tool result fails it \
                 alone. Drop it, or correct it to the condition you meant.",
                route.name(),
                caption(&conditions[index])
            );
            problems.push(
                Problem::new(ProblemCode::RedundantCondition, message)
                    .about_route(&route.from, &route.to),
            );
        }
    }
    problems
}

/// Whether two routes' own preconditions exclude each other: different
/// exact tools, or disjoint status lists.
fn exclusive(a: &Route, b: &Route) -> bool {
    let tools_differ =
        matches!((&a.on_tool_return, &b.on_tool_return), (Some(x), Some(y)) if x != y);
    let statuses_disjoint = matches!(
        (&a.on_tool_status, &b.on_tool_status),
        (Some(x), Some(y)) if !x.iter().any(|s| y.contains(s))
    );
    tools_differ || statuses_disjoint
}

/// `ambiguous-routes`: for each deterministic route, the first earlier
/// route out of the same skill that one tool result fires together with it,
/// with that result. Routes that provably never fire on one result are not
/// reported; one warning per later route keeps the report linear.
pub(crate) fn ambiguous_routes(routes: &Routes<'_>) -> Vec<Problem> {
    let map = routes.map;
    let mut earlier: IdHashMap<&str, Vec<usize>> = IdHashMap::default();
    let mut problems = Vec::new();
    for (index, second) in map.routes.iter().enumerate() {
        if !second.is_deterministic() {
            continue;
        }
        let before = earlier.entry(second.from.as_str()).or_default();
        let found = before
            .iter()
            .find_map(|&first| joint(routes, first, index).map(|view| (first, view)));
        before.push(index);
        let Some((first, view)) = found else {
            continue;
        };
        let first = &map.routes[first];
        let shown = serde_json::to_string(&view).unwrap_or_default();
        let message = format!(
            "Routes {} and {} both leave \"{}\", and one tool result fires both: {shown}. The earlier route \
             wins by declaration order alone. If that order is intended, say so with preconditions or guards \
             that exclude each other; otherwise reorder or merge the routes.",
            first.name(),
            second.name(),
            first.from
        );
        problems.push(
            Problem::new(ProblemCode::AmbiguousRoutes, message)
                .about_route(&second.from, &second.to)
                .shown_by(view),
        );
    }
    problems
}

/// One tool result that fires both routes, when the search finds one.
fn joint(routes: &Routes<'_>, first: usize, second: usize) -> Option<skill_core::GuardViewInput> {
    let (a, b) = (&routes.judged[first], &routes.judged[second]);
    if exclusive(&routes.map.routes[first], &routes.map.routes[second])
        || routes.is_dead(first)
        || routes.is_dead(second)
    {
        return None;
    }
    let setting = a.setting.joint(&b.setting)?;
    let conditions = [a.conditions.as_deref()?, b.conditions.as_deref()?].concat();
    match witness(&conditions, &setting) {
        Witness::Passes(view) => Some(view),
        _ => None,
    }
}

/// `dead-skill`: a skill that is not an entry and not open, that routes
/// lead into, and every one of them is dead (refused or never passing, or
/// from a source the cursor never stands on), with the chain that says so.
pub(crate) fn dead_skills(routes: &Routes<'_>) -> Vec<Problem> {
    let map = routes.map;
    let open: IdHashSet<&str> = map.open_skills().into_iter().collect();
    let unreachable: IdHashSet<&str> = map
        .unreachable_skills()
        .into_iter()
        .map(|s| s.id.as_str())
        .collect();
    let mut outgoing: IdHashMap<&str, Vec<usize>> = IdHashMap::default();
    let mut incoming: IdHashMap<&str, Vec<usize>> = IdHashMap::default();
    for (index, route) in map.routes.iter().enumerate() {
        outgoing.entry(route.from.as_str()).or_default().push(index);
        if route.from != route.to {
            incoming.entry(route.to.as_str()).or_default().push(index);
        }
    }
    // The skills the cursor can stand on: the entries and open skills, then
    // the targets of live routes out of them, breadth first.
    let mut live: IdHashSet<&str> = map.entries.iter().map(String::as_str).collect();
    live.extend(open.iter().copied());
    let mut queue: Vec<&str> = live.iter().copied().collect();
    while let Some(from) = queue.pop() {
        for &index in outgoing.get(from).map_or(&[][..], Vec::as_slice) {
            let to = map.routes[index].to.as_str();
            if !routes.is_dead(index) && live.insert(to) {
                queue.push(to);
            }
        }
    }
    let known: IdHashSet<&str> = map.skills.iter().map(|s| s.id.as_str()).collect();
    let mut problems = Vec::new();
    for skill in &map.skills {
        let id = skill.id.as_str();
        let ins = incoming.get(id).map_or(&[][..], Vec::as_slice);
        if live.contains(id) || unreachable.contains(id) || ins.is_empty() {
            continue;
        }
        let chain: Vec<String> = ins
            .iter()
            .map(|&i| why_dead(routes, i, &unreachable, &known))
            .collect();
        let message = format!(
            "Skill \"{id}\" can never become active: every route into it is dead ({}). Fix the route that \
             should lead here, or add an entry.",
            chain.join("; ")
        );
        problems.push(Problem::new(ProblemCode::DeadSkill, message).about_skill(id));
    }
    problems
}

/// Why one route into a dead skill never moves the cursor.
fn why_dead(
    routes: &Routes<'_>,
    index: usize,
    unreachable: &IdHashSet<&str>,
    known: &IdHashSet<&str>,
) -> String {
    let route = &routes.map.routes[index];
    let judged = &routes.judged[index];
    let reason = match (&judged.conditions, &judged.examination.witness) {
        (None, _) => "its guard is refused".to_owned(),
        (_, Witness::Never(proof)) => format!("its guard never passes: {proof}"),
        _ if !known.contains(route.from.as_str()) => {
            format!("\"{}\" is not a skill of this map", route.from)
        }
        _ if unreachable.contains(route.from.as_str()) => {
            format!("nothing leads to \"{}\"", route.from)
        }
        _ => format!("\"{}\" is itself dead", route.from),
    };
    format!("{}: {reason}", route.name())
}
