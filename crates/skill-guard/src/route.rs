//! Route resolution: where one iteration's tool results move the cursor,
//! and the guard evidence that says why. Guards are compiled once, with the
//! map; every evaluation that closed a route is kept on the record.

use std::fmt;

use serde::Serialize;
use skill_core::{GuardView, MoveBy, Route, SkillMap, ToolResult};

use crate::compile::{CompileError, Guard};
use crate::evaluate::{Evaluation, EvidenceList};

/// A route whose guard was refused, named `route from→to`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("route {from}→{to}: {error}")]
#[non_exhaustive]
pub struct RouteGuardError {
    /// The route's source.
    pub from: String,
    /// The route's target.
    pub to: String,
    /// Why the guard was refused.
    pub error: CompileError,
}

impl RouteGuardError {
    /// The stable code of the refusal: the guard's own
    /// ([`CompileError::code`], e.g. `unknown-operator`).
    pub fn code(&self) -> &'static str {
        self.error.code()
    }
}

/// Every refused guard of a map (a map with one cannot route).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct MapGuardErrors {
    /// Each refusal, in route order.
    pub errors: Vec<RouteGuardError>,
}

impl MapGuardErrors {
    /// The stable code of the whole refusal, `guard-refused` (the code the
    /// check-up gives each of these routes); each route's own refusal has
    /// its code in [`RouteGuardError::code`].
    pub fn code(&self) -> &'static str {
        "guard-refused"
    }
}

impl fmt::Display for MapGuardErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} route guard(s) refused; fix each, then load the map again",
            self.errors.len()
        )?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}

/// A map with every route guard compiled.
#[derive(Debug, Clone)]
pub struct CompiledMap<'m> {
    map: &'m SkillMap,
    guards: RouteGuards,
}

/// Every route guard of a map, compiled once and owned apart from the map,
/// so that a holder that owns the map too (a session's graph) can keep both
/// without borrowing one from the other. [`CompiledMap`] pairs them by
/// reference.
#[derive(Debug, Clone)]
pub struct RouteGuards {
    /// One per route, in declaration order.
    guards: Vec<Option<Guard>>,
}

/// One guard's evaluation on a route, for one tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardEvaluation<'g> {
    /// The route's index among the map's routes.
    pub route: usize,
    /// The route's source.
    pub from: &'g str,
    /// The route's target.
    pub to: &'g str,
    /// The tool whose result was judged.
    pub tool_name: &'g str,
    /// Whether every condition passed.
    pub verdict: bool,
    /// Each condition's evidence.
    pub conditions: EvidenceList<'g>,
}

/// A later result that reached a different target than the winner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict<'g> {
    /// The tool whose result reached it.
    pub tool_name: &'g str,
    /// The target it reached.
    pub to: &'g str,
}

/// Where one iteration's results move the cursor, with the evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CursorMove<'g> {
    /// The cursor before.
    pub from: &'g str,
    /// The cursor after (`from` on a stay).
    pub to: &'g str,
    /// Whether a route fired: `route`, or `stay`.
    pub by: MoveBy,
    /// When a route fired: its index among the map's routes (two routes may
    /// join the same two skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<usize>,
    /// The winning route's guard evaluation, when it has a guard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardEvaluation<'g>>,
    /// Every guard that closed a route, once per route.
    pub guards_closed: Vec<GuardEvaluation<'g>>,
    /// Later results that reached another target than the winner.
    pub conflict: Vec<Conflict<'g>>,
}

/// The iteration a batch of results belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Iteration<'a> {
    /// The iteration number.
    pub number: f64,
    /// The user's message for the turn.
    pub user_message: &'a str,
}

impl<'m> CompiledMap<'m> {
    /// Compile every route guard of `map` once.
    ///
    /// # Errors
    ///
    /// [`MapGuardErrors`] listing every route whose guard was refused.
    pub fn new(map: &'m SkillMap) -> Result<Self, MapGuardErrors> {
        Ok(CompiledMap {
            map,
            guards: RouteGuards::compile(map)?,
        })
    }

