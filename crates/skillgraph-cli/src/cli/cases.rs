//! `skillgraph test DIR`: the routing cases of `DIR/tests/*.jsonl`, each one
//! iteration's tool results from a cursor and the skill the cursor must end
//! on; and `--generate`, which writes `DIR/tests/generated.jsonl` from the
//! witnesses and near misses of the map's deterministic routes (SPEC §10).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use skillgraph::skill_core::{GuardViewInput, MoveBy, Route, SkillMap, ToolResult, did_you_mean};
use skillgraph::skill_guard::{
    CompiledMap, CursorMove, GuardEvaluation, Iteration, NearMiss, Preconditions, Setting, Witness,
    condition_caption, examine,
};
use skillgraph::{Loaded, load};

use super::{Failure, compile_map, output, read_file};

/// The file `--generate` writes, under `DIR/tests/`.
const GENERATED: &str = "generated.jsonl";

/// One case: a line of a `tests/*.jsonl` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What the case shows.
    name: String,
    /// The skill the cursor stands on.
    cursor: String,
    /// The iteration's tool results, in call order.
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
}

impl Case {
    fn resolve<'g>(&'g self, compiled: &'g CompiledMap<'_>) -> CursorMove<'g> {
        compiled.resolve(
            &self.cursor,
            &self.results,
            Iteration {
                number: self.iteration.unwrap_or(0.0),
                user_message: self.message.as_deref().unwrap_or(""),
            },
        )
    }
}

/// Run `skillgraph test`: the cases, or with `generate` write them. `path`
/// is the map; its cases are in `tests/` beside a `skillmap.json` file, or
/// under a map folder.
pub(super) fn test_command(path: &Path, generate: bool) -> Result<ExitCode, Failure> {
    let Loaded { map, .. } = load(path)?;
    let compiled = compile_map(&map, path)?;
    let dir = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    let tests = dir.join("tests");
    if generate {
        write_generated(&tests, &compiled)
    } else {
        run_cases(&tests, &compiled)
    }
}

/// Read every case file, then run every case; any failure is exit 1.
fn run_cases(tests: &Path, compiled: &CompiledMap<'_>) -> Result<ExitCode, Failure> {
    let files = case_files(tests)?;
    let mut cases = Vec::new();
    for file in &files {
        cases.extend(read_cases(file, compiled.map())?);
    }
    let mut failed = 0;
    for (place, case) in &cases {
        let moved = case.resolve(compiled);
        if moved.to == case.expect.to {
            output::print_line(&format!("ok    {place} {}", case.name))?;
        } else {
            failed += 1;
            output::print(&failure_report(place, case, &moved))?;
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
                    "{place}:{}: {}; each line is one case {{\"name\", \"cursor\", \"results\": [{{\"toolName\", \"result\", \"status\"?}}], \"iteration\"?, \"message\"?, \"expect\": {{\"to\"}}}}",
                    err.column(),
                    err.to_string()
                        .rsplit_once(" at line ")
                        .map_or_else(|| err.to_string(), |(m, _)| m.to_owned())
                ),
            )
        })?;
        for (field, id) in [("cursor", &case.cursor), ("expect.to", &case.expect.to)] {
            if map.skill(id).is_none() {
                return Err(Failure::unusable(
                    "bad-case",
                    format!(
                        "{place}: {field} names \"{id}\", which is not a skill of the map{}",
                        did_you_mean(id, map.skills.iter().map(|s| s.id.as_str()))
                    ),
                ));
            }
        }
        cases.push((place, case));
    }
    Ok(cases)
}

/// A failed case with its evidence: the move it really made, and every
/// guard that closed a route with its conditions.
fn failure_report(place: &str, case: &Case, moved: &CursorMove<'_>) -> String {
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
        cursor: route.from.clone(),
        results: vec![ToolResult {
            tool_name: view.tool_name.clone(),
            result: view.result.clone(),
            status: view.status.clone(),
        }],
        iteration: (!view.iteration.is_nan()).then_some(view.iteration),
        message: (!view.user_message.is_empty()).then(|| view.user_message.clone()),
        expect: Expect { to: String::new() },
    };
    let (to, by) = {
        let moved = case.resolve(compiled);
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
