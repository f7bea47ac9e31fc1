//! `skillgraph test DIR`: the routing cases of `DIR/tests/*.jsonl`, each one
//! iteration's tool results from a cursor, or a turn's message (SPEC §13.3),
//! and the skill the cursor must end on; and `--generate`, which writes
//! `DIR/tests/generated.jsonl` from the witnesses and near misses of the
//! map's deterministic routes (SPEC §10) and from its start rules' examples
//! and `never_routes` phrases.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use skillgraph::skill_core::{GuardViewInput, MoveBy, Route, SkillMap, ToolResult, did_you_mean};
use skillgraph::skill_guard::start::{Routing, rule_name};
use skillgraph::skill_guard::{
    CompiledMap, CursorMove, GuardEvaluation, Iteration, NearMiss, Preconditions, Setting, Witness,
    condition_caption, examine,
};
use skillgraph::skill_session::Graph;
use skillgraph::{Loaded, load};

use super::{Failure, compile_guards, compile_map, compile_start, output, read_file};

/// The file `--generate` writes, under `DIR/tests/`.
const GENERATED: &str = "generated.jsonl";

/// One case: a line of a `tests/*.jsonl` file. A *route case* holds an
/// iteration's `results` from a `cursor`; a *turn case* a `turn` message
/// (and an optional `cursor`, the map's first entry when left out), which
/// the start rules route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What the case shows.
    name: String,
    /// A turn case: the user's message that starts the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn: Option<String>,
    /// The skill the cursor stands on (a turn case may leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cursor: Option<String>,
    /// The iteration's tool results, in call order (a route case's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    results: Vec<ToolResult>,
    /// The iteration number guards read (0 when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iteration: Option<f64>,
    /// The user's message guards read (empty when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// Where the cursor must end.
    expect: Expect,
}

/// What a case expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// The skill the cursor stands on after the iteration.
    to: String,
    /// A turn case's: whether a start rule must decide the start (`rule`)
    /// or none may (`stay`); either, when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by: Option<TurnBy>,
}

/// How a turn case's start must be decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum TurnBy {
    /// A start rule decides it.
    Rule,
    /// No rule matches: the cursor stays where it stood.
    Stay,
}

/// Where a case left the cursor, and how.
enum Outcome<'g> {
    /// A route case's move.
    Moved(CursorMove<'g>),
    /// A turn case's start: the rule that decided it, or none.
    Turned {
        from: Option<String>,
        routing: Routing,
    },
}

impl Outcome<'_> {
    /// Whether the outcome is what `expect` says.
    fn meets(&self, expect: &Expect) -> bool {
        let decided = match self {
            Outcome::Turned { routing, .. } => Some(routing.routed.is_some()),
            Outcome::Moved(_) => None,
        };
        let by = match (expect.by, decided) {
            (Some(TurnBy::Rule), Some(decided)) => decided,
            (Some(TurnBy::Stay), Some(decided)) => !decided,
            _ => true,
        };
        by && self.to() == Some(expect.to.as_str())
    }

    /// The skill the cursor ends on (none for a turn that starts nowhere).
    fn to(&self) -> Option<&str> {
        match self {
            Outcome::Moved(moved) => Some(moved.to),
            Outcome::Turned { from, routing } => routing
                .routed
                .as_ref()
                .map(|routed| routed.use_skill.as_str())
                .or(from.as_deref()),
        }
    }
}

impl Case {
    /// Where the case leaves the cursor: a route case's results resolved
    /// from its cursor, or a turn case's message routed by the graph's own
    /// start step, as a session with no hidden skill starts its turn.
    fn resolve<'g>(&'g self, compiled: &'g CompiledMap<'_>, graph: &Graph) -> Outcome<'g> {
        if let Some(message) = &self.turn {
            let from = self
                .cursor
                .clone()
                .or_else(|| compiled.map().entries.first().cloned());
            return Outcome::Turned {
                from,
                routing: graph.route_turn(message, &[]),
            };
        }
        Outcome::Moved(compiled.resolve(
            self.cursor.as_deref().unwrap_or_default(),
            &self.results,
            Iteration {
                number: self.iteration.unwrap_or(0.0),
                user_message: self.message.as_deref().unwrap_or(""),
            },
        ))
    }
}