    /// The map.
    pub fn map(&self) -> &'m SkillMap {
        self.map
    }

    /// The compiled guard of route `index`, if it has one.
    pub fn guard(&self, index: usize) -> Option<&Guard> {
        self.guards.guard(index)
    }

    /// Resolve one iteration's batch of tool results (in call order) from
    /// `cursor`.
    ///
    /// For each result, the deterministic routes out of the cursor are tried
    /// in declaration order. A route whose preconditions fail is skipped. A
    /// guard that passes makes the route this result's target; one that fails
    /// is recorded in `guards_closed` (once per route across the batch). The
    /// first result with a target wins; later results that reached another
    /// target are listed in `conflict`.
    ///
    /// ```
    /// use skill_core::{MoveBy, SkillMap, ToolResult};
    /// use skill_guard::{CompiledMap, Iteration};
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{
    ///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
    ///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "riskLevel": { "eq": "high" } } }]
    /// }"#).expect("a map");
    /// let compiled = CompiledMap::new(&map).expect("guards compile");
    /// let results = [ToolResult { tool_name: "lookup_order".into(), result: r#"{"riskLevel":"high"}"#.into(), status: None }];
    /// let moved = compiled.resolve("triage", &results, Iteration { number: 1.0, user_message: "refund please" });
    /// assert_eq!((moved.by, moved.to), (MoveBy::Route, "refunds"));
    /// ```
    pub fn resolve<'g>(
        &'g self,
        cursor: &'g str,
        results: &'g [ToolResult],
        iteration: Iteration<'g>,
    ) -> CursorMove<'g> {
        self.guards.resolve(self.map, cursor, results, iteration)
    }
}

impl RouteGuards {
    /// The guards of the routes numbered `kept`, in that order: the guards
    /// of a map that keeps only those routes (a route not compiled here
    /// has no guard there), so that nothing is compiled twice.
    #[must_use]
    pub fn only(&self, kept: &[usize]) -> RouteGuards {
        RouteGuards {
            guards: kept
                .iter()
                .map(|&index| self.guards.get(index).cloned().flatten())
                .collect(),
        }
    }

    /// Compile every route guard of `map` once.
    ///
    /// # Errors
    ///
    /// [`MapGuardErrors`] listing every route whose guard was refused.
    pub fn compile(map: &SkillMap) -> Result<Self, MapGuardErrors> {
        let mut guards = Vec::with_capacity(map.routes.len());
        let mut errors = Vec::new();
        for route in &map.routes {
            match route.guard.as_ref().map(Guard::compile).transpose() {
                Ok(guard) => guards.push(guard),
                Err(error) => {
                    errors.push(RouteGuardError {
                        from: route.from.clone(),
                        to: route.to.clone(),
                        error,
                    });
                    guards.push(None);
                }
            }
        }
        if errors.is_empty() {
            Ok(RouteGuards { guards })
        } else {
            Err(MapGuardErrors { errors })
        }
    }

    /// The compiled guard of route `index`, if it has one.
    pub fn guard(&self, index: usize) -> Option<&Guard> {
        self.guards.get(index).and_then(Option::as_ref)
    }

    /// [`CompiledMap::resolve`] over `map`, which must be the map these
    /// guards were compiled from (route `i` of the map uses guard `i`).
    pub fn resolve<'g>(
        &'g self,
        map: &'g SkillMap,
        cursor: &'g str,
        results: &'g [ToolResult],
        iteration: Iteration<'g>,
    ) -> CursorMove<'g> {
        let routes: Vec<(usize, &'g Route)> = map
            .routes
            .iter()
            .enumerate()
            .filter(|(_, r)| r.from == cursor && r.is_deterministic())
            .collect();
        let mut batch = Batch::default();
        for result in results {
            let view = result.view(iteration.number, iteration.user_message, Some(cursor));
            let target = self.target_of(&routes, result, &view, &mut batch);
            batch.reached(&result.tool_name, target);
        }
        batch.into_move(cursor)
    }

    /// Where one result leads among `routes` (in declaration order): the
    /// first whose preconditions pass and whose guard, if any, passes. Each
    /// guard that fails closes its route in `batch`.
    fn target_of<'g>(
        &'g self,
        routes: &[(usize, &'g Route)],
        result: &'g ToolResult,
        view: &GuardView<'g>,
        batch: &mut Batch<'g>,
    ) -> Option<Target<'g>> {
        for &(index, route) in routes {
            if !preconditions_pass(route, &result.tool_name, result.status.as_deref()) {
                continue;
            }
            let Some(guard) = self.guard(index) else {
                return Some((index, &route.to, None));
            };
            let Evaluation {
                verdict,
                conditions,
            } = guard.evaluate(view);
            let evaluation = GuardEvaluation {
                route: index,
                from: &route.from,
                to: &route.to,
                tool_name: &result.tool_name,
                verdict,
                conditions,
            };
            if verdict {
                return Some((index, &route.to, Some(evaluation)));
            }
            batch.close(index, evaluation);
        }
        None
    }
}

/// Where a result leads: the route's index, its target, and its guard's
/// evaluation when it has a guard.
type Target<'g> = (usize, &'g str, Option<GuardEvaluation<'g>>);

/// What a batch of results has found so far.
#[derive(Default)]
struct Batch<'g> {
    /// The guards that closed a route, once per route (by route index).
    closed: Vec<(usize, GuardEvaluation<'g>)>,
    /// The first result's target.
    winner: Option<Target<'g>>,
    /// Later results that reached another target.
    conflict: Vec<Conflict<'g>>,
}

impl<'g> Batch<'g> {
    /// Record that route `index`'s guard failed, unless it already has.
    fn close(&mut self, index: usize, evaluation: GuardEvaluation<'g>) {
        if !self.closed.iter().any(|(known, _)| *known == index) {
            self.closed.push((index, evaluation));
        }
    }

    /// Record where the result of `tool_name` led: the first target wins,
    /// a later different one is a conflict.
    fn reached(&mut self, tool_name: &'g str, target: Option<Target<'g>>) {
        match (&self.winner, target) {
            (None, Some(found)) => self.winner = Some(found),
            (Some((_, won, _)), Some((_, to, _))) if *won != to => {
                self.conflict.push(Conflict { tool_name, to });
            }
            _ => {}
        }
    }