/// Run `skillgraph test`: the cases, or with `generate` write them. `path`
/// is the map; its cases are in `tests/` beside a `skillmap.json` file, or
/// under a map folder.
pub(super) fn test_command(path: &Path, generate: bool) -> Result<ExitCode, Failure> {
    let Loaded { map, .. } = load(path)?;
    let compiled = compile_map(&map, path)?;
    let start = compile_start(&map, path)?;
    let dir = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    let tests = dir.join("tests");
    if generate {
        write_generated(&tests, &compiled)
    } else {
        // Turn cases start where a session would start them: through the
        // graph's start step, which skips a rule whose skill is no skill of
        // the map.
        let graph = Graph::with_compiled(map.clone(), compile_guards(&map, path)?, start);
        run_cases(&tests, &compiled, &graph)
    }
}

/// Read every case file, then run every case; any failure is exit 1.
fn run_cases(tests: &Path, compiled: &CompiledMap<'_>, graph: &Graph) -> Result<ExitCode, Failure> {
    let files = case_files(tests)?;
    let mut cases = Vec::new();
    for file in &files {
        cases.extend(read_cases(file, compiled.map())?);
    }
    let mut failed = 0;
    for (place, case) in &cases {
        let outcome = case.resolve(compiled, graph);
        if outcome.meets(&case.expect) {
            output::print_line(&format!("ok    {place} {}", case.name))?;
        } else {
            failed += 1;
            output::print(&failure_report(place, case, &outcome))?;
        }
    }
    output::print_line(&format!(
        "\n{} passed, {failed} failed ({} cases in {} files)",
        cases.len() - failed,
        cases.len(),
        files.len()
    ))?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The `*.jsonl` files of `tests`, by name.
fn case_files(tests: &Path) -> Result<Vec<PathBuf>, Failure> {
    let unreadable = |err: std::io::Error| {
        Failure::unusable(
            "unreadable",
            format!(
                "{}: cannot be read: {err}; put the cases in {}/*.jsonl, or write them with --generate",
                tests.display(),
                tests.display()
            ),
        )
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(tests).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.extension().is_some_and(|ext| ext == "jsonl") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Failure::unusable(
            "no-cases",
            format!(
                "{} holds no *.jsonl file; write cases there, or generate them with --generate",
                tests.display()
            ),
        ));
    }
    Ok(files)
}

/// The cases of one file, each with its `file:line`; a bad line is exit 2.
fn read_cases(file: &Path, map: &SkillMap) -> Result<Vec<(String, Case)>, Failure> {
    let text = read_file(file)?;
    let mut cases = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let place = format!("{}:{}", file.display(), number + 1);
        let case: Case = serde_json::from_str(line).map_err(|err| {
            Failure::unusable(
                "bad-case",
                format!(
                    "{place}:{}: {}; each line is one case, {{\"name\", \"cursor\", \"results\": [{{\"toolName\", \"result\", \"status\"?}}], \"iteration\"?, \"message\"?, \"expect\": {{\"to\"}}}} or {{\"name\", \"turn\": MESSAGE, \"cursor\"?, \"expect\": {{\"to\"}}}}",
                    err.column(),
                    err.to_string()
                        .rsplit_once(" at line ")
                        .map_or_else(|| err.to_string(), |(m, _)| m.to_owned())
                ),
            )
        })?;
        let bad = |what: String| Failure::unusable("bad-case", format!("{place}: {what}"));
        match (&case.turn, case.results.is_empty()) {
            (Some(_), false) => {
                return Err(bad(
                    "a case has either \"turn\" (a turn case) or \"results\" (a route case), not both; split it in two".to_owned(),
                ));
            }
            (None, _) if case.expect.by.is_some() => {
                return Err(bad(
                    "\"expect.by\" is a turn case's (\"rule\" or \"stay\"); a route case expects only \"to\"".to_owned(),
                ));
            }
            (Some(_), true) if case.iteration.is_some() || case.message.is_some() => {
                return Err(bad(
                    "a turn case takes no \"iteration\" or \"message\": its \"turn\" is the message; drop them".to_owned(),
                ));
            }
            (None, _) if case.cursor.is_none() => {
                return Err(bad(
                    "a route case needs \"cursor\", the skill its results are routed from; add it, or give \"turn\" for a turn case".to_owned(),
                ));
            }
            _ => {}
        }
        for (field, id) in [
            ("cursor", case.cursor.as_ref()),
            ("expect.to", Some(&case.expect.to)),
        ] {
            let Some(id) = id else { continue };
            if map.skill(id).is_none() {
                return Err(bad(format!(
                    "{field} names \"{id}\", which is not a skill of the map{}",
                    did_you_mean(id, map.skills.iter().map(|s| s.id.as_str()))
                )));
            }
        }
        cases.push((place, case));
    }
    Ok(cases)
}

/// A failed case with its evidence: the move it really made, and every
/// guard that closed a route with its conditions.
fn failure_report(place: &str, case: &Case, outcome: &Outcome<'_>) -> String {
    let moved = match outcome {
        Outcome::Moved(moved) => moved,
        Outcome::Turned { from, routing } => return turn_failure(place, case, from, routing),
    };
    let how = if moved.by == MoveBy::Route {
        "by a route"
    } else {
        "no route fired, the cursor stayed"
    };
    let mut out = format!(
        "FAIL  {place} {}\n      expected the cursor on {}, it moved {} → {} ({how})\n",
        case.name, case.expect.to, moved.from, moved.to
    );
    if let Some(guard) = &moved.guard {
        let _ = write!(out, "      fired: {}", guard_lines(guard));
    }
    for guard in &moved.guards_closed {
        let _ = write!(out, "      closed: {}", guard_lines(guard));
    }
    for conflict in &moved.conflict {
        let _ = writeln!(
            out,
            "      conflict: a later {} result reached {}",
            conflict.tool_name, conflict.to
        );
    }
    out
}

/// A failed turn case: where the turn started, by which rule and on what
/// text, or that no rule matched; and the rules that gave up.
fn turn_failure(place: &str, case: &Case, from: &Option<String>, routing: &Routing) -> String {
    let at = from.as_deref().unwrap_or("no skill");
    let how = match &routing.routed {
        Some(routed) => format!(
            "the turn started on {} by {}: '{}' in the message",
            routed.use_skill,
            rule_name(routed.rule, routed.label.as_deref()),
            routed.witness
        ),
        None => format!("no start rule matched, the cursor stayed on {at}"),
    };
    let expected = match case.expect.by {
        Some(TurnBy::Rule) => " by a start rule",
        Some(TurnBy::Stay) => " with no start rule matched",
        None => "",
    };
    let mut out = format!(
        "FAIL  {place} {}\n      expected the cursor on {}{expected}; {how}\n",
        case.name, case.expect.to
    );
    for rule in &routing.gave_up {
        let _ = writeln!(
            out,
            "      start.rules[{rule}] gave up at the bound on backtracking, so it could not decide"
        );
    }
    out
}

/// One guard's route and its conditions, one a line.
fn guard_lines(guard: &GuardEvaluation<'_>) -> String {
    let mut out = format!("{} → {} on {}\n", guard.from, guard.to, guard.tool_name);
    for c in &guard.conditions {
        let _ = writeln!(
            out,
            "        {}: read {}, {}",
            condition_caption(&c.condition.key, c.condition.op, &c.condition.value),
            c.actual_summary,
            if c.passed { "passed" } else { "failed" }
        );
    }
    out
}