    /// The cursor's move from `cursor`: to the winner, or a stay.
    fn into_move(self, cursor: &'g str) -> CursorMove<'g> {
        let guards_closed = self
            .closed
            .into_iter()
            .map(|(_, evaluation)| evaluation)
            .collect();
        let (route, to, by, guard) = match self.winner {
            Some((route, to, guard)) => (Some(route), to, MoveBy::Route, guard),
            None => (None, cursor, MoveBy::Stay, None),
        };
        CursorMove {
            from: cursor,
            to,
            by,
            route,
            guard,
            guards_closed,
            conflict: self.conflict,
        }
    }
}

/// A route's preconditions (SPEC §7.2) on one result of `tool_name` that
/// declared `status`: with `on_tool_status`, the result must declare a
/// listed status (and match `on_tool_return` if set); else with
/// `on_tool_return`, the tool name must equal it; else they pass. Route
/// resolution and every reader of a record ask this one rule.
///
/// ```
/// use skill_core::Route;
/// use skill_guard::preconditions_pass;
///
/// let mut route = Route::new("triage", "billing");
/// route.on_tool_status = Some(vec!["failure".into()]);
/// assert!(preconditions_pass(&route, "charge", Some("failure")));
/// assert!(!preconditions_pass(&route, "charge", None), "a status is never inferred");
/// ```
pub fn preconditions_pass(route: &Route, tool_name: &str, status: Option<&str>) -> bool {
    let tool_matches = || {
        route
            .on_tool_return
            .as_ref()
            .is_none_or(|tool| tool == tool_name)
    };
    match &route.on_tool_status {
        Some(statuses) => {
            status.is_some_and(|s| statuses.iter().any(|listed| listed == s)) && tool_matches()
        }
        None => tool_matches(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(tool: &str, text: &str, status: Option<&str>) -> ToolResult {
        ToolResult {
            tool_name: tool.into(),
            result: text.into(),
            status: status.map(str::to_owned),
        }
    }

    fn map() -> SkillMap {
        serde_json::from_value(json!({
            "skills": [{"id": "triage"}, {"id": "refunds"}, {"id": "billing"}, {"id": "shipping"}, {"id": "faq"}],
            "entries": ["triage"],
            "routes": [
                {"from": "triage", "to": "refunds", "guard": {"riskLevel": {"eq": "high"}}},
                {"from": "triage", "to": "billing", "on_tool_status": ["failure"], "guard": {"amount": {"gt": 100}}},
                {"from": "triage", "to": "shipping", "on_tool_return": "track_parcel"},
                {"from": "triage", "to": "faq"}
            ]
        }))
        .unwrap()
    }

    const ITERATION: Iteration<'static> = Iteration {
        number: 2.0,
        user_message: "help",
    };

    #[test]
    fn the_first_result_with_a_target_wins_and_later_ones_conflict() {
        let map = map();
        let compiled = CompiledMap::new(&map).unwrap();
        let results = [
            result("lookup_order", r#"{"riskLevel":"low"}"#, None),
            result("track_parcel", "{}", None),
            result("lookup_order", r#"{"riskLevel":"high"}"#, None),
        ];
        let moved = compiled.resolve("triage", &results, ITERATION);
        assert_eq!((moved.by, moved.to), (MoveBy::Route, "shipping"));
        assert!(
            moved.guard.is_none(),
            "an unguarded route leaves no evaluation"
        );
        assert_eq!(
            moved.conflict,
            [Conflict {
                tool_name: "lookup_order",
                to: "refunds"
            }]
        );
        // refunds' guard failed on the first and third-but-one results: recorded once.
        assert_eq!(moved.guards_closed.len(), 1);
        assert_eq!(
            (moved.guards_closed[0].to, moved.guards_closed[0].tool_name),
            ("refunds", "lookup_order")
        );
    }

    #[test]
    fn preconditions_gate_guards_without_a_record() {
        let map = map();
        let compiled = CompiledMap::new(&map).unwrap();
        let small_success = [result("x", r#"{"amount":5}"#, Some("success"))];
        let skipped = compiled.resolve("triage", &small_success, ITERATION);
        assert!(
            skipped.guards_closed.iter().all(|g| g.to != "billing"),
            "status did not match: no record"
        );
        let small_failure = [result("x", r#"{"amount":5}"#, Some("failure"))];
        let judged = compiled.resolve("triage", &small_failure, ITERATION);
        assert!(judged.guards_closed.iter().any(|g| g.to == "billing"));
        let large_failure = [result("x", r#"{"amount":500}"#, Some("failure"))];
        let moved = compiled.resolve("triage", &large_failure, ITERATION);
        assert_eq!(moved.to, "billing");
        assert_eq!(moved.guard.as_ref().map(|g| g.verdict), Some(true));
    }

    #[test]
    fn nothing_fires_means_a_stay_with_the_evidence() {
        let map = map();
        let compiled = CompiledMap::new(&map).unwrap();
        let results = [result("lookup_order", "not json", None)];
        let moved = compiled.resolve("triage", &results, ITERATION);
        let json = serde_json::to_value(&moved).unwrap();
        assert_eq!(json["by"], "stay");
        assert_eq!(json["to"], "triage");
        assert_eq!(
            json["guards_closed"][0]["conditions"][0]["actual_summary"],
            "undefined"
        );
        assert_eq!(json["guards_closed"][0]["tool_name"], "lookup_order");
        assert!(json.get("guard").is_none());
    }

    #[test]
    fn the_view_carries_the_iteration_message_and_cursor() {
        let mut map = map();
        map.routes[0].guard = Some(
            json!({"currentSkillId": {"eq": "triage"}, "iteration": {"eq": 2}, "userMessage": {"eq": "help"}}),
        );
        let compiled = CompiledMap::new(&map).unwrap();
        let results = [result("t", "", None)];
        assert_eq!(
            compiled.resolve("triage", &results, ITERATION).to,
            "refunds"
        );
    }

    #[test]
    fn every_refused_guard_is_named_by_its_route() {
        let mut map = map();
        map.routes[0].guard = Some(json!({}));
        map.routes[1].guard = Some(json!({"a": {"gle": 1}}));
        let errors = CompiledMap::new(&map).unwrap_err();
        assert_eq!(errors.code(), "guard-refused");
        let codes: Vec<_> = errors.errors.iter().map(RouteGuardError::code).collect();
        assert_eq!(codes, ["empty", "unknown-operator"]);
        assert!(
            errors
                .to_string()
                .contains("route triage→billing: key \"a\" uses unknown operator \"gle\""),
            "{errors}"
        );
    }
}