/// Write `tests/generated.jsonl`: per deterministic route, in declaration
/// order, its witness, then its near misses in condition order, each
/// expecting the move it really makes.
fn write_generated(tests: &Path, compiled: &CompiledMap<'_>) -> Result<ExitCode, Failure> {
    let map = compiled.map();
    let mut lines = String::new();
    let mut count = 0;
    let mut notes = String::new();
    for (index, route) in map.routes.iter().enumerate() {
        let (cases, note) = route_cases(compiled, index, route);
        if let Some(note) = note {
            let _ = writeln!(
                notes,
                "no witness for {} → {}: {note}",
                route.from, route.to
            );
        }
        for case in cases {
            let json = serde_json::to_string(&case).map_err(|err| {
                Failure::output(format!("cannot write the output as JSON: {err}"))
            })?;
            lines.push_str(&json);
            lines.push('\n');
            count += 1;
        }
    }
    for case in turn_cases(map, &mut notes) {
        let json = serde_json::to_string(&case)
            .map_err(|err| Failure::output(format!("cannot write the output as JSON: {err}")))?;
        lines.push_str(&json);
        lines.push('\n');
        count += 1;
    }
    let file = tests.join(GENERATED);
    std::fs::create_dir_all(tests)
        .and_then(|()| std::fs::write(&file, lines))
        .map_err(|err| {
            Failure::unusable(
                "unwritable",
                format!("{}: cannot be written: {err}", file.display()),
            )
        })?;
    output::print(&notes)?;
    output::print_line(&format!("wrote {count} cases to {}", file.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The turn cases of the map's start rules (SPEC §13.3): per rule, a case
/// per example expecting the rule's skill; then a case per `never_routes`
/// phrase expecting a stay on the first entry (none, with a note, when the
/// map has no entry to stay on).
fn turn_cases(map: &SkillMap, notes: &mut String) -> Vec<Case> {
    let Some(start) = &map.start else {
        return Vec::new();
    };
    let turn = |name: String, message: &str, to: &str, by: TurnBy| Case {
        name,
        turn: Some(message.to_owned()),
        cursor: None,
        results: Vec::new(),
        iteration: None,
        message: None,
        expect: Expect {
            to: to.to_owned(),
            by: Some(by),
        },
    };
    let mut cases = Vec::new();
    for (index, rule) in start.rules.iter().enumerate() {
        if map.skill(&rule.use_skill).is_none() {
            let _ = writeln!(
                notes,
                "no case for start.rules[{index}]'s examples: its use {:?} is not a skill of the map (rule-unknown-skill)",
                rule.use_skill
            );
            continue;
        }
        let named = rule_name(index, rule.label.as_deref());
        for example in &rule.examples {
            cases.push(turn(
                format!("{named}: example {example:?} starts on {}", rule.use_skill),
                example,
                &rule.use_skill,
                TurnBy::Rule,
            ));
        }
    }
    match map.entries.first() {
        Some(entry) => {
            for phrase in &start.never_routes {
                cases.push(turn(
                    format!("never_routes {phrase:?} starts no rule: the cursor stays on {entry}"),
                    phrase,
                    entry,
                    TurnBy::Stay,
                ));
            }
        }
        None if !start.never_routes.is_empty() => {
            let _ = writeln!(
                notes,
                "no case for the never_routes phrases: the map has no entry for a turn to stay on"
            );
        }
        None => {}
    }
    cases
}

/// The witness and near-miss cases of route `index` (none for a route that
/// is not deterministic), and why it has no witness case when it has none.
fn route_cases(
    compiled: &CompiledMap<'_>,
    index: usize,
    route: &Route,
) -> (Vec<Case>, Option<String>) {
    if !route.is_deterministic() {
        return (Vec::new(), None);
    }
    let conditions = compiled
        .guard(index)
        .map(|guard| guard.data().conditions().to_vec())
        .unwrap_or_default();
    let pre = Preconditions {
        on_tool_statuses: route.on_tool_status.as_deref(),
        on_tool_return_exact: route.on_tool_return.as_deref(),
    };
    let examination = examine(&conditions, &Setting::new(&pre, Some(&route.from)));
    let mut cases = Vec::new();
    let note = match &examination.witness {
        Witness::Passes(view) => {
            cases.push(generated(compiled, route, "witness", view));
            None
        }
        Witness::Never(proof) => Some(format!("no tool result fires it ({proof})")),
        Witness::Unknown => Some("the search found none, nor a proof that none exists".to_owned()),
    };
    for (condition, miss) in conditions.iter().zip(&examination.near_misses) {
        if let NearMiss::Fails(view) = miss {
            let what = format!(
                "near miss of {}",
                condition_caption(&condition.key, condition.op, &condition.value)
            );
            cases.push(generated(compiled, route, &what, view));
        }
    }
    (cases, note)
}

/// A case of `view`, expecting where the cursor really moves, and named
/// after the route, what the view is, and any other outcome.
fn generated(compiled: &CompiledMap<'_>, route: &Route, what: &str, view: &GuardViewInput) -> Case {
    let mut case = Case {
        name: String::new(),
        turn: None,
        cursor: Some(route.from.clone()),
        results: vec![ToolResult {
            tool_name: view.tool_name.clone(),
            result: view.result.clone(),
            status: view.status.clone(),
        }],
        iteration: (!view.iteration.is_nan()).then_some(view.iteration),
        message: (!view.user_message.is_empty()).then(|| view.user_message.clone()),
        expect: Expect {
            to: String::new(),
            by: None,
        },
    };
    let (to, by) = {
        let moved = compiled.resolve(
            &route.from,
            &case.results,
            Iteration {
                number: case.iteration.unwrap_or(0.0),
                user_message: case.message.as_deref().unwrap_or(""),
            },
        );
        (moved.to.to_owned(), moved.by)
    };
    let outcome = if by != MoveBy::Route {
        format!("; the cursor stays on {to}")
    } else if to == route.to && what == "witness" {
        String::new()
    } else if what == "witness" {
        format!("; an earlier route wins: {} → {to}", route.from)
    } else {
        format!("; another route fires: {} → {to}", route.from)
    };
    case.name = format!("{} → {}: {what}{outcome}", route.from, route.to);
    case.expect.to = to;
    case
}
